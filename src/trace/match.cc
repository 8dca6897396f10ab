#include "trace/match.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace stepscope::trace {

void NumberMatchedCollectives(const MatchResult& match, std::vector<StepRecord>* records) {
  std::map<std::tuple<int, int64_t, int>, int> index;  // (rank, step, position) -> index
  std::map<int64_t, int> next;                         // per step
  for (const MatchedCollective& m : match.collectives) {
    const int k = next[m.step]++;
    for (size_t j = 0; j < m.ranks.size(); ++j) index[{m.ranks[j], m.steps[j], m.positions[j]}] = k;
  }
  for (StepRecord& r : *records) {
    int unmatched = 0;
    for (CollectiveRecord& c : r.collectives) {
      auto it = index.find({r.rank, r.step, c.index});
      c.index = it != index.end() ? it->second : kUnmatchedIndex + r.rank * 10000 + unmatched++;
    }
  }
}

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
  // Per group: by sequence number when every collective of the group carries one, across steps
  // unless a rank repeats a number in another step (stepscope numbers buckets per step).
  struct GroupMode {
    bool all_seq = true;
    bool repeats = false;
  };
  std::map<std::string, GroupMode> groups;
  for (const ImportedTrace& t : traces) {
    std::set<std::pair<std::string, int64_t>> seen;
    for (const ImportedStep& s : t.steps) {
      for (const ImportedCollective& c : s.collectives) {
        GroupMode& g = groups[c.group];
        if (c.seq < 0) {
          g.all_seq = false;
        } else if (!seen.insert({c.group, c.seq}).second) {
          g.repeats = true;
        }
      }
    }
  }
  for (const auto& [name, g] : groups)
    ++(g.all_seq ? result.groups_by_sequence : result.groups_by_order);
  result.by_sequence = result.groups_by_sequence > 0 && result.groups_by_order == 0;

  // Key (step or all steps, group, index) -> matched entry.
  constexpr int64_t kAnyStep = std::numeric_limits<int64_t>::min();
  std::map<std::tuple<int64_t, std::string, int64_t>, MatchedCollective> table;
  std::map<int64_t, std::set<int>> step_ranks;
  for (auto& [rank, t] : by_rank) {
    result.ranks.push_back(rank);
    for (const ImportedStep& s : t->steps) {
      step_ranks[s.step].insert(rank);
      std::map<std::string, int> counter;
      int position = 0;
      for (const ImportedCollective& c : s.collectives) {
        const GroupMode& g = groups[c.group];
        const int64_t index = g.all_seq ? c.seq : counter[c.group]++;
        const int64_t step_key = g.all_seq && !g.repeats ? kAnyStep : s.step;
        auto& m = table[{step_key, c.group, index}];
        if (m.ranks.empty()) m.step = s.step;
        m.group = c.group;
        m.index = static_cast<int>(index);
        m.by_sequence = g.all_seq;
        if (m.name.empty()) m.name = c.name;
        m.ranks.push_back(rank);
        m.arrival.push_back(c.start);
        m.duration.push_back(c.end - c.start);
        m.steps.push_back(s.step);
        m.positions.push_back(position++);
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
