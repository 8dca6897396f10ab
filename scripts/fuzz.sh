#!/usr/bin/env bash
# Bounded fuzzing of the trace reader and importers with libFuzzer (clang from Debian), in its own
# build directory: scripts/fuzz.sh. The run length is set in fuzz/CMakeLists.txt (30 s).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTEPSCOPE_NATIVE=OFF \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DSTEPSCOPE_FUZZ=ON >/dev/null
cmake --build build-fuzz --target fuzz_trace_reader >/dev/null
cd build-fuzz
ctest -R '^fuzz_' --output-on-failure
