#include "decide/wire_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace stepscope::decide {

Result<double> FinalLoss(const std::vector<StepRecord>& records, int64_t tail) {
  struct StepLoss {
    double sum = 0;
    int ranks = 0;
    std::optional<int> unrecorded;  // the first rank without a loss
  };
  std::map<int64_t, StepLoss> by_step;
  for (const StepRecord& r : records) {
    StepLoss& s = by_step[r.step];
    if (!r.loss) {
      if (!s.unrecorded) s.unrecorded = r.rank;
      continue;
    }
    s.sum += *r.loss;
    ++s.ranks;
  }
  if (by_step.empty()) return Status::Error("no step records");
  double total = 0;
  int64_t used = 0;
  for (auto it = by_step.rbegin(); it != by_step.rend() && used < std::max<int64_t>(1, tail);
       ++it, ++used) {
    if (it->second.unrecorded) {
      return Status::Error(fmt::format(
          "step {}: rank {} recorded no training loss (a PyTorch script's backward the helper "
          "did not see, or a loss that was not finite: the run's notes say which; "
          "docs/torch.md)",
          it->first, *it->second.unrecorded));
    }
    const double loss = it->second.sum / it->second.ranks;
    if (!std::isfinite(loss)) {
      return Status::Error(fmt::format("step {}: the training loss is not finite", it->first));
    }
    total += loss;
  }
  return total / static_cast<double>(used);
}

Result<WireCheck> CompareWire(const std::vector<StepRecord>& fp32,
                              const std::vector<StepRecord>& reduced,
                              const std::vector<StepRecord>& fp32_reseeded,
                              const std::string& dtype, std::optional<WireError> error,
                              double tail_share) {
  WireCheck c;
  c.dtype = dtype;
  int64_t steps = 0;
  int replicas = 0;
  for (const StepRecord& r : fp32) {
    steps = std::max(steps, r.step + 1);
    replicas = std::max(replicas, r.rank + 1);
  }
  c.steps = steps;
  c.replicas = replicas;
  c.tail_steps = std::max<int64_t>(5, std::llround(tail_share * static_cast<double>(steps)));
  const char* names[] = {"the fp32 run", "the reduced-wire run", "the reseeded fp32 run"};
  const std::vector<StepRecord>* runs[] = {&fp32, &reduced, &fp32_reseeded};
  double* losses[] = {&c.loss_fp32, &c.loss_reduced, &c.loss_fp32_reseeded};
  for (int i = 0; i < 3; ++i) {
    Result<double> loss = FinalLoss(*runs[i], c.tail_steps);
    if (!loss.ok()) return loss.status().WithContext(names[i]);
    *losses[i] = *loss;
  }
  c.difference = std::abs(c.loss_reduced - c.loss_fp32);
  c.spread = std::abs(c.loss_fp32_reseeded - c.loss_fp32);
  if (c.spread == 0) {
    return Status::Error(fmt::format(
        "the fp32 run from another seed ended at exactly the same loss ({:.6g}): the seed "
        "reached nothing the training draws from, so there is no drift to judge {} against "
        "(a PyTorch script: give the command a {{seed}} placeholder where it takes its seed, "
        "docs/torch.md)",
        c.loss_fp32, dtype));
  }
  c.kept = c.difference <= c.spread;
  c.sentence = fmt::format(
      "{} on the wire checked by {} steps at {} replicas: final loss (mean of the last {} steps) "
      "{:.4f} against {:.4f} for fp32 from the same seed, a difference of {:.4f} {} the {:.4f} "
      "that fp32 from another seed drifts: {}",
      dtype, c.steps, c.replicas, c.tail_steps, c.loss_reduced, c.loss_fp32, c.difference,
      c.kept ? "within" : "beyond", c.spread,
      c.kept ? "the lever is kept" : "the lever is dropped, its numerical cost is measurable");
  if (error) {
    c.relative_error = error->relative;
    c.relative_error_max = error->relative_max;
    c.error_steps = error->steps;
    c.sentence += fmt::format(
        "; the reduced gradient differs from the same gradients reduced in fp32 by {:.3g} % "
        "(relative, over {} sampled steps; at most {:.3g} % in one)",
        100 * error->relative, error->steps, 100 * error->relative_max);
  }
  return c;
}

}  // namespace stepscope::decide
