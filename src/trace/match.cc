#include "trace/match.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace stepscope::trace {

const char* MatchMethodName(MatchMethod method) {
  return method == MatchMethod::kAlignedArrival ? "aligned-arrival" : "unaligned";
}

bool ClocksComparable(const std::vector<ImportedTrace>& traces) {
  if (traces.empty()) return true;
  ClockKind kind = traces.front().clock;
  if (kind == ClockKind::kUnaligned) return false;
  double lo = -1e300, hi = 1e300;  // the files' time ranges must overlap
  for (const ImportedTrace& t : traces) {
    if (t.clock != kind) return false;
    if (t.steps.empty()) continue;
    lo = std::max(lo, t.steps.front().start);
    hi = std::min(hi, t.steps.back().end);
  }
  return lo <= hi;
}

Result<MatchResult> MatchCollectives(const std::vector<ImportedTrace>& traces) {
  MatchResult result;
  std::map<int, const ImportedTrace*> by_rank;
  for (const ImportedTrace& t : traces) {
    if (!by_rank.emplace(t.rank, &t).second) {
      return Status::Error("rank " + std::to_string(t.rank) + " appears twice (" +
                           by_rank[t.rank]->path + " and " + t.path +
                           "); pass one file per rank or set ranks explicitly");
    }
  }
  const bool aligned = ClocksComparable(traces);
  result.method = aligned ? MatchMethod::kAlignedArrival : MatchMethod::kShortestDuration;
  bool all_seq = true;
  for (const ImportedTrace& t : traces) {
    for (const ImportedStep& s : t.steps) {
      for (const ImportedCollective& c : s.collectives) all_seq = all_seq && c.seq >= 0;
    }
  }
  result.by_sequence = all_seq && !traces.empty();

  // Key (step, group, index) -> matched entry.
  std::map<std::tuple<int64_t, std::string, int64_t>, MatchedCollective> table;
  std::map<int64_t, std::set<int>> step_ranks;
  for (auto& [rank, t] : by_rank) {
    result.ranks.push_back(rank);
    for (const ImportedStep& s : t->steps) {
      step_ranks[s.step].insert(rank);
      std::map<std::string, int> counter;
      for (const ImportedCollective& c : s.collectives) {
        int64_t index = result.by_sequence ? c.seq : counter[c.group]++;
        auto& m = table[{s.step, c.group, index}];
        m.step = s.step;
        m.group = c.group;
        m.index = static_cast<int>(index);
        if (m.name.empty()) m.name = c.name;
        m.ranks.push_back(rank);
        m.arrival.push_back(c.start);
        m.duration.push_back(c.end - c.start);
      }
    }
  }
  for (auto& [step, ranks] : step_ranks) {
    if (ranks.size() != by_rank.size()) {
      result.warnings.push_back("step " + std::to_string(step) + " is missing on " +
                                std::to_string(by_rank.size() - ranks.size()) + " rank(s)");
    }
  }
  std::map<int, int> last_count;
  for (auto& [key, m] : table) {
    if (m.ranks.size() < 2) continue;
    if (m.ranks.size() != by_rank.size()) {
      result.warnings.push_back("step " + std::to_string(m.step) + " collective " +
                                std::to_string(m.index) + " of group '" + m.group + "' seen on " +
                                std::to_string(m.ranks.size()) + " of " +
                                std::to_string(by_rank.size()) + " ranks");
    }
    size_t pick;
    if (aligned) {
      pick = std::max_element(m.arrival.begin(), m.arrival.end()) - m.arrival.begin();
      m.skew = m.arrival[pick] - *std::min_element(m.arrival.begin(), m.arrival.end());
    } else {
      pick = std::min_element(m.duration.begin(), m.duration.end()) - m.duration.begin();
    }
    m.last_rank = m.ranks[pick];
    ++last_count[m.last_rank];
    result.collectives.push_back(std::move(m));
  }
  for (int rank : result.ranks) {
    result.times_last.push_back(last_count[rank]);
    const ImportedTrace* t = by_rank[rank];
    double sum = 0;
    for (const ImportedStep& s : t->steps) sum += s.compute;
    result.busy.push_back(t->steps.empty() ? 0 : sum / t->steps.size());
  }
  return result;
}

}  // namespace stepscope::trace
