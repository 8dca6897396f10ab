// Merges the per-rank traces of one run into a single Chrome trace: one process per rank
// ("rank R"), clocks aligned, and each collective linked across ranks by a flow arrow from the
// earliest arrival to the last one, so a late rank stands out in the Perfetto UI. Events are
// streamed (trace/reader.h in, trace/chrome_writer.h out); only per-collective summaries are
// held in memory. Format and limits: docs/report.md ("trace merge").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace stepscope::report {

// The track (thread id in every rank's process) that holds one slice per collective, from the
// rank's arrival to the collective's end; the flow arrows start and end on it.
inline constexpr int kCollectiveTrack = 1000;

struct MergeInputs {
  // One trace per rank: stepscope's own rank-R.trace.json, or imported (PyTorch) traces.
  std::vector<std::string> traces;
  // For stepscope's traces, rank-R.steps.jsonl (the collectives' arrivals), same order as
  // `traces`; empty for imported traces (the collectives are read from the trace itself).
  std::vector<std::string> step_records;
  bool stepscope = true;
};

// Finds a run directory's traces: rank-R.trace.json (+ rank-R.steps.jsonl) when present, else
// every *.json / *.json.gz other than run.json, diagnosis.json and merged*.json. Errors when
// the directory cannot be read or holds no trace.
Result<MergeInputs> FindRunTraces(const std::string& run_dir);

struct MergeStats {
  int ranks = 0;
  uint64_t events = 0;          // events copied
  uint64_t skipped_events = 0;  // events of kinds not copied (B/E pairs, counters, old flows)
  uint64_t collectives = 0;     // collectives matched across ranks
  uint64_t flows = 0;           // flow start/end pairs written
  std::string alignment;        // "aligned clocks" or "aligned on collective ends"
  std::vector<std::string> warnings;
};

Result<MergeStats> MergeTraces(const MergeInputs& inputs, const std::string& out_path);
Result<MergeStats> MergeRunTraces(const std::string& run_dir, const std::string& out_path);

}  // namespace stepscope::report
