// `stepscope report DIAGNOSIS.json [--html FILE] [--json] [--csv]`: a diagnosis as terminal
// tables, JSON, CSV or a self-contained HTML page. Exit codes: docs/report.md.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace stepscope::app {

struct ReportFlags {
  std::string diagnosis;        // path of diagnosis.json
  std::string html;             // write the HTML report here ("" = none)
  bool json = false;            // print the diagnosis as JSON instead of tables
  bool csv = false;             // print the curve as CSV instead of tables
  std::string colour = "auto";  // auto (only on a terminal), always, never
};

// Exit codes.
inline constexpr int kReportOk = 0;
inline constexpr int kReportBadInput = 1;     // diagnosis unreadable or invalid
inline constexpr int kReportWriteFailed = 3;  // the HTML file could not be written

int RunReport(const ReportFlags& flags);
// Registers `report` on `app`; when it is chosen, *run is set to run it.
void AddReportCommand(CLI::App& app, std::function<int()>* run);

}  // namespace stepscope::app
