#!/usr/bin/env bash
# The test command: installs what is needed, builds, runs every ctest test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
# The HTML report's browser test drives Debian's Chromium with the locked npm packages.
scripts/setup-browser-test.sh >/dev/null
# The trace reader's fuzz target runs for a bounded time in its own clang build.
if ! scripts/fuzz.sh >build/fuzz.log 2>&1; then
  cat build/fuzz.log
  echo "fuzz: the trace reader's fuzz run failed (log above)" >&2
  exit 1
fi
echo "fuzz: trace reader fuzzed for 30 s, no crash"
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
