#!/usr/bin/env bash
# Runs the client examples (examples/python, examples/node, examples/curl) against a real
# redis-server + build/cmd/jqmaster and checks what they see: tests/clients/check_clients.py.
# Needs build/cmd/jqmaster (scripts/build.sh) and what scripts/install-deps.sh installs
# (redis-server, python3-msgpack, nodejs, npm, curl). Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The Node examples' locked dependencies: install when node_modules is missing or older than the
# lock (npm writes node_modules/.package-lock.json at the end of every install).
(
  cd examples/node
  if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm ci --no-audit --no-fund
  fi
)

exec /usr/bin/python3 tests/clients/check_clients.py
