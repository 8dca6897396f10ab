#!/usr/bin/env bash
# The test command: installs what is needed, builds, runs every ctest test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
# The HTML report's browser test drives Debian's Chromium with the locked npm packages.
scripts/setup-browser-test.sh >/dev/null
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
