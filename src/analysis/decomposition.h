// Decomposition of the step time of one run (all ranks of one replica count) into compute,
// input wait, exposed communication (sync wait + transfer) and overhead. Definitions:
// docs/metrics.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/estimate.h"
#include "core/statistics.h"
#include "core/status.h"
#include "core/step_record.h"
#include "core/units.h"
#include "core/vocabulary.h"

namespace stepscope::analysis {

// Seconds per step. compute + input_wait + sync_wait + transfer + overhead == step, and
// sync_wait + transfer == exposed_comm.
struct Components {
  Seconds step = 0;
  Seconds compute = 0;
  Seconds input_wait = 0;
  Seconds exposed_comm = 0;
  Seconds sync_wait = 0;
  Seconds transfer = 0;
  Seconds overhead = 0;
  Seconds backward = 0;   // part of compute; 0 when the source cannot separate it
  Seconds comm_busy = 0;  // time with a reduction in flight (hidden or not)
  // Part of overhead: blocked in the job's own collectives outside the gradient's reduction
  // (StepRecord::script_comm; 0 where not recorded).
  Seconds script_comm = 0;
};

// The five components a step splits into, in stacking order, and one of them by name (0 for
// Component::kResidual, which is not part of a step).
inline constexpr Component kStepComponents[] = {Component::kCompute, Component::kInputWait,
                                                Component::kSyncWait, Component::kTransfer,
                                                Component::kOverhead};
Seconds Of(const Components& c, Component which);

// Componentwise sum and scaling, for averaging.
Components operator+(const Components& a, const Components& b);
Components operator*(const Components& a, double k);

// One collective's share of a step's exposed communication: the wait for the last rank to
// arrive at it (sync wait) and the time it moved bytes while the step waited (transfer).
struct CollectiveSplit {
  int index = 0;
  Seconds sync_wait = 0;
  Seconds transfer = 0;
};

// The sync-wait / transfer split of one rank's exposed communication per collective taking part,
// in launch order (see docs/metrics.md, "sync_wait"). `last_arrival` holds, per collective
// index, the latest ready time over all ranks. The splits sum to the rank's exposed
// communication (exposed time after the last collective's end counts as its transfer); empty
// when no collective takes part.
std::vector<CollectiveSplit> SplitExposed(const StepRecord& record,
                                          const std::map<int, Seconds>& last_arrival);

// The sync wait of one rank's step: SplitExposed's waits summed.
Seconds SyncWait(const StepRecord& record, const std::map<int, Seconds>& last_arrival);

// One rank's step split into components, given the latest arrival per collective.
Components StepComponents(const StepRecord& record, const std::map<int, Seconds>& last_arrival);

// Steps matched across ranks: steps[i][r] is rank ranks[r]'s record of step step_numbers[i].
struct MatchedSteps {
  std::vector<int> ranks;
  std::vector<int64_t> step_numbers;
  std::vector<std::vector<const StepRecord*>> steps;
  std::vector<std::string> warnings;
};

// Drops warm-up steps and steps missing on some rank (with a warning). Errors when there are
// no records, when a rank reports the same step twice, or when no step is left.
Result<MatchedSteps> MatchSteps(const std::vector<StepRecord>& records);

// The rank the step waited for (index into `step`): the one that arrived last at the step's last
// collective, the collective taking part with the latest latest-arrival (the first such rank on
// a tie); without collectives taking part, the rank with the largest step time.
size_t CriticalRank(const std::vector<const StepRecord*>& step,
                    const std::map<int, Seconds>& last_arrival);

// Makes the critical rank's components `c` add up to the job's step: time beyond the critical
// rank's own step is overhead; a critical step longer than the job's (that rank began before the
// job's last rank did) gives the excess back from its beginning: its input wait, then overhead,
// then compute, then its exposed communication.
void FitToJobStep(Seconds job_step, Components* c);

// Latest arrival (ready time) per collective index over the ranks of one step; only collective
// indices present on every rank take part.
std::map<int, Seconds> LastArrivals(const std::vector<const StepRecord*>& step);

struct RankDecomposition {
  int rank = 0;
  Components mean;       // means over the matched steps
  Seconds step_p50 = 0;  // of this rank's own step time
  Seconds step_p90 = 0;
  double samples_per_step = 0;
  // How far this rank is ahead of each step's last-arriving rank, from the work since the last
  // point the ranks were together: per step, W = its last arrival at this step's collectives
  // minus the end of its last collective of the previous step; lead = max over ranks of W - its
  // own W. Mean over the steps whose previous step was matched too; -1 without collectives (or
  // fewer than two consecutive matched steps).
  Seconds work_lead = -1;
  // Mean transfer of the collectives before its last one along its exposed window: reductions
  // still moving when a later bucket's last rank arrived, which hide that much of a wait.
  Seconds queued_transfer = 0;
};

struct Decomposition {
  int replicas = 0;   // number of ranks
  int64_t steps = 0;  // matched steady-state steps used
  // Per step the critical rank's components (CriticalRank), fitted to the job's step
  // (FitToJobStep), averaged over steps. The job's step runs from the moment the step's last rank
  // began it to the moment its last rank finished it: with each rank beginning a step where it
  // ended the previous one, the steps add up to the job's elapsed time.
  Components job;
  // The job's sync wait and transfer per collective along the same path (each step's critical
  // rank), means over all matched steps (0 in a step where that rank did not launch it): their
  // sums are job.sync_wait and, when every exposed second lies on a collective, job.transfer.
  std::vector<CollectiveSplit> job_collectives;
  Seconds step_p50 = 0;  // of the job's step time
  Seconds step_p90 = 0;
  double samples_per_step = 0;  // summed over ranks, mean over steps
  double samples_per_s = 0;     // samples_per_step / job.step
  // samples_per_s with its interval: moving-block bootstrap over the job's steps
  // (docs/metrics.md, "Estimates").
  Estimate throughput;
  // Throughputs of the repeats of this run (diagnose --repeats), when any; `throughput`'s
  // interval then covers them too.
  std::vector<double> repeat_samples_per_s;
  Estimate step_estimate;                // job.step with its interval (the same bootstrap)
  std::vector<RankDecomposition> ranks;  // ordered by rank
  // Per matched step, for bootstraps over steps: the job's components, and each rank's
  // (ranks_per_step[r][s], r in the order of `ranks`).
  std::vector<Components> job_per_step;
  std::vector<std::vector<Components>> ranks_per_step;
  std::vector<std::string> warnings;
};

// Decomposes one run. The records are all ranks' records of that run, in any order.
Result<Decomposition> Decompose(const std::vector<StepRecord>& records);

}  // namespace stepscope::analysis
