#include "apps/stepscope/torch_run_watch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <vector>

#include "sweep/process_stacks.h"
#include "sweep/run_records.h"

namespace stepscope::app {

std::string TorchStartEndReason(const std::string& run_dir, int replicas, double elapsed_s,
                                double start_timeout_s) {
  if (!(start_timeout_s > 0) || elapsed_s < start_timeout_s) return "";
  Result<std::vector<std::pair<int, std::string>>> files = sweep::RankRecordFiles(run_dir);
  std::set<int> wrapped;
  if (files.ok()) {
    for (const auto& [rank, path] : *files) wrapped.insert(rank);
  }
  std::vector<int> missing;
  for (int r = 0; r < replicas; ++r) {
    if (!wrapped.count(r)) missing.push_back(r);
  }
  if (missing.empty()) return "";
  const bool one = missing.size() == 1;
  return fmt::format(
      "{} {} of {} had not reached stepscope_torch.wrap {:g} s after the run started "
      "(--start-timeout): the run was ended (raise --start-timeout for a script whose start takes "
      "longer)",
      one ? "rank" : "ranks", fmt::join(missing, ", "), replicas, start_timeout_s);
}

std::string TorchWhereProcessesAre(const std::string& run_dir, int replicas) {
  return sweep::DescribePlaces(sweep::AskProcesses(run_dir, 2.0), run_dir, replicas);
}

}  // namespace stepscope::app
