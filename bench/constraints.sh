#!/usr/bin/env bash
# What constraints cost (issue 13), in one run:
#
#   flock /tmp/jq-build.lock bash bench/constraints.sh
#
# (the lock keeps builds off the cores while it measures; drop `flock ...` on a machine of your
# own). It builds the Release binaries (build-release/: jqmaster, jqbench, jqworker), starts a
# redis-server on a free port with no persistence, and then, REPS times, runs jqbench's
# constraints scenario with the constraint on and off, alternating, each on a fresh master and a
# FLUSHALLed Redis:
#   throughput  50,000 jobs over 1,000 tenants keyed by /tenant, concurrency 2 each, pushed in
#               batches of 50 while the worker runs them: every job constrained, with the
#               built-in worker answering without decoding (noop), decoding (decode) and with
#               jqworker in its own process (external); 20 % unconstrained jobs (decode); and 20
#               tenants, where the limit binds (decode)
#   held        100,000 jobs held behind one running job of a concurrency-1 key: the master's
#               idle CPU over 10 s, then unconstrained jobs pushed at 2,000/s for 10 s (dispatch
#               latency); held_none: the same constraint and running job without the backlog;
#               held_off: no constraint, no job running
# Each run's JSON line goes to $OUT; bench/constraints_summary.py prints the medians, the ratios
# on/off and the targets. docs/BENCHMARKS.md ("Constraints") says what each figure measures.
#
# Environment: REPS (3), WORKLOADS ("throughput held": either or both; "mixed" or "tight" instead
# of "throughput" runs only that row of it), OUT (bench/results/constraints-<date>.jsonl), SKIP_BUILD=1 (use the
# binaries already in BUILD_DIR), BUILD_DIR (build-release), CONCURRENCY (50: worker
# concurrency), CONNECTIONS (16: pushing connections), JOBS (50000), BACKLOG (100000), PYTHON
# (/usr/bin/python3), IDLE_SECONDS (10), LATENCY_SECONDS (10), BASELINE_BIN (another jqmaster
# binary, e.g. an earlier commit's Release build: every run is followed by the same run on it,
# tagged baseline-<test>, with the same jqbench and jqworker; the summary adds its tables and a
# before/after table).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

REPS=${REPS:-3}
BUILD_DIR=${BUILD_DIR:-build-release}
CONCURRENCY=${CONCURRENCY:-50}
CONNECTIONS=${CONNECTIONS:-16}
WORKLOADS=${WORKLOADS:-throughput held}
JOBS=${JOBS:-50000}
BACKLOG=${BACKLOG:-100000}
BATCH=50
TENANTS=1000
TIGHT_TENANTS=20
TENANT_CONCURRENCY=2
MIXED_SHARE=0.2
IDLE_SECONDS=${IDLE_SECONDS:-10}
LATENCY_RATE=2000
LATENCY_SECONDS=${LATENCY_SECONDS:-10}
mkdir -p bench/results
OUT=${OUT:-bench/results/constraints-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
: >"$OUT"

log() { echo "constraints: $*" >&2; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  log "building Release binaries in $BUILD_DIR"
  BUILD_DIR=$BUILD_DIR BUILD_TYPE=Release scripts/build.sh jqmaster jqbench jqworker >&2
fi
JQMASTER=$ROOT/$BUILD_DIR/cmd/jqmaster
JQBENCH=$ROOT/$BUILD_DIR/cmd/jqbench
JQWORKER=$ROOT/$BUILD_DIR/cmd/jqworker

PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
free_port() {
  "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

WORK=$(mktemp -d /tmp/jq-constraints.XXXXXX)
REDIS_PID=""
MASTER_PID=""
WORKER_PID=""
cleanup() {
  [[ -n $WORKER_PID ]] && kill "$WORKER_PID" 2>/dev/null && wait "$WORKER_PID" 2>/dev/null
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

MASTER_PORT=$(free_port)
cat >"$WORK/jqmaster.yaml" <<EOF
listen: 127.0.0.1:$MASTER_PORT
redis:
  url: $REDIS_URL
log:
  level: warn
EOF

# start_master [BINARY]: a fresh master (this build's jqmaster by default) on a FLUSHALLed Redis.
start_master() {
  redis-cli -p "$REDIS_PORT" flushall >/dev/null
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

# jqworker on a free port, not registered (jqbench registers it); its URL in WORKER_URL.
start_worker() {
  : >"$WORK/jqworker.log"
  "$JQWORKER" --listen 127.0.0.1:0 >"$WORK/jqworker.log" 2>&1 &
  WORKER_PID=$!
  until grep -q 'listening on' "$WORK/jqworker.log"; do
    if ! kill -0 "$WORKER_PID" 2>/dev/null; then
      log "jqworker stopped at start-up:"
      tail -20 "$WORK/jqworker.log" >&2
      exit 1
    fi
    sleep 0.02
  done
  WORKER_URL="http://$(grep -o 'listening on [^ ]*' "$WORK/jqworker.log" | awk '{print $3}')/"
}

stop_worker() {
  kill "$WORKER_PID"
  wait "$WORKER_PID" || true
  WORKER_PID=""
}

# record TEST JQBENCH-ARGS...: runs jqbench's constraints scenario on a fresh master and
# appends its JSON line, tagged, to $OUT; with BASELINE_BIN, then the same on it, tagged
# baseline-TEST. A failed run is logged and left out.
record() {
  record_on "$JQMASTER" "$1" "${@:2}"
  if [[ -n ${BASELINE_BIN:-} ]]; then record_on "$BASELINE_BIN" "baseline-$1" "${@:2}"; fi
  return 0
}

record_on() {
  local binary=$1 test=$2
  shift 2
  local line pids
  start_master "$binary"
  pids="redis=$REDIS_PID,jqmaster=$MASTER_PID"
  [[ -n $WORKER_PID ]] && pids="$pids,jqworker=$WORKER_PID"
  line=$("$JQBENCH" --url "http://127.0.0.1:$MASTER_PORT" --quiet --scenario constraints \
    --pids "$pids" --redis-url "$REDIS_URL" --worker-concurrency "$CONCURRENCY" \
    --connections "$CONNECTIONS" --tenant-concurrency "$TENANT_CONCURRENCY" "$@" |
    grep '^{' | tail -1) || true
  stop_master
  if [[ -z $line ]]; then
    log "$test $* FAILED (no result line)"
    return 0
  fi
  echo "{\"test\":\"$test\",\"result\":$line}" >>"$OUT"
  log "$test: $(echo "$line" | cut -c1-160)"
}

# throughput TEST WORKER JQBENCH-ARGS...: the constraint on, then off.
throughput() {
  local test=$1 worker=$2
  shift 2
  local constraint worker_args
  for constraint in on off; do
    worker_args=(--worker "$worker")
    if [[ $worker == external ]]; then
      start_worker
      worker_args=(--worker-url "$WORKER_URL")
    fi
    record "$test" --parts throughput --constraint "$constraint" "${worker_args[@]}" \
      --jobs "$JOBS" --batch "$BATCH" "$@"
    [[ -n $WORKER_PID ]] && stop_worker
  done
  return 0
}

# held TEST CONSTRAINT BACKLOG: idle CPU, then dispatch latency of unconstrained jobs.
held() {
  record "$1" --parts idle,latency --constraint "$2" --backlog "$3" --worker decode \
    --tenants "$TENANTS" --idle-seconds "$IDLE_SECONDS" --rate "$LATENCY_RATE" \
    --duration "$LATENCY_SECONDS"
}

log "jqmaster source: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
  "$(git status --porcelain -- src api lua cmd 2>/dev/null | wc -l) files changed since"
[[ -n ${BASELINE_BIN:-} ]] && log "baseline: $BASELINE_BIN"
log "redis $(redis-server --version | awk '{print $3}') on port $REDIS_PORT; $REPS repetitions;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg); results in $OUT"
START=$(date +%s)
for rep in $(seq "$REPS"); do
  log "repetition $rep of $REPS"
  if [[ " $WORKLOADS " == *" throughput "* ]]; then
    for worker in noop decode external; do
      throughput all_constrained "$worker" --tenants "$TENANTS" --unconstrained-share 0
    done
    throughput mixed decode --tenants "$TENANTS" --unconstrained-share "$MIXED_SHARE"
    throughput tight decode --tenants "$TIGHT_TENANTS" --unconstrained-share 0
  else
    # Single rows of it.
    if [[ " $WORKLOADS " == *" mixed "* ]]; then
      throughput mixed decode --tenants "$TENANTS" --unconstrained-share "$MIXED_SHARE"
    fi
    if [[ " $WORKLOADS " == *" tight "* ]]; then
      throughput tight decode --tenants "$TIGHT_TENANTS" --unconstrained-share 0
    fi
  fi
  if [[ " $WORKLOADS " == *" held "* ]]; then
    # The three in turn, each repetition starting one further on: none always runs first.
    variants=("held on $BACKLOG" "held_none on 0" "held_off off 0")
    for i in 0 1 2; do
      # shellcheck disable=SC2086
      held ${variants[$(((i + rep - 1) % 3))]}
    done
  fi
done
log "done in $(($(date +%s) - START)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$PYTHON" bench/constraints_summary.py "$OUT"
