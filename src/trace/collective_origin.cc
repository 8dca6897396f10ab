#include "trace/collective_origin.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

namespace stepscope::trace {
namespace {

std::string_view WithoutNamespace(std::string_view name) {
  if (name.starts_with("c10d::")) return name.substr(6);
  for (std::string_view kernel : {"ncclKernel_", "ncclDevKernel_"}) {
    if (name.starts_with(kernel)) {
      name = name.substr(kernel.size());
      return name.substr(0, name.find_first_of("_("));
    }
  }
  const size_t colon = name.rfind(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

bool Inside(const std::vector<Interval>& set, double t) {
  auto it = std::upper_bound(set.begin(), set.end(), t,
                             [](double x, const Interval& iv) { return x < iv.begin; });
  return it != set.begin() && t < std::prev(it)->end;
}

}  // namespace

std::string CollectiveKind(std::string_view name) {
  std::string kind;
  for (char c : WithoutNamespace(name)) {
    if (c == '(') break;
    if (std::isalnum(static_cast<unsigned char>(c))) {
      kind += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return kind;
}

std::string CallName(std::string_view launch_name) {
  std::string_view n = WithoutNamespace(launch_name);
  while (!n.empty() && n.front() == '_') n.remove_prefix(1);
  while (!n.empty() && n.back() == '_') n.remove_suffix(1);
  static constexpr std::pair<std::string_view, std::string_view> kPython[] = {
      {"allreduce", "all_reduce"},
      {"allreduce_coalesced", "all_reduce_coalesced"},
      {"allgather", "all_gather"},
      {"allgather_base", "all_gather_into_tensor"},
      {"allgather_coalesced", "all_gather_coalesced"},
      {"alltoall", "all_to_all"},
      {"alltoall_base", "all_to_all_single"},
      {"reduce_scatter_base", "reduce_scatter_tensor"},
  };
  for (const auto& [c10d, python] : kPython) {
    if (n == c10d) return std::string(python);
  }
  std::string name;
  for (char c : n) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') name += c;
  }
  return name;
}

void MarkScriptLaunches(const std::vector<Interval>& ddp, std::vector<CollectiveLaunch>* launches) {
  const auto scripts = [](const std::string& kind) {
    for (std::string_view k :
         {"barrier", "allreduce", "broadcast", "allgather", "gather", "scatter", "reduce"}) {
      if (kind == k) return true;
    }
    return false;
  };
  for (CollectiveLaunch& l : *launches) l.script = scripts(l.kind) && !Inside(ddp, l.begin);
}

std::vector<bool> ScriptRuns(const std::vector<CollectiveLaunch>& launches,
                             const std::vector<CollectiveRun>& runs, bool device) {
  const auto kind_of_launch = [device](const std::string& kind) {
    return device && kind == "barrier" ? std::string("allreduce") : kind;
  };
  std::map<std::string, std::vector<const CollectiveLaunch*>> by_kind;
  for (const CollectiveLaunch& l : launches) by_kind[kind_of_launch(l.kind)].push_back(&l);
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return runs[a].begin < runs[b].begin; });
  std::map<std::string, size_t> next;  // per kind: the first launch not yet carried out
  std::vector<bool> script(runs.size(), false);
  for (size_t i : order) {
    auto it = by_kind.find(runs[i].kind);
    if (it == by_kind.end()) continue;
    size_t& k = next[runs[i].kind];
    if (k >= it->second.size() || runs[i].begin < it->second[k]->begin) continue;
    script[i] = it->second[k++]->script;
  }
  return script;
}

}  // namespace stepscope::trace
