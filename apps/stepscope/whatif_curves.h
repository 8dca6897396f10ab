// The what-if curves the verdict talks about beyond the free levers: the step-time model's
// throughput at every predicted replica count on each faster interconnect and each faster
// device the decision priced (--link-upgrade, --device-upgrade), with the free levers applied
// as those options are priced (diagnosis.json `whatif_curves[]`, the report's model chart).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decide/decision_inputs.h"
#include "decide/priced_options.h"
#include "model/step_model.h"

namespace stepscope::app {

struct WhatIfCurve {
  std::string kind;   // decide::OptionKind: faster_link or faster_devices
  std::string label;  // "25 GB/s, 5 us link, with the free levers"
  std::vector<model::Prediction> points;
};

// One curve per upgrade of `inputs`; an upgrade the model cannot simulate gives no curve and
// a warning in `warnings`.
std::vector<WhatIfCurve> UpgradeCurves(const model::StepModel& model,
                                       const decide::DecisionInputs& inputs,
                                       const std::vector<decide::LeverOption>& levers,
                                       const std::vector<int>& replicas,
                                       std::vector<std::string>* warnings);

// diagnosis.json `whatif_curves[]`: {kind, label, points[] (as predictions[])}.
nlohmann::json ToJson(const std::vector<WhatIfCurve>& curves);

}  // namespace stepscope::app
