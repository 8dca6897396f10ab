#include "apps/stepscope/trace_run_json.h"

#include <algorithm>
#include <fstream>
#include <map>

namespace stepscope::app {

nlohmann::json TraceRunJson(const std::vector<StepRecord>& records, const TraceRunFacts& facts) {
  std::map<int64_t, double> job_step;
  std::map<int64_t, int64_t> step_bytes;
  std::map<int, int64_t> steps_of_rank;
  for (const StepRecord& r : records) {
    ++steps_of_rank[r.rank];
    if (r.warmup) continue;
    job_step[r.step] = std::max(job_step[r.step], r.step_time());
    int64_t bytes = 0;
    for (const CollectiveRecord& c : r.collectives) bytes += c.bytes;
    step_bytes[r.step] = std::max(step_bytes[r.step], bytes);
  }
  double total = 0;
  for (const auto& [step, seconds] : job_step) total += seconds;
  const int steady = static_cast<int>(job_step.size());
  int64_t gradient_bytes = 0;
  for (const auto& [step, bytes] : step_bytes) gradient_bytes = std::max(gradient_bytes, bytes);
  int64_t steps = 0;
  for (const auto& [rank, n] : steps_of_rank) steps = std::max(steps, n);
  const double samples_per_step = static_cast<double>(facts.replicas) * facts.micro_batch;
  const double mean = steady > 0 ? total / steady : 0;
  // As the PyTorch helper writes them: calls over the steady steps.
  nlohmann::json script = nlohmann::json::object();
  for (const auto& [name, per_step] : facts.script_calls) script[name] = per_step * steady;
  nlohmann::json run = {
      {"schema", "stepscope.run/1"},
      {"source", facts.source},
      {"config",
       {{"model", {{"kind", "pytorch"}}},
        {"optimizer", {{"kind", "unknown"}}},
        {"batch", facts.micro_batch},
        {"accum", 1},
        {"loader_workers", 1},
        {"synthetic_input", false},
        {"reducer", {{"bucket_mb", 25}, {"overlap", true}, {"reduce", true}, {"dtype", "fp32"}}}}},
      {"model",
       {{"parameters", gradient_bytes / 4},
        {"gradient_bytes", gradient_bytes},
        {"activation_bytes_per_sample", 0}}},
      {"replicas", facts.replicas},
      {"allreduce", "gloo"},
      {"steps", steps},
      {"steady_steps", steady},
      {"samples_per_step", samples_per_step},
      {"samples_per_s", mean > 0 ? samples_per_step / mean : 0.0},
      {"step_time_mean_s", mean},
      {"emulation", {{"emulated", false}}},
      {"notes", facts.notes}};
  if (!script.empty()) run["script_collectives"] = std::move(script);
  return run;
}

bool SizeUnsizedCollectives(int64_t gradient_bytes, StepRecord* r) {
  int64_t unsized = 0, sized_bytes = 0;
  for (const CollectiveRecord& c : r->collectives) {
    if (c.bytes > 0) {
      sized_bytes += c.bytes;
    } else {
      ++unsized;
    }
  }
  if (gradient_bytes <= 0 || unsized == 0 || gradient_bytes <= sized_bytes) return false;
  const int64_t each = (gradient_bytes - sized_bytes) / unsized;
  int64_t left = gradient_bytes - sized_bytes - each * unsized;  // to the first, byte exact
  for (CollectiveRecord& c : r->collectives) {
    if (c.bytes > 0) continue;
    c.bytes = each + left;
    left = 0;
  }
  return true;
}

Status WriteRunJson(const std::string& dir, const nlohmann::json& run_json) {
  const std::string path = dir + "/run.json";
  std::ofstream out(path, std::ios::trunc);
  out << run_json.dump(2) << "\n";
  out.close();
  if (!out) return Status::Error("cannot write " + path + " (is the directory writable?)");
  return Status::Ok();
}

}  // namespace stepscope::app
