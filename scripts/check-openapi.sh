#!/usr/bin/env bash
# Checks the OpenAPI contract files in openapi/:
#   1. lints master.yaml and worker.yaml with Redocly CLI (the version locked in
#      openapi/package-lock.json; rules in openapi/redocly.yaml),
#   2. tests/contract/check_routes.py: the spec's paths against `jqmaster --routes`,
#   3. tests/contract/check_responses.py: a real jqmaster (with a real redis-server, jqworker and
#      a Python worker endpoint) answers as the schemas say, in MessagePack and JSON.
# Needs build/cmd/jqmaster and build/cmd/jqworker (scripts/build.sh) and what
# scripts/install-deps.sh installs (nodejs, npm, redis-server, python3-yaml, python3-jsonschema,
# python3-msgpack). Run by scripts/test.sh after ctest.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "check-openapi: redocly lint"
(
  cd openapi
  # Install exactly the locked versions when node_modules is missing or older than the lock
  # (npm writes node_modules/.package-lock.json at the end of every install).
  if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
    npm ci --no-audit --no-fund
  fi
  npx redocly lint master.yaml worker.yaml
)

echo "check-openapi: routes"
/usr/bin/python3 tests/contract/check_routes.py

echo "check-openapi: responses"
/usr/bin/python3 tests/contract/check_responses.py
