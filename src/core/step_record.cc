#include "core/step_record.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/json_number.h"
#include "core/json_text.h"

namespace stepscope {
namespace {

using nlohmann::json;

// Reads field `key` of `obj` into `out`; a missing or mistyped field is an error naming it.
template <typename T>
Status Field(const json& obj, const char* key, T* out, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    return Status::Error(where + ": missing field '" + key + "'");
  }
  if (!JsonValueTo(*it, out)) {
    return Status::Error(where + ": field '" + key + "' has the wrong type or is out of range (" +
                         it->dump() + ")");
  }
  return Status::Ok();
}

// Like Field, but leaves `out` untouched when the field is absent.
template <typename T>
Status OptionalField(const json& obj, const char* key, T* out, const std::string& where) {
  if (!obj.contains(key)) return Status::Ok();
  return Field(obj, key, out, where);
}

}  // namespace

std::string StepRecordToJson(const StepRecord& r) {
  // Written directly (no document built): the trainer writes one record per step.
  std::string out;
  out.reserve(512 + 160 * r.collectives.size());
  JsonObjectWriter w(out);
  w.Int("version", kStepRecordVersion)
      .Int("rank", r.rank)
      .Int("step", r.step)
      .Int("epoch", r.epoch)
      .Bool("warmup", r.warmup)
      .Int("samples", r.samples)
      .Int("micro_batches", r.micro_batches)
      .Number("start", r.start)
      .Number("end", r.end);
  if (r.backward_start) w.Number("backward_start", *r.backward_start);
  w.Number("input_wait", r.input_wait)
      .Number("forward", r.forward)
      .Number("backward", r.backward)
      .Number("optimizer", r.optimizer)
      .Number("compute", r.compute);
  if (r.cpu_wait) w.Number("cpu_wait", *r.cpu_wait);
  if (r.tokens) w.Int("tokens", *r.tokens);
  w.Number("exposed_comm", r.exposed_comm).Number("comm_busy", r.comm_busy);
  if (r.script_comm) w.Number("script_comm", *r.script_comm);
  if (r.loss) w.Number("loss", *r.loss);
  w.Number("local_grad_sq", r.local_grad_sq).Number("global_grad_sq", r.global_grad_sq);
  std::string& list = w.Raw("collectives");
  list.push_back('[');
  for (size_t i = 0; i < r.collectives.size(); ++i) {
    const CollectiveRecord& c = r.collectives[i];
    if (i > 0) list.push_back(',');
    JsonObjectWriter(list)
        .Int("index", c.index)
        .Int("bytes", c.bytes)
        .Number("ready", c.ready)
        .Number("start", c.start)
        .Number("end", c.end)
        .Number("busbw_gbps", c.busbw_gbps)
        .End();
  }
  list.push_back(']');
  w.End();
  return out;
}

Result<StepRecord> StepRecordFromJson(const std::string& line, const std::string& where) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Error(where + ": not a JSON object (is the file truncated?)");
  }
  int version = 1;  // lines written before the format carried a version
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "version", &version, where));
  if (version < 1 || version > kStepRecordVersion) {
    return Status::Error(where + ": step record version " + std::to_string(version) +
                         " is not one this build reads (1 to " +
                         std::to_string(kStepRecordVersion) +
                         "); was it written by a newer stepscope?");
  }
  StepRecord r;
  STEPSCOPE_RETURN_IF_ERROR(Field(j, "rank", &r.rank, where));
  STEPSCOPE_RETURN_IF_ERROR(Field(j, "step", &r.step, where));
  STEPSCOPE_RETURN_IF_ERROR(Field(j, "start", &r.start, where));
  STEPSCOPE_RETURN_IF_ERROR(Field(j, "end", &r.end, where));
  if (version >= 2 && j.contains("backward_start")) {
    Seconds backward_start = 0;
    STEPSCOPE_RETURN_IF_ERROR(Field(j, "backward_start", &backward_start, where));
    r.backward_start = backward_start;
  }
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "epoch", &r.epoch, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "warmup", &r.warmup, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "samples", &r.samples, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "micro_batches", &r.micro_batches, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "input_wait", &r.input_wait, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "forward", &r.forward, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "backward", &r.backward, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "optimizer", &r.optimizer, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "compute", &r.compute, where));
  if (version >= 3 && j.contains("cpu_wait")) {
    Seconds cpu_wait = 0;
    STEPSCOPE_RETURN_IF_ERROR(Field(j, "cpu_wait", &cpu_wait, where));
    if (cpu_wait < 0 || cpu_wait > r.compute) {
      return Status::Error(where + ": field 'cpu_wait' (" + std::to_string(cpu_wait) +
                           ") must lie between 0 and 'compute' (" + std::to_string(r.compute) +
                           ")");
    }
    r.cpu_wait = cpu_wait;
  }
  if (version >= 4 && j.contains("tokens")) {
    int64_t tokens = 0;
    STEPSCOPE_RETURN_IF_ERROR(Field(j, "tokens", &tokens, where));
    if (tokens < 1) {
      return Status::Error(where + ": field 'tokens' (" + std::to_string(tokens) +
                           ") must be at least 1 (the positions the step computed)");
    }
    r.tokens = tokens;
  }
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "exposed_comm", &r.exposed_comm, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "comm_busy", &r.comm_busy, where));
  if (version >= 5 && j.contains("script_comm")) {
    Seconds script_comm = 0;
    STEPSCOPE_RETURN_IF_ERROR(Field(j, "script_comm", &script_comm, where));
    if (!(script_comm >= 0) || script_comm > r.step_time()) {
      return Status::Error(where + ": field 'script_comm' (" + std::to_string(script_comm) +
                           ") must lie between 0 and the step's length, 'end' - 'start' (" +
                           std::to_string(r.step_time()) + ")");
    }
    r.script_comm = script_comm;
  }
  if (j.contains("loss")) {
    double loss = 0;
    STEPSCOPE_RETURN_IF_ERROR(Field(j, "loss", &loss, where));
    r.loss = loss;
  }
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "local_grad_sq", &r.local_grad_sq, where));
  STEPSCOPE_RETURN_IF_ERROR(OptionalField(j, "global_grad_sq", &r.global_grad_sq, where));
  if (r.end < r.start) {
    return Status::Error(where + ": field 'end' (" + std::to_string(r.end) +
                         ") is before 'start' (" + std::to_string(r.start) + ")");
  }
  if (auto it = j.find("collectives"); it != j.end()) {
    if (!it->is_array()) return Status::Error(where + ": field 'collectives' must be an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const json& cj = (*it)[i];
      const std::string cwhere = where + ": collectives[" + std::to_string(i) + "]";
      if (!cj.is_object()) return Status::Error(cwhere + ": not an object");
      CollectiveRecord c;
      STEPSCOPE_RETURN_IF_ERROR(Field(cj, "ready", &c.ready, cwhere));
      STEPSCOPE_RETURN_IF_ERROR(Field(cj, "start", &c.start, cwhere));
      STEPSCOPE_RETURN_IF_ERROR(Field(cj, "end", &c.end, cwhere));
      STEPSCOPE_RETURN_IF_ERROR(OptionalField(cj, "index", &c.index, cwhere));
      STEPSCOPE_RETURN_IF_ERROR(OptionalField(cj, "bytes", &c.bytes, cwhere));
      STEPSCOPE_RETURN_IF_ERROR(OptionalField(cj, "busbw_gbps", &c.busbw_gbps, cwhere));
      r.collectives.push_back(c);
    }
  }
  return r;
}

Result<std::vector<StepRecord>> ReadStepRecords(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    return Status::Error(path + ": cannot open step records (does the run directory exist?)");
  std::vector<StepRecord> records;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto r = StepRecordFromJson(line, path + ":" + std::to_string(line_no));
    if (!r.ok()) return r.status();
    records.push_back(std::move(r.value()));
  }
  return records;
}

Status WriteStepRecords(const std::string& path, const std::vector<StepRecord>& records) {
  std::ofstream out(path);
  if (!out) return Status::Error(path + ": cannot write step records (is the directory writable?)");
  for (const auto& r : records) out << StepRecordToJson(r) << '\n';
  out.flush();
  if (!out) return Status::Error(path + ": write failed (disk full?)");
  return Status::Ok();
}

}  // namespace stepscope
