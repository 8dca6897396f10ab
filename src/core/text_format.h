// Number formatting shared by every text the tool writes (terminal summary, evidence sentences,
// HTML report), so that a value reads the same everywhere.
#pragma once

#include <string>

#include "core/estimate.h"

namespace stepscope {

// `digits` decimals; "-" for a value that is not finite.
std::string Fixed(double v, int digits);
// Seconds as milliseconds with `digits` decimals and the unit: "12.35 ms".
std::string Ms(double seconds, int digits = 2);
// part/whole as a whole percentage: "37%" ("0%" when whole is 0).
std::string Pct(double part, double whole);
// A fraction as a whole percentage: 0.37 -> "37%" ("-" for a value that is not finite).
std::string Percent(double fraction);
// An estimate as "v (low to high)" with `digits` decimals, or just "v" when exact.
std::string EstimateText(const Estimate& e, int digits);

}  // namespace stepscope
