// CPU time as the kernel accounts it: the whole process's (every thread, user and system) and
// the calling thread's. nullopt when the clock cannot be read.
#pragma once

#include <ctime>
#include <optional>

#include "core/units.h"

namespace stepscope {

inline std::optional<Seconds> CpuClockSeconds(clockid_t clock) {
  timespec t{};
  if (clock_gettime(clock, &t) != 0) return std::nullopt;
  return static_cast<Seconds>(t.tv_sec) + static_cast<Seconds>(t.tv_nsec) * 1e-9;
}

inline std::optional<Seconds> ProcessCpuSeconds() {
  return CpuClockSeconds(CLOCK_PROCESS_CPUTIME_ID);
}

inline std::optional<Seconds> ThreadCpuSeconds() {
  return CpuClockSeconds(CLOCK_THREAD_CPUTIME_ID);
}

}  // namespace stepscope
