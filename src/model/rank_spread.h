// How the ranks' compute spreads: each rank's step-to-step ratio to its own mean (the sample
// whose expected maximum over N ranks is the wait for the slowest, order_statistics.h), and the
// ranks persistently slower than the others (named stragglers).
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "model/run_observation.h"
#include "model/step_model.h"

namespace stepscope::model {

// Into m->compute_jitter, sorted: every baseline rank's compute (forward, backward, optimizer)
// per steady step over its own mean, or 1 where none was measured. Length-bucketed runs
// (m->length_buckets applied, with its spread) take the bucketed spread times the noise per
// position instead, and say so in m->notes: every rank of a step draws from one bucket, so a
// rank's ratio to its own mean counts what all ranks share, which nobody waits on.
void FitComputeJitter(const std::vector<const RunObservation*>& baselines, StepModel* m);

// The ranks of `largest` (the largest baseline) whose mean compute per step is at least
// `margin` above the median of the other ranks' and at least 1 % of the step: rank -> its ratio
// to that median. Variable-length text (`share_at` > 0, the positions `lengths->token_share`
// holds at): each rank's forward and backward count at the typical positions, so that a rank
// that drew longer examples is not taken for a slow device.
std::map<int, double> FindStragglers(const RunObservation& largest, double share_at,
                                     const std::optional<LengthBuckets>& lengths, double margin);

}  // namespace stepscope::model
