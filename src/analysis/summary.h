// A plain-text terminal summary of a Diagnosis: the curve as an aligned table, the waterfall,
// the ablation check and the verdict in plain words. No colour; the caller may add it.
#pragma once

#include <string>
#include <vector>

#include "analysis/diagnosis.h"

namespace stepscope::analysis {

// The table alone: one row per replica count (times in ms per step).
std::string CurveTable(const std::vector<DiagnosisPoint>& points);

// The waterfall from N ideal devices to the measured speed-up, one line per component.
std::string WaterfallText(const Attribution& attribution);

std::string SummaryText(const Diagnosis& diagnosis);

}  // namespace stepscope::analysis
