// Reading a JSON value into a C++ number or bool without undefined behaviour. nlohmann's
// get<int>() converts with a plain cast: 1e300 into an int, or -1 into an unsigned type, is out
// of range (undefined for a float, wrapped for an integer). The readers of stepscope's files
// (step records, run.json, sweep.json, diagnosis.json) go through JsonValueTo instead and turn a
// value that does not fit into an error naming the field.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

namespace stepscope {

// Stores `v` in *out and returns true when it is of T's kind and fits: true/false for bool; a
// number within T's range for an integral T (a float must be finite and is truncated toward
// zero, as get<T>() does); any number for a floating T. Returns false, leaving *out untouched,
// otherwise.
template <typename T>
bool JsonValueTo(const nlohmann::json& v, T* out) {
  static_assert(std::is_arithmetic_v<T>);
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return false;
    *out = v.get<bool>();
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) return false;
    *out = static_cast<T>(v.get<double>());
    return true;
  } else {
    using Limits = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(Limits::max())) return false;
      *out = static_cast<T>(u);
      return true;
    }
    if (v.is_number_integer()) {
      const int64_t i = v.get<int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        if (i < 0 || static_cast<uint64_t>(i) > static_cast<uint64_t>(Limits::max())) return false;
      } else {
        if (i < static_cast<int64_t>(Limits::min()) || i > static_cast<int64_t>(Limits::max())) {
          return false;
        }
      }
      *out = static_cast<T>(i);
      return true;
    }
    if (v.is_number_float()) {
      const double d = std::trunc(v.get<double>());
      // 2^digits is exact as a double; the largest T is 2^digits - 1.
      const double above_max = std::ldexp(1.0, Limits::digits);
      const double min = static_cast<double>(Limits::min());
      if (!std::isfinite(d) || d < min || d >= above_max) return false;
      *out = static_cast<T>(d);
      return true;
    }
    return false;
  }
}

}  // namespace stepscope
