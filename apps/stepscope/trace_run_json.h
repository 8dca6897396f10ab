// run.json for a run imported from profiler traces (diagnose --torch-traces, analyze --out): the
// fields the analysis and the step-time model read back (docs/train-output.md), from the
// imported step records alone; what the traces do not say is written as the defaults it takes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/step_record.h"

namespace stepscope::app {

struct TraceRunFacts {
  int replicas = 1;
  int micro_batch = 1;  // samples per step per rank (1: unknown, throughput in steps)
  std::string source;   // who made the run, e.g. "pytorch profiler traces (analyze --out)"
  std::vector<std::string> notes;
  // The script's own collectives by name, calls per steady step (trace::ScriptCallsPerStep).
  std::vector<std::pair<std::string, double>> script_calls;
};

// The steady steps' throughput (the job's step is its slowest rank's, step by step) and the
// gradient bytes of one step (the collectives' payload, as reduced) over `records` (every
// rank's). Assumed: fp32 on the wire, DDP's 25 MB buckets with overlap, one loader worker.
nlohmann::json TraceRunJson(const std::vector<StepRecord>& records, const TraceRunFacts& facts);

// Spreads `gradient_bytes` (less the sizes already known) evenly over the collectives of `r`
// that have no size (PyTorch 1.x traces record none); false when there were none, or no bytes
// to spread.
bool SizeUnsizedCollectives(int64_t gradient_bytes, StepRecord* r);

// Writes `run_json` to DIR/run.json. Errors name the file.
Status WriteRunJson(const std::string& dir, const nlohmann::json& run_json);

}  // namespace stepscope::app
