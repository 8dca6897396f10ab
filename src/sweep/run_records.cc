#include "sweep/run_records.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

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

}  // namespace stepscope::sweep
