#include "sweep/run_records.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <type_traits>

#include "core/json_number.h"

namespace stepscope::sweep {
namespace fs = std::filesystem;

Result<std::vector<std::pair<int, std::string>>> RankRecordFiles(const std::string& run_dir) {
  std::vector<std::pair<int, std::string>> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir, ec)) {
    const std::string name = entry.path().filename().string();
    const std::string prefix = "rank-", suffix = ".steps.jsonl";
    if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string number =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (number.empty() || !std::all_of(number.begin(), number.end(), ::isdigit)) continue;
    int rank = 0;
    const auto [end, err] = std::from_chars(number.data(), number.data() + number.size(), rank);
    if (err != std::errc() || end != number.data() + number.size()) {
      return Status::Error(entry.path().string() +
                           ": the rank number in the file name is out of range; rename or "
                           "remove the file");
    }
    files.emplace_back(rank, entry.path().string());
  }
  if (ec) return Status::Error("cannot list " + run_dir + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::vector<StepRecord>> ReadRunRecords(const std::string& run_dir) {
  Result<std::vector<std::pair<int, std::string>>> files = RankRecordFiles(run_dir);
  if (!files.ok()) return files.status();
  if (files->empty()) return Status::Error(run_dir + " holds no rank-R.steps.jsonl files");
  std::vector<StepRecord> all;
  for (const auto& [rank, path] : *files) {
    Result<std::vector<StepRecord>> records = ReadStepRecords(path);
    if (!records.ok()) return records.status();
    all.insert(all.end(), records->begin(), records->end());
  }
  return all;
}

namespace {

std::string RunJsonPath(const std::string& run_dir) { return run_dir + "/run.json"; }

Result<std::string> ReadRunJsonText(const std::string& run_dir) {
  const std::string path = RunJsonPath(run_dir);
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error(path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<nlohmann::json> ParseRunJson(const std::string& text, const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Error(path + ": not a JSON object");
  return j;
}

// The count at `key` of the object `o`; 0 when it is absent or not a count.
int64_t Count(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  int64_t n = 0;
  return it != o.end() && JsonValueTo(*it, &n) ? n : 0;
}

// True when `key` of `o` is true; false when it is absent or not true/false.
// No upper bound for NumbersIn.
constexpr double kNoLimit = std::numeric_limits<double>::infinity();

// `list` as numbers from `low` to `high` into *out; false when it is not an array or an entry
// is not such a number (*out then holds the entries before it).
bool NumbersIn(const nlohmann::json& list, double low, double high, std::vector<double>* out) {
  if (!list.is_array()) return false;
  for (const nlohmann::json& v : list) {
    double x = 0;
    if (!JsonValueTo(v, &x) || !(x >= low && x <= high)) return false;
    out->push_back(x);
  }
  return true;
}

bool Flag(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

Result<std::optional<RunPacing>> ReadRunPacing(const std::string& run_dir) {
  Result<std::string> text = ReadRunJsonText(run_dir);
  if (!text.ok()) return text.status();
  return RunPacingFromText(*text, RunJsonPath(run_dir));
}

Result<std::optional<RunPacing>> RunPacingFromText(const std::string& text,
                                                   const std::string& path) {
  Result<nlohmann::json> read = ParseRunJson(text, path);
  if (!read.ok()) return read.status();
  const nlohmann::json& j = *read;
  auto e = j.find("emulation");
  if (e == j.end() || !e->is_object() || !Flag(*e, "emulated") || !e->contains("paced_segments")) {
    return std::optional<RunPacing>();
  }
  RunPacing p;
  p.paced_segments = Count(*e, "paced_segments");
  p.unhonoured_segments = Count(*e, "unhonoured_segments");
  p.unhonoured_links = Count(*e, "unhonoured_links");
  auto link = e->find("link_gbps");
  if (link != e->end() && link->is_number() && link->get<double>() > 0) {
    // The steps the counts cover: the measured ones (`counted_steps`); files before it counted
    // every step, warm-up included.
    const int64_t buckets = Count(j, "buckets_per_step"), steps = e->contains("counted_steps")
                                                                      ? Count(*e, "counted_steps")
                                                                      : Count(j, "steps");
    // A product beyond int64 (only in a damaged file) counts as no reductions.
    if (__builtin_mul_overflow(buckets, steps, &p.link_reductions)) p.link_reductions = 0;
  }
  return std::optional<RunPacing>(p);
}

Result<RunSummary> ReadRunSummary(const std::string& run_dir) {
  Result<std::string> text = ReadRunJsonText(run_dir);
  if (!text.ok()) return text.status();
  return RunSummaryFromText(*text, RunJsonPath(run_dir));
}

std::vector<std::string> ReadRunNotes(const std::string& run_dir) {
  std::vector<std::string> notes;
  Result<std::string> text = ReadRunJsonText(run_dir);
  if (!text.ok()) return notes;
  Result<nlohmann::json> j = ParseRunJson(*text, RunJsonPath(run_dir));
  if (!j.ok()) return notes;
  const auto it = j->find("notes");
  if (it == j->end() || !it->is_array()) return notes;
  for (const nlohmann::json& note : *it) {
    if (note.is_string()) notes.push_back(note.get<std::string>());
  }
  return notes;
}

std::vector<std::pair<std::string, double>> ReadScriptCollectives(const std::string& run_dir) {
  std::vector<std::pair<std::string, double>> calls;
  Result<std::string> text = ReadRunJsonText(run_dir);
  if (!text.ok()) return calls;
  Result<nlohmann::json> j = ParseRunJson(*text, RunJsonPath(run_dir));
  if (!j.ok()) return calls;
  const auto it = j->find("script_collectives");
  const auto steps = j->find("steady_steps");
  if (it == j->end() || !it->is_object() || steps == j->end() || !steps->is_number() ||
      !(steps->get<double>() > 0)) {
    return calls;
  }
  // Names as the helper writes them (dist.barrier): anything else, such as a control character
  // that would reach a terminal in the evidence, is left out.
  const auto plain = [](const std::string& name) {
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    });
  };
  for (const auto& [name, count] : it->items()) {
    if (plain(name) && count.is_number() && count.get<double>() > 0) {
      calls.emplace_back(name, count.get<double>() / steps->get<double>());
    }
  }
  return calls;
}

Result<RunSummary> RunSummaryFromText(const std::string& text, const std::string& path) {
  Result<nlohmann::json> read = ParseRunJson(text, path);
  if (!read.ok()) return read.status();
  const nlohmann::json& j = *read;
  // The object at a dotted path, or an error naming it.
  auto at = [&](const std::string& dotted) -> Result<const nlohmann::json*> {
    const nlohmann::json* node = &j;
    size_t begin = 0;
    while (begin <= dotted.size()) {
      const size_t dot = dotted.find('.', begin);
      const std::string key = dotted.substr(begin, dot == std::string::npos ? dot : dot - begin);
      auto it = node->find(key);
      if (!node->is_object() || it == node->end()) {
        return Status::Error(path + ": field '" + dotted +
                             "' is missing (rerun the run with this stepscope, or remove it)");
      }
      node = &*it;
      if (dot == std::string::npos) break;
      begin = dot + 1;
    }
    return node;
  };
  RunSummary s;
  // Reads the field at `dotted` into *out when it is of out's kind (a number, true/false or a
  // string), else an error naming the field and the kind it must be.
  auto field = [&](const std::string& dotted, auto* out) -> Status {
    using T = std::remove_pointer_t<decltype(out)>;
    Result<const nlohmann::json*> node = at(dotted);
    if (!node.ok()) return node.status();
    const nlohmann::json& v = **node;
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) return Status::Error(path + ": field '" + dotted + "' is not a string");
      *out = v.get<std::string>();
    } else if (!JsonValueTo(v, out)) {
      const char* kind = std::is_same_v<T, bool> ? "true/false" : "a number in range";
      return Status::Error(path + ": field '" + dotted + "' is not " + kind);
    }
    return Status::Ok();
  };
  STEPSCOPE_RETURN_IF_ERROR(field("replicas", &s.replicas));
  STEPSCOPE_RETURN_IF_ERROR(field("config.batch", &s.batch));
  STEPSCOPE_RETURN_IF_ERROR(field("config.accum", &s.accum));
  STEPSCOPE_RETURN_IF_ERROR(field("config.loader_workers", &s.loader_workers));
  if (const auto raw = j.at("config").find("dataloader_num_workers"); raw != j.at("config").end()) {
    int64_t workers = 0;
    if (!JsonValueTo(*raw, &workers) || workers < 0) {
      return Status::Error(path +
                           ": field 'config.dataloader_num_workers' is not a number of workers "
                           "(0 or more); rerun the run with this stepscope, or remove the field");
    }
    s.loader_in_process = workers == 0;
  }
  STEPSCOPE_RETURN_IF_ERROR(field("config.reducer.reduce", &s.reduce));
  STEPSCOPE_RETURN_IF_ERROR(field("config.reducer.overlap", &s.overlap));
  STEPSCOPE_RETURN_IF_ERROR(field("config.synthetic_input", &s.synthetic_input));
  STEPSCOPE_RETURN_IF_ERROR(field("config.reducer.bucket_mb", &s.bucket_mb));
  STEPSCOPE_RETURN_IF_ERROR(field("config.reducer.dtype", &s.reduce_dtype));
  STEPSCOPE_RETURN_IF_ERROR(field("allreduce", &s.allreduce));
  const nlohmann::json& reducer = j.at("config").at("reducer");
  if (const auto hook = reducer.find("comm_hook"); hook != reducer.end()) {
    if (!hook->is_null() && !hook->is_string()) {
      return Status::Error(path +
                           ": field 'config.reducer.comm_hook' is not a hook's name or null; "
                           "rerun the run with this stepscope, or remove the field");
    }
    if (hook->is_string()) s.comm_hook = hook->get<std::string>();
  }
  if (const auto bytes = reducer.find("comm_hook_bytes"); bytes != reducer.end()) {
    if (!bytes->is_null() && *bytes != "wire" && *bytes != "bucket") {
      return Status::Error(path +
                           ": field 'config.reducer.comm_hook_bytes' is not \"wire\", "
                           "\"bucket\" or null; rerun the run with this stepscope, or remove "
                           "the field");
    }
    s.comm_hook_bytes_are_bucket = *bytes == "bucket";
  }
  if (const auto e = j.find("emulation"); e != j.end() && e->is_object() && Flag(*e, "emulated")) {
    const auto link = e->find("link_gbps");
    s.emulated_link = link != e->end() && link->is_number() && link->get<double>() > 0;
  }
  STEPSCOPE_RETURN_IF_ERROR(field("config.optimizer.kind", &s.optimizer));
  STEPSCOPE_RETURN_IF_ERROR(field("model.gradient_bytes", &s.gradient_bytes));
  STEPSCOPE_RETURN_IF_ERROR(field("model.parameters", &s.parameters));
  STEPSCOPE_RETURN_IF_ERROR(
      field("model.activation_bytes_per_sample", &s.activation_bytes_per_sample));
  STEPSCOPE_RETURN_IF_ERROR(field("samples_per_s", &s.samples_per_s));
  if (const auto model = j.find("model"); model != j.end() && model->is_object()) {
    if (const auto slices = model->find("ready_slices_bytes"); slices != model->end()) {
      const std::string bad = path +
                              ": field 'model.ready_slices_bytes' is not a list of byte counts "
                              "(numbers > 0); rerun the run with this stepscope, or remove it";
      if (!slices->is_array()) return Status::Error(bad);
      for (const nlohmann::json& v : *slices) {
        int64_t bytes = 0;
        if (!JsonValueTo(v, &bytes) || bytes <= 0) return Status::Error(bad);
        s.ready_slice_bytes.push_back(bytes);
      }
    }
    if (const auto shares = model->find("ready_slices_backward_share"); shares != model->end()) {
      const std::string bad =
          path +
          ": field 'model.ready_slices_backward_share' is not a list of shares of backward "
          "(numbers from 0 to 1, one per entry of model.ready_slices_bytes); rerun the run with "
          "this stepscope, or remove it";
      // Empty: no steady step reduced (a run that ended in its warm-up).
      if (!NumbersIn(*shares, 0, 1, &s.ready_slice_backward_share) ||
          (!shares->empty() && shares->size() != s.ready_slice_bytes.size())) {
        return Status::Error(bad);
      }
    }
  }
  if (const auto hosts = j.find("hosts"); hosts != j.end()) {
    if (!hosts->is_object()) {
      return Status::Error(path + ": field 'hosts' is not an object of ranks per host name");
    }
    for (const auto& [name, count] : hosts->items()) {
      int ranks = 0;
      if (!JsonValueTo(count, &ranks) || ranks < 0) {
        return Status::Error(path + ": field 'hosts' entry '" + name +
                             "' is not a count of ranks (a number >= 0)");
      }
      s.ranks_per_host = std::max(s.ranks_per_host, ranks);
    }
  }
  if (j.contains("cores_per_host")) {
    STEPSCOPE_RETURN_IF_ERROR(field("cores_per_host", &s.cores_per_host));
  }
  if (const auto cpu = j.find("cpu"); cpu != j.end() && !cpu->is_null()) {
    // A number under cpu: read when present (an error when `required` and absent), refused
    // below 0 when `non_negative`.
    auto cpu_field = [&](const std::string& key, std::optional<double>* out, bool required,
                         bool non_negative) -> Status {
      const auto v = cpu->find(key);
      if (!required && (v == cpu->end() || v->is_null())) return Status::Ok();
      double x = 0;
      STEPSCOPE_RETURN_IF_ERROR(field("cpu." + key, &x));
      if (non_negative && !(x >= 0)) {
        return Status::Error(path + ": field 'cpu." + key +
                             "' must be >= 0 (rerun the run, or remove the field)");
      }
      *out = x;
      return Status::Ok();
    };
    STEPSCOPE_RETURN_IF_ERROR(cpu_field("per_step_s", &s.cpu_per_step, true, true));
    STEPSCOPE_RETURN_IF_ERROR(cpu_field("outside_reductions_per_step_s",
                                        &s.cpu_outside_reductions_per_step, false, true));
    STEPSCOPE_RETURN_IF_ERROR(cpu_field("busiest_host_share", &s.busiest_host_share, false, false));
    if (const auto ranks = cpu->find("per_rank_in_reductions_per_step_s");
        ranks != cpu->end() && !ranks->is_null()) {
      const std::string bad = path +
                              ": field 'cpu.per_rank_in_reductions_per_step_s' must be a list of "
                              "CPU seconds >= 0, one per rank (rerun the run, or remove the field)";
      std::vector<double> per_rank;
      if (!NumbersIn(*ranks, 0, kNoLimit, &per_rank) || per_rank.empty() ||
          (s.replicas > 0 && per_rank.size() != static_cast<size_t>(s.replicas))) {
        return Status::Error(bad);
      }
      s.cpu_in_reductions_least_rank = *std::min_element(per_rank.begin(), per_rank.end());
    }
  }
  if (const auto probe = j.find("latency_probe"); probe != j.end() && !probe->is_null()) {
    STEPSCOPE_RETURN_IF_ERROR(field("latency_probe.bytes", &s.latency_probe_bytes));
    const auto seconds = probe->find("seconds");
    const std::string bad = path +
                            ": field 'latency_probe.seconds' must be a list of durations in "
                            "seconds (numbers >= 0); rerun the run, or remove the field";
    if (s.latency_probe_bytes <= 0) {
      return Status::Error(path +
                           ": field 'latency_probe.bytes' must be > 0; rerun the run, or remove "
                           "the field");
    }
    if (seconds == probe->end() || !NumbersIn(*seconds, 0, kNoLimit, &s.latency_probe_seconds) ||
        s.latency_probe_seconds.empty()) {
      return Status::Error(bad);
    }
  }
  if (const auto lengths = j.find("lengths"); lengths != j.end() && !lengths->is_null()) {
    RunSummary::Lengths l;
    STEPSCOPE_RETURN_IF_ERROR(field("lengths.balanced", &l.balanced));
    STEPSCOPE_RETURN_IF_ERROR(field("lengths.bucketed_work_ratio", &l.bucketed_work_ratio));
    if (!(l.bucketed_work_ratio > 0 && l.bucketed_work_ratio <= 1)) {
      return Status::Error(path +
                           ": field 'lengths.bucketed_work_ratio' must be in (0, 1] (rerun the "
                           "run with this stepscope, or remove the field)");
    }
    const auto spread = lengths->find("bucketed_spread");
    const std::string bad = path +
                            ": field 'lengths.bucketed_spread' is not a sorted list of ratios "
                            "(numbers > 0); rerun the run with this stepscope, or remove it";
    if (spread == lengths->end() || !spread->is_array() || spread->empty()) {
      return Status::Error(bad);
    }
    for (const nlohmann::json& e : *spread) {
      double x = 0;
      if (!JsonValueTo(e, &x) || !(x > 0) ||
          (!l.bucketed_spread.empty() && x < l.bucketed_spread.back())) {
        return Status::Error(bad);
      }
      l.bucketed_spread.push_back(x);
    }
    s.lengths = std::move(l);
  }
  if (j.contains("memory")) {
    int64_t model = 0, peak = 0;
    STEPSCOPE_RETURN_IF_ERROR(field("memory.model_bytes", &model));
    STEPSCOPE_RETURN_IF_ERROR(field("memory.peak_resident_bytes", &peak));
    if (model < 0 || peak < 0) {
      return Status::Error(path +
                           ": memory.model_bytes and memory.peak_resident_bytes must be >= 0");
    }
    s.model_memory_bytes = model, s.peak_memory_bytes = peak;
  }
  if (const auto target = j.find("target");
      target != j.end() && target->is_object() && Flag(*target, "reached")) {
    double samples = 0;
    STEPSCOPE_RETURN_IF_ERROR(field("target.samples_to_target", &samples));
    s.samples_to_target = samples;
  }
  // Time outside the steps; absent in run.json files written before they were recorded.
  for (auto [name, out] :
       {std::pair{"wall_time_s", &s.wall_time_s}, std::pair{"startup_s", &s.startup_s},
        std::pair{"evaluation_s", &s.evaluation_s}}) {
    if (j.contains(name)) STEPSCOPE_RETURN_IF_ERROR(field(name, out));
  }
  if (const auto noise = j.find("gradient_noise"); noise != j.end() && noise->is_object()) {
    if (const auto over = noise->find("b_noise_over_training");
        over != noise->end() && !over->is_null()) {
      double b_noise = 0;
      STEPSCOPE_RETURN_IF_ERROR(field("gradient_noise.b_noise_over_training", &b_noise));
      if (b_noise > 0) s.b_noise_over_training = b_noise;
    }
  }
  if (const auto wire = j.find("wire_error"); wire != j.end() && !wire->is_null()) {
    double relative = 0;
    STEPSCOPE_RETURN_IF_ERROR(field("wire_error.relative", &relative));
    STEPSCOPE_RETURN_IF_ERROR(field("wire_error.relative_max", &s.wire_relative_error_max));
    STEPSCOPE_RETURN_IF_ERROR(field("wire_error.steps", &s.wire_error_steps));
    s.wire_relative_error = relative;
  }
  if (s.replicas < 1 || s.batch < 1 || s.accum < 1) {
    return Status::Error(path + ": replicas, config.batch and config.accum must be at least 1");
  }
  return s;
}

}  // namespace stepscope::sweep
