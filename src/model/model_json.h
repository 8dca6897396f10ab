// The JSON of the model, its predictions and its checks (schema: docs/model.md), as
// `predict --json` prints it.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "model/check.h"
#include "model/step_model.h"

namespace stepscope::model {

nlohmann::json ToJson(const StepModel& model);
nlohmann::json ToJson(const Prediction& prediction);
nlohmann::json ToJson(const ModelCheck& check);

}  // namespace stepscope::model
