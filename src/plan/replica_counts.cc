#include "plan/replica_counts.h"

#include <fmt/format.h>

#include <charconv>

#include "core/number_text.h"

namespace stepscope::plan {

Result<std::vector<int>> ParseReplicaCounts(const std::string& text, const std::string& flag) {
  std::set<int> counts;
  for (std::string_view item : SplitText(text, ',')) {
    int n = 0;
    const char* end = item.data() + item.size();
    const auto [ptr, ec] = std::from_chars(item.data(), end, n);
    if (ec != std::errc() || ptr != end || n < 1) {
      return Status::Error(
          fmt::format("option {}: '{}' is not a replica count; write e.g. 1,2,4,8", flag, item));
    }
    counts.insert(n);
  }
  if (counts.empty())
    return Status::Error(fmt::format("option {}: needs at least one count", flag));
  return std::vector<int>(counts.begin(), counts.end());
}

Result<std::set<int>> ParseAblateAt(const std::string& text, const std::vector<int>& replicas) {
  if (text == "all") return std::set<int>(replicas.begin(), replicas.end());
  if (text == "largest") {
    return replicas.empty() ? std::set<int>{} : std::set<int>{replicas.back()};
  }
  Result<std::vector<int>> counts = ParseReplicaCounts(text, "--ablate-at");
  if (!counts.ok()) return counts.status();
  return std::set<int>(counts->begin(), counts->end());
}

}  // namespace stepscope::plan
