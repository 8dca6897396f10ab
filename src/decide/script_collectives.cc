#include "decide/script_collectives.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/text_format.h"

namespace stepscope::decide {

std::optional<std::string> ScriptCollectivesEvidence(
    const analysis::Decomposition& d, const std::vector<ScriptCollectiveCalls>& calls,
    double min_share) {
  const Seconds step = d.job.step;
  const analysis::RankDecomposition* blocked = nullptr;
  for (const analysis::RankDecomposition& r : d.ranks) {
    if (blocked == nullptr || r.mean.script_comm > blocked->mean.script_comm) blocked = &r;
  }
  if (step <= 0 || blocked == nullptr || blocked->mean.script_comm < min_share * step) {
    return std::nullopt;
  }
  // Each rank's own work outside its phases: its overhead less its time in those collectives.
  const auto own = [](const analysis::RankDecomposition& r) {
    return r.mean.overhead - r.mean.script_comm;
  };
  const analysis::RankDecomposition* busiest = blocked;
  for (const analysis::RankDecomposition& r : d.ranks) {
    if (own(r) > own(*busiest)) busiest = &r;
  }
  // The most frequent first; one called less than once a step (at an epoch's end) by how many
  // steps apart.
  std::vector<ScriptCollectiveCalls> by_rate = calls;
  std::stable_sort(by_rate.begin(), by_rate.end(),
                   [](const ScriptCollectiveCalls& a, const ScriptCollectiveCalls& b) {
                     return a.per_step > b.per_step;
                   });
  std::vector<std::string> named;
  for (const ScriptCollectiveCalls& c : by_rate) {
    if (!(c.per_step > 0)) continue;
    named.push_back(c.per_step >= 1
                        ? fmt::format("{} {:.3g} a step", c.name, c.per_step)
                        : fmt::format("{} 1 every {:.3g} steps", c.name, 1 / c.per_step));
  }
  const std::string which = named.empty()
                                ? "a barrier, a loss all-reduced to log it, objects gathered"
                                : fmt::format("{}", fmt::join(named, ", "));
  std::string words = fmt::format(
      "rank {} is blocked {} per step ({} of the step) in the job's own collectives outside the "
      "gradient's reduction ({}), part of the overhead",
      blocked->rank, Ms(blocked->mean.script_comm), Pct(blocked->mean.script_comm, step), which);
  if (own(*busiest) - own(*blocked) >= min_share * step) {
    return words + fmt::format(
                       ": it waits there for rank {}, which spends {} per step of its own outside "
                       "its loader, model and optimizer (logging, evaluating or saving on one "
                       "rank while the others wait): move that work off the step's path, or "
                       "do it less often",
                       busiest->rank, Ms(own(*busiest)));
  }
  return words +
         ": each holds every rank until the last arrives; made every K steps instead of every "
         "step, they cost about 1/K of it";
}

}  // namespace stepscope::decide
