// A set of trace files that together describe one job at one replica count: inputs expanded
// (directories, run directories), every file imported, one file per rank, collectives matched
// across ranks, clocks put on one time base, and the per-step records the analysis consumes.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/step_record.h"
#include "trace/importer.h"
#include "trace/match.h"

namespace stepscope::trace {

struct TraceSetOptions {
  std::optional<int> rank;           // the rank of a single input file (refused for several)
  bool rank_from_file_name = false;  // the file name's rank wins over the trace's metadata
  // Steps at the start of each rank excluded as warm-up when the producer did not mark any
  // (PyTorch traces); never all of a rank's steps.
  int warmup_steps = 1;
  // Examples per step per rank where the trace does not say (PyTorch traces). With the default
  // of 1, throughputs read as steps per second.
  int64_t samples_per_step = 1;
  ImportOptions import;
};

// How the files' clocks were put on one time base.
enum class ClockMethod {
  kShared,          // the files share a clock (aligned, or one host's monotonic/epoch clock)
  kCollectiveEnds,  // unaligned: each rank shifted so that matched collectives end together
  kStepEnds,        // unaligned, no matched collectives: shifted so that steps end together
};
const char* ClockMethodName(ClockMethod method);

struct TraceSet {
  std::vector<ImportedTrace> traces;  // one per rank, ascending rank, times shifted
  MatchResult match;
  ClockMethod clock_method = ClockMethod::kShared;
  std::map<int, double> clock_offsets;  // seconds added to each rank's times
  std::vector<std::string> notes;       // which files were used or skipped, and why
  std::vector<std::string> warnings;
  std::vector<StepRecord> records;  // all ranks, on the common time base
  // Some rank's trace gave no sample counts: its records hold options.samples_per_step.
  bool samples_assumed = false;
};

// Files to import from the command line's arguments: a directory gives its *.json, *.json.gz
// and *.steps.jsonl files (a stepscope run directory gives its step records, which are exact;
// its rank-R.trace.json files are used only when the step records are absent). Errors name the
// argument. `notes` receives what was skipped.
Result<std::vector<std::string>> ExpandInputs(const std::vector<std::string>& args,
                                              std::vector<std::string>* notes);

// Imports `files` and builds the set. Errors (exit-code 2 class: bad input) name the file; two
// files of one rank are an error naming both.
Result<TraceSet> LoadTraceSet(const std::vector<std::string>& files,
                              const TraceSetOptions& options = {});

// The script's own collectives (ImportedStep::script_calls) by name, with their calls per steady
// step: the most of any rank. Empty where the traces show none or cannot tell them apart.
std::vector<std::pair<std::string, double>> ScriptCallsPerStep(const TraceSet& set);

// The `trace` section of diagnosis.json (docs/analyze.md).
nlohmann::json TraceSectionJson(const TraceSet& set);

// A few lines for the terminal: files, clock method, per-rank overlap/idle/input.
std::string TraceSummaryText(const TraceSet& set);

}  // namespace stepscope::trace
