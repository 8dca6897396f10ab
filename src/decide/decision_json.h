// The priced decision in diagnosis.json (schema 3): verdict.decision as an object, the priced
// options (verdict.options[]) and what the pricing assumed (verdict.time_to_quality).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"
#include "decide/verdict.h"

namespace stepscope::decide {

// {action, reason, priced, option, replicas, link, device_speed, levers, runner_up, margin};
// without a priced decision, priced is false and the rest describe the largest measured count.
nlohmann::json DecisionJson(const Verdict& v, int largest_replicas);
nlohmann::json OptionsJson(const std::vector<PricedOption>& options);
nlohmann::json TimeToQualityJson(const std::optional<TimeToQuality>& t);

// Reads the three fields above from the verdict object `j` at `path` into `v`.
Status ReadPricedDecision(const nlohmann::json& j, const std::string& path, Verdict* v);

}  // namespace stepscope::decide
