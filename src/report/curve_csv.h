// The scaling curve as CSV for scripts and pandas: one row per replica count (and per phase when
// the curve was re-measured after the levers). Columns are stable; docs/report.md defines them.
#pragma once

#include <string>
#include <vector>

#include "decide/diagnosis.h"

namespace stepscope::report {

// The header, in order. Times are seconds per step; empty cells are unknown values.
const std::vector<std::string>& CurveCsvColumns();

// Header line plus one line per point: phase "before" for Diagnosis::points, "after" for
// Diagnosis::after->points. RFC 4180 quoting where a cell needs it.
std::string CurveCsv(const decide::Diagnosis& diagnosis);

}  // namespace stepscope::report
