#!/usr/bin/env bash
# The test command: installs what is needed, builds, runs every ctest test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
# The HTML report's browser test drives Debian's Chromium with the locked npm packages.
scripts/setup-browser-test.sh >/dev/null
# Sanitizer builds (clang): ASan+UBSan over the unit tests, a real 2-rank run and the trace
# reader's bounded fuzz run; TSan over the thread-heavy tests. Output only on failure.
if ! scripts/sanitize.sh all >build/sanitize.log 2>&1; then
  cat build/sanitize.log
  echo "sanitize: a sanitizer run failed (log above)" >&2
  exit 1
fi
grep '^sanitize:' build/sanitize.log
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
