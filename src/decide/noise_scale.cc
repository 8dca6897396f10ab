#include "decide/noise_scale.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "analysis/decomposition.h"
#include "core/statistics.h"

namespace stepscope::decide {
namespace {

// One step's gradient norms over its ranks: the reduced |G_B|^2 (the same on every rank), the
// sum of the ranks' local |G_b|^2 and of their samples; nullopt unless every rank recorded its
// local norm and some rank the reduced one.
struct StepNorms {
  double global_sq = 0;
  double local_sq_sum = 0;
  double samples = 0;
};
std::optional<StepNorms> NormsOf(const std::vector<const StepRecord*>& row) {
  StepNorms n;
  double global = -1;
  for (const StepRecord* r : row) {
    if (r->global_grad_sq >= 0) global = r->global_grad_sq;
    if (r->local_grad_sq < 0) return std::nullopt;
    n.local_sq_sum += r->local_grad_sq;
    n.samples += static_cast<double>(r->samples);
  }
  if (global < 0) return std::nullopt;
  n.global_sq = global;
  return n;
}

}  // namespace

NoiseScale EstimateNoiseScale(const std::vector<StepRecord>& records) {
  NoiseScale ns;
  Result<analysis::MatchedSteps> matched = analysis::MatchSteps(records);
  if (!matched.ok()) {
    ns.reason = matched.status().message();
    return ns;
  }
  const analysis::MatchedSteps& m = *matched;
  if (m.ranks.size() < 2) {
    ns.reason = "one replica: local and global batch are the same";
    return ns;
  }
  double local_sum = 0, global_sum = 0, samples_sum = 0;
  int64_t local_n = 0, steps = 0;
  for (const auto& row : m.steps) {
    const std::optional<StepNorms> n = NormsOf(row);
    if (!n) continue;
    local_sum += n->local_sq_sum;
    samples_sum += n->samples;
    local_n += static_cast<int64_t>(row.size());
    global_sum += n->global_sq;
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

NoiseScale EstimatePooledNoiseScale(const std::vector<const std::vector<StepRecord>*>& runs) {
  NoiseScale ns;
  std::vector<double> grad_sq, trace;  // per step: unbiased |G|^2 and tr(Sigma)
  double largest_b = 0, largest_big_b = 0;
  std::string why_not;
  for (const std::vector<StepRecord>* records : runs) {
    Result<analysis::MatchedSteps> matched = analysis::MatchSteps(*records);
    if (!matched.ok()) {
      why_not = matched.status().message();
      continue;
    }
    const size_t n = matched->ranks.size();
    if (n < 2) continue;
    bool used = false;
    for (const auto& row : matched->steps) {
      const std::optional<StepNorms> norms = NormsOf(row);
      if (!norms || !(norms->samples > 0)) continue;
      const double g = norms->global_sq, local = norms->local_sq_sum, samples = norms->samples;
      const int64_t step = row.front()->step;
      ns.first_step = ns.first_step < 0 ? step : std::min(ns.first_step, step);
      ns.last_step = std::max(ns.last_step, step);
      ns.samples_seen = std::max(ns.samples_seen, static_cast<double>(step + 1) * samples);
      const double b = samples / static_cast<double>(n), big_b = samples;
      const double gb = local / static_cast<double>(n);
      grad_sq.push_back((big_b * g - b * gb) / (big_b - b));
      trace.push_back((gb - g) / (1 / b - 1 / big_b));
      used = true;
      if (big_b > largest_big_b) largest_b = b, largest_big_b = big_b;
    }
    ns.runs += used ? 1 : 0;
  }
  ns.steps = static_cast<int64_t>(grad_sq.size());
  ns.local_batch = largest_b;
  ns.global_batch = largest_big_b;
  if (grad_sq.empty()) {
    ns.reason =
        why_not.empty() ? "no run of more than one replica recorded gradient norms" : why_not;
    return ns;
  }
  ns.grad_sq = Mean(grad_sq);
  ns.trace_sigma = Mean(trace);
  if (ns.grad_sq <= 0 || ns.trace_sigma <= 0) {
    ns.reason = fmt::format(
        "estimate not positive over {} steps of {} runs (|G|^2 = {:.3g}, tr(Sigma) = {:.3g}): "
        "too few steps or too noisy",
        ns.steps, ns.runs, ns.grad_sq, ns.trace_sigma);
    return ns;
  }
  ns.known = true;
  ns.b_noise = ns.trace_sigma / ns.grad_sq;
  std::vector<double> index(grad_sq.size());
  for (size_t i = 0; i < index.size(); ++i) index[i] = static_cast<double>(i);
  const Estimate band = Bootstrap(index, [&](const std::vector<double>& pick) {
    double g = 0, t = 0;
    for (double i : pick) g += grad_sq[static_cast<size_t>(i)], t += trace[static_cast<size_t>(i)];
    return g > 0 ? t / g : std::numeric_limits<double>::infinity();
  });
  ns.b_noise_low = band.low;
  ns.b_noise_high = band.high;
  ns.reason = fmt::format(
      "pooled over {} steps of {} runs (largest b = {:.0f}, B = {:.0f}); 90% band {:.3g} to "
      "{:.3g}; measured at steps {} to {} of training (at most {:.0f} samples seen): the noise "
      "scale grows as training proceeds, so later in training it is larger than this",
      ns.steps, ns.runs, largest_b, largest_big_b, ns.b_noise_low, ns.b_noise_high, ns.first_step,
      ns.last_step, ns.samples_seen);
  return ns;
}

namespace {

// B_noise in each of `windows` equal stretches of the sampled steps; false when one is unknown.
bool StretchEstimates(const std::vector<double>& local_sq, const std::vector<double>& global_sq,
                      size_t n, double b, double big_b, int windows, std::vector<double>* out,
                      std::string* why) {
  out->clear();
  for (int w = 0; w < windows; ++w) {
    const size_t begin = n * static_cast<size_t>(w) / static_cast<size_t>(windows);
    const size_t end = n * static_cast<size_t>(w + 1) / static_cast<size_t>(windows);
    double local = 0, global = 0;
    for (size_t i = begin; i < end; ++i) local += local_sq[i], global += global_sq[i];
    const double count = static_cast<double>(end - begin);
    const NoiseScale part = NoiseScaleFromMeans(local / count, global / count, b, big_b);
    if (!part.known) {
      *why = fmt::format("stretch {} of {} of training: {}", w + 1, windows, part.reason);
      return false;
    }
    out->push_back(part.b_noise);
  }
  return true;
}

}  // namespace

NoiseScale NoiseScaleOverTraining(const std::vector<double>& local_sq,
                                  const std::vector<double>& global_sq, double b, double big_b,
                                  int windows) {
  NoiseScale ns;
  ns.local_batch = b;
  ns.global_batch = big_b;
  const size_t n = std::min(local_sq.size(), global_sq.size());
  ns.steps = static_cast<int64_t>(n);
  if (windows < 2 || n < 2 * static_cast<size_t>(windows)) {
    ns.reason = fmt::format("{} sampled steps: too few for {} stretches of training", n, windows);
    return ns;
  }
  // The finest cut whose every stretch has a positive estimate: a short or noisy run can leave
  // a stretch where |G|^2 is lost in the noise, and halving the cut pools it with its neighbour.
  std::vector<double> stretches;
  int cut = windows;
  while (!StretchEstimates(local_sq, global_sq, n, b, big_b, cut, &stretches, &ns.reason)) {
    if (cut <= 2) return ns;
    cut = std::max(2, cut / 2);
  }
  ns.known = true;
  ns.method = "over_training";
  ns.b_noise = Mean(stretches);
  // The band is the spread over training, not a sampling interval: the least and the most any
  // stretch saw.
  ns.b_noise_low = *std::min_element(stretches.begin(), stretches.end());
  ns.b_noise_high = *std::max_element(stretches.begin(), stretches.end());
  ns.reason = fmt::format(
      "mean over {} equal stretches of {} sampled steps (from {:.3g} in the least to {:.3g} in "
      "the most)",
      cut, n, ns.b_noise_low, ns.b_noise_high);
  return ns;
}

NoiseScale NoiseScaleOfRun(const std::vector<StepRecord>& records, int windows) {
  std::map<int64_t, std::vector<const StepRecord*>> by_step;
  std::set<int> ranks;
  for (const StepRecord& r : records) {
    by_step[r.step].push_back(&r);
    ranks.insert(r.rank);
  }
  std::vector<double> local_sq, global_sq;
  double b = 0, big_b = 0;
  NoiseScale progress;
  for (const auto& [step, row] : by_step) {
    if (row.size() != ranks.size() || ranks.size() < 2) continue;
    const std::optional<StepNorms> norms = NormsOf(row);
    if (!norms || !(norms->samples > 0)) continue;
    const double samples = norms->samples;
    local_sq.push_back(norms->local_sq_sum / static_cast<double>(row.size()));
    global_sq.push_back(norms->global_sq);
    b = samples / static_cast<double>(row.size());
    big_b = samples;
    if (progress.first_step < 0) progress.first_step = step;
    progress.last_step = step;
    progress.samples_seen = static_cast<double>(step + 1) * samples;
  }
  if (local_sq.empty()) {
    NoiseScale ns;
    ns.reason = ranks.size() < 2 ? "one rank: nothing to compare the local gradient with"
                                 : "no step recorded every rank's gradient norms";
    return ns;
  }
  NoiseScale ns = NoiseScaleOverTraining(local_sq, global_sq, b, big_b, windows);
  ns.first_step = progress.first_step;
  ns.last_step = progress.last_step;
  ns.samples_seen = progress.samples_seen;
  ns.runs = 1;
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
  ns.b_noise = ns.b_noise_low = ns.b_noise_high = ns.trace_sigma / ns.grad_sq;
  ns.known = true;
  ns.runs = 1;
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

}  // namespace stepscope::decide
