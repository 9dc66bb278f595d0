#!/usr/bin/env bash
# The dashboard's end-to-end test in Debian's headless Chromium (dashboard.test.mjs), driven by
# the playwright-core version locked in package-lock.json. Needs build/cmd/jqmaster and
# build/cmd/jqworker (scripts/build.sh) and what scripts/install-deps.sh installs (chromium,
# nodejs, npm, redis-server). Run by scripts/test.sh after the other checks.
set -euo pipefail
cd "$(dirname "$0")"
# Install exactly the locked versions when node_modules is missing or older than the lock (npm
# writes node_modules/.package-lock.json at the end of every install).
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund
fi
exec node dashboard.test.mjs
