// diagnose --torch-traces: a run of a script that does not import the stepscope_torch helper but
// writes PyTorch profiler traces into $STEPSCOPE_RUN_DIR, completed into a run the analysis reads
// (rank-R.steps.jsonl through analyze's importers, and run.json).
#pragma once

#include <string>

#include "core/status.h"

namespace stepscope::app {

struct TraceRunInfo {
  int replicas = 1;
  int micro_batch = 1;   // samples per step per rank (the traces do not say)
  int warmup_steps = 1;  // the first steps of each rank left out
};

// Imports the traces in `run_dir` and writes rank-R.steps.jsonl for every rank and run.json
// (docs/torch.md, "Without the helper"). Errors name the run directory and what to do.
Status CompleteRunFromTraces(const std::string& run_dir, const TraceRunInfo& info);

}  // namespace stepscope::app
