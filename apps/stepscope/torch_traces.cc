#include "apps/stepscope/torch_traces.h"

#include <fmt/format.h>

#include <map>

#include "apps/stepscope/trace_run_json.h"
#include "core/step_record.h"
#include "trace/trace_set.h"

namespace stepscope::app {

Status CompleteRunFromTraces(const std::string& run_dir, const TraceRunInfo& info) {
  std::vector<std::string> notes;
  Result<std::vector<std::string>> files = trace::ExpandInputs({run_dir}, &notes);
  if (!files.ok() || files->empty()) {
    return Status::Error(
        "no step records and no profiler trace in " + run_dir +
        ": with --torch-traces the script must write one trace per rank there (e.g. "
        "prof.export_chrome_trace(os.environ['STEPSCOPE_RUN_DIR'] + f'/rank-{rank}.pt.trace.json')"
        "; docs/torch.md)");
  }
  trace::TraceSetOptions options;
  options.warmup_steps = info.warmup_steps;
  options.samples_per_step = info.micro_batch;
  Result<trace::TraceSet> set = trace::LoadTraceSet(*files, options);
  if (!set.ok()) return Status::Error("the run's profiler traces: " + set.status().message());
  if (static_cast<int>(set->traces.size()) != info.replicas) {
    return Status::Error(
        fmt::format("{} holds traces of {} rank(s) for a run of {}; every rank "
                    "must write its own trace",
                    run_dir, set->traces.size(), info.replicas));
  }
  std::map<int, std::vector<StepRecord>> by_rank;
  for (const StepRecord& r : set->records) by_rank[r.rank].push_back(r);
  for (const auto& [rank, records] : by_rank) {
    STEPSCOPE_RETURN_IF_ERROR(
        WriteStepRecords(fmt::format("{}/rank-{}.steps.jsonl", run_dir, rank), records));
  }
  TraceRunFacts facts;
  facts.replicas = info.replicas;
  facts.micro_batch = info.micro_batch;
  facts.source = "pytorch profiler traces (diagnose --torch-traces)";
  facts.notes = set->warnings;
  facts.script_calls = trace::ScriptCallsPerStep(*set);
  return WriteRunJson(run_dir, TraceRunJson(set->records, facts));
}

}  // namespace stepscope::app
