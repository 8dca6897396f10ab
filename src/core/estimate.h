// One number with its uncertainty: a point value and the interval [low, high] around it.
// Every estimate stepscope reports uses this type; docs/metrics.md ("Estimates") gives the
// method (percentile bootstrap over steps unless a field says otherwise) and the level (90 %).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/status.h"

namespace stepscope {

struct Estimate {
  double value = 0;
  double low = 0;   // lower end of the interval (== value for an exact number)
  double high = 0;  // upper end

  static Estimate Exact(double v) { return {v, v, v}; }
  double Width() const { return high - low; }
  bool Contains(double x) const { return low <= x && x <= high; }
  // Intervals that share a point: the difference between them is not resolved.
  bool Overlaps(const Estimate& o) const { return low <= o.high && o.low <= high; }
};

// A sum or difference of estimates, for combining independent parts: the value adds exactly and
// the interval's half-widths add (a conservative bound, no independence assumed).
Estimate operator+(const Estimate& a, const Estimate& b);
Estimate operator-(const Estimate& a, const Estimate& b);
Estimate operator*(const Estimate& a, double k);  // k < 0 swaps low and high

// JSON form {"value": v, "low": l, "high": h}.
nlohmann::json ToJson(const Estimate& e);
// Errors name `path` (e.g. "verdict.gain") and what is wrong.
Result<Estimate> EstimateFromJson(const nlohmann::json& j, const std::string& path);

}  // namespace stepscope
