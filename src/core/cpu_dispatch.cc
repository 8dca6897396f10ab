#include "core/cpu_dispatch.h"

namespace stepscope {

const char* DispatchLevel() {
#if STEPSCOPE_DISPATCH_ACTIVE
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    return "x86-64-v4";
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("bmi2")) {
    return "x86-64-v3";
  }
  return "x86-64";
#else
  return "build target";
#endif
}

}  // namespace stepscope
