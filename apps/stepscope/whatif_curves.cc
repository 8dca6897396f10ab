#include "apps/stepscope/whatif_curves.h"

#include <fmt/format.h>

#include "model/collective_fit.h"
#include "model/model_json.h"
#include "model/simulate.h"

namespace stepscope::app {
namespace {

// The curve of `s` at each of `replicas`; false (and a warning) when the model cannot simulate
// one point.
bool Curve(const model::StepModel& m, model::Scenario s, const std::vector<int>& replicas,
           WhatIfCurve* out, std::vector<std::string>* warnings) {
  for (int n : replicas) {
    s.replicas = n;
    Result<model::Prediction> p = model::Predict(m, s);
    if (!p.ok()) {
      warnings->push_back(
          fmt::format("the what-if curve {} was not drawn: {}", out->label, p.status().message()));
      return false;
    }
    out->points.push_back(*p);
  }
  return true;
}

}  // namespace

std::vector<WhatIfCurve> UpgradeCurves(const model::StepModel& model,
                                       const decide::DecisionInputs& inputs,
                                       const std::vector<decide::LeverOption>& levers,
                                       const std::vector<int>& replicas,
                                       std::vector<std::string>* warnings) {
  std::vector<WhatIfCurve> out;
  const model::Scenario levered = decide::WithLevers(model::Scenario{}, levers);
  const std::string suffix = levers.empty() ? "" : ", with the free levers";
  for (const decide::LinkUpgrade& l : inputs.link_upgrades) {
    model::Scenario s = levered;
    s.link = model::LinkAlphaBeta(l.gbps, l.latency_us * 1e-6);
    WhatIfCurve c;
    c.kind = std::string(decide::ToString(decide::OptionKind::kFasterLink));
    c.label = fmt::format("{:g} GB/s, {:g} us link{}", l.gbps, l.latency_us, suffix);
    if (Curve(model, s, replicas, &c, warnings)) out.push_back(std::move(c));
  }
  for (const decide::DeviceUpgrade& d : inputs.device_upgrades) {
    model::Scenario s = levered;
    s.compute_scale = d.speed;
    WhatIfCurve c;
    c.kind = std::string(decide::ToString(decide::OptionKind::kFasterDevices));
    c.label = fmt::format("{:g}x faster devices{}", d.speed, suffix);
    if (Curve(model, s, replicas, &c, warnings)) out.push_back(std::move(c));
  }
  return out;
}

nlohmann::json ToJson(const std::vector<WhatIfCurve>& curves) {
  nlohmann::json out = nlohmann::json::array();
  for (const WhatIfCurve& c : curves) {
    nlohmann::json points = nlohmann::json::array();
    for (const model::Prediction& p : c.points) points.push_back(model::ToJson(p));
    out.push_back({{"kind", c.kind}, {"label", c.label}, {"points", std::move(points)}});
  }
  return out;
}

}  // namespace stepscope::app
