// The model checked against its own earlier word: when a sweep gains a replica count (a
// resumed sweep with a new N), the prediction the previous diagnosis made for that count,
// before anything there was measured, against the run now measured (docs/model.md, "Checks").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decide/diagnosis.h"

namespace stepscope::app {

// diagnosis.json model_checks[] entries (`predicted_before: true`, `predicted_from`: the
// replica counts measured when it was predicted) for each baseline point of `d` that
// `previous` (the diagnosis.json this directory held before) did not have but predicted; the
// earlier checks `previous` held are carried when their point is still measured. A malformed
// `previous` gives no checks and a warning in `warnings`.
nlohmann::json EarlierPredictionChecks(const nlohmann::json& previous, const decide::Diagnosis& d,
                                       std::vector<std::string>* warnings);

}  // namespace stepscope::app
