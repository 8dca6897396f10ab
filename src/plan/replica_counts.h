// Replica-count lists as diagnose's options take them: "1,2,4,8" and, for --ablate-at, also
// "all" or "largest".
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace stepscope::plan {

// Distinct positive counts, ascending. Errors name `flag`.
Result<std::vector<int>> ParseReplicaCounts(const std::string& text, const std::string& flag);

// The counts of `replicas` that get the ablations: "all", "largest" or a list (counts outside
// `replicas` are kept: they match no run). Errors name --ablate-at.
Result<std::set<int>> ParseAblateAt(const std::string& text, const std::vector<int>& replicas);

}  // namespace stepscope::plan
