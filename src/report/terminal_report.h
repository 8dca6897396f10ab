// The terminal form of a Diagnosis, the one text renderer that `diagnose`, `analyze` and
// `report` print: the curve and decomposition as aligned tables, the re-measured curve after the
// levers (with the change at each N), the waterfall, ablations, ranks at the largest N, the
// verdict with its evidence, levers, costs, currency and warnings. Throughputs carry the
// diagnosis's unit (samples/s, or steps/s when the records give no batch size).
#pragma once

#include <string>
#include <vector>

#include "decide/diagnosis.h"

namespace stepscope::report {

struct TerminalReportOptions {
  bool colour = false;  // ANSI colour (set it only when stdout is a terminal)
};

std::string TerminalReport(const decide::Diagnosis& diagnosis,
                           const TerminalReportOptions& options = {});

// The parts, for callers that print one alone. One row per replica count, times in ms per step;
// a marginal device value the curve does not define shows as "-".
std::string CurveTable(const std::vector<decide::DiagnosisPoint>& points,
                       analysis::ThroughputUnit unit, bool colour = false);
// From N ideal devices down to the measured speed-up, one row per component.
std::string WaterfallTable(const analysis::Attribution& attribution, bool colour = false);

}  // namespace stepscope::report
