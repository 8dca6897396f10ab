#include "report/model_chart.h"

#include <fmt/format.h>

#include "analysis/scaling.h"

namespace stepscope::report {
namespace {

using nlohmann::json;

Result<std::vector<ModelPoint>> Points(const json& doc, const std::string& field) {
  std::vector<ModelPoint> out;
  const auto it = doc.find(field);
  if (it == doc.end()) return out;
  if (!it->is_array()) return Status::Error("field '" + field + "' is not an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const json& p = (*it)[i];
    const std::string where = field + "[" + std::to_string(i) + "]";
    if (!p.is_object() || !p.contains("replicas") || !p["replicas"].is_number_integer()) {
      return Status::Error("field '" + where + ".replicas' is missing or not a whole number");
    }
    if (!p.contains("samples_per_s")) {
      return Status::Error("field '" + where + ".samples_per_s' is missing");
    }
    Result<Estimate> e = EstimateFromJson(p["samples_per_s"], where + ".samples_per_s");
    if (!e.ok()) return e.status();
    out.push_back({p["replicas"].get<int>(), *e});
  }
  return out;
}

Result<std::vector<WhatIfSeries>> WhatIfs(const json& doc) {
  std::vector<WhatIfSeries> out;
  const auto it = doc.find("whatif_curves");
  if (it == doc.end()) return out;
  if (!it->is_array()) return Status::Error("field 'whatif_curves' is not an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const json& c = (*it)[i];
    const std::string where = "whatif_curves[" + std::to_string(i) + "]";
    if (!c.is_object() || !c.contains("label") || !c["label"].is_string()) {
      return Status::Error("field '" + where + ".label' is missing or not a string");
    }
    Result<std::vector<ModelPoint>> points = Points(c, "points");
    if (!points.ok()) return Status::Error(where + ": " + points.status().message());
    out.push_back({c["label"].get<std::string>(), std::move(*points)});
  }
  return out;
}

Result<std::vector<model::ModelCheck>> Checks(const json& doc) {
  std::vector<model::ModelCheck> out;
  const auto it = doc.find("model_checks");
  if (it == doc.end()) return out;
  if (!it->is_array()) return Status::Error("field 'model_checks' is not an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const json& c = (*it)[i];
    const std::string where = "model_checks[" + std::to_string(i) + "]";
    if (!c.is_object() || !c.contains("run") || !c["run"].is_string() || !c.contains("replicas") ||
        !c["replicas"].is_number_integer() || !c.contains("measured_samples_per_s") ||
        !c["measured_samples_per_s"].is_number() || !c.contains("error") ||
        !c["error"].is_number() || !c.contains("predicted_samples_per_s")) {
      return Status::Error("field '" + where +
                           "' needs run, replicas, predicted_samples_per_s, "
                           "measured_samples_per_s and error");
    }
    Result<Estimate> e =
        EstimateFromJson(c["predicted_samples_per_s"], where + ".predicted_samples_per_s");
    if (!e.ok()) return e.status();
    model::ModelCheck row;
    row.run = c["run"].get<std::string>();
    row.replicas = c["replicas"].get<int>();
    row.predicted_samples_per_s = *e;
    row.measured_samples_per_s = c["measured_samples_per_s"].get<double>();
    row.error = c["error"].get<double>();
    row.within_band = c.value("within_band", false);
    row.partly_fitted = c.value("partly_fitted", false);
    row.predicted_before = c.value("predicted_before", false);
    if (const auto from = c.find("predicted_from"); from != c.end()) {
      if (!from->is_array())
        return Status::Error("field '" + where + ".predicted_from' is not an array");
      for (const json& n : *from) {
        if (!n.is_number_integer()) {
          return Status::Error("field '" + where + ".predicted_from' holds a non-integer");
        }
        row.predicted_from.push_back(n.get<int>());
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

Result<std::optional<ModelCurve>> ModelCurveFromJson(const json& diagnosis) {
  if (!diagnosis.is_object() || !diagnosis.contains("predictions")) {
    return std::optional<ModelCurve>();
  }
  ModelCurve c;
  Result<std::vector<ModelPoint>> predicted = Points(diagnosis, "predictions");
  if (!predicted.ok()) return predicted.status();
  Result<std::vector<ModelPoint>> levers = Points(diagnosis, "lever_curve");
  if (!levers.ok()) return levers.status();
  Result<std::vector<model::ModelCheck>> checks = Checks(diagnosis);
  if (!checks.ok()) return checks.status();
  Result<std::vector<WhatIfSeries>> what_ifs = WhatIfs(diagnosis);
  if (!what_ifs.ok()) return what_ifs.status();
  c.predicted = std::move(*predicted), c.with_levers = std::move(*levers);
  c.checks = std::move(*checks);
  c.what_ifs = std::move(*what_ifs);
  if (c.predicted.empty()) return std::optional<ModelCurve>();
  return std::optional<ModelCurve>(std::move(c));
}

int HalfDeviceReplicas(const std::vector<ModelPoint>& points) {
  if (points.empty() || points.front().replicas != 1) return 0;
  const double x1 = points.front().samples_per_s.value;
  if (!(x1 > 0)) return 0;
  for (size_t i = 1; i < points.size(); ++i) {
    const int added = points[i].replicas - points[i - 1].replicas;
    if (added <= 0) continue;
    const double marginal =
        (points[i].samples_per_s.value - points[i - 1].samples_per_s.value) / added / x1;
    if (marginal < 0.5) return points[i].replicas;
  }
  return 0;
}

json ModelChart(const decide::Diagnosis& d, const ModelCurve& curve, const std::string& schema) {
  json rows = json::array();
  auto add = [&rows](const std::string& series, int n, const Estimate& e) {
    rows.push_back({{"series", series},
                    {"replicas", n},
                    {"samples_per_s", e.value},
                    {"low", e.low},
                    {"high", e.high}});
  };
  for (const decide::DiagnosisPoint& p : d.points) {
    add("measured", p.scaling.replicas, Estimate::Exact(p.scaling.samples_per_s));
  }
  for (const ModelPoint& p : curve.predicted) add("model", p.replicas, p.samples_per_s);
  for (const ModelPoint& p : curve.with_levers)
    add("model, free levers", p.replicas, p.samples_per_s);
  json domain = {"measured", "model", "model, free levers"};
  json range = {"#4c78a8", "#f58518", "#54a24b"};
  const char* const upgrade_colours[] = {"#b279a2", "#9d755d", "#72b7b2", "#eeca3b"};
  for (size_t i = 0; i < curve.what_ifs.size(); ++i) {
    const std::string series = "model, " + curve.what_ifs[i].label;
    for (const ModelPoint& p : curve.what_ifs[i].points) add(series, p.replicas, p.samples_per_s);
    domain.push_back(series);
    range.push_back(upgrade_colours[i % 4]);
  }
  const int half = HalfDeviceReplicas(curve.predicted);
  const json x = {{"field", "replicas"},
                  {"type", "quantitative"},
                  {"title", "replicas (N, log scale)"},
                  {"scale", {{"type", "log"}, {"base", 2}}},
                  {"axis", {{"format", "d"}}}};
  const json y = {{"field", "samples_per_s"},
                  {"type", "quantitative"},
                  {"title", std::string(analysis::UnitText(d.source.throughput_unit))}};
  const json colour = {{"field", "series"},
                       {"type", "nominal"},
                       {"title", nullptr},
                       {"scale", {{"domain", domain}, {"range", range}}}};
  json layers = json::array();
  layers.push_back({{"transform", json::array({{{"filter", "datum.series !== 'measured'"}}})},
                    {"mark", {{"type", "area"}, {"opacity", 0.2}}},
                    {"encoding",
                     {{"x", x},
                      {"y", {{"field", "low"}, {"type", "quantitative"}}},
                      {"y2", {{"field", "high"}}},
                      {"color", colour}}}});
  layers.push_back({{"mark", {{"type", "line"}, {"point", true}}},
                    {"encoding",
                     {{"x", x},
                      {"y", y},
                      {"color", colour},
                      {"tooltip", json::array({{{"field", "series"}},
                                               {{"field", "replicas"}},
                                               {{"field", "samples_per_s"}, {"format", ".1f"}},
                                               {{"field", "low"}, {"format", ".1f"}},
                                               {{"field", "high"}, {"format", ".1f"}}})}}}});
  json spec = {{"$schema", schema},
               {"title", "Measured and predicted throughput (band: the model's 90 % interval)"},
               {"width", 380},
               {"height", 240},
               {"datasets", {{"model", rows}}},
               {"data", {{"name", "model"}}}};
  if (half > 0) {
    spec["datasets"]["model_half_device"] = json::array(
        {{{"replicas", half}, {"label", fmt::format("N={}: marginal device < 0.5", half)}}});
    layers.push_back({{"data", {{"name", "model_half_device"}}},
                      {"mark", {{"type", "rule"}, {"strokeDash", {4, 3}}, {"color", "#e45756"}}},
                      {"encoding", {{"x", x}}}});
    layers.push_back({{"data", {{"name", "model_half_device"}}},
                      {"mark",
                       {{"type", "text"},
                        {"align", "left"},
                        {"dx", 4},
                        {"y", 8},
                        {"color", "#e45756"},
                        {"fontSize", 10}}},
                      {"encoding", {{"x", x}, {"text", {{"field", "label"}}}}}});
  }
  spec["layer"] = std::move(layers);
  return spec;
}

}  // namespace stepscope::report
