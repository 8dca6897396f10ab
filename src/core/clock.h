// The process-local monotonic clock every module timestamps with; the communicator adds the
// offset that aligns it across ranks.
#pragma once

#include <chrono>

#include "core/units.h"

namespace stepscope {

inline Seconds SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace stepscope
