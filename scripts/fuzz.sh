#!/usr/bin/env bash
# Bounded fuzzing of every reader (Chrome traces, step records, run.json, sweep.json,
# diagnosis.json, predict specs) with libFuzzer (clang from Debian), in the AddressSanitizer
# build that scripts/sanitize.sh shares (the libraries are instrumented too): scripts/fuzz.sh.
# The run length is set in fuzz/CMakeLists.txt (10 s per target).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DSTEPSCOPE_SANITIZE=address \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DSTEPSCOPE_FUZZ=ON >/dev/null
cmake --build build-asan --target fuzz_trace_reader fuzz_step_records fuzz_run_json \
  fuzz_sweep_json fuzz_diagnosis fuzz_spec_reader >/dev/null
cd build-asan
ctest -R '^fuzz_' --output-on-failure -j"$(nproc)"
