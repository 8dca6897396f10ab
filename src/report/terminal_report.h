// The terminal form of a Diagnosis: the curve and decomposition as aligned tables, the
// waterfall, ablations, ranks at the largest N, levers, costs and the verdict in plain words.
#pragma once

#include <string>

#include "analysis/diagnosis.h"

namespace stepscope::report {

struct TerminalReportOptions {
  bool colour = false;  // ANSI colour (set it only when stdout is a terminal)
};

std::string TerminalReport(const analysis::Diagnosis& diagnosis,
                           const TerminalReportOptions& options = {});

}  // namespace stepscope::report
