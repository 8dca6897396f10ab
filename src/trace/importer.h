// Importers: turn a trace file into per-rank, per-step records. One common output for every
// format (PyTorch Kineto GPU, Kineto CPU-only/gloo, PyTorch legacy profiler, stepscope's own
// step records); see docs/formats.md for the fields read from each.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/step_record.h"

namespace stepscope::trace {

enum class TraceFormat { kKinetoGpu, kKinetoCpu, kLegacy, kStepscopeSteps, kStepscopeTrace };
const char* TraceFormatName(TraceFormat format);

// Where a file's step boundaries came from.
enum class StepSource {
  kProfilerStep,   // "ProfilerStep#N" annotations (torch.profiler with a schedule)
  kRecorded,       // stepscope's own step events or step records
  kOptimizerStep,  // inferred: each step ends where an "Optimizer.step#..." annotation ends
  kForward,        // inferred: each step starts where a forward-pass annotation starts
  kWholeTrace,     // inferred: nothing repeats, so the whole trace is one step
};
const char* StepSourceName(StepSource source);

// How a file's timestamps relate to other files' timestamps.
enum class ClockKind {
  kEpoch,      // wall clock (Unix epoch): comparable across hosts up to clock sync
  kMonotonic,  // a host's monotonic clock: comparable between processes of one host
  kUnaligned,  // each process counts from its own zero (legacy profiler)
  kAligned,    // stepscope's clock, aligned across ranks by the trainer
};
const char* ClockKindName(ClockKind kind);

struct ImportedCollective {
  std::string name;    // e.g. "allreduce", "gloo:all_reduce", an NCCL kernel name
  std::string group;   // process group name; "" when the trace does not say
  int64_t bytes = -1;  // payload bytes per rank, -1 when unknown
  int64_t seq = -1;    // sequence number from the trace's metadata, -1 when absent
  double start = 0;    // seconds: when this rank arrived (launched it)
  double end = 0;      // seconds
};

struct ImportedStep {
  int64_t step = 0;  // from "ProfilerStep#N" (or the record's step)
  double start = 0;  // seconds, on the file's clock
  double end = 0;
  // Seconds: when the step's backward pass began (stepscope's own: the reduced micro-batch's;
  // PyTorch: the first autograd function of the step); nullopt when the trace does not show it.
  std::optional<double> backward_start;
  double compute = 0;  // union of compute intervals within the step
  // The compute split into the step-time model's phases (seconds; they sum to `compute`): before
  // backward_start, after the last collective ended (the optimizer), and between. All 0 when the
  // importer cannot place them (no backward start).
  double forward = 0, backward = 0, optimizer = 0;
  double comm_busy = 0;     // union of communication intervals within the step
  double overlap = 0;       // |comm ∩ compute|: communication hidden behind compute
  double exposed_comm = 0;  // comm_busy - overlap
  double idle = 0;          // step time with neither compute nor communication
  double input_wait = 0;    // DataLoader annotations within the step
  bool host_bound = false;  // device traces: the device was idle more than it computed
  int64_t samples = -1;     // examples processed, -1 when the trace does not say
  bool warmup = false;      // the producer marked the step as warm-up
  // Of the idle time, blocked in the job's own collectives (StepRecord::script_comm): stepscope's
  // records; PyTorch traces that show where collectives were launched (collective_origin.h).
  // nullopt where the trace cannot tell them from the gradient's.
  std::optional<double> script_comm;
  // PyTorch traces: the script's own calls launched within the step, by name ("barrier").
  std::map<std::string, int> script_calls;
  std::vector<ImportedCollective> collectives;  // in start order
  double step_time() const { return end - start; }
};

struct ImportedTrace {
  std::string path;
  TraceFormat format = TraceFormat::kKinetoGpu;
  int rank = 0;
  int world_size = -1;  // -1: unknown
  ClockKind clock = ClockKind::kMonotonic;
  bool rank_from_metadata = false;  // false: from the file name or the options
  StepSource steps_from = StepSource::kProfilerStep;
  uint64_t bytes = 0;  // uncompressed bytes read
  uint64_t events = 0;
  uint64_t warnings = 0;
  std::vector<std::string> warning_messages;
  std::vector<ImportedStep> steps;  // in step order

  // The shared per-step vocabulary (compute, exposed_comm, input_wait, comm_busy, collectives
  // with ready = arrival).
  std::vector<StepRecord> ToStepRecords() const;
};

struct ImportOptions {
  std::optional<int> rank;        // overrides the trace's metadata and the file name
  std::optional<int> world_size;  // overrides the trace's metadata
  // Device traces: a step is host-bound when device idle time exceeds this fraction of it.
  double host_bound_idle_fraction = 0.5;
};

// Imports one file; the format is detected from its content (and ".jsonl" for step records).
Result<ImportedTrace> ImportTrace(const std::string& path, const ImportOptions& options = {});
// The same over an in-memory Chrome trace (plain or gzip); `name` is used in messages.
Result<ImportedTrace> ImportTraceBuffer(std::string_view data, const std::string& name,
                                        const ImportOptions& options = {});

// Rank from a file name: "rank-3", "rank3", "_rank_3", "rank.3" (last match wins); nullopt if none.
std::optional<int> RankFromFileName(const std::string& path);

}  // namespace stepscope::trace
