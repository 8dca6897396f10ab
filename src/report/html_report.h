// The HTML report: one self-contained page (chart library and data inlined, no network needed to
// view it) that explains a Diagnosis to someone who has never seen the tool. Sections and the
// charts' data sets are listed in docs/report.md.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "decide/diagnosis.h"
#include "report/model_chart.h"

namespace stepscope::report {

struct HtmlReportOptions {
  std::string title;       // page title; empty: "stepscope report: <workload>"
  std::string input_path;  // the diagnosis.json the page was made from ("" to leave it out)
  // Extra run metadata shown as-is (escaped), e.g. {"host", "node-3"}, {"mpi", "Open MPI 4.1"}.
  std::vector<std::pair<std::string, std::string>> metadata;
  // The step-time model's curves (diagnosis.json predictions and lever_curve): a "Step-time
  // model" section with its chart when set.
  std::optional<ModelCurve> model;
};

// The Vega-Lite specifications of the report's charts, keyed by chart name (scaling, waterfall,
// decomposition, skew_compute, skew_arrival, before_after). Each spec's data set has the same
// name as the chart and rows with a "series" field; charts without data are left out.
nlohmann::json ChartSpecs(const decide::Diagnosis& diagnosis);

// The whole page.
std::string RenderHtmlReport(const decide::Diagnosis& diagnosis,
                             const HtmlReportOptions& options = {});

// Renders and writes the page to `path`; errors name the file.
Status WriteHtmlReport(const decide::Diagnosis& diagnosis, const std::string& path);
Status WriteHtmlReport(const decide::Diagnosis& diagnosis, const std::string& path,
                       const HtmlReportOptions& options);

}  // namespace stepscope::report
