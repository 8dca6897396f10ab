#include "core/estimate.h"

#include <algorithm>

namespace stepscope {

Estimate operator+(const Estimate& a, const Estimate& b) {
  return {a.value + b.value, a.low + b.low, a.high + b.high};
}

Estimate operator-(const Estimate& a, const Estimate& b) {
  return {a.value - b.value, a.low - b.high, a.high - b.low};
}

Estimate operator*(const Estimate& a, double k) {
  const double x = a.low * k, y = a.high * k;
  return {a.value * k, std::min(x, y), std::max(x, y)};
}

nlohmann::json ToJson(const Estimate& e) {
  return {{"value", e.value}, {"low", e.low}, {"high", e.high}};
}

Result<Estimate> EstimateFromJson(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) {
    return Status::Error("'" + path + "' must be an object {\"value\", \"low\", \"high\"}");
  }
  Estimate e;
  for (auto [name, field] :
       {std::pair{"value", &e.value}, std::pair{"low", &e.low}, std::pair{"high", &e.high}}) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number()) {
      return Status::Error("'" + path + "." + name + "' is missing or not a number");
    }
    *field = it->get<double>();
  }
  if (!(e.low <= e.value && e.value <= e.high)) {
    return Status::Error("'" + path + "': low <= value <= high does not hold");
  }
  return e;
}

}  // namespace stepscope
