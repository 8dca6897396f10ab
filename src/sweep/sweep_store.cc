#include "sweep/sweep_store.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/json_number.h"

namespace stepscope::sweep {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

Result<SweepStore> SweepStore::Open(const std::string& dir,
                                    const std::vector<std::string>& workload, bool fresh) {
  SweepStore store;
  store.dir_ = dir;
  store.workload_ = workload;
  const std::string manifest = dir + "/sweep.json";
  std::error_code ec;
  if (fresh) {
    fs::remove_all(dir + "/runs", ec);
    fs::remove(manifest, ec);
    fs::remove(dir + "/diagnosis.json", ec);
  }
  fs::create_directories(dir + "/runs", ec);
  if (ec) return Status::Error("cannot create " + dir + "/runs: " + ec.message());
  if (!fs::exists(manifest)) {
    STEPSCOPE_RETURN_IF_ERROR(store.Save());
    return store;
  }
  std::ifstream in(manifest, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  Result<std::vector<StoredRun>> runs = ParseSweepManifest(text.str(), manifest, workload);
  if (!runs.ok()) return runs.status();
  store.runs_ = std::move(*runs);
  return store;
}

Result<std::vector<StoredRun>> ParseSweepManifest(const std::string& text,
                                                  const std::string& manifest,
                                                  const std::vector<std::string>& workload) {
  auto damaged = [&](const std::string& what) {
    return Status::Error(manifest + " is not a sweep manifest (" + what +
                         "); pass --fresh to start over");
  };
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return damaged("not a JSON object");
  std::vector<StoredRun> runs;
  try {
    const std::vector<std::string> stored = j.at("workload").get<std::vector<std::string>>();
    if (stored != workload) {
      return Status::Error(
          manifest + " belongs to a different workload:\n  stored: " + Join(stored) +
          "\n  now:    " + Join(workload) +
          "\nuse another --out DIR, or pass --fresh to discard the runs stored there");
    }
    const json& list = j.at("runs");
    if (!list.is_array()) return damaged("field 'runs' is not an array");
    for (size_t i = 0; i < list.size(); ++i) {
      const json& r = list[i];
      const std::string where = "runs[" + std::to_string(i) + "]";
      StoredRun run;
      run.name = r.at("name").get<std::string>();
      run.args = r.at("args").get<std::vector<std::string>>();
      run.state = r.at("state").get<std::string>();
      if (!JsonValueTo(r.at("replicas"), &run.replicas)) {
        return damaged("field '" + where + ".replicas' is not a count");
      }
      if (!JsonValueTo(r.at("seconds"), &run.seconds)) {
        return damaged("field '" + where + ".seconds' is not a number");
      }
      if (r.contains("exit_code") && !JsonValueTo(r.at("exit_code"), &run.exit_code)) {
        return damaged("field '" + where + ".exit_code' is not an exit code");
      }
      runs.push_back(std::move(run));
    }
  } catch (const json::exception& e) {
    return damaged(e.what());
  }
  return runs;
}

bool SweepStore::Finished(const std::string& name, const std::vector<std::string>& args) const {
  const StoredRun* run = Find(name);
  return run != nullptr && run->state == "finished" && run->args == args &&
         fs::exists(RunDir(name) + "/run.json");
}

const StoredRun* SweepStore::Find(const std::string& name) const {
  for (const StoredRun& r : runs_) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

Status SweepStore::PrepareRun(const std::string& name) {
  std::error_code ec;
  const std::string run_dir = RunDir(name);
  fs::remove_all(run_dir, ec);
  fs::create_directories(run_dir, ec);
  if (ec) return Status::Error("cannot create " + run_dir + ": " + ec.message());
  return Status::Ok();
}

Status SweepStore::Record(const StoredRun& run) {
  bool replaced = false;
  for (StoredRun& r : runs_) {
    if (r.name == run.name) {
      r = run;
      replaced = true;
    }
  }
  if (!replaced) runs_.push_back(run);
  return Save();
}

Status SweepStore::Save() const {
  json runs = json::array();
  for (const StoredRun& r : runs_) {
    runs.push_back({{"name", r.name},
                    {"replicas", r.replicas},
                    {"args", r.args},
                    {"state", r.state},
                    {"seconds", r.seconds},
                    {"exit_code", r.exit_code}});
  }
  const json j{{"schema_version", kSweepSchemaVersion}, {"workload", workload_}, {"runs", runs}};
  const std::string path = dir_ + "/sweep.json";
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) return Status::Error("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status::Error("cannot rename " + tmp + " to " + path + ": " + ec.message());
  return Status::Ok();
}

}  // namespace stepscope::sweep
