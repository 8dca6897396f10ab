// What the fit reads of a run's records: the steady steps by rank, the typical rank's value per
// step (the median over ranks, which one straggler does not move), per micro-batch phases, and
// whether the loader set the step.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "core/statistics.h"
#include "core/step_record.h"
#include "model/run_observation.h"

namespace stepscope::model {

using RankSteps = std::map<int, std::vector<const StepRecord*>>;

// Each rank's steady (not warm-up) records, in record order.
inline RankSteps SteadyByRank(const std::vector<StepRecord>& records) {
  RankSteps by_rank;
  for (const StepRecord& r : records) {
    if (!r.warmup) by_rank[r.rank].push_back(&r);
  }
  return by_rank;
}

// Per steady step, the median over ranks of `f` (the typical rank, untouched by a straggler).
// Ranks in `exclude` (persistent stragglers) are left out while any other rank remains.
template <typename F>
std::vector<double> TypicalPerStep(const std::vector<StepRecord>& records, F f,
                                   const std::map<int, double>& exclude = {}) {
  bool others = false;
  for (const StepRecord& r : records) others |= !r.warmup && !exclude.count(r.rank);
  std::map<int64_t, std::vector<double>> by_step;
  for (const StepRecord& r : records) {
    if (!r.warmup && (!others || !exclude.count(r.rank))) by_step[r.step].push_back(f(r));
  }
  std::vector<double> out;
  for (auto& [step, values] : by_step) out.push_back(Median(values));
  return out;
}

// A phase's time per micro-batch: `total` over the step's micro-batches.
inline double PerMicroBatch(const StepRecord& r, Seconds total) {
  return total / std::max(1, r.micro_batches);
}

// True when the typical rank waited for its batch 2 % of the step or more from loader workers
// beside it: the loader, not the rest of the step, set the step's length (one loader period).
// A loader in the training process (no workers) waits in series with the rest instead.
inline bool LoaderBound(const RunObservation& run) {
  if (run.config.loader_workers == 0) return false;
  const double wait =
      Mean(TypicalPerStep(run.records, [](const StepRecord& r) { return r.input_wait; }));
  const double step =
      Mean(TypicalPerStep(run.records, [](const StepRecord& r) { return r.step_time(); }));
  return step > 0 && wait >= 0.02 * step;
}

}  // namespace stepscope::model
