// Simulating one synchronous step of the fitted model under a scenario (docs/model.md).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "model/step_model.h"

namespace stepscope::model {

// The step's parts with every constant at `side` (kLow: the fast end of each interval).
// Errors: replicas < 1, a micro-batch or accumulation < 1, a scale <= 0.
Result<StepParts> SimulateStep(const StepModel& model, const Scenario& scenario,
                               Side side = Side::kValue);

// The prediction with its band (every constant at the slow, then the fast end of its interval:
// a conservative band) and its efficiency against one replica of the same scenario.
Result<Prediction> Predict(const StepModel& model, const Scenario& scenario);

// Replica counts from a list: "1,2,4" or a doubling range "16..4096". Errors name the text.
Result<std::vector<int>> ParseReplicaList(const std::string& text);

// Bytes per gradient element on the wire: 4 for fp32, 2 for bf16 and fp16; 0 for another name.
int WireWidth(const std::string& dtype);

}  // namespace stepscope::model
