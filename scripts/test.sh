#!/usr/bin/env bash
# The test command: installs what is needed, builds, runs every ctest test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
