#!/usr/bin/env bash
# Instructions redis-server spends on one jqbench workload, under callgrind: a count that does
# not depend on how busy the machine is, to compare two jqmaster binaries on the same work.
#
#   flock /tmp/jq-build.lock bash bench/redis_callgrind.sh MASTER_BIN OUT.callgrind
#   callgrind_annotate OUT.callgrind | head -40      # PROGRAM TOTALS / JOBS = per job
#
# Starts redis-server under valgrind --tool=callgrind (instrumentation off until the load
# starts) and MASTER_BIN on free loopback ports, runs bench/profile.sh's `constrained` workload
# (JOBS jobs, default 5,000; TENANTS, default 20: the limit binds) with this build's jqbench,
# then stops both. BUILD_DIR: where jqbench is (build-release).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1
OUT=$2
JOBS=${JOBS:-5000}
JQBENCH=${BUILD_DIR:-build-release}/cmd/jqbench
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
WORK=$(mktemp -d /tmp/jq-redis-callgrind.XXXXXX)
REDIS_PORT=$(free_port)
MASTER_PORT=$(free_port)
REDIS_PID=""
MASTER_PID=""
cleanup() {
  [[ -n $MASTER_PID ]] && kill "$MASTER_PID" 2>/dev/null && wait "$MASTER_PID" 2>/dev/null
  [[ -n $REDIS_PID ]] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
valgrind --tool=callgrind --callgrind-out-file="$OUT" --instr-atstart=no \
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
until redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; do sleep 0.2; done
cat >"$WORK/jqmaster.yaml" <<YAML
listen: 127.0.0.1:$MASTER_PORT
redis:
  url: redis://127.0.0.1:$REDIS_PORT/0
log:
  level: warn
YAML
"$BIN" --config "$WORK/jqmaster.yaml" >"$WORK/jqmaster.log" 2>&1 &
MASTER_PID=$!
until curl -sf "http://127.0.0.1:$MASTER_PORT/readyz" >/dev/null; do sleep 0.1; done
callgrind_control -i on "$REDIS_PID" >/dev/null
"$JQBENCH" --url "http://127.0.0.1:$MASTER_PORT" --quiet --scenario constraints --parts throughput \
  --constraint on --worker decode --tenants "${TENANTS:-20}" --tenant-concurrency 2 \
  --unconstrained-share 0 --worker-concurrency 50 --connections 16 --batch 50 --jobs "$JOBS" \
  --redis-url "redis://127.0.0.1:$REDIS_PORT/0" | grep '^{'
callgrind_control -i off "$REDIS_PID" >/dev/null
kill "$MASTER_PID"
wait "$MASTER_PID" || true
MASTER_PID=""
redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
wait "$REDIS_PID" || true
REDIS_PID=""
echo "redis_callgrind: $(callgrind_annotate "$OUT" | grep 'PROGRAM TOTALS' | awk '{print $1}')" \
  "instructions for $JOBS jobs in $OUT"
