#include "analysis/noise_scale.h"

#include <fmt/format.h>

#include "analysis/decomposition.h"

namespace stepscope::analysis {

NoiseScale EstimateNoiseScale(const std::vector<StepRecord>& records) {
  NoiseScale ns;
  Result<MatchedSteps> matched = MatchSteps(records);
  if (!matched.ok()) {
    ns.reason = matched.status().message();
    return ns;
  }
  const MatchedSteps& m = *matched;
  if (m.ranks.size() < 2) {
    ns.reason = "one replica: local and global batch are the same";
    return ns;
  }
  double local_sum = 0, global_sum = 0, samples_sum = 0;
  int64_t local_n = 0, steps = 0;
  for (const auto& row : m.steps) {
    double g = -1;
    for (const StepRecord* r : row) {
      if (r->global_grad_sq >= 0) g = r->global_grad_sq;
    }
    bool all_local = true;
    for (const StepRecord* r : row) all_local = all_local && r->local_grad_sq >= 0;
    if (g < 0 || !all_local) continue;
    for (const StepRecord* r : row) {
      local_sum += r->local_grad_sq;
      samples_sum += static_cast<double>(r->samples);
      ++local_n;
    }
    global_sum += g;
    ++steps;
  }
  if (steps == 0) {
    ns.reason = "no step records both local and global gradient norms";
    return ns;
  }
  const double b = samples_sum / static_cast<double>(local_n);
  const double big_b = b * static_cast<double>(m.ranks.size());
  const double gb = local_sum / static_cast<double>(local_n);   // |G_b|^2
  const double gbig = global_sum / static_cast<double>(steps);  // |G_B|^2
  if (b <= 0) {
    ns.reason = "records have no samples per step";
    return ns;
  }
  ns = NoiseScaleFromMeans(gb, gbig, b, big_b);
  ns.steps = steps;
  if (ns.known) ns.reason = fmt::format("from {} steps, b = {:.0f}, B = {:.0f}", steps, b, big_b);
  return ns;
}

NoiseScale NoiseScaleFromMeans(double mean_local_sq, double mean_global_sq, double b,
                               double big_b) {
  NoiseScale ns;
  ns.local_batch = b;
  ns.global_batch = big_b;
  if (!(b > 0) || !(big_b > b)) {
    ns.reason = "the global batch must exceed the local batch";
    return ns;
  }
  ns.grad_sq = (big_b * mean_global_sq - b * mean_local_sq) / (big_b - b);
  ns.trace_sigma = (mean_local_sq - mean_global_sq) / (1 / b - 1 / big_b);
  if (ns.grad_sq <= 0 || ns.trace_sigma <= 0) {
    ns.reason = fmt::format(
        "estimate not positive (|G|^2 = {:.3g}, tr(Sigma) = {:.3g}): too few steps or too noisy",
        ns.grad_sq, ns.trace_sigma);
    return ns;
  }
  ns.b_noise = ns.trace_sigma / ns.grad_sq;
  ns.known = true;
  ns.reason = fmt::format("b = {:.0f}, B = {:.0f}", b, big_b);
  return ns;
}

double StepsToTarget(double min_steps, double b_noise, double batch) {
  return batch > 0 ? min_steps * (1 + b_noise / batch) : 0;
}

double RelativeSampleCost(double b_noise, double from, double to) {
  if (b_noise <= 0) return 1;
  return (1 + to / b_noise) / (1 + from / b_noise);
}

}  // namespace stepscope::analysis
