#!/bin/sh
# Installs what the HTML report's browser test (ctest -R report_browser) needs: Debian's
# chromium and nodejs/npm, and the locked npm packages of report/web (playwright-core drives the
# system Chromium; it never downloads a browser). Idempotent: does nothing that is already done.
# Building stepscope needs none of this (the chart library is vendored in report/web/vendor).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
missing=""
[ -x /usr/bin/chromium ] || missing="$missing chromium"
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -n "$missing" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends $missing
fi
cd "$root/report/web"
if [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # The playwright-core package installs no browser; this keeps any hook from fetching one.
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund
fi
echo "browser test dependencies ready: $(/usr/bin/chromium --version 2>/dev/null || echo chromium?), node $(node --version)"
