// bench_model_whatif: the time `stepscope predict` needs for a what-if grid (the goal: 4,096
// replicas x 100 configurations in under a second, docs/model.md).
//
//   bench_model_whatif [--repeats R] [--jitter-samples J]
//
// The model: the example spec of docs/model.md (100 MB of gradient, 8 devices per host) with J
// step-to-step compute ratios (default 20,000, a 16-replica sweep of about 250 steps per
// baseline), so that the order statistics cost what they cost on a fitted model. The grid: 5
// inter-host bandwidths x 5 bucket sizes x 2 wire precisions x overlap on/off = 100
// configurations. Timed, min/median/p95 over R repeats:
//   curve:  each configuration at every doubling replica count 1..4096 (13 counts, 1,300
//           predictions, each with its band and its one-replica efficiency);
//   n4096:  each configuration at 4,096 replicas only (100 predictions);
//   peer:   each configuration at 16 replicas only, the same work at a small N: the ratio
//           n4096 / peer shows whether the cost grows with the replica count.
// Every prediction is checked (#wrong): finite, positive, efficiency in (0, 1].
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "model/simulate.h"
#include "model/spec.h"

namespace {

using namespace stepscope::model;
using Clock = std::chrono::steady_clock;

constexpr const char* kSpec = R"({
  "gradient_bytes": 102760448, "micro_batch": 32, "compute_s": 0.12, "optimizer_s": 0.004,
  "devices_per_host": 8, "intra_host": {"gbps": 150, "latency_us": 5},
  "inter_host": {"gbps": 25, "latency_us": 10}, "bucket_mb": 25, "overlap": true})";

struct Summary {
  double min, median, p95;
};

Summary Summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto at = [&](double q) { return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)]; };
  return {v.front(), at(0.5), at(0.95)};
}

std::vector<Scenario> Grid() {
  std::vector<Scenario> grid;
  for (double gbps : {10.0, 25.0, 50.0, 100.0, 200.0}) {
    for (double bucket : {1.0, 4.0, 16.0, 25.0, 100.0}) {
      for (const char* dtype : {"fp32", "bf16"}) {
        for (bool overlap : {true, false}) {
          Scenario s;
          s.inter_link = LinkAlphaBeta(gbps, 10e-6);
          s.bucket_mb = bucket;
          s.dtype = dtype;
          s.overlap = overlap;
          grid.push_back(s);
        }
      }
    }
  }
  return grid;
}

// Predicts every configuration at every replica count; returns the seconds taken and adds the
// predictions that fail the sanity check to *wrong.
double Run(const StepModel& m, const std::vector<Scenario>& grid, const std::vector<int>& counts,
           long* wrong, double* checksum) {
  const Clock::time_point start = Clock::now();
  for (const Scenario& base : grid) {
    for (int n : counts) {
      Scenario s = base;
      s.replicas = n;
      stepscope::Result<Prediction> p = Predict(m, s);
      const bool ok = p.ok() && std::isfinite(p->samples_per_s.value) &&
                      p->samples_per_s.value > 0 && p->efficiency.value > 0 &&
                      p->efficiency.value <= 1 + 1e-9;
      if (!ok) ++*wrong;
      if (p.ok()) *checksum += p->samples_per_s.value;
    }
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7, jitter_samples = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--repeats")) repeats = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--jitter-samples"))
      jitter_samples = std::max(1, std::atoi(argv[i + 1]));
  }
  stepscope::Result<StepModel> spec = ModelFromSpec(kSpec, "bench spec");
  if (!spec.ok()) {
    std::fprintf(stderr, "bench_model_whatif: %s\n", spec.status().message().c_str());
    return 1;
  }
  StepModel m = *spec;
  std::mt19937 rng(7);
  std::lognormal_distribution<double> ratio(0.0, 0.05);
  m.compute_jitter.clear();
  for (int i = 0; i < jitter_samples; ++i) m.compute_jitter.push_back(ratio(rng));
  std::sort(m.compute_jitter.begin(), m.compute_jitter.end());  // as a fitted model keeps it
  const std::vector<Scenario> grid = Grid();
  std::vector<int> curve;
  for (int n = 1; n <= 4096; n *= 2) curve.push_back(n);

  std::vector<double> t_curve, t_4096, t_16;
  long wrong = 0;
  double checksum = 0;
  for (int r = 0; r < repeats; ++r) {
    t_curve.push_back(Run(m, grid, curve, &wrong, &checksum));
    t_4096.push_back(Run(m, grid, {4096}, &wrong, &checksum));
    t_16.push_back(Run(m, grid, {16}, &wrong, &checksum));
  }
  const Summary c = Summarise(t_curve), big = Summarise(t_4096), peer = Summarise(t_16);
  std::printf("bench_model_whatif: %zu configurations, %d jitter samples, %d repeats\n",
              grid.size(), jitter_samples, repeats);
  std::printf("  %-34s %10s %10s %10s\n", "", "min s", "median s", "p95 s");
  std::printf("  %-34s %10.4f %10.4f %10.4f\n", "curve 1..4096 (1,300 predictions)", c.min,
              c.median, c.p95);
  std::printf("  %-34s %10.4f %10.4f %10.4f\n", "at 4096 only (100 predictions)", big.min,
              big.median, big.p95);
  std::printf("  %-34s %10.4f %10.4f %10.4f\n", "peer: at 16 only (100 predictions)", peer.min,
              peer.median, peer.p95);
  std::printf("  ratio at 4096 / at 16: %.2f; curve median against the 1 s goal: %.3f\n",
              peer.median > 0 ? big.median / peer.median : 0.0, c.median);
  std::printf("  #wrong %ld (checksum %.6g)\n", wrong, checksum);
  return wrong == 0 ? 0 : 1;
}
