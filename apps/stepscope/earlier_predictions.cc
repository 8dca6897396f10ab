#include "apps/stepscope/earlier_predictions.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "model/check.h"
#include "model/model_json.h"

namespace stepscope::app {
namespace {

using nlohmann::json;

bool IsNumber(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number();
}

// The replica counts the previous diagnosis knew: its points and the baselines its model was
// fitted on (runs of the directory outside the plan enter the fit too); false when malformed.
bool PreviousReplicas(const json& previous, std::set<int>* out) {
  if (!previous.contains("points") || !previous["points"].is_array()) return false;
  for (const json& p : previous["points"]) {
    if (!IsNumber(p, "replicas")) return false;
    out->insert(p["replicas"].get<int>());
  }
  if (previous.contains("model") && previous["model"].is_object() &&
      previous["model"].contains("fitted_replicas")) {
    const json& fitted = previous["model"]["fitted_replicas"];
    if (!fitted.is_array()) return false;
    for (const json& n : fitted) {
      if (!n.is_number()) return false;
      out->insert(n.get<int>());
    }
  }
  return true;
}

}  // namespace

json EarlierPredictionChecks(const json& previous, const decide::Diagnosis& d,
                             std::vector<std::string>* warnings) {
  json out = json::array();
  if (!previous.is_object()) return out;
  std::map<int, double> measured;
  for (const decide::DiagnosisPoint& p : d.points) {
    measured[p.scaling.replicas] = p.scaling.samples_per_s;
  }
  const auto malformed = [&](const std::string& what) {
    warnings->push_back(fmt::format(
        "the previous diagnosis.json's {} is malformed: the model is not checked against its "
        "earlier predictions",
        what));
    return json::array();
  };
  std::set<int> earlier_points;
  if (!PreviousReplicas(previous, &earlier_points)) return malformed("points or model");
  // Checks made before: kept while their point is still measured.
  std::set<int> checked;
  if (previous.contains("model_checks")) {
    if (!previous["model_checks"].is_array()) return malformed("model_checks");
    for (const json& c : previous["model_checks"]) {
      if (!c.is_object() || !c.value("predicted_before", false)) continue;
      if (!IsNumber(c, "replicas")) return malformed("model_checks");
      const int n = c["replicas"].get<int>();
      if (measured.count(n) == 0 || checked.count(n) > 0) continue;
      checked.insert(n);
      out.push_back(c);
    }
  }
  if (!previous.contains("predictions")) return out;  // that diagnosis had no fitted model
  if (!previous["predictions"].is_array()) return malformed("predictions");
  const std::vector<int> from(earlier_points.begin(), earlier_points.end());
  for (const json& p : previous["predictions"]) {
    if (!IsNumber(p, "replicas") || !p.contains("samples_per_s") ||
        !IsNumber(p["samples_per_s"], "value") || !IsNumber(p["samples_per_s"], "low") ||
        !IsNumber(p["samples_per_s"], "high")) {
      return malformed("predictions");
    }
    const int n = p["replicas"].get<int>();
    auto m = measured.find(n);
    if (m == measured.end() || earlier_points.count(n) > 0 || checked.count(n) > 0) continue;
    if (!(m->second > 0)) continue;
    const json& x = p["samples_per_s"];
    model::ModelCheck c;
    c.run = fmt::format("baseline-n{}", n);
    c.replicas = n;
    c.predicted_samples_per_s = {x["value"].get<double>(), x["low"].get<double>(),
                                 x["high"].get<double>()};
    c.measured_samples_per_s = m->second;
    c.error = c.predicted_samples_per_s.value / m->second - 1;
    c.within_band =
        c.predicted_samples_per_s.low <= m->second && m->second <= c.predicted_samples_per_s.high;
    c.predicted_before = true;
    c.predicted_from = from;
    checked.insert(n);
    out.push_back(model::ToJson(c));
  }
  std::sort(out.begin(), out.end(),
            [](const json& a, const json& b) { return a["replicas"] < b["replicas"]; });
  return out;
}

}  // namespace stepscope::app
