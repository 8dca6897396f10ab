#!/usr/bin/env bash
# The main job: installs what is needed, builds, and runs `stepscope diagnose` on its built-in
# default workload (an emulated 16-device cluster training a communication-heavy text model).
# Results land in runs/default (diagnosis.json, report.html, one folder per run); running it
# again resumes and skips what is already measured. Extra arguments go to `stepscope diagnose`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
exec build/apps/stepscope/stepscope diagnose --out runs/default "$@"
