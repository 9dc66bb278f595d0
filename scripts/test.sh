#!/usr/bin/env bash
# README command 2: install what is missing, build with warnings as errors, run every test
# ([unit], [redis] against real redis-servers, [http] against the real daemon), then the OpenAPI
# checks (scripts/check-openapi.sh), the clients, the dashboard in Chromium and the fuzzers
# (scripts/fuzz.sh, FUZZ_SECONDS each).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
CMAKE_ARGS="-DJQ_WERROR=ON" scripts/build.sh
cd build
ctest -j "$(nproc)" --output-on-failure --timeout 300
cd ..
scripts/check-openapi.sh
tests/clients/run.sh
tests/browser/run.sh
scripts/fuzz.sh
