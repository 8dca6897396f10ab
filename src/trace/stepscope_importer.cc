// Importer for stepscope's own step records (rank-R.steps.jsonl, written by the trainer): the
// records already hold the per-step numbers; overlap and idle are derived from them.
#include <algorithm>

#include "trace/importer.h"

namespace stepscope::trace {

Result<ImportedTrace> ImportStepRecords(const std::string& path, const ImportOptions& options) {
  auto records = ReadStepRecords(path);
  if (!records.ok()) return records.status();
  ImportedTrace out;
  out.path = path;
  out.format = TraceFormat::kStepscopeSteps;
  out.steps_from = StepSource::kRecorded;
  out.clock = ClockKind::kAligned;
  std::optional<int> rank = options.rank;
  if (!rank && !records->empty()) {
    rank = records->front().rank;
    out.rank_from_metadata = true;
  }
  if (!rank) rank = RankFromFileName(path);
  out.rank = rank.value_or(0);
  out.world_size = options.world_size.value_or(-1);
  for (const StepRecord& r : *records) {
    if (r.rank != records->front().rank) {
      return Status::Error(path + ": step " + std::to_string(r.step) + " has rank " +
                           std::to_string(r.rank) + " but the file's first record has rank " +
                           std::to_string(records->front().rank) + "; one file per rank");
    }
    ImportedStep s;
    s.step = r.step;
    s.start = r.start;
    s.end = r.end;
    s.backward_start = r.backward_start;
    s.compute = r.compute;
    s.forward = r.forward, s.backward = r.backward, s.optimizer = r.optimizer;
    s.comm_busy = r.comm_busy;
    s.exposed_comm = r.exposed_comm;
    s.overlap = std::max(0.0, r.comm_busy - r.exposed_comm);
    s.input_wait = r.input_wait;
    s.samples = r.samples > 0 ? r.samples : -1;  // 0: the records' producer did not know
    s.warmup = r.warmup;
    s.script_comm = r.script_comm;
    s.idle = std::max(0.0, r.step_time() - r.input_wait - r.compute - r.exposed_comm);
    for (const CollectiveRecord& c : r.collectives) {
      s.collectives.push_back({"allreduce", "", c.bytes, c.index, c.ready, c.end});
    }
    out.steps.push_back(std::move(s));
  }
  std::sort(out.steps.begin(), out.steps.end(),
            [](const ImportedStep& a, const ImportedStep& b) { return a.step < b.step; });
  return out;
}

}  // namespace stepscope::trace
