#!/usr/bin/env bash
# README command 1: install what is missing, build (the daemon, and jqworker and jqctl, which the
# README uses too), and run the daemon with the documented config (embedded Redis in ./data,
# listening on 127.0.0.1:8080). Extra arguments go to jqmaster.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh jqmaster jqworker jqctl
exec build/cmd/jqmaster --config config/jqmaster.yaml "$@"
