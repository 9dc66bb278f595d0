#!/usr/bin/env bash
# Runs the client examples (examples/python, examples/node, examples/typescript, examples/curl)
# against a real redis-server + build/cmd/jqmaster and checks what they see:
# tests/clients/check_clients.py.
# Needs build/cmd/jqmaster (scripts/build.sh) and what scripts/install-deps.sh installs
# (redis-server, python3-msgpack, nodejs, npm, curl). Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."

# The Node and TypeScript examples' locked dependencies: install when node_modules is missing or
# older than the lock (npm writes node_modules/.package-lock.json at the end of every install).
for dir in examples/node examples/typescript; do
  (
    cd "$dir"
    if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
      npm ci --no-audit --no-fund
    fi
  )
done
# The TypeScript pusher runs as JavaScript: tsc (strict) compiles src/ to dist/.
(cd examples/typescript && npm run --silent build)

exec /usr/bin/python3 tests/clients/check_clients.py
