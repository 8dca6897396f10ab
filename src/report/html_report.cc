#include "report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "core/text_format.h"
#include "report/chart_assets.h"
#include "report/goodput_chart.h"
#include "report/html_escape.h"
#include "report/options_table.h"
#include "report/rank_table.h"

namespace stepscope::report {
namespace {

using analysis::Components;
using analysis::kStepComponents;
using analysis::Of;
using analysis::ThroughputUnit;
using decide::Diagnosis;
using decide::DiagnosisPoint;
using nlohmann::json;

constexpr const char* kSchema = "https://vega.github.io/schema/vega-lite/v6.json";

// Each component of a step as the charts label and colour it.
struct ComponentStyle {
  const char* label;
  const char* colour;
};
ComponentStyle StyleOf(Component c) {
  switch (c) {
    case Component::kCompute:
      return {"compute", "#4c78a8"};
    case Component::kInputWait:
      return {"input wait", "#f58518"};
    case Component::kSyncWait:
      return {"sync wait", "#e45756"};
    case Component::kTransfer:
      return {"transfer", "#b279a2"};
    case Component::kOverhead:
      return {"overhead", "#9d9d9d"};
    case Component::kResidual:
      return {"residual", "#bab0ac"};
  }
  return {"?", "#000000"};
}

json Base(const std::string& name, const std::string& title, json rows) {
  return {{"$schema", kSchema},
          {"title", title},
          {"width", 380},
          {"height", 240},
          {"datasets", {{name, std::move(rows)}}},
          {"data", {{"name", name}}}};
}

json ColourScale(const std::vector<std::string>& domain, const std::vector<std::string>& range) {
  return {{"domain", domain}, {"range", range}};
}

json ScalingChart(const Diagnosis& d) {
  json rows = json::array();
  const double x1 = d.points.front().scaling.speedup > 0
                        ? d.points.front().scaling.samples_per_s / d.points.front().scaling.speedup
                        : 0;
  for (const DiagnosisPoint& p : d.points) {
    const auto& s = p.scaling;
    rows.push_back({{"series", "measured"},
                    {"replicas", s.replicas},
                    {"samples_per_s", s.samples_per_s},
                    {"efficiency", s.efficiency},
                    {"marginal", s.has_marginal ? json(s.marginal_device_value) : json(nullptr)},
                    {"label", fmt::format("eff {} · marg {}", Percent(s.efficiency),
                                          s.has_marginal ? Fixed(s.marginal_device_value, 2)
                                                         : std::string("-"))}});
  }
  for (const DiagnosisPoint& p : d.points) {
    rows.push_back({{"series", "ideal linear"},
                    {"replicas", p.scaling.replicas},
                    {"samples_per_s", x1 * p.scaling.replicas},
                    {"efficiency", 1.0},
                    {"marginal", 1.0},
                    {"label", ""}});
  }
  std::vector<std::string> domain = {"measured", "ideal linear"};
  std::vector<std::string> range = {"#4c78a8", "#9d9d9d"};
  if (d.after) {
    for (const DiagnosisPoint& p : d.after->points) {
      const auto& s = p.scaling;
      rows.push_back({{"series", "after levers"},
                      {"replicas", s.replicas},
                      {"samples_per_s", s.samples_per_s},
                      {"efficiency", s.efficiency},
                      {"marginal", s.has_marginal ? json(s.marginal_device_value) : json(nullptr)},
                      {"label", ""}});
    }
    domain.push_back("after levers");
    range.push_back("#54a24b");
  }
  json spec = Base("scaling", "Throughput against ideal linear scaling", std::move(rows));
  json ticks = json::array();
  for (const DiagnosisPoint& p : d.points) ticks.push_back(p.scaling.replicas);
  const json x = {{"field", "replicas"},
                  {"type", "quantitative"},
                  {"title", "replicas (N)"},
                  {"axis", {{"values", ticks}, {"format", "d"}}}};
  const json y = {{"field", "samples_per_s"},
                  {"type", "quantitative"},
                  {"title", UnitText(d.source.throughput_unit)}};
  spec["layer"] = json::array(
      {{{"mark", {{"type", "line"}, {"point", true}}},
        {"encoding",
         {{"x", x},
          {"y", y},
          {"color",
           {{"field", "series"},
            {"type", "nominal"},
            {"scale", ColourScale(domain, range)},
            {"title", nullptr}}},
          {"strokeDash",
           {{"field", "series"},
            {"type", "nominal"},
            {"legend", nullptr},
            {"scale", ColourScale({"measured", "ideal linear", "after levers"},
                                  {"[1,0]", "[4,3]", "[1,0]"})}}},
          {"tooltip", json::array({{{"field", "series"}},
                                   {{"field", "replicas"}},
                                   {{"field", "samples_per_s"}, {"format", ".1f"}},
                                   {{"field", "efficiency"}, {"format", ".0%"}},
                                   {{"field", "marginal"}, {"format", ".2f"}}})}}}},
       {{"transform", json::array({{{"filter", "datum.series === 'measured'"}}})},
        {"mark", {{"type", "text"}, {"dy", 12}, {"dx", 4}, {"align", "left"}, {"fontSize", 10}}},
        {"encoding", {{"x", x}, {"y", y}, {"text", {{"field", "label"}}}}}}});
  // strokeDash wants arrays; Vega-Lite takes them as scale range values.
  spec["layer"][0]["encoding"]["strokeDash"]["scale"]["range"] =
      json::array({json::array({1, 0}), json::array({4, 3}), json::array({1, 0})});
  return spec;
}

json WaterfallChart(const analysis::Attribution& a) {
  json rows = json::array();
  int order = 0;
  rows.push_back({{"series", "ideal"},
                  {"order", order++},
                  {"step", fmt::format("{} ideal devices", a.replicas)},
                  {"start", 0.0},
                  {"end", a.ideal_devices},
                  {"devices", a.ideal_devices}});
  double level = a.ideal_devices;
  for (const analysis::WaterfallLine& l : a.lines) {
    const double next = level - l.devices;
    rows.push_back({{"series", l.devices >= 0 ? "lost" : "gained"},
                    {"order", order++},
                    {"step", ToString(l.component)},
                    {"start", level},
                    {"end", next},
                    {"devices", -l.devices}});
    level = next;
  }
  rows.push_back({{"series", "measured"},
                  {"order", order++},
                  {"step", "measured speed-up"},
                  {"start", 0.0},
                  {"end", a.measured_speedup},
                  {"devices", a.measured_speedup}});
  json spec = Base("waterfall", fmt::format("Where the devices went at N={} (devices)", a.replicas),
                   std::move(rows));
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"x",
       {{"field", "step"},
        {"type", "nominal"},
        {"sort", {{"field", "order"}}},
        {"title", nullptr},
        {"axis", {{"labelAngle", -30}}}}},
      {"y", {{"field", "start"}, {"type", "quantitative"}, {"title", "devices"}}},
      {"y2", {{"field", "end"}}},
      {"color",
       {{"field", "series"},
        {"type", "nominal"},
        {"title", nullptr},
        {"scale", ColourScale({"ideal", "lost", "gained", "measured"},
                              {"#9d9d9d", "#e45756", "#54a24b", "#4c78a8"})}}},
      {"tooltip", json::array({{{"field", "step"}}, {{"field", "devices"}, {"format", "+.2f"}}})}};
  return spec;
}

json DecompositionChart(const std::vector<DiagnosisPoint>& points) {
  json rows = json::array();
  std::vector<std::string> domain, range, replicas;
  for (Component c : kStepComponents) {
    domain.push_back(StyleOf(c).label);
    range.push_back(StyleOf(c).colour);
  }
  for (const DiagnosisPoint& p : points) {
    replicas.push_back(fmt::format("N={}", p.scaling.replicas));
    int order = 0;
    for (Component c : kStepComponents) {
      rows.push_back({{"series", StyleOf(c).label},
                      {"order", order++},
                      {"replicas", replicas.back()},
                      {"ms", 1e3 * Of(p.decomposition.job, c)}});
    }
  }
  json spec = Base("decomposition", "Step time per replica count (ms per step)", std::move(rows));
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"x",
       {{"field", "replicas"},
        {"type", "nominal"},
        {"sort", replicas},
        {"title", nullptr},
        {"axis", {{"labelAngle", 0}}}}},
      {"y", {{"field", "ms"}, {"type", "quantitative"}, {"stack", "zero"}, {"title", "ms/step"}}},
      {"color",
       {{"field", "series"},
        {"type", "nominal"},
        {"title", nullptr},
        {"scale", ColourScale(domain, range)}}},
      {"order", {{"field", "order"}}},
      {"tooltip", json::array({{{"field", "replicas"}},
                               {{"field", "series"}},
                               {{"field", "ms"}, {"format", ".3f"}}})}};
  return spec;
}

json SkewChart(const analysis::SkewReport& skew, bool compute) {
  json rows = json::array();
  for (const analysis::RankSkew& r : skew.ranks) {
    const bool straggler = std::find(skew.straggler_ranks.begin(), skew.straggler_ranks.end(),
                                     r.rank) != skew.straggler_ranks.end();
    rows.push_back({{"series", straggler ? "straggler" : "other ranks"},
                    {"rank", fmt::format("rank {}", r.rank)},
                    {"value", compute ? 1e3 * r.compute_mean : 100 * r.last_fraction}});
  }
  const std::string name = compute ? "skew_compute" : "skew_arrival";
  json spec = Base(name,
                   compute ? fmt::format("Compute per rank at N={} (ms per step)", skew.replicas)
                           : fmt::format("Arrived last at a {} (% of them), N={}",
                                         skew.by_steps ? "step" : "collective", skew.replicas),
                   std::move(rows));
  spec["width"] = 300;
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"x",
       {{"field", "rank"},
        {"type", "nominal"},
        {"sort", nullptr},
        {"title", nullptr},
        {"axis", {{"labelAngle", 0}}}}},
      {"y",
       {{"field", "value"},
        {"type", "quantitative"},
        {"title", compute ? "ms/step" : "% arrived last"}}},
      {"color",
       {{"field", "series"},
        {"type", "nominal"},
        {"title", nullptr},
        {"scale", ColourScale({"straggler", "other ranks"}, {"#e45756", "#4c78a8"})}}},
      {"tooltip", json::array({{{"field", "rank"}}, {{"field", "value"}, {"format", ".3f"}}})}};
  return spec;
}

json BeforeAfterChart(const Diagnosis& d) {
  json rows = json::array();
  for (const DiagnosisPoint& p : d.points) {
    rows.push_back({{"series", "before"},
                    {"replicas", fmt::format("N={}", p.scaling.replicas)},
                    {"samples_per_s", p.scaling.samples_per_s}});
  }
  for (const DiagnosisPoint& p : d.after->points) {
    rows.push_back({{"series", "after"},
                    {"replicas", fmt::format("N={}", p.scaling.replicas)},
                    {"samples_per_s", p.scaling.samples_per_s}});
  }
  json spec = Base("before_after", "Throughput before and after the levers", std::move(rows));
  spec["mark"] = {{"type", "bar"}};
  spec["encoding"] = {
      {"x",
       {{"field", "replicas"},
        {"type", "nominal"},
        {"sort", nullptr},
        {"title", nullptr},
        {"axis", {{"labelAngle", 0}}}}},
      {"xOffset", {{"field", "series"}, {"sort", json::array({"before", "after"})}}},
      {"y",
       {{"field", "samples_per_s"},
        {"type", "quantitative"},
        {"title", UnitText(d.source.throughput_unit)}}},
      {"color",
       {{"field", "series"},
        {"type", "nominal"},
        {"title", nullptr},
        {"scale", ColourScale({"before", "after"}, {"#9d9d9d", "#54a24b"})}}},
      {"tooltip", json::array({{{"field", "replicas"}},
                               {{"field", "series"}},
                               {{"field", "samples_per_s"}, {"format", ".1f"}}})}};
  return spec;
}

// Measured throughput gain at the largest replica count measured both before and after (0 and
// false when there is no such count).
const DiagnosisPoint* PointAt(const std::vector<DiagnosisPoint>& points, int replicas) {
  for (const DiagnosisPoint& p : points) {
    if (p.scaling.replicas == replicas) return &p;
  }
  return nullptr;
}

bool MeasuredGain(const Diagnosis& d, int* replicas, double* gain) {
  if (!d.after) return false;
  for (auto a = d.after->points.rbegin(); a != d.after->points.rend(); ++a) {
    for (const DiagnosisPoint& b : d.points) {
      if (b.scaling.replicas == a->scaling.replicas) {
        *replicas = b.scaling.replicas;
        *gain = a->scaling.samples_per_s - b.scaling.samples_per_s;
        return true;
      }
    }
  }
  return false;
}

// --- HTML pieces -----------------------------------------------------------------------------

std::string Row(const std::vector<std::string>& cells, bool header = false) {
  std::string out = "<tr>";
  for (const std::string& c : cells) {
    out += header ? "<th>" : "<td>";
    out += c;  // callers escape
    out += header ? "</th>" : "</td>";
  }
  return out + "</tr>\n";
}

std::string H(std::string_view s) { return EscapeHtml(s); }

std::string ListOf(const std::vector<std::string>& items) {
  if (items.empty()) return "";
  std::string out = "<ul>";
  for (const std::string& s : items) out += "<li>" + H(s) + "</li>";
  return out + "</ul>\n";
}

std::string CurveTableHtml(const std::vector<DiagnosisPoint>& points, ThroughputUnit unit) {
  std::string out = "<table class=\"num\">\n";
  out += Row({"N", std::string(UnitText(unit)), "speed-up", "efficiency", "marginal device value",
              "p50 ms", "compute", "input wait", "sync wait", "transfer", "overhead"},
             true);
  for (const DiagnosisPoint& p : points) {
    const auto& s = p.scaling;
    const Components& c = p.decomposition.job;
    out += Row({std::to_string(s.replicas), Fixed(s.samples_per_s, 1), Fixed(s.speedup, 2),
                Percent(s.efficiency), s.has_marginal ? Fixed(s.marginal_device_value, 2) : "-",
                Fixed(1e3 * p.decomposition.step_p50, 3), Fixed(1e3 * c.compute, 3),
                Fixed(1e3 * c.input_wait, 3), Fixed(1e3 * c.sync_wait, 3),
                Fixed(1e3 * c.transfer, 3), Fixed(1e3 * c.overhead, 3)});
  }
  return out + "</table>\n";
}

// The ranks table (rank_table.h).
std::string RanksTableHtml(const DiagnosisPoint& p) {
  const RankTable rows = RankTableOf(p);
  std::string out = "<table class=\"num\" id=\"ranks\">\n" + Row(rows.header, true);
  for (const RankTable::Row& r : rows.rows) {
    std::vector<std::string> cells;
    for (const std::string& c : r.cells) cells.push_back(H(c));
    out += Row(cells);
  }
  return out + "</table>\n";
}

std::string AblationsHtml(const DiagnosisPoint& p) {
  std::string out = fmt::format("<h3>Ablations at N={}</h3>\n<p>{}</p>\n", p.scaling.replicas,
                                H(p.ablations.sentence));
  if (p.ablations.checks.empty()) return out + "<p class=\"muted\">No ablation runs.</p>\n";
  out += "<table class=\"num\">\n";
  out += Row({"ablation", "unit", "measured", "predicted", "tolerance", "agrees"}, true);
  for (const analysis::AblationCheck& c : p.ablations.checks) {
    const std::string predicted = c.predicted_high != c.predicted
                                      ? Fixed(c.predicted, 4) + " to " + Fixed(c.predicted_high, 4)
                                      : Fixed(c.predicted, 4);
    out += Row({H(std::string(ToString(c.check))), H(c.unit), Fixed(c.measured, 4), predicted,
                Fixed(c.tolerance, 4),
                c.agrees ? "<span class=\"ok\">yes</span>" : "<span class=\"bad\">no</span>"});
  }
  out += "</table>\n<ul>";
  for (const analysis::AblationCheck& c : p.ablations.checks)
    out += "<li>" + H(c.sentence) + "</li>";
  return out + "</ul>\n";
}

constexpr const char* kStyle = R"css(
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1em 2em;
       color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { border-bottom: 1px solid #ddd; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
table.num td { text-align: right; } table.num td:first-child { text-align: left; }
th { background: #f4f4f4; }
.row { display: flex; flex-wrap: wrap; gap: 2em; align-items: flex-start; }
.row > .side { flex: 1 1 320px; min-width: 0; }
.verdict { background: #f3f7fc; border-left: 5px solid #4c78a8; padding: 0.6em 1em; }
.emulated { background: #fff3cd; border: 2px solid #e0a800; padding: 0.6em 1em; font-weight: 600; }
.ok { color: #2e7d32; } .bad { color: #c62828; font-weight: 600; } .muted { color: #777; }
.warn { color: #8a5a00; }
)css";

// Runs vega-embed on each chart; the views are kept on window.stepscopeViews for inspection and
// window.stepscopeReady resolves once every chart has rendered.
constexpr const char* kBootScript = R"js(
(function () {
  var data = JSON.parse(document.getElementById('stepscope-data').textContent);
  window.stepscopeData = data;
  window.stepscopeViews = {};
  var jobs = Object.keys(data.charts).map(function (name) {
    return vegaEmbed('#chart-' + name, data.charts[name], {actions: false, renderer: 'svg'})
      .then(function (result) { window.stepscopeViews[name] = result.view; });
  });
  window.stepscopeReady = Promise.all(jobs).then(function () { return true; },
    function (err) { console.error('stepscope: chart failed: ' + err); throw err; });
})();
)js";

// A verdict: binding and throughput constraints, candidates, decision, explanation, evidence.
// `id` names its block ("verdict", "after-verdict"); the ids inside take the same prefix
// ("decision", "after-decision").
std::string VerdictHtml(const decide::Verdict& v, const std::string& heading,
                        const std::string& id) {
  const size_t dash = id.rfind('-');
  const std::string prefix = dash == std::string::npos ? "" : id.substr(0, dash + 1);
  std::string h = "<h2>" + H(heading) + "</h2>\n<div class=\"verdict\" id=\"" + id + "\">\n";
  h += "<p><b>Binding constraint:</b> " + H(std::string(ToString(v.binding)));
  if (!v.straggler_ranks.empty()) {
    h += fmt::format(" (straggler rank{}: {})", v.straggler_ranks.size() > 1 ? "s" : "",
                     fmt::join(v.straggler_ranks, ", "));
  }
  if (v.throughput_constraint != Binding::kNone) {
    h += "</p>\n<p><b>Throughput constraint</b> (already at one replica): <span id=\"" + prefix +
         "throughput-constraint\">" + H(std::string(ToString(v.throughput_constraint))) + "</span>";
  }
  if (!v.candidates.empty()) {
    h += "</p>\n<p><b>Candidates within the noise of each other:</b></p>\n<table class=\"num\" "
         "id=\"" +
         prefix + "candidates\">\n";
    h += Row({"candidate", "ms per step (90% interval)", "devices lost (90% interval)"}, true);
    for (const decide::BindingCandidate& c : v.candidates) {
      h += Row({H(std::string(ToString(c.binding))),
                fmt::format("{} ({} to {})", Fixed(1e3 * c.seconds.value, 3),
                            Fixed(1e3 * c.seconds.low, 3), Fixed(1e3 * c.seconds.high, 3)),
                fmt::format("{} ({} to {})", Fixed(c.devices.value, 2), Fixed(c.devices.low, 2),
                            Fixed(c.devices.high, 2))});
    }
    h += "</table>\n<p>";
  }
  h += "</p>\n<p><b>Decision:</b> <span id=\"" + prefix + "decision\">" +
       H(std::string(ToString(v.decision))) +
       "</span>: " + H(std::string(decide::DecisionWords(v.decision))) + ". " +
       H(v.decision_reason) + "</p>\n";
  h += "<p>" + H(v.explanation) + "</p>\n" + ListOf(v.evidence) + "</div>\n";
  return h;
}

// The priced options of a verdict as a table with id `id`; "" when nothing was priced.
std::string OptionsHtml(const decide::Verdict& v, const std::string& heading,
                        const std::string& id) {
  const OptionsTable options = PricedOptionsTable(v);
  if (options.rows.empty()) return "";
  auto escaped = [](std::vector<std::string> cells) {
    for (std::string& c : cells) c = H(c);
    return cells;
  };
  std::string h = "<h2>" + H(heading) + "</h2>\n<p>" + H(options.caption) +
                  ". * marks the decision.</p>\n" + "<table class=\"num\" id=\"" + id + "\">\n";
  h += Row(escaped(options.header), true);
  for (const std::vector<std::string>& row : options.rows) h += Row(escaped(row));
  return h + "</table>\n";
}

}  // namespace

json ChartSpecs(const Diagnosis& d) {
  json charts = json::object();
  if (d.points.empty()) return charts;
  charts["scaling"] = ScalingChart(d);
  if (d.attribution) charts["waterfall"] = WaterfallChart(*d.attribution);
  charts["decomposition"] = DecompositionChart(d.points);
  const analysis::SkewReport& skew = d.points.back().skew;
  if (!skew.ranks.empty()) {
    charts["skew_compute"] = SkewChart(skew, true);
    charts["skew_arrival"] = SkewChart(skew, false);
  }
  if (d.after && !d.after->points.empty()) charts["before_after"] = BeforeAfterChart(d);
  if (json goodput = GoodputChart(d, kSchema); !goodput.is_null()) charts["goodput"] = goodput;
  return charts;
}

namespace {

// The step-time model's section: its chart and where the marginal device falls below half.
std::string ModelSectionHtml(const ModelCurve& model, const std::string& chart) {
  std::string h = "<h2>Step-time model</h2>\n<div class=\"row\">" + chart + "</div>\n<p>";
  const int half = HalfDeviceReplicas(model.predicted);
  const int largest = model.predicted.back().replicas;
  h += half > 0 ? fmt::format(
                      "The model predicts the marginal device falls below half a device "
                      "at N={} (as measured; out to N={}).",
                      half, largest)
                : fmt::format(
                      "The marginal device stays above half a device out to N={} (as "
                      "measured), by the model.",
                      largest);
  if (!model.with_levers.empty()) {
    const int levered = HalfDeviceReplicas(model.with_levers);
    h += levered > 0
             ? fmt::format(" With the free levers: below half a device at N={}.", levered)
             : fmt::format(" With the free levers it stays above half a device out to N={}.",
                           model.with_levers.back().replicas);
  }
  for (const WhatIfSeries& w : model.what_ifs) {
    if (w.points.empty()) continue;
    const int upgraded = HalfDeviceReplicas(w.points);
    h += upgraded > 0 ? fmt::format(" On {}: below half a device at N={}.", H(w.label), upgraded)
                      : fmt::format(" On {} it stays above half a device out to N={}.", H(w.label),
                                    w.points.back().replicas);
  }
  h += " The band is the model's 90 % interval (docs/model.md).</p>\n";
  if (model.checks.empty()) return h;
  // Predicted against measured for every run the model did not fit on.
  h += "<table class=\"num\" id=\"model-checks\">\n";
  h += Row({"run", "N", "predicted samples/s (90% band)", "measured", "error", "how"}, true);
  for (const model::ModelCheck& c : model.checks) {
    std::string how =
        c.partly_fitted ? "not fitted on (its reductions or overlap were)" : "not fitted on";
    if (c.predicted_before) {
      how = fmt::format("predicted before it ran, from N={}", fmt::join(c.predicted_from, ","));
    }
    h += Row({H(c.run), std::to_string(c.replicas),
              fmt::format("{} ({} to {})", Fixed(c.predicted_samples_per_s.value, 1),
                          Fixed(c.predicted_samples_per_s.low, 1),
                          Fixed(c.predicted_samples_per_s.high, 1)),
              Fixed(c.measured_samples_per_s, 1), fmt::format("{:+.1f}%", 100 * c.error), H(how)});
  }
  return h + "</table>\n";
}

}  // namespace

std::string RenderHtmlReport(const Diagnosis& d, const HtmlReportOptions& options) {
  const std::string workload =
      d.source.workload.empty() ? "(workload not named)" : d.source.workload;
  const std::string title = options.title.empty() ? "stepscope report: " + workload : options.title;
  json charts = ChartSpecs(d);
  if (options.model && !d.points.empty()) charts["model"] = ModelChart(d, *options.model, kSchema);
  const ThroughputUnit unit = d.source.throughput_unit;
  auto chart_div = [&](const char* name) -> std::string {
    return charts.contains(name)
               ? fmt::format("<div id=\"chart-{}\" class=\"chart\"></div>\n", name)
               : std::string();
  };

  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  h += "<title>" + H(title) + "</title>\n<style>" + std::string(kStyle) +
       "</style>\n</head>\n<body>\n";
  h += "<h1>" + H(title) + "</h1>\n";
  if (d.emulation.emulated) {
    h += "<div class=\"emulated\" id=\"emulation\">EMULATED: devices and/or links in this run were "
         "emulated (real compute and communication, paced to the parameters below). Numbers "
         "describe the emulated system, not this host.<br>";
    std::vector<std::string> params;
    for (const auto& [k, v] : d.emulation.parameters) params.push_back(H(k) + " = " + H(v));
    h += fmt::format("{}</div>\n", fmt::join(params, ", "));
  }

  // Verdict first: the answer, then the evidence. After the levers, their verdict counts.
  const decide::Verdict& v = d.verdict;
  if (d.after && d.after->verdict) {
    h += VerdictHtml(*d.after->verdict, "Verdict after the free levers (the one that counts)",
                     "after-verdict");
    h += VerdictHtml(v, "Verdict before the levers", "verdict");
  } else {
    h += VerdictHtml(v, "Verdict", "verdict");
  }

  // Levers.
  h += "<h2>Free levers, cheapest first</h2>\n";
  int gain_replicas = 0;
  double measured_gain = 0;
  const bool measured = MeasuredGain(d, &gain_replicas, &measured_gain);
  if (v.levers.empty()) {
    h += "<p class=\"muted\">No lever is expected to gain enough to list.</p>\n";
  } else {
    h += "<table class=\"num\" id=\"levers\">\n";
    h += Row({"lever", "action", fmt::format("expected {}", UnitText(unit)), "expected gain",
              "expected efficiency", "measured gain", "basis"},
             true);
    for (const decide::LeverAdvice& l : v.levers) {
      std::string got = "-";
      const auto& applied =
          measured ? d.after->levers_applied : std::vector<decide::AppliedLever>{};
      auto a = std::find_if(applied.begin(), applied.end(),
                            [&](const decide::AppliedLever& x) { return x.lever == l.lever; });
      const DiagnosisPoint* base = a != applied.end() && a->alone_replicas > 0
                                       ? PointAt(d.points, a->alone_replicas)
                                       : nullptr;
      if (base != nullptr) {
        got = fmt::format("{:+.1f} at N={} (on its own)",
                          a->alone_samples_per_s - base->scaling.samples_per_s, a->alone_replicas);
      } else if (a != applied.end()) {
        got = fmt::format("{:+.1f} at N={}", measured_gain, gain_replicas);
        if (applied.size() > 1) got += " (levers applied together)";
      }
      h += Row({H(std::string(ToString(l.lever))), H(l.action), Fixed(l.expected_samples_per_s, 1),
                fmt::format("{:+.1f}", l.expected_gain_samples_per_s),
                l.expected_efficiency > 0 ? Percent(l.expected_efficiency) : "-", got, H(l.basis)});
    }
    h += "</table>\n";
  }
  if (!v.levers_dropped.empty()) {
    h += "<p>Ruled out by the step-time model (not priced, not in \"all free levers\"):</p>\n";
    h += "<ul id=\"levers-dropped\">\n";
    for (const decide::DroppedLever& l : v.levers_dropped) {
      h += fmt::format("<li><b>{}</b> ({}): {}</li>\n", H(std::string(ToString(l.lever))),
                       H(l.action), H(l.reason));
    }
    h += "</ul>\n";
  }

  // Curve.
  h += "<h2>Scaling curve</h2>\n<div class=\"row\">" + chart_div("scaling") + "</div>\n";
  h += CurveTableHtml(d.points, unit);
  if (charts.contains("model")) h += ModelSectionHtml(*options.model, chart_div("model"));
  if (d.attribution) {
    const analysis::Attribution& a = *d.attribution;
    h += fmt::format(
        "<h2>Where the devices went</h2>\n<p>At N={} the job delivers {} devices' worth of "
        "throughput: {} of {} devices lost.{}</p>\n",
        a.replicas, Fixed(a.measured_speedup, 2), Fixed(a.lost_devices, 2),
        Fixed(a.ideal_devices, 0),
        a.reference_estimated ? " The 1-replica reference was estimated, not measured." : "");
    h += chart_div("waterfall");
    if (!a.reference_estimated && !v.losses.empty()) {
      // The same lost devices by cause: a straggler's extra work is compute above, stragglers
      // here.
      h += "<p>The same lost devices by cause (the binding constraint is the largest):</p>\n"
           "<table class=\"num\" id=\"losses\">\n";
      h += Row({"cause", "ms per step since one replica", "devices lost"}, true);
      for (const decide::BindingLoss& l : v.losses) {
        h += Row(
            {H(std::string(ToString(l.binding))), Fixed(1e3 * l.seconds, 3), Fixed(l.devices, 2)});
      }
      h += "</table>\n";
    }
  }

  // Decomposition beside the ablations.
  h += "<h2>Step-time decomposition and ablations</h2>\n<div class=\"row\">\n<div>" +
       chart_div("decomposition") + "</div>\n<div class=\"side\">";
  if (!d.points.empty()) h += AblationsHtml(d.points.back());
  h += "</div>\n</div>\n";

  if (!d.points.empty()) {
    const analysis::SkewReport& s = d.points.back().skew;
    h += fmt::format("<h2>Ranks at N={}</h2>\n", d.points.back().scaling.replicas);
    h += fmt::format(
        "<p>Compute spread {} ms (cv {}); arrival skew at collectives mean {} ms, p90 {} "
        "ms.</p>\n",
        Fixed(1e3 * s.compute_spread, 3), Fixed(s.compute_cv, 3),
        Fixed(1e3 * s.arrival_skew_mean, 3), Fixed(1e3 * s.arrival_skew_p90, 3));
    h += "<div class=\"row\">" + chart_div("skew_compute") + chart_div("skew_arrival") + "</div>\n";
    if (!s.ranks.empty()) h += RanksTableHtml(d.points.back());
    h += ListOf(s.evidence);
  }

  if (d.after) {
    h += "<h2>Before and after the levers</h2>\n<p>Applied: " +
         H(decide::AppliedLeversText(d.after->levers_applied)) + "</p>\n";
    h += chart_div("before_after");
    h += CurveTableHtml(d.after->points, unit);
    if (d.after->original_x1 > 0) {
      h += "<p>Efficiency after the levers, against one device with the levers (the table "
           "above) and against one device before them:</p>\n<table class=\"num\" "
           "id=\"after-efficiency\">\n" +
           Row({"N", "against the levered X(1)", "against the original X(1)"}, true);
      for (const DiagnosisPoint& p : d.after->points) {
        h += Row({std::to_string(p.scaling.replicas), Percent(p.scaling.efficiency),
                  Percent(d.after->EfficiencyAgainstOriginal(p))});
      }
      h += "</table>\n";
    }
  }

  h += "<h2>Cost</h2>\n<p>Currency: " + H(std::string(ToString(v.currency))) + " (" +
       H(std::string(decide::CurrencyWords(v.currency))) + "). " + H(v.quality_note) + "</p>\n";
  if (!v.costs.empty()) {
    h += "<table class=\"num\" id=\"costs\">\n" +
         Row({"N", fmt::format("cost per million {}", UnitNoun(unit)),
              fmt::format("marginal cost per million {}", UnitNoun(unit))},
             true);
    for (const decide::CostPoint& c : v.costs) {
      h += Row({std::to_string(c.replicas), Fixed(c.cost_per_million_samples, 2),
                c.marginal_cost_per_million_samples > 0
                    ? Fixed(c.marginal_cost_per_million_samples, 2)
                    : "-"});
    }
    h += "</table>\n";
  } else {
    h += "<p class=\"muted\">No device price was given, so there is no cost table.</p>\n";
  }
  if (d.after && d.after->verdict) {
    h += OptionsHtml(*d.after->verdict, "Options after the free levers, priced", "after-options");
  }
  h += OptionsHtml(
      v, d.after && d.after->verdict ? "Options before the levers, priced" : "Options, priced",
      "options");
  h += chart_div("goodput");
  const decide::NoiseScale& n = d.noise_scale;
  h += "<p>Gradient noise scale: " +
       (n.known ? fmt::format("B_noise ≈ {} samples (local batch {}, global batch {}, {} steps)",
                              Fixed(n.b_noise, 1), Fixed(n.local_batch, 0),
                              Fixed(n.global_batch, 0), n.steps)
                : std::string("unknown")) +
       (n.reason.empty() ? "" : " — " + H(n.reason)) + "</p>\n";

  if (!d.failed_runs.empty()) {
    h += "<h2>Failed runs</h2>\n<p>The diagnosis is made without them; each log holds the "
         "launcher's output.</p>\n<table id=\"failed-runs\">\n";
    h += Row({"run", "N", "exit", "cause", "log"}, true);
    for (const decide::FailedRun& f : d.failed_runs) {
      h += Row({H(f.run), std::to_string(f.replicas), std::to_string(f.exit_code), H(f.cause),
                H(f.log)});
    }
    h += "</table>\n";
  }
  if (!d.warnings.empty()) {
    h += "<h2>Warnings</h2>\n<div class=\"warn\">" + ListOf(d.warnings) + "</div>\n";
  }

  h += "<h2>Run</h2>\n<table id=\"metadata\">\n";
  h += Row({"workload", H(workload)});
  h += Row({"produced by", H(d.source.origin.empty() ? "-" : d.source.origin)});
  h += Row({"tool version", H(d.source.tool_version.empty() ? "-" : d.source.tool_version)});
  h += Row({"throughput unit",
            unit == ThroughputUnit::kSteps
                ? "steps/s (the records give no batch size, so no rate counts samples)"
                : "samples/s"});
  h += Row({"emulated", d.emulation.emulated ? "yes" : "no"});
  for (const auto& [k, val] : options.metadata) h += Row({H(k), H(val)});
  if (!options.input_path.empty()) h += Row({"diagnosis file", H(options.input_path)});
  h += Row({"schema version", std::to_string(d.schema_version)});
  h += Row({"charts", H(ChartLibraryVersions())});
  h += "</table>\n";

  json data = {{"charts", charts}, {"diagnosis", decide::ToJson(d)}};
  h += "<script type=\"application/json\" id=\"stepscope-data\">" + JsonForScript(data) +
       "</script>\n";
  h += "<script>" + VegaJs() + "</script>\n";
  h += "<script>" + VegaLiteJs() + "</script>\n";
  h += "<script>" + VegaEmbedJs() + "</script>\n";
  h += "<script>" + std::string(kBootScript) + "</script>\n</body>\n</html>\n";
  return h;
}

Status WriteHtmlReport(const Diagnosis& d, const std::string& path) {
  return WriteHtmlReport(d, path, HtmlReportOptions{});
}

Status WriteHtmlReport(const Diagnosis& d, const std::string& path,
                       const HtmlReportOptions& options) {
  const std::string page = RenderHtmlReport(d, options);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Error(path + ": cannot open for writing (does the directory exist?)");
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
  out.close();
  if (!out) return Status::Error(path + ": write failed (disk full?)");
  return Status::Ok();
}

}  // namespace stepscope::report
