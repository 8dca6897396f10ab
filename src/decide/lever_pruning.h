// Which recommended levers the verdict keeps once the step-time model has re-simulated each:
// a lever the model's whole band puts below the verdict's smallest worthwhile gain, and whose own
// run (when one ran) did not measure that much either, is dropped with its reason rather than
// priced, listed and joined into "all free levers" (docs/decide.md, "Levers that do not pay").
#pragma once

#include <optional>
#include <vector>

#include "core/estimate.h"
#include "decide/verdict.h"

namespace stepscope::decide {

// One lever's gain in samples/s at the largest N: the model's re-simulation, and the lever's
// own run against the baseline there when one ran.
struct LeverGainEvidence {
  Lever lever = Lever::kBiggerMicroBatch;
  Estimate predicted_gain;
  std::optional<double> measured_gain;
};

// Moves from `v->levers` into `v->levers_dropped` every lever whose predicted gain's high end
// is below `options.min_lever_gain` of `samples_per_s` (the measured throughput the gains are
// against) and whose measured gain, if any, is below it too; a lever without evidence stays.
// The situation's lever sentence and the explanation follow. Returns the levers dropped.
std::vector<Lever> DropLeversThatDoNotPay(const std::vector<LeverGainEvidence>& evidence,
                                          double samples_per_s, Verdict* v,
                                          const VerdictOptions& options = {});

}  // namespace stepscope::decide
