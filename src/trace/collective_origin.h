// Which of a profiler trace's collectives the script called itself (a barrier after rank 0
// logs, a loss all-reduced to print it, metrics gathered) rather than DistributedDataParallel
// (its gradient buckets, launched from backward's autograd functions; its buffers' broadcast in
// its forward). The trace shows each call twice: where the script's thread launched it
// (`c10d::allreduce_`, `c10d::barrier`, ...) and where it ran (a gloo worker thread's
// `gloo:all_reduce`, a NCCL kernel). The launch's place says whose call it is; the run is what
// takes the time, so each run is given the launch it carries out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trace/intervals.h"

namespace stepscope::trace {

// "allreduce" from c10d::allreduce_, gloo:all_reduce, nccl:all_reduce,
// ncclKernel_AllReduce_RING_LL_Sum_float(...), ncclDevKernel_AllReduce_Sum_f32_RING_LL and
// record_param_comms' "allreduce": the collective with its namespace, underscores and case
// gone; "" for a name that holds none.
std::string CollectiveKind(std::string_view name);

// The name the report gives a launch of the script's: "all_reduce" for c10d::allreduce_,
// "all_gather" for c10d::allgather_, "barrier" for c10d::barrier (PyTorch's names for the calls
// in torch.distributed, which an object collective such as all_gather_object also makes).
std::string CallName(std::string_view launch_name);

struct CollectiveLaunch {
  std::string kind;  // CollectiveKind
  std::string name;  // CallName
  double begin = 0;
  bool script = false;  // launched outside `ddp` (MarkScriptLaunches)
};

// Marks as the script's the launches outside `ddp` (normalised intervals: backward's autograd
// functions, DDP's forward, the optimizer's step) of the kinds a script calls to log, evaluate or
// synchronise (barrier, all-reduce, broadcast, all-gather, gather, scatter, reduce). Not the
// kinds that model-parallel parts of a job call in their own forward (all-to-all for sharded
// embeddings, all_gather_into_tensor and reduce_scatter for sharded parameters, send and recv).
void MarkScriptLaunches(const std::vector<Interval>& ddp, std::vector<CollectiveLaunch>* launches);

struct CollectiveRun {
  std::string kind;  // CollectiveKind
  double begin = 0;
};

// For each run (in any order), whether it carries out a launch of the script's. The calls of a
// kind run in the order they were launched, so the k-th run of a kind (by start) carries out the
// k-th launch of that kind; a run that starts before every launch left of its kind carries out
// one the trace does not show (begun before it) and is not the script's. `device`: NCCL runs a
// barrier as an all-reduce. `launches` sorted by begin.
std::vector<bool> ScriptRuns(const std::vector<CollectiveLaunch>& launches,
                             const std::vector<CollectiveRun>& runs, bool device);

}  // namespace stepscope::trace
