#include "core/text_format.h"

#include <fmt/format.h>

#include <cmath>

namespace stepscope {

std::string Fixed(double v, int digits) {
  return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : "-";
}

std::string Ms(double seconds, int digits) { return Fixed(1e3 * seconds, digits) + " ms"; }

std::string Pct(double part, double whole) {
  return fmt::format("{:.0f}%", whole > 0 ? 100 * part / whole : 0.0);
}

std::string Percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:.0f}%", 100 * fraction) : "-";
}

std::string EstimateText(const Estimate& e, int digits) {
  if (e.low == e.value && e.high == e.value) return Fixed(e.value, digits);
  return fmt::format("{} ({} to {})", Fixed(e.value, digits), Fixed(e.low, digits),
                     Fixed(e.high, digits));
}

}  // namespace stepscope
