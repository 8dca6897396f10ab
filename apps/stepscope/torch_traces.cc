#include "apps/stepscope/torch_traces.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

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
  // The steady steps' throughput (the job's step is its slowest rank's) and the gradient bytes
  // of one step (the collectives' payload, as reduced).
  std::map<int64_t, double> job_step;
  std::map<int64_t, int64_t> step_bytes;
  int steady = 0;
  for (const auto& [rank, records] : by_rank) {
    STEPSCOPE_RETURN_IF_ERROR(
        WriteStepRecords(fmt::format("{}/rank-{}.steps.jsonl", run_dir, rank), records));
    for (const StepRecord& r : records) {
      if (r.warmup) continue;
      job_step[r.step] = std::max(job_step[r.step], r.step_time());
      int64_t bytes = 0;
      for (const CollectiveRecord& c : r.collectives) bytes += c.bytes;
      step_bytes[r.step] = std::max(step_bytes[r.step], bytes);
    }
  }
  double total = 0;
  for (const auto& [step, seconds] : job_step) {
    total += seconds;
    ++steady;
  }
  const int64_t gradient_bytes =
      step_bytes.empty()
          ? 0
          : std::max_element(step_bytes.begin(), step_bytes.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; })
                ->second;
  const double samples_per_step = static_cast<double>(info.replicas) * info.micro_batch;
  const double mean = steady > 0 ? total / steady : 0;
  nlohmann::json run = {
      {"schema", "stepscope.run/1"},
      {"source", "pytorch profiler traces (diagnose --torch-traces)"},
      {"config",
       {{"model", {{"kind", "pytorch"}}},
        {"optimizer", {{"kind", "unknown"}}},
        {"batch", info.micro_batch},
        {"accum", 1},
        {"loader_workers", 1},
        {"synthetic_input", false},
        {"reducer", {{"bucket_mb", 25}, {"overlap", true}, {"reduce", true}, {"dtype", "fp32"}}}}},
      {"model",
       {{"parameters", gradient_bytes / 4},
        {"gradient_bytes", gradient_bytes},
        {"activation_bytes_per_sample", 0}}},
      {"replicas", info.replicas},
      {"allreduce", "gloo"},
      {"steps", by_rank.begin()->second.size()},
      {"steady_steps", steady},
      {"samples_per_step", samples_per_step},
      {"samples_per_s", mean > 0 ? samples_per_step / mean : 0.0},
      {"step_time_mean_s", mean},
      {"emulation", {{"emulated", false}}},
      {"notes", set->warnings}};
  const std::string path = run_dir + "/run.json";
  std::ofstream out(path);
  out << run.dump(2) << "\n";
  if (!out) return Status::Error("cannot write " + path);
  return Status::Ok();
}

}  // namespace stepscope::app
