#include "model/collective_fit.h"

#include <algorithm>
#include <cmath>

namespace stepscope::model {
namespace {

constexpr double kZ90 = 1.645;  // two-sided 90 % of a normal

std::vector<CollectiveSample> Usable(const std::vector<CollectiveSample>& samples) {
  std::vector<CollectiveSample> out;
  for (const CollectiveSample& s : samples) {
    if (s.replicas >= 2 && s.seconds >= 0 && std::isfinite(s.seconds)) out.push_back(s);
  }
  return out;
}

Estimate Around(double value, double half_width) {
  return {value, std::max(0.0, value - half_width), value + half_width};
}

// One-feature least squares through the origin: y = k x.
struct OneFit {
  double k = 0, se = 0, rss = 0;
};
OneFit FitOne(const std::vector<double>& x, const std::vector<double>& y) {
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) sxx += x[i] * x[i], sxy += x[i] * y[i];
  OneFit f;
  f.k = sxx > 0 ? std::max(0.0, sxy / sxx) : 0.0;
  for (size_t i = 0; i < x.size(); ++i) f.rss += std::pow(y[i] - f.k * x[i], 2);
  const double dof = static_cast<double>(x.size()) - 1;
  f.se = (dof > 0 && sxx > 0) ? std::sqrt(f.rss / dof / sxx) : 0.0;
  return f;
}

}  // namespace

double Pick(const Estimate& e, Side side) {
  switch (side) {
    case Side::kLow:
      return e.low;
    case Side::kHigh:
      return e.high;
    case Side::kValue:
      break;
  }
  return e.value;
}

Seconds AllreduceSeconds(const AlphaBeta& ab, int replicas, Bytes bytes, Side side) {
  if (replicas <= 1) return 0.0;
  return Pick(ab.fixed_s, side) + LatencySteps(replicas) * Pick(ab.alpha_s, side) +
         BandwidthShare(replicas) * static_cast<double>(bytes) * Pick(ab.seconds_per_byte, side);
}

AlphaBeta LinkAlphaBeta(double gbps, Seconds latency) {
  AlphaBeta ab;
  ab.alpha_s = Estimate::Exact(latency);
  ab.seconds_per_byte = Estimate::Exact(1.0 / (gbps * 1e9));
  ab.how = "given: a link of " + std::to_string(gbps) + " GB/s and " +
           std::to_string(latency * 1e6) + " us";
  return ab;
}

namespace {

// Least squares y ~ X b over the columns in `active` (the others 0): the coefficients, their
// standard errors and the residual sum of squares; ok = false when X'X is singular.
struct LeastSquares {
  std::vector<double> coef, se;
  double rss = 0;
  bool ok = false;
};
LeastSquares Solve(const std::vector<std::vector<double>>& x, const std::vector<double>& y,
                   const std::vector<int>& active) {
  const size_t k = active.size(), n = y.size();
  LeastSquares out;
  out.coef.assign(x.empty() ? 0 : x[0].size(), 0.0);
  out.se = out.coef;
  if (k == 0 || n < k) return out;
  std::vector<double> scale(k, 0.0);  // columns scaled to unit RMS: bytes and counts differ 1e6x
  for (size_t j = 0; j < k; ++j) {
    for (size_t i = 0; i < n; ++i) scale[j] += x[i][active[j]] * x[i][active[j]];
    scale[j] = std::sqrt(scale[j] / n);
    if (scale[j] <= 0) return out;
  }
  // [X'X | I | X'y], Gauss-Jordan with partial pivoting.
  std::vector<std::vector<double>> a(k, std::vector<double>(2 * k + 1, 0.0));
  for (size_t r = 0; r < k; ++r) {
    for (size_t c = 0; c < k; ++c) {
      for (size_t i = 0; i < n; ++i) {
        a[r][c] += x[i][active[r]] / scale[r] * x[i][active[c]] / scale[c];
      }
    }
    a[r][k + r] = 1.0;
    for (size_t i = 0; i < n; ++i) a[r][2 * k] += x[i][active[r]] / scale[r] * y[i];
  }
  for (size_t c = 0; c < k; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < k; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    }
    if (std::fabs(a[pivot][c]) < 1e-9) return out;  // collinear: not identified
    std::swap(a[c], a[pivot]);
    const double d = a[c][c];
    for (double& v : a[c]) v /= d;
    for (size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = a[r][c];
      for (size_t q = 0; q < 2 * k + 1; ++q) a[r][q] -= f * a[c][q];
    }
  }
  for (size_t j = 0; j < k; ++j) out.coef[active[j]] = a[j][2 * k] / scale[j];
  for (size_t i = 0; i < n; ++i) {
    double fit = 0;
    for (size_t j = 0; j < k; ++j) fit += out.coef[active[j]] * x[i][active[j]];
    out.rss += (y[i] - fit) * (y[i] - fit);
  }
  const double sigma2 = n > k ? out.rss / static_cast<double>(n - k) : 0.0;
  for (size_t j = 0; j < k; ++j) out.se[active[j]] = std::sqrt(sigma2 * a[j][k + j]) / scale[j];
  out.ok = true;
  return out;
}

}  // namespace

Result<AlphaBeta> FitAlphaBeta(const std::vector<CollectiveSample>& all) {
  const std::vector<CollectiveSample> s = Usable(all);
  if (s.empty()) return Status::Error("no reduction measured at 2 replicas or more");
  // Columns: a fixed cost per reduction, latency steps, bytes through each link.
  enum { kFixed = 0, kLatency = 1, kBandwidth = 2 };
  const char* names[3] = {"a fixed cost per reduction", "latency", "bandwidth"};
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  for (const CollectiveSample& c : s) {
    x.push_back(
        {1.0, LatencySteps(c.replicas), BandwidthShare(c.replicas) * static_cast<double>(c.bytes)});
    y.push_back(c.seconds);
  }
  // Fit every term; drop (fix at 0) one the samples cannot separate from the others, or one
  // fitted negative, and refit: the fixed cost goes first, then latency; bandwidth stays.
  std::vector<int> active{kFixed, kLatency, kBandwidth};
  std::vector<std::string> dropped;
  LeastSquares fit;
  while (!active.empty()) {
    fit = Solve(x, y, active);
    int drop = -1;
    if (!fit.ok) {
      drop = active.front();
      dropped.push_back(std::string(names[drop]) + " not identified by these samples");
    } else {
      double most_negative = 0;
      for (int j : active) {
        if (fit.coef[j] < most_negative) most_negative = fit.coef[j], drop = j;
      }
      if (drop >= 0) dropped.push_back(std::string(names[drop]) + " fitted negative");
    }
    if (drop < 0) break;
    active.erase(std::find(active.begin(), active.end(), drop));
  }
  AlphaBeta ab;
  ab.samples = static_cast<int>(s.size());
  const auto has = [&](int j) {
    return std::find(active.begin(), active.end(), j) != active.end();
  };
  ab.fixed_s = Around(has(kFixed) ? fit.coef[kFixed] : 0.0, kZ90 * fit.se[kFixed]);
  ab.alpha_s = Around(has(kLatency) ? fit.coef[kLatency] : 0.0, kZ90 * fit.se[kLatency]);
  ab.seconds_per_byte =
      Around(has(kBandwidth) ? fit.coef[kBandwidth] : 0.0, kZ90 * fit.se[kBandwidth]);
  ab.alpha_assumed = !has(kLatency);
  ab.beta_assumed = !has(kBandwidth);
  ab.residual_rms_s = std::sqrt(fit.rss / static_cast<double>(y.size()));
  ab.how = "least squares on " + std::to_string(y.size()) +
           " reductions: t = fixed + 2(N-1) alpha + 2(N-1)/N S / beta";
  for (const std::string& d : dropped) ab.how += "; " + d + ", fixed at 0";
  if (y.size() <= active.size()) ab.how += "; exactly determined: no residual to give an interval";
  return ab;
}

Result<AlphaBeta> FitBandwidthGivenLatency(const std::vector<CollectiveSample>& all,
                                           const Estimate& alpha_s, const Estimate& fixed_s) {
  const std::vector<CollectiveSample> s = Usable(all);
  if (s.empty()) return Status::Error("no reduction measured at 2 replicas or more");
  std::vector<double> x, y;
  for (const CollectiveSample& c : s) {
    x.push_back(BandwidthShare(c.replicas) * static_cast<double>(c.bytes));
    y.push_back(c.seconds - LatencySteps(c.replicas) * alpha_s.value - fixed_s.value);
  }
  const OneFit f = FitOne(x, y);
  AlphaBeta ab;
  ab.samples = static_cast<int>(s.size());
  ab.alpha_s = alpha_s;
  ab.fixed_s = fixed_s;
  ab.alpha_assumed = true;
  ab.seconds_per_byte = Around(f.k, kZ90 * f.se);
  ab.residual_rms_s = std::sqrt(f.rss / static_cast<double>(s.size()));
  ab.how = "bandwidth by least squares on " + std::to_string(s.size()) +
           " reductions, latency shared with the reference precision";
  return ab;
}

}  // namespace stepscope::model
