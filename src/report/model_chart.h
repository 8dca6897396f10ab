// The step-time model's curve in the HTML report: the measured curve, the model's prediction
// with its band out to the largest replica count predicted (log replica axis), the replica
// count where the marginal device falls below half a device, and the curve with every
// recommended lever applied (docs/report.md, "Step-time model").
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/estimate.h"
#include "core/status.h"
#include "decide/diagnosis.h"
#include "model/check.h"

namespace stepscope::report {

struct ModelPoint {
  int replicas = 0;
  Estimate samples_per_s;
};

// A what-if curve the decision priced (diagnosis.json whatif_curves[]): a faster link or
// faster devices, with the free levers.
struct WhatIfSeries {
  std::string label;
  std::vector<ModelPoint> points;
};

struct ModelCurve {
  std::vector<ModelPoint> predicted;    // diagnosis.json predictions[]: the measured configuration
  std::vector<ModelPoint> with_levers;  // lever_curve[]: every recommended lever applied
  std::vector<model::ModelCheck> checks;  // model_checks[]
  std::vector<WhatIfSeries> what_ifs;     // whatif_curves[]
};

// From a diagnosis.json document: nullopt when it has no predictions (analyze, or a model that
// could not be fitted); an error names the field that is malformed.
Result<std::optional<ModelCurve>> ModelCurveFromJson(const nlohmann::json& diagnosis);

// The first replica count whose marginal device (the throughput added from the previous count,
// per added device, in units of one device's: X(1) = points[0] at one replica) is below half a
// device; 0 when none is, or without a one-replica point.
int HalfDeviceReplicas(const std::vector<ModelPoint>& points);

// The Vega-Lite specification (chart name "model").
nlohmann::json ModelChart(const decide::Diagnosis& d, const ModelCurve& curve,
                          const std::string& schema);

}  // namespace stepscope::report
