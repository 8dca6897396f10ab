// The progress line's estimate of how long the rest of a sweep takes, from the runs that
// finished. A run's time is its start-up (launcher, interpreter, initialisation, teardown) and
// its step loop: a run of 1000 steps (the noise-scale run) is not as long as one of 30 at the same
// replica count, so where the records tell the two apart, each run left is priced by its steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sweep/sweep_runner.h"
#include "sweep/sweep_store.h"

namespace stepscope::sweep {

struct RunDuration {
  int replicas = 0;
  std::string timing_class;  // runs of one class share their time a step (an emulated device)
  double seconds = 0;        // the whole run, as the sweep timed it
  int64_t steps = 0;         // the steps rank 0 recorded; 0: unknown (no records, none readable)
  double loop_seconds = 0;   // rank 0's first step's start to its last step's end
};

// `run`'s duration, with its loop from rank 0's records in `run_dir` where they can be read.
RunDuration MeasureRunDuration(const StoredRun& run, const std::string& run_dir);

// Expected seconds for the jobs from `next` on (`classes[i]`: job i's timing class; empty: all
// ""). Each job is priced from the finished runs at its replica count (all finished runs when
// none is): where the job says its steps and the loops of runs of its class are known (at its
// replica count if there are some), those runs' mean start-up plus the job's steps at their mean
// time a step; otherwise the runs' mean duration. 0 while nothing has finished.
double EstimateRemainingSeconds(const std::vector<Job>& jobs, size_t next,
                                const std::vector<RunDuration>& finished,
                                const std::vector<std::string>& classes = {});

}  // namespace stepscope::sweep
