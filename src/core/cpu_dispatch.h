// Run-time choice of instruction set for the hot loops (reductions, precision conversion, the nn
// kernels that are not OpenBLAS calls). The default build targets the portable x86-64 baseline,
// so the binary runs on any x86-64 node; a function marked STEPSCOPE_DISPATCH is compiled once
// per instruction-set level and the loader picks the best one the CPU has (GNU ifunc), once, at
// start-up. A build that already targets AVX2 or better (STEPSCOPE_NATIVE=ON) needs no copies.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(__AVX2__) && \
    !defined(STEPSCOPE_NO_DISPATCH)
#define STEPSCOPE_DISPATCH \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define STEPSCOPE_DISPATCH_ACTIVE 1
#else
#define STEPSCOPE_DISPATCH
#define STEPSCOPE_DISPATCH_ACTIVE 0
#endif

namespace stepscope {

// The instruction-set level the dispatched loops run at on this CPU, in words ("x86-64-v4",
// "x86-64-v3", "x86-64", or "build target" when the build chose one), for run metadata.
const char* DispatchLevel();

}  // namespace stepscope
