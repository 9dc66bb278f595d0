#!/usr/bin/env bash
# Configures and builds everything into build/ (ccache makes rebuilds near-instant).
#   BUILD_DIR=build BUILD_TYPE=RelWithDebInfo scripts/build.sh [ninja targets...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
export CCACHE_NOHASHDIR=1
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" ${CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" ${1:+--target "$@"}
