#!/usr/bin/env bash
# Where jqmaster spends its instructions in a jqbench scenario (e2e by default): callgrind on a
# short run.
#
#   flock /tmp/jq-build.lock bash bench/profile.sh [JQBENCH-ARGS...]
#
# Builds jqmaster with symbols (RelWithDebInfo, build/) and jqbench (Release, build-release/),
# starts a redis-server on a free port and jqmaster under valgrind --tool=callgrind with
# instrumentation off, switches it on once the master is ready (start-up is left out), runs
# jqbench (default: --scenario e2e --jobs 5000 --batch 50; arguments replace these), stops
# the master and prints the functions with the most instructions, by themselves and with their
# callees. Instruction counts do not depend on how busy the machine is, which makes them the
# stable measure on a shared one (perf needs hardware counters this VM does not expose).
# The raw profile is kept in bench/results/ for callgrind_annotate or kcachegrind.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
mkdir -p bench/results
OUT=bench/results/callgrind-$(date -u +%Y%m%dT%H%M%SZ).out
ARGS=("$@")
[[ ${#ARGS[@]} -eq 0 ]] && ARGS=(--scenario e2e --jobs 5000 --batch 50)

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  BUILD_DIR=build scripts/build.sh jqmaster >&2
  BUILD_DIR=build-release BUILD_TYPE=Release scripts/build.sh jqbench >&2
fi

WORK=$(mktemp -d /tmp/jq-profile.XXXXXX)
REDIS_PID=""
MASTER_PID=""
cleanup() {
  [[ -n $MASTER_PID ]] && kill "$MASTER_PID" 2>/dev/null && wait "$MASTER_PID" 2>/dev/null
  [[ -n $REDIS_PID ]] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

REDIS_PORT=$(free_port)
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
until redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; do sleep 0.05; done

MASTER_PORT=$(free_port)
cat >"$WORK/jqmaster.yaml" <<EOF
listen: 127.0.0.1:$MASTER_PORT
redis:
  url: redis://127.0.0.1:$REDIS_PORT/0
log:
  level: warn
EOF
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$ROOT/$OUT" \
  "$ROOT/build/cmd/jqmaster" --config "$WORK/jqmaster.yaml" >"$WORK/master.log" 2>&1 &
MASTER_PID=$!
until curl -sf "http://127.0.0.1:$MASTER_PORT/readyz" >/dev/null; do
  if ! kill -0 "$MASTER_PID" 2>/dev/null; then
    echo "profile: jqmaster under valgrind stopped:" >&2
    tail -20 "$WORK/master.log" >&2
    exit 1
  fi
  sleep 0.2
done
callgrind_control -i on "$MASTER_PID" >/dev/null 2>&1
redis-cli -p "$REDIS_PORT" config resetstat >/dev/null
build-release/cmd/jqbench --url "http://127.0.0.1:$MASTER_PORT" --quiet "${ARGS[@]}" |
  grep '^{' >&2
callgrind_control -i off "$MASTER_PID" >/dev/null 2>&1
echo "Redis commands during the run (calls, µs in Redis):" >&2
redis-cli -p "$REDIS_PORT" info commandstats | grep '^cmdstat' | grep -v resetstat |
  sed 's/cmdstat_//; s/:calls=/ /; s/,usec=/ /; s/,usec_per_call.*//' | sort -k2 -n -r | head -12 >&2
kill "$MASTER_PID"
wait "$MASTER_PID" || true
MASTER_PID=""

echo "== self (exclusive) instructions, top 25 =="
callgrind_annotate --inclusive=no "$OUT" 2>/dev/null | sed -n '/^Ir/,$p' | sed -n '3,28p' |
  cut -c1-170
echo "== inclusive instructions of jqmaster's own functions, top 30 =="
callgrind_annotate --inclusive=yes "$OUT" 2>/dev/null | grep -E '^ *[0-9,]+ \(' |
  grep -v '=>' | grep -E "$ROOT/(src|api)/|hiredis|sprintf" | head -30 | cut -c1-170
echo "profile: $OUT"
