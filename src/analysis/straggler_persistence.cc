#include "analysis/straggler_persistence.h"

#include <fmt/format.h>

#include <algorithm>

namespace stepscope::analysis {

void KeepPersistentStragglers(const std::vector<SkewReport>& repeats, SkewReport* baseline) {
  if (repeats.empty() || baseline->straggler_ranks.empty()) return;
  const int runs = 1 + static_cast<int>(repeats.size());
  std::vector<int> kept;
  for (int rank : baseline->straggler_ranks) {
    int named = 1;
    for (const SkewReport& r : repeats) {
      named += std::count(r.straggler_ranks.begin(), r.straggler_ranks.end(), rank) > 0;
    }
    if (2 * named > runs) {
      kept.push_back(rank);
      baseline->evidence.push_back(
          fmt::format("rank {} is a straggler in {} of the point's {} runs: it stays with its rank",
                      rank, named, runs));
    } else {
      baseline->evidence.push_back(fmt::format(
          "rank {} is a straggler in {} of the point's {} runs, not in most: a disturbance of "
          "one run (a shared core, a loader's phase), not the rank; not named",
          rank, named, runs));
    }
  }
  baseline->straggler_ranks = std::move(kept);
}

}  // namespace stepscope::analysis
