// The gradient's layout as the runs measured it: the buckets' shares of the step's bytes in
// launch order, the slices backward makes ready, and how far into backward each share was
// ready (docs/model.md, "gradient readiness" and "bucket layout"). simulate.h re-buckets and
// replays them for another bucket size.
#pragma once

#include <vector>

#include "model/run_observation.h"
#include "model/step_model.h"

namespace stepscope::model {

// Gradient readiness from the buckets: for each bucket, the median share of backward elapsed
// when it was ready, against the share of the step's bytes ready by then; from {0, 0} to
// {1, 1}. `buckets`: how many buckets per step were measured.
std::vector<ReadinessPoint> BucketReadiness(const std::vector<const RunObservation*>& runs,
                                            int* buckets);

// Gradient readiness from the recorded slices: each slice's share of backward elapsed when it
// was ready (per slice the median over the runs that recorded the same slices as the first),
// against the share of the gradient's bytes ready by then. Empty when no run recorded them.
std::vector<ReadinessPoint> SliceReadiness(const std::vector<const RunObservation*>& runs);

// The measured bucket layout: each bucket's median share of the step's bytes, in launch order,
// over the steps with the most common bucket count; empty with no reducing steps.
std::vector<double> BucketShares(const std::vector<const RunObservation*>& runs);

// The gradient's slices as shares of its bytes, from the first run that recorded them; empty
// when none did.
std::vector<double> SliceShares(const std::vector<const RunObservation*>& runs);

// Into `m`: the bucket and slice shares, and the readiness profile with how it was fitted: from
// the slices where `baselines` recorded them, else from the buckets of `reducing` (the
// baselines that reduced at N >= 2), else (one bucket a step) assumed uniform over backward,
// which is noted.
void FitGradientLayout(const std::vector<const RunObservation*>& reducing,
                       const std::vector<const RunObservation*>& baselines, StepModel* m);

}  // namespace stepscope::model
