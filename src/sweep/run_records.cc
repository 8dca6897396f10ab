#include "sweep/run_records.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace stepscope::sweep {
namespace fs = std::filesystem;

Result<std::vector<StepRecord>> ReadRunRecords(const std::string& run_dir) {
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
  if (files.empty()) return Status::Error(run_dir + " holds no rank-R.steps.jsonl files");
  std::sort(files.begin(), files.end());
  std::vector<StepRecord> all;
  for (const auto& [rank, path] : files) {
    Result<std::vector<StepRecord>> records = ReadStepRecords(path);
    if (!records.ok()) return records.status();
    all.insert(all.end(), records->begin(), records->end());
  }
  return all;
}

Result<std::optional<RunPacing>> ReadRunPacing(const std::string& run_dir) {
  const std::string path = run_dir + "/run.json";
  std::ifstream in(path);
  if (!in) return Status::Error(path + ": cannot open");
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Error(path + ": not a JSON object");
  auto e = j.find("emulation");
  if (e == j.end() || !e->is_object() || !e->value("emulated", false) ||
      !e->contains("paced_segments")) {
    return std::optional<RunPacing>();
  }
  auto count = [&](const nlohmann::json& o, const char* key) -> int64_t {
    auto it = o.find(key);
    return it != o.end() && it->is_number() ? it->get<int64_t>() : 0;
  };
  RunPacing p;
  p.paced_segments = count(*e, "paced_segments");
  p.unhonoured_segments = count(*e, "unhonoured_segments");
  p.unhonoured_links = count(*e, "unhonoured_links");
  auto link = e->find("link_gbps");
  if (link != e->end() && link->is_number() && link->get<double>() > 0) {
    p.link_reductions = count(j, "buckets_per_step") * count(j, "steps");
  }
  return std::optional<RunPacing>(p);
}

}  // namespace stepscope::sweep
