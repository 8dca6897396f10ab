// Units used across stepscope. Times are seconds (double) on a clock aligned across ranks;
// sizes are bytes (int64_t). Names carry the unit where it is not seconds or bytes.
#pragma once

#include <cstdint>

namespace stepscope {

using Seconds = double;
using Bytes = int64_t;

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGB = 1e9;

}  // namespace stepscope
