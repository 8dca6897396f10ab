#include "apps/stepscope/report_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "decide/diagnosis.h"
#include "report/curve_csv.h"
#include "report/html_report.h"
#include "report/terminal_report.h"

namespace stepscope::app {

int RunReport(const ReportFlags& flags) {
  std::ifstream in(flags.diagnosis, std::ios::binary);
  if (!in) {
    fmt::print(stderr,
               "stepscope report: {}: cannot open (pass the diagnosis.json that "
               "`stepscope diagnose` or `stepscope analyze` wrote)\n",
               flags.diagnosis);
    return kReportBadInput;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto d = decide::DiagnosisFromString(text.str());
  if (!d.ok()) {
    fmt::print(stderr, "stepscope report: {}: {}\n", flags.diagnosis, d.status().message());
    return kReportBadInput;
  }
  if (!flags.html.empty()) {
    report::HtmlReportOptions options;
    options.input_path = flags.diagnosis;
    // The step-time model's curves, when diagnose wrote them (docs/model.md).
    const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
    Result<std::optional<report::ModelCurve>> curve = report::ModelCurveFromJson(doc);
    if (!curve.ok()) {
      fmt::print(stderr, "stepscope report: {}: {}\n", flags.diagnosis, curve.status().message());
      return kReportBadInput;
    }
    options.model = *curve;
    Status s = report::WriteHtmlReport(d.value(), flags.html, options);
    if (!s.ok()) {
      fmt::print(stderr, "stepscope report: {}\n", s.message());
      return kReportWriteFailed;
    }
  }
  if (flags.json) {
    fmt::print("{}\n", decide::ToJson(d.value()).dump(2));
  } else if (flags.csv) {
    fmt::print("{}", report::CurveCsv(d.value()));
  } else if (flags.html.empty() || isatty(STDOUT_FILENO)) {
    report::TerminalReportOptions options;
    options.colour = flags.colour == "always" ||
                     (flags.colour == "auto" && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR"));
    fmt::print("{}", report::TerminalReport(d.value(), options));
  }
  if (!flags.html.empty()) fmt::print(stderr, "wrote {}\n", flags.html);
  return kReportOk;
}

void AddReportCommand(CLI::App& app, std::function<int()>* run) {
  auto flags = std::make_shared<ReportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Show a diagnosis: terminal tables (default), --json, --csv, or --html FILE.");
  cmd->add_option("diagnosis", flags->diagnosis, "diagnosis.json from diagnose or analyze")
      ->required();
  cmd->add_option("--html", flags->html,
                  "Also write a self-contained HTML report (opens offline) to this file");
  auto* json = cmd->add_flag("--json", flags->json,
                             "Print the diagnosis as JSON (fields: docs/diagnosis.md)");
  cmd->add_flag("--csv", flags->csv,
                "Print the scaling curve as CSV, one row per replica count (columns: "
                "docs/report.md)")
      ->excludes(json);
  cmd->add_option("--color", flags->colour,
                  "Colour the tables: auto (on a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->callback([flags, run] { *run = [flags] { return RunReport(*flags); }; });
}

}  // namespace stepscope::app
