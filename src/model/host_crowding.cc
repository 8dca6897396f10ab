#include "model/host_crowding.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "core/text_format.h"

namespace stepscope::model {
namespace {

struct Line {
  Estimate a, b;
};

// Least squares through (x, y), banded by the lines through every pair with distinct x. The
// caller guarantees two distinct x.
Line FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i] / n, my += y[i] / n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my);
  const double b = sxy / sxx, a = my - b * mx;
  Line line{{a, a, a}, {b, b, b}};
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (x[i] == x[j]) continue;
      const double bij = (y[j] - y[i]) / (x[j] - x[i]);
      const double aij = y[i] - bij * x[i];
      line.a.low = std::min(line.a.low, aij), line.a.high = std::max(line.a.high, aij);
      line.b.low = std::min(line.b.low, bij), line.b.high = std::max(line.b.high, bij);
    }
  }
  return line;
}

}  // namespace

double Crowding(int ranks_per_host, int cores_per_host) {
  if (ranks_per_host <= 0 || cores_per_host <= 0) return 0;
  return std::max(0.0, static_cast<double>(ranks_per_host) / cores_per_host - 1);
}

double QueueWait(double load) {
  const double rho = std::clamp(load, 0.0, kMaxQueueLoad);
  return rho / (1 - rho);
}

std::optional<HostCrowding> FitHostCrowding(const std::vector<CrowdingPoint>& points) {
  if (points.size() < 2) return std::nullopt;
  const int cores = points.front().cores_per_host;
  std::vector<double> c, ratio, overhead, residual;
  std::set<double> distinct;
  int most = 0;
  bool any_residual = false;
  for (const CrowdingPoint& p : points) {
    if (p.cores_per_host <= 0 || p.cores_per_host != cores || p.ranks_per_host <= 0) {
      return std::nullopt;
    }
    c.push_back(Crowding(p.ranks_per_host, cores));
    ratio.push_back(p.compute_ratio);
    overhead.push_back(p.overhead);
    residual.push_back(p.residual);
    any_residual = any_residual || p.residual != 0;
    distinct.insert(c.back());
    most = std::max(most, p.ranks_per_host);
  }
  if (distinct.size() < 2 || *distinct.rbegin() <= 0) return std::nullopt;
  const Line r = FitLine(c, ratio), o = FitLine(c, overhead);
  const std::string how = "least squares over the " + std::to_string(points.size()) +
                          " baselines' crowding (" + std::to_string(cores) +
                          " cores per host); band: the lines through each pair of them";
  HostCrowding h;
  h.cores_per_host = cores;
  h.max_ranks_per_host = most;
  h.compute_ratio_a = {"crowding_compute_ratio_a", r.a, "ratio", how};
  h.compute_ratio_b = {"crowding_compute_ratio_b", r.b, "ratio per rank per core beyond one", how};
  h.overhead_a = {"crowding_overhead_a", o.a, "s per step", how};
  h.overhead_b = {"crowding_overhead_b", o.b, "s per step per rank per core beyond one", how};
  if (any_residual) {
    const Line e = FitLine(c, residual);
    const std::string residual_how =
        how +
        "; of the overhead, what the other parts did not reproduce of a crowded step (0 "
        "uncrowded)";
    h.residual_a = Constant{"crowding_residual_a", e.a, "s per step", residual_how};
    h.residual_b = Constant{"crowding_residual_b", e.b, "s per step per rank per core beyond one",
                            residual_how};
  }

  // The queue's form: every point's load known and below the cap, a crowded one's at least
  // kQueueLoad, and two distinct loads.
  std::vector<double> wait;
  std::set<double> waits;
  const CrowdingPoint* loaded = nullptr;  // the most loaded crowded point
  for (const CrowdingPoint& p : points) {
    if (!p.load || !(*p.load >= 0) || *p.load >= kMaxQueueLoad) return h;
    wait.push_back(QueueWait(*p.load));
    waits.insert(wait.back());
    if (Crowding(p.ranks_per_host, cores) > 0 && (!loaded || *p.load > *loaded->load)) {
      loaded = &p;
    }
  }
  if (!loaded || *loaded->load < kQueueLoad || waits.size() < 2 || !(loaded->step > 0)) return h;
  const Line q = FitLine(wait, ratio);
  const std::string queue_how =
      "least squares over the " + std::to_string(points.size()) +
      " baselines' compute ratio against q = rho/(1-rho), rho their busiest host's CPU load "
      "(the most loaded crowded one " +
      Fixed(100 * *loaded->load, 0) + " %); band: the lines through each pair of them";
  h.queue_a = Constant{"crowding_queue_a", q.a, "ratio", queue_how};
  h.queue_b = Constant{"crowding_queue_b", q.b, "ratio per unit of rho/(1-rho)", queue_how};
  h.cpu_per_rank_step = *loaded->load * loaded->step * cores / loaded->ranks_per_host;
  h.queue_load = *loaded->load;
  return h;
}

}  // namespace stepscope::model
