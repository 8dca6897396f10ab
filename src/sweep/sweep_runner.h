// Runs a list of jobs through a launcher, one at a time, persisting each as it finishes
// (SweepStore). Finished runs are skipped, a failed run is reported with the tail of its log and
// the sweep goes on, and an interrupt (SIGINT/SIGTERM) kills the running job's process group and
// stops the sweep with everything finished kept.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "sweep/child_process.h"
#include "sweep/launcher.h"
#include "sweep/sweep_store.h"

namespace stepscope::sweep {

struct Job {
  std::string name;  // also its directory under DIR/runs/, e.g. "baseline-n4"
  int replicas = 1;
  std::vector<std::string> args;      // the program's arguments; the runner appends --out RUNDIR
  std::vector<std::string> env = {};  // NAME=VALUE added to this job's environment
  int64_t steps = 0;                  // the steps it is asked to run (the progress estimate); 0: ?

  // What makes a finished run the same run on resume: its environment, then its arguments.
  std::vector<std::string> Identity() const;
};

enum class JobState { kFinished, kSkipped, kFailed, kInterrupted, kNotRun };
const char* ToString(JobState state);

struct JobOutcome {
  Job job;
  JobState state = JobState::kNotRun;
  std::string run_dir;
  double seconds = 0;
  int exit_code = 0;
  std::string log_tail;  // failed runs: the last lines of log.txt
  std::string message;   // why a run failed to start, if it did
  std::string cause;     // failed runs: why, in words (sweep/failure_cause.h)
};

struct SweepRunOptions {
  std::string program;  // the binary each job runs (e.g. /proc/self/exe resolved)
  Launcher launcher;
  std::vector<std::string> extra_env = LauncherEnvironment();
  // Appended to every job's arguments after --out RUNDIR; like --out, not part of what makes a
  // finished run the same run on resume (e.g. the sweep's emulated device file).
  std::vector<std::string> extra_args;
  // When set, each job finds its run directory in this environment variable instead of an
  // appended `--out RUNDIR` (a user's script under the helper: STEPSCOPE_RUN_DIR).
  std::string out_env;
  // Said after "exited 0 but wrote no run.json": what the program must do to write one, from
  // what it left in its run directory.
  std::function<std::string(const std::string& run_dir)> no_marker_hint;
  // Called when a job exits 0 without run.json: may complete the run directory (e.g. step
  // records and run.json from the profiler traces a script wrote there). An error fails the run
  // with its message.
  std::function<Status(const std::string& run_dir, const Job& job)> complete_run;
  // The class of a run by its name: runs of one class share their time a step, which the
  // progress line's estimate prices a longer run by (sweep/sweep_eta.h). Unset: one class.
  std::function<std::string(const std::string& run_name)> timing_class;
  int log_tail_lines = 15;
  // A run still going after this many seconds is ended (its process group killed) and counts as
  // failed; 0: no limit (diagnose --run-timeout).
  double run_timeout_s = 0;
  // Polled about once a second while a run goes, with its folder, its job and the seconds since
  // it started: words (non-empty) end the run as failed, with them as its cause (diagnose
  // --start-timeout: ranks that never reached the helper).
  std::function<std::string(const std::string& run_dir, const Job& job, double elapsed_s)>
      end_reason;
  // Called before a run is ended for `run_timeout_s` or `end_reason`: may ask its processes
  // where they are (sweep/process_stacks.h); its words follow the cause.
  std::function<std::string(const std::string& run_dir, const Job& job)> before_ending;
  std::FILE* progress = stderr;  // progress lines; nullptr: silent
};

struct SweepResult {
  std::vector<JobOutcome> outcomes;  // one per job, in order
  bool interrupted = false;
  int signal = 0;  // the interrupting signal
};

// "1h02m", "3m05s", "42s".
std::string FormatDuration(double seconds);

// Runs the jobs in order. `guard` must be alive (signals blocked) for interrupts to be caught.
SweepResult RunSweep(const std::vector<Job>& jobs, const SweepRunOptions& options,
                     SweepStore* store, InterruptGuard* guard);

}  // namespace stepscope::sweep
