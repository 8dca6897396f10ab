// Fuzz target: diagnosis.json as `stepscope report` reads it, and every rendering of what it
// accepts: terminal tables, JSON, CSV and the HTML page. Any input gives a page or a Status, never
// a crash or undefined behaviour; the page never carries a byte that could end its script
// element early.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "decide/diagnosis.h"
#include "report/curve_csv.h"
#include "report/html_report.h"
#include "report/terminal_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto d = stepscope::decide::DiagnosisFromString(text);
  if (!d.ok()) return 0;
  (void)stepscope::report::TerminalReport(*d);
  (void)stepscope::report::CurveCsv(*d);
  (void)stepscope::decide::DiagnosisToString(*d);
  stepscope::report::HtmlReportOptions options;
  options.input_path = "fuzz/diagnosis.json";
  const std::string page = stepscope::report::RenderHtmlReport(*d, options);
  if (page.empty()) std::abort();
  return 0;
}
