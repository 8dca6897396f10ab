// Compute per phase: forward and backward per micro-batch as c0 + c1 b, the optimizer per step,
// each measured N's ratio to the pooled compute, and for variable-length text the positions the
// pooled compute stands for (docs/model.md, "compute").
#pragma once

#include <vector>

#include "model/run_observation.h"
#include "model/step_model.h"

namespace stepscope::model {

// The baseline and the run at twice its micro-batch `batch` at the same N (the double-batch
// ablation), where one was measured with steady steps; both null otherwise.
struct DoubleBatchPair {
  const RunObservation* baseline = nullptr;
  const RunObservation* doubled = nullptr;
};
DoubleBatchPair FindDoubleBatchPair(const std::vector<const RunObservation*>& baselines,
                                    const std::vector<const RunObservation*>& doubles, int batch);

// Into `m` (its reference and stragglers already set): forward and backward from all
// `baselines` pooled, on the typical rank without the named stragglers (replicas sharing a host
// make each N's compute differ by its own noise); their slope in the micro-batch from `pair`,
// applied to the pooled value, or, without a pair, taken as proportional to the micro-batch
// (assumed). Each fitted N keeps its ratio to the pool (m->compute_ratio; noted where they
// differ by more than 5 %). Variable-length text (m->length_buckets, with `share_at` the
// positions its token_share holds at): the positions the pool stands for, token_share moved to
// them, and every run's drawn positions.
void FitCompute(const std::vector<RunObservation>& runs,
                const std::vector<const RunObservation*>& baselines, const DoubleBatchPair& pair,
                double share_at, StepModel* m);

}  // namespace stepscope::model
