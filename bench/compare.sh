#!/usr/bin/env bash
# jqmaster + jqbench against BullMQ on the same Redis, side by side, in one run:
#
#   flock /tmp/jq-build.lock bash bench/compare.sh
#
# (the lock keeps builds off the cores while it measures; drop `flock ...` on a machine of your
# own). It builds the Release binaries (build-release/), installs BullMQ from
# bench/bullmq/package-lock.json when missing, starts a redis-server on a free port with no
# persistence, and then, REPS times, runs every workload with jqmaster (a fresh master on a
# FLUSHALLed Redis per run) and with BullMQ (FLUSHALL before each), each with priorities off and
# on, alternating. Each run's JSON line goes to $OUT; bench/summarize.js prints the medians and the
# ratios jqmaster/BullMQ. docs/BENCHMARKS.md says what each workload measures.
#
# Environment: REPS (3), OUT (bench/results/compare-<date>.jsonl), SKIP_BUILD=1 (use the
# binaries already in BUILD_DIR), BUILD_DIR (build-release), CONCURRENCY (50: worker
# concurrency, both systems), CONNECTIONS (16: jqbench connections = BullMQ adds in flight),
# BASELINE_BIN (another jqmaster binary, e.g. an earlier commit's Release build: every jqmaster
# run is followed by the same run of it, tagged baseline-*, and the summary adds a before/after
# table), SKIP_BULLMQ=1 (leave BullMQ out, for a before/after run only).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

REPS=${REPS:-3}
BUILD_DIR=${BUILD_DIR:-build-release}
CONCURRENCY=${CONCURRENCY:-50}
CONNECTIONS=${CONNECTIONS:-16}
mkdir -p bench/results
OUT=${OUT:-bench/results/compare-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
: >"$OUT"

# Jobs per run: each run takes a few seconds on a 2-core machine.
ENQUEUE_JOBS=30000
DRAIN_JOBS=20000
E2E_JOBS=20000
E2E_BATCH=50
LATENCY_RATE=2000
LATENCY_SECONDS=3
MEMORY_JOBS=50000
ARG_BYTES=16

log() { echo "compare: $*" >&2; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  log "building Release binaries in $BUILD_DIR"
  BUILD_DIR=$BUILD_DIR BUILD_TYPE=Release scripts/build.sh jqmaster jqbench >&2
fi
JQMASTER=$ROOT/$BUILD_DIR/cmd/jqmaster
JQBENCH=$ROOT/$BUILD_DIR/cmd/jqbench
if [[ ${SKIP_BULLMQ:-0} != 1 && ! -d bench/bullmq/node_modules/bullmq ]]; then
  log "installing BullMQ (npm ci, pinned by bench/bullmq/package-lock.json)"
  (cd bench/bullmq && npm ci --no-audit --no-fund >&2)
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

WORK=$(mktemp -d /tmp/jq-compare.XXXXXX)
REDIS_PID=""
MASTER_PID=""
cleanup() {
  [[ -n $MASTER_PID ]] && kill "$MASTER_PID" 2>/dev/null && wait "$MASTER_PID" 2>/dev/null
  [[ -n $REDIS_PID ]] && kill "$REDIS_PID" 2>/dev/null && wait "$REDIS_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

REDIS_PORT=$(free_port)
REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$WORK" >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
until redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; do sleep 0.05; done
flushall() { redis-cli -p "$REDIS_PORT" flushall >/dev/null; }

MASTER_PORT=$(free_port)
cat >"$WORK/jqmaster.yaml" <<EOF
listen: 127.0.0.1:$MASTER_PORT
redis:
  url: $REDIS_URL
log:
  level: warn
EOF

start_master() {
  flushall
  "${1:-$JQMASTER}" --config "$WORK/jqmaster.yaml" >>"$WORK/jqmaster.log" 2>&1 &
  MASTER_PID=$!
  until curl -sf "http://127.0.0.1:$MASTER_PORT/readyz" >/dev/null; do
    if ! kill -0 "$MASTER_PID" 2>/dev/null; then
      log "jqmaster stopped at start-up:"
      tail -20 "$WORK/jqmaster.log" >&2
      exit 1
    fi
    sleep 0.02
  done
}

stop_master() {
  kill "$MASTER_PID"
  wait "$MASTER_PID" || true
  MASTER_PID=""
}

# record SYSTEM TEST COMMAND...: runs it and appends its JSON line, tagged, to $OUT. A failed
# run is logged and left out (the summary shows the gap); the comparison goes on.
record() {
  local system=$1 test=$2
  shift 2
  local line
  line=$("$@" | grep '^{' | tail -1) || true
  if [[ -z $line ]]; then
    log "$system $test FAILED (no result line)"
    return 0
  fi
  echo "{\"system\":\"$system\",\"test\":\"$test\",\"result\":$line}" >>"$OUT"
  log "$system $test: $(echo "$line" | cut -c1-150)"
}

# run_jq TEST JQBENCH-ARGS...: priorities off (every job 0) then on (0-9 at random), each on a
# fresh master and an empty Redis; with BASELINE_BIN, each run again on the baseline master.
run_jq() {
  local test=$1
  shift
  local priorities system binary
  for priorities in off on; do
    for system in jqmaster ${BASELINE_BIN:+baseline}; do
      binary=$JQMASTER
      [[ $system == baseline ]] && binary=$BASELINE_BIN
      start_master "$binary"
      record "$system-prio-$priorities" "$test" "$JQBENCH" --url "http://127.0.0.1:$MASTER_PORT" \
        --quiet --pids "redis=$REDIS_PID,jqmaster=$MASTER_PID" --worker-concurrency "$CONCURRENCY" \
        --connections "$CONNECTIONS" --arg-bytes "$ARG_BYTES" \
        --priorities "$([[ $priorities == on ]] && echo 10 || echo 1)" "$@"
      stop_master
    done
  done
}

# run_bull TEST BENCH.JS-ARGS...: priorities off then on (1-10 at random), on an empty Redis.
run_bull() {
  [[ ${SKIP_BULLMQ:-0} == 1 ]] && return 0
  local test=$1
  shift
  local priorities
  for priorities in off on; do
    flushall
    local flag=()
    [[ $priorities == on ]] && flag=(--priorities)
    record "bullmq-prio-$priorities" "$test" node bench/bullmq/bench.js --redis "$REDIS_URL" \
      --redis-pid "$REDIS_PID" --concurrency "$CONCURRENCY" --inflight "$CONNECTIONS" \
      --arg-bytes "$ARG_BYTES" "${flag[@]}" "$@"
  done
}

log "jqmaster source: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
  "$(git status --porcelain -- src api lua cmd 2>/dev/null | wc -l) files changed since"
[[ -n ${BASELINE_BIN:-} ]] && log "baseline: $BASELINE_BIN"
log "redis $(redis-server --version | awk '{print $3}') on port $REDIS_PORT; node $(node --version);" \
  "bullmq $([[ ${SKIP_BULLMQ:-0} == 1 ]] && echo skipped ||
    node -p 'require("./bench/bullmq/node_modules/bullmq/package.json").version');" \
  "$REPS repetitions; results in $OUT"
START=$(date +%s)
for rep in $(seq "$REPS"); do
  log "repetition $rep of $REPS"
  run_jq enqueue_single --scenario push --batch 1 --jobs $ENQUEUE_JOBS
  run_bull enqueue_single --scenario add --batch 1 --jobs $ENQUEUE_JOBS
  run_jq enqueue_batch --scenario push --batch 100 --jobs $ENQUEUE_JOBS
  run_bull enqueue_batch --scenario add --batch 100 --jobs $ENQUEUE_JOBS
  run_jq drain --scenario drain --jobs $DRAIN_JOBS
  run_bull drain --scenario drain --jobs $DRAIN_JOBS
  run_jq e2e --scenario e2e --batch $E2E_BATCH --jobs $E2E_JOBS
  run_bull e2e --scenario e2e --batch $E2E_BATCH --jobs $E2E_JOBS
  run_jq latency --scenario latency --rate $LATENCY_RATE --duration $LATENCY_SECONDS
  run_bull latency --scenario latency --rate $LATENCY_RATE --duration $LATENCY_SECONDS
  run_jq memory --scenario memory --batch 1000 --jobs $MEMORY_JOBS --redis-url "$REDIS_URL"
  run_bull memory --scenario memory --batch 1000 --jobs $MEMORY_JOBS
done
log "done in $(($(date +%s) - START)) s"
node bench/summarize.js "$OUT"
