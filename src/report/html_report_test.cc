#include "report/html_report.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "core/text_format.h"
#include "report/goodput_chart.h"
#include "report/html_escape.h"
#include "report/report_testing.h"

namespace stepscope::report {
namespace {

size_t SeriesCount(const nlohmann::json& rows) {
  std::set<std::string> series;
  for (const auto& r : rows) series.insert(r["series"].get<std::string>());
  return series.size();
}

TEST(ChartSpecs, SeriesAndPointsFollowTheDiagnosis) {
  auto d = MakeTestDiagnosis({.after = true});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const auto& diag = d.value();
  const nlohmann::json charts = ChartSpecs(diag);
  const size_t n = diag.points.size();
  auto rows = [&](const char* name) { return charts[name]["datasets"][name]; };
  EXPECT_EQ(rows("scaling").size(), 2 * n + diag.after->points.size());
  EXPECT_EQ(SeriesCount(rows("scaling")), 3u);  // measured, ideal linear, after levers
  EXPECT_EQ(rows("decomposition").size(), 5 * n);
  EXPECT_EQ(SeriesCount(rows("decomposition")), 5u);
  EXPECT_EQ(rows("waterfall").size(), diag.attribution->lines.size() + 2);
  EXPECT_EQ(rows("skew_compute").size(), static_cast<size_t>(diag.points.back().scaling.replicas));
  EXPECT_EQ(rows("before_after").size(), n + diag.after->points.size());
  // The waterfall ends at the measured speed-up.
  double level = diag.attribution->ideal_devices;
  for (const auto& l : diag.attribution->lines) level -= l.devices;
  EXPECT_NEAR(level, diag.attribution->measured_speedup, 1e-6);
  // The ideal line is N times the 1-replica throughput.
  EXPECT_NEAR(rows("scaling")[n + n - 1]["samples_per_s"].get<double>(),
              diag.points.back().scaling.replicas * diag.points.front().scaling.samples_per_s,
              1e-6);
  // The straggler's bar is marked as such.
  const auto skew = rows("skew_compute");
  EXPECT_EQ(skew[3]["series"], "straggler");
  EXPECT_EQ(skew[0]["series"], "other ranks");
}

TEST(HtmlReport, HostileNamesStayText) {
  auto d = MakeTestDiagnosis({.hostile = true});
  ASSERT_TRUE(d.ok()) << d.status().message();
  HtmlReportOptions options;
  options.input_path = std::string("/tmp/") + kHostileName + "/diagnosis.json";
  options.metadata = {{"host", kHostileName}};
  const std::string page = RenderHtmlReport(d.value(), options);
  // Exactly the page's own five script elements, and no injected element.
  EXPECT_EQ(Count(page, "<script"), 5u);
  EXPECT_EQ(Count(page, "</script>"), 5u);
  // Outside the script elements (the chart library's code has its own "<img" strings), and no
  // '<' in the data block.
  bool data_block_clean = false;
  const std::string markup = MarkupOutsideScripts(page, &data_block_clean);
  EXPECT_TRUE(data_block_clean);
  EXPECT_EQ(Count(markup, "<img"), 0u);
  EXPECT_EQ(Count(markup, "<b>bold"), 0u);
  EXPECT_EQ(Count(page, "<!--"), 0u);
  // The names appear escaped as text.
  EXPECT_GE(Count(page, EscapeHtml(kHostileName)), 4u);  // title, h1, workload, host, path...
}

TEST(HtmlReport, EmulationIsMarkedAndLibraryInlined) {
  auto d = MakeTestDiagnosis({.emulated = true});
  ASSERT_TRUE(d.ok());
  const std::string page = RenderHtmlReport(d.value());
  EXPECT_NE(page.find("id=\"emulation\""), std::string::npos);
  EXPECT_NE(page.find("EMULATED"), std::string::npos);
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);  // nothing fetched
  EXPECT_EQ(page.find("<script src"), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
  auto plain = MakeTestDiagnosis();
  EXPECT_EQ(RenderHtmlReport(plain.value()).find("id=\"emulation\""), std::string::npos);
}

// The levers table's measured gain: a lever run on its own shows its own gain against the
// baseline at that replica count; one without its own run shows the combined curve's.
TEST(HtmlReport, LeversTableShowsEachLeversOwnMeasuredGain) {
  auto d = MakeTestDiagnosis({.after = true});
  ASSERT_TRUE(d.ok());
  decide::Diagnosis& diag = d.value();
  ASSERT_FALSE(diag.verdict.levers.empty());
  const Lever first = diag.verdict.levers.front().lever;
  const decide::DiagnosisPoint& base = diag.points.back();
  diag.after->levers_applied = {
      {first, "a change", base.scaling.replicas, base.scaling.samples_per_s + 12.5}};
  std::string page = RenderHtmlReport(diag);
  std::string table = page.substr(page.find("id=\"levers\""));
  table = table.substr(0, table.find("</table>"));
  EXPECT_NE(table.find(fmt::format("+12.5 at N={} (on its own)", base.scaling.replicas)),
            std::string::npos)
      << table;
  diag.after->levers_applied = {{first, "a change"}};
  page = RenderHtmlReport(diag);
  table = page.substr(page.find("id=\"levers\""));
  table = table.substr(0, table.find("</table>"));
  EXPECT_EQ(table.find("on its own"), std::string::npos) << table;
  EXPECT_NE(table.find(fmt::format(" at N={}", base.scaling.replicas)), std::string::npos) << table;
}

TEST(ModelChart, HalfADeviceIsWhereTheMarginalDeviceDropsBelowHalf) {
  // X(1) = 100; 1 -> 2 adds 90 (0.9 device), 2 -> 4 adds 120 (0.6 each), 4 -> 8 adds 160 (0.4).
  const std::vector<ModelPoint> points = {{1, Estimate::Exact(100)},
                                          {2, Estimate::Exact(190)},
                                          {4, Estimate::Exact(310)},
                                          {8, Estimate::Exact(470)}};
  EXPECT_EQ(HalfDeviceReplicas(points), 8);
  EXPECT_EQ(HalfDeviceReplicas({points.begin(), points.begin() + 3}), 0);
  EXPECT_EQ(HalfDeviceReplicas({points.begin() + 1, points.end()}), 0);  // no one-replica point
}

TEST(ModelChart, ReadFromTheDiagnosisJson) {
  const nlohmann::json doc = {
      {"predictions",
       {{{"replicas", 1}, {"samples_per_s", {{"value", 10}, {"low", 9}, {"high", 11}}}},
        {{"replicas", 2}, {"samples_per_s", {{"value", 19}, {"low", 18}, {"high", 20}}}}}},
      {"lever_curve",
       {{{"replicas", 1}, {"samples_per_s", {{"value", 12}, {"low", 12}, {"high", 12}}}}}}};
  Result<std::optional<ModelCurve>> c = ModelCurveFromJson(doc);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ((*c)->predicted.size(), 2u);
  EXPECT_EQ((*c)->predicted[1].samples_per_s.low, 18);
  EXPECT_EQ((*c)->with_levers.size(), 1u);
  Result<std::optional<ModelCurve>> none =
      ModelCurveFromJson({{"points", nlohmann::json::array()}});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Result<std::optional<ModelCurve>> bad =
      ModelCurveFromJson({{"predictions", {{{"replicas", "two"}}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("predictions[0].replicas"), std::string::npos);
  nlohmann::json checked = doc;
  checked["model_checks"] = {
      {{"run", "baseline-n2"},
       {"replicas", 2},
       {"predicted_samples_per_s", {{"value", 19}, {"low", 18}, {"high", 20}}},
       {"measured_samples_per_s", 20},
       {"error", -0.05},
       {"predicted_before", true},
       {"predicted_from", {1}}}};
  nlohmann::json link_point = {{"replicas", 1},
                               {"samples_per_s", {{"value", 10}, {"low", 10}, {"high", 10}}}};
  nlohmann::json link_curve = {{"kind", "faster_link"}, {"label", "25 GB/s, 5 us link"}};
  link_curve["points"] = nlohmann::json::array({link_point});
  checked["whatif_curves"] = nlohmann::json::array({link_curve});
  Result<std::optional<ModelCurve>> with_checks = ModelCurveFromJson(checked);
  ASSERT_TRUE(with_checks.ok()) << with_checks.status().message();
  ASSERT_EQ((*with_checks)->checks.size(), 1u);
  EXPECT_TRUE((*with_checks)->checks[0].predicted_before);
  EXPECT_EQ((*with_checks)->checks[0].predicted_from, std::vector<int>{1});
  EXPECT_DOUBLE_EQ((*with_checks)->checks[0].measured_samples_per_s, 20);
  ASSERT_EQ((*with_checks)->what_ifs.size(), 1u);
  EXPECT_EQ((*with_checks)->what_ifs[0].label, "25 GB/s, 5 us link");
  EXPECT_EQ((*with_checks)->what_ifs[0].points.size(), 1u);
  checked["model_checks"][0].erase("error");
  Result<std::optional<ModelCurve>> missing = ModelCurveFromJson(checked);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("model_checks[0]"), std::string::npos);
}

TEST(HtmlReport, ModelSectionShowsTheBandTheHalfDeviceCountAndTheLeverCurve) {
  auto d = MakeTestDiagnosis();
  ASSERT_TRUE(d.ok());
  const decide::Diagnosis& diag = d.value();
  EXPECT_EQ(RenderHtmlReport(diag).find("chart-model"), std::string::npos);  // no model, no chart
  HtmlReportOptions options;
  ModelCurve curve;
  for (int n = 1; n <= 64; n *= 2) {
    const double x = 100.0 * n / (1 + 0.2 * (n - 1));  // marginal below half from N = 4
    curve.predicted.push_back({n, {x, 0.9 * x, 1.1 * x}});
    curve.with_levers.push_back({n, Estimate::Exact(100.0 * n)});
  }
  options.model = curve;
  const std::string page = RenderHtmlReport(diag, options);
  EXPECT_NE(page.find("<h2>Step-time model</h2>"), std::string::npos);
  EXPECT_NE(page.find("id=\"chart-model\""), std::string::npos);
  EXPECT_NE(page.find("falls below half a device at N=4 (as measured; out to N=64)"),
            std::string::npos);
  EXPECT_NE(page.find("With the free levers it stays above half a device out to N=64"),
            std::string::npos);
  const nlohmann::json chart = ModelChart(diag, curve, "schema");
  const nlohmann::json& rows = chart["datasets"]["model"];
  EXPECT_EQ(rows.size(), diag.points.size() + 2 * curve.predicted.size());
  EXPECT_EQ(SeriesCount(rows), 3u);  // measured, model, model with the free levers
  EXPECT_EQ(chart["layer"][0]["mark"]["type"], "area");  // the band
  EXPECT_EQ(chart["layer"][1]["encoding"]["x"]["scale"]["type"], "log");
  EXPECT_EQ(chart["datasets"]["model_half_device"][0]["replicas"], 4);
  EXPECT_EQ(page.find("id=\"model-checks\""), std::string::npos);  // no checks, no table
  WhatIfSeries link{"25 GB/s, 5 us link, with the free levers", {}};
  for (int n = 1; n <= 64; n *= 2) link.points.push_back({n, Estimate::Exact(95.0 * n)});
  curve.what_ifs.push_back(link);
  options.model = curve;
  const std::string upgraded = RenderHtmlReport(diag, options);
  EXPECT_NE(upgraded.find("On 25 GB/s, 5 us link, with the free levers it stays above half a "
                          "device out to N=64"),
            std::string::npos);
  const nlohmann::json with_link = ModelChart(diag, curve, "schema");
  EXPECT_EQ(SeriesCount(with_link["datasets"]["model"]), 4u);
  EXPECT_EQ(with_link["layer"][1]["encoding"]["color"]["scale"]["domain"].size(), 4u);
  curve.what_ifs.clear();
  curve.checks.push_back(
      {"baseline-n4", 4, {300, 280, 320}, 310, 300.0 / 310 - 1, true, false, false, {}, {}});
  curve.checks.push_back(
      {"baseline-n8", 8, {470, 440, 500}, 500, 470.0 / 500 - 1, false, false, true, {1, 2, 4}, {}});
  options.model = curve;
  const std::string checked = RenderHtmlReport(diag, options);
  const size_t table = checked.find("id=\"model-checks\"");
  ASSERT_NE(table, std::string::npos);
  EXPECT_NE(checked.find("300.0 (280.0 to 320.0)", table), std::string::npos);
  EXPECT_NE(checked.find("-3.2%", table), std::string::npos);
  EXPECT_NE(checked.find("predicted before it ran, from N=1,2,4", table), std::string::npos);
}

TEST(HtmlReport, WriteNamesTheFileOnError) {
  auto d = MakeTestDiagnosis();
  ASSERT_TRUE(d.ok());
  Status s = WriteHtmlReport(d.value(), "/nonexistent-dir/report.html");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/report.html"), std::string::npos);
}

TEST(HtmlReport, VerdictAfterTheLeversComesFirst) {
  auto d = MakeTestDiagnosis({.after = true});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const std::string html = RenderHtmlReport(d.value(), {});
  const size_t after = html.find("id=\"after-verdict\"");
  const size_t before = html.find("id=\"verdict\"");
  ASSERT_NE(after, std::string::npos);
  ASSERT_NE(before, std::string::npos);
  EXPECT_LT(after, before);
  EXPECT_NE(html.find("id=\"after-decision\""), std::string::npos);
  EXPECT_NE(html.find("id=\"after-efficiency\""), std::string::npos);
}

// The ranks table, as the terminal's: each rank's compute and overhead, and of the overhead the
// time in the job's own collectives once some rank recorded it.
TEST(HtmlReport, RanksShowTheirOverheadAndTheirOwnCollectivesWhereRecorded) {
  auto made = MakeTestDiagnosis({});
  ASSERT_TRUE(made.ok()) << made.status().message();
  decide::Diagnosis d = made.value();
  const auto table = [](const std::string& html) {
    const size_t at = html.find("id=\"ranks\"");
    return at == std::string::npos ? std::string()
                                   : html.substr(at, html.find("</table>", at) - at);
  };
  std::string ranks = table(RenderHtmlReport(d, {}));
  ASSERT_FALSE(ranks.empty());
  EXPECT_NE(ranks.find("<th>overhead ms</th>"), std::string::npos);
  EXPECT_EQ(ranks.find("own collectives"), std::string::npos);
  for (analysis::RankDecomposition& r : d.points.back().decomposition.ranks) {
    r.mean.overhead = 0.004;
    r.mean.script_comm = r.rank == 1 ? 0.0035 : 0;
  }
  ranks = table(RenderHtmlReport(d, {}));
  EXPECT_NE(ranks.find("<th>of it own collectives ms</th>"), std::string::npos);
  EXPECT_NE(ranks.find("<tr><td>1</td>"), std::string::npos) << ranks;
  EXPECT_NE(ranks.find("<td>4.000</td><td>3.500</td>"), std::string::npos) << ranks;
}

// The lost devices by cause (the binding is the largest), and with an inconclusive binding the
// candidates the noise could not tell apart, each with its interval.
TEST(HtmlReport, LossesByCauseAndInconclusiveCandidates) {
  auto made = MakeTestDiagnosis({});
  ASSERT_TRUE(made.ok()) << made.status().message();
  decide::Diagnosis d = std::move(made).value();
  ASSERT_TRUE(d.attribution.has_value());
  ASSERT_EQ(d.verdict.losses.size(), 6u);
  std::string html = RenderHtmlReport(d, {});
  const size_t table = html.find("id=\"losses\"");
  ASSERT_NE(table, std::string::npos);
  const std::string losses = html.substr(table, html.find("</table>", table) - table);
  EXPECT_EQ(Count(losses, "<tr>"), 7u);  // the header and six causes
  size_t at = 0;
  for (const decide::BindingLoss& l : d.verdict.losses) {
    const std::string cell = "<td>" + std::string(ToString(l.binding)) + "</td>";
    const size_t found = losses.find(cell, at);
    ASSERT_NE(found, std::string::npos) << cell;  // in the verdict's order
    at = found;
    EXPECT_NE(losses.find(Fixed(l.devices, 2), found), std::string::npos) << cell;
  }
  EXPECT_EQ(html.find("id=\"candidates\""), std::string::npos);  // conclusive: no candidates

  d.verdict.binding = Binding::kInconclusive;
  d.verdict.candidates = {{Binding::kCommunication, {0.012, 0.010, 0.015}, {1.5, 1.25, 1.875}},
                          {Binding::kStragglers, {0.011, 0.008, 0.013}, {1.375, 1.0, 1.625}}};
  html = RenderHtmlReport(d, {});
  const size_t start = html.find("id=\"candidates\"");
  ASSERT_NE(start, std::string::npos);
  const std::string candidates = html.substr(start, html.find("</table>", start) - start);
  EXPECT_EQ(Count(candidates, "<tr>"), 3u);
  EXPECT_NE(candidates.find("12.000 (10.000 to 15.000)"), std::string::npos) << candidates;
  EXPECT_NE(candidates.find("1.38 (1.00 to 1.62)"), std::string::npos) << candidates;
  EXPECT_LT(candidates.find("communication"), candidates.find("stragglers"));
  EXPECT_NE(html.find("Binding constraint:</b> inconclusive"), std::string::npos);
}

// The goodput curve: the model's samples/s and goodput at every count priced in one
// configuration, next to the measured points; options in another configuration stay out.
TEST(GoodputChart, FollowsTheOptionsOfOneConfiguration) {
  auto made = MakeTestDiagnosis({});
  ASSERT_TRUE(made.ok()) << made.status().message();
  decide::Diagnosis d = made.value();
  EXPECT_TRUE(GoodputRows(d).empty());
  EXPECT_FALSE(ChartSpecs(d).contains("goodput"));
  auto option = [](decide::OptionKind kind, int n, double rate, double eff) {
    decide::PricedOption o;
    o.kind = kind;
    o.replicas = n;
    o.samples_per_s = Estimate::Exact(rate);
    o.statistical_efficiency = eff;
    o.goodput = rate * eff;
    return o;
  };
  d.verdict.options = {option(decide::OptionKind::kStay, 4, 400, 0.9),
                       option(decide::OptionKind::kMoreDevices, 8, 700, 0.8),
                       option(decide::OptionKind::kFewerDevices, 2, 210, 0.95),
                       option(decide::OptionKind::kFasterLink, 8, 900, 0.8)};
  d.verdict.options.back().link = "100 GB/s, 1 us";
  const nlohmann::json rows = GoodputRows(d);
  size_t model = 0, measured = 0;
  for (const auto& r : rows) {
    if (r["series"] == "model goodput") {
      ++model;
      if (r["replicas"] == 8) {
        EXPECT_DOUBLE_EQ(r["rate"].get<double>(), 560);
      }
    }
    if (r["series"] == "measured") ++measured;
  }
  EXPECT_EQ(model, 3u);  // 2, 4 and 8 replicas; the faster link is another configuration
  EXPECT_EQ(measured, d.points.size());
  EXPECT_TRUE(ChartSpecs(d).contains("goodput"));
  EXPECT_NE(RenderHtmlReport(d, {}).find("id=\"chart-goodput\""), std::string::npos);
}

}  // namespace
}  // namespace stepscope::report
