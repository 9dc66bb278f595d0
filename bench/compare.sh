#!/usr/bin/env bash
# jqmaster + jqbench against BullMQ on the same Redis, side by side, in one run:
#
#   flock /tmp/jq-build.lock bash bench/compare.sh
#
# (the lock keeps builds off the cores while it measures; drop `flock ...` on a machine of your
# own). It builds the Release binaries (build-release/: jqmaster, jqbench, jqworker), installs
# BullMQ from bench/bullmq/package-lock.json when missing (npm ci), starts a redis-server on a
# free port with no persistence, and then, REPS times, runs every workload with jqmaster (a fresh
# master on a FLUSHALLed Redis per run) and with BullMQ (FLUSHALL before each), alternating.
# Two groups of workloads (docs/BENCHMARKS.md says what each measures):
#   classic  the rows measured since issue 6, priorities off and on: single pushes and batches
#            of 100 over 16 connections, backlog drain and e2e (batches of 50) with jqbench's
#            built-in worker, latency at 2,000/s, memory per queued job
#   issue14  the workloads users run: single JSON pushes over 50 connections (BullMQ: add, 50 in
#            flight), sent by jqbench and again by wrk (bench/wrk_push.py: a lighter client,
#            for what the master and Redis do when the load generator costs less), and nginx
#            answering the same requests from wrk with a constant (the machine's floor for one
#            HTTP exchange; left out without nginx); e2e with
#            single JSON pushes and a worker in a process of its own that decodes each job and
#            encodes its answer (jqworker and a Node worker, each answering JSON and MessagePack,
#            and the pushes sent by wrk again with jqworker; BullMQ: Worker in a second Node
#            process returning job.data);
#            backlog drain with that worker (jqworker, JSON) at concurrency 50 and 200,
#            priorities off and on; 2,000 jobs/s steady with keep_result and a long-polled result
#            per job (BullMQ: add + job.waitUntilFinished)
# Every external worker process is started here, fresh for each run, and its CPU is read from
# /proc by jqbench (--pids worker=PID). After the repetitions one more, untimed, run of the
# single pushes and of the steady rate is made with the master's syscalls counted (`perf trace
# -s`, or `strace -c -f` where perf cannot trace), for its syscalls per job (SYSCALLS=0 leaves it
# out). Each run's JSON line goes to $OUT;
# bench/summarize.js prints the medians, the ratios jqmaster/BullMQ and the CPU per job of
# every process.
#
# Environment: REPS (3), WORKLOADS ("classic issue14"), OUT (bench/results/compare-<date>.jsonl),
# SKIP_BUILD=1 (use the binaries already in BUILD_DIR), BUILD_DIR (build-release), CONCURRENCY
# (50: worker concurrency of the classic rows, both systems), CONNECTIONS (16: jqbench
# connections = BullMQ adds in flight, classic rows), BASELINE_BIN (another jqmaster binary,
# e.g. an earlier commit's Release build: every jqmaster run is followed by the same run of it,
# tagged baseline-*, and the summary adds a before/after table), SKIP_BULLMQ=1 (leave BullMQ
# out, for a before/after run only), SYSCALLS (1), ARG_BYTES (16: the size of each job's
# argument, a string, in every row and both systems).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

REPS=${REPS:-3}
WORKLOADS=${WORKLOADS:-classic issue14}
BUILD_DIR=${BUILD_DIR:-build-release}
CONCURRENCY=${CONCURRENCY:-50}
CONNECTIONS=${CONNECTIONS:-16}
SYSCALLS=${SYSCALLS:-1}
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
ARG_BYTES=${ARG_BYTES:-16}  # each job's argument: a string of this many bytes, both systems
# issue 14
USER_CONNECTIONS=50    # single pushes: keep-alive connections (BullMQ: adds in flight)
# Long enough for /proc's 10 ms ticks at today's rates (30,000 pushes took 0.5 s).
SINGLE_JOBS=100000     # single pushes
WRK_SECONDS=2          # the same pushes from wrk (bench/wrk_push.py), for this long
EXTERNAL_E2E_JOBS=40000
EXTERNAL_DRAIN_JOBS=50000
STEADY_RATE=2000
STEADY_SECONDS=3
SYSCALL_PUSH_JOBS=10000
SYSCALL_STEADY_SECONDS=2

log() { echo "compare: $*" >&2; }
wants() { [[ " $WORKLOADS " == *" $1 "* ]]; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  log "building Release binaries in $BUILD_DIR"
  BUILD_DIR=$BUILD_DIR BUILD_TYPE=Release scripts/build.sh jqmaster jqbench jqworker >&2
fi
JQMASTER=$ROOT/$BUILD_DIR/cmd/jqmaster
JQBENCH=$ROOT/$BUILD_DIR/cmd/jqbench
JQWORKER=$ROOT/$BUILD_DIR/cmd/jqworker
NODE_WORKER=$ROOT/bench/bullmq/worker.js
if [[ ! -d bench/bullmq/node_modules/bullmq || ! -d bench/bullmq/node_modules/msgpackr ]]; then
  log "installing BullMQ and msgpackr (npm ci, pinned by bench/bullmq/package-lock.json)"
  (cd bench/bullmq && npm ci --no-audit --no-fund >&2)
fi

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

WORK=$(mktemp -d /tmp/jq-compare.XXXXXX)
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

# start_worker KIND: an external worker on a free port, not registered (jqbench registers it);
# its URL in WORKER_URL. KIND: jqworker-json | jqworker-msgpack (jqworker, one io thread, no
# per-job /stats record) or node-json | node-msgpack (bench/bullmq/worker.js); the suffix is
# the format of its answers.
start_worker() {
  local kind=$1 command
  case $kind in
    jqworker-*) command=("$JQWORKER" --listen 127.0.0.1:0 --no-stats --answer "${kind#jqworker-}") ;;
    node-*) command=(node "$NODE_WORKER" --listen 127.0.0.1:0 --answer "${kind#node-}") ;;
    *) log "unknown worker $kind" && exit 1 ;;
  esac
  : >"$WORK/worker.log"
  "${command[@]}" >"$WORK/worker.log" 2>&1 &
  WORKER_PID=$!
  until grep -q 'listening on' "$WORK/worker.log"; do
    if ! kill -0 "$WORKER_PID" 2>/dev/null; then
      log "$kind stopped at start-up:"
      tail -20 "$WORK/worker.log" >&2
      exit 1
    fi
    sleep 0.02
  done
  WORKER_URL="http://$(grep -o 'listening on [^ ]*' "$WORK/worker.log" | awk '{print $3}')/"
}

stop_worker() {
  [[ -z $WORKER_PID ]] && return 0
  kill "$WORKER_PID"
  wait "$WORKER_PID" || true
  WORKER_PID=""
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

# jqbench_args PRIORITIES: the flags every jqmaster run shares (pids, worker concurrency,
# argument, priorities); later flags of a run override them.
jqbench_args() {
  local pids="redis=$REDIS_PID,jqmaster=$MASTER_PID"
  [[ -n $WORKER_PID ]] && pids="$pids,worker=$WORKER_PID"
  JQBENCH_ARGS=(--url "http://127.0.0.1:$MASTER_PORT" --quiet --pids "$pids"
    --redis-url "$REDIS_URL" --worker-concurrency "$CONCURRENCY" --connections "$CONNECTIONS"
    --arg-bytes "$ARG_BYTES" --priorities "$([[ $1 == on ]] && echo 10 || echo 1)")
  [[ -n $WORKER_PID ]] && JQBENCH_ARGS+=(--external-worker "$WORKER_URL")
  return 0
}

# run_jq TEST PRIORITIES WORKER JQBENCH-ARGS...: for each of PRIORITIES ("off on" or "off"; on
# draws 0-9 at random), a fresh master on an empty Redis and, unless WORKER is "builtin", a fresh
# external worker of that kind; with BASELINE_BIN, each run again on the baseline master.
run_jq() {
  local test=$1 prios=$2 worker=$3
  shift 3
  local priorities system binary
  for priorities in $prios; do
    for system in jqmaster ${BASELINE_BIN:+baseline}; do
      binary=$JQMASTER
      [[ $system == baseline ]] && binary=$BASELINE_BIN
      start_master "$binary"
      [[ $worker != builtin ]] && start_worker "$worker"
      jqbench_args "$priorities"
      record "$system-prio-$priorities" "$test" "$JQBENCH" "${JQBENCH_ARGS[@]}" "$@"
      stop_worker
      stop_master
    done
  done
}

# run_wrk TEST WORKER WRK_PUSH-ARGS...: single pushes sent by wrk (bench/wrk_push.py) to a fresh
# master on an empty Redis, priorities off; with BASELINE_BIN, again on the baseline master.
# WORKER none: row a (pushes only); a worker kind (start_worker): row b, that worker registered
# and the run timed until its last job succeeded.
run_wrk() {
  local test=$1 worker=$2 system binary
  shift 2
  if ! command -v wrk >/dev/null; then
    log "wrk is not installed (scripts/install-deps.sh installs it): $test left out"
    return 0
  fi
  for system in jqmaster ${BASELINE_BIN:+baseline}; do
    binary=$JQMASTER
    [[ $system == baseline ]] && binary=$BASELINE_BIN
    start_master "$binary"
    local pids="redis=$REDIS_PID,jqmaster=$MASTER_PID" with_worker=()
    if [[ $worker != none ]]; then
      start_worker "$worker"
      pids+=",worker=$WORKER_PID"
      with_worker=(--external-worker "$WORKER_URL")
    fi
    record "$system-prio-off" "$test" python3 bench/wrk_push.py \
      --url "http://127.0.0.1:$MASTER_PORT" --pids "$pids" --arg-bytes "$ARG_BYTES" \
      "${with_worker[@]}" "$@"
    stop_worker
    stop_master
  done
}

# run_floor: what one HTTP exchange costs on this machine at all, beside which row a's figures
# are read: nginx (one worker, no access log) answering every request with a constant 201, driven
# by bench/wrk_push.py exactly as row a's wrk run drives the master (same body, connections and
# time); tagged system nginx, test http_floor. Left out when nginx or wrk is missing (`apt-get
# install nginx-light`; not in scripts/install-deps.sh, whose package would start a web server).
run_floor() {
  if ! command -v nginx >/dev/null || ! command -v wrk >/dev/null; then
    log "nginx or wrk is not installed (apt-get install nginx-light): the HTTP floor left out"
    return 0
  fi
  local dir=$WORK/nginx port nginx_pid worker_pid
  port=$(free_port)
  mkdir -p "$dir"
  cat >"$dir/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  server {
    listen 127.0.0.1:$port;
    location / { default_type application/json; return 201 '{"id":"0-000000001"}'; }
  }
}
NGINX
  nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" >"$dir/stdout.log" 2>&1 &
  nginx_pid=$!
  until curl -s -o /dev/null "http://127.0.0.1:$port/"; do
    if ! kill -0 "$nginx_pid" 2>/dev/null; then
      log "nginx stopped at start-up: the HTTP floor left out"
      cat "$dir/stdout.log" >&2
      return 0
    fi
    sleep 0.02
  done
  worker_pid=$(pgrep -P "$nginx_pid" | head -1)
  record nginx http_floor python3 bench/wrk_push.py --url "http://127.0.0.1:$port" \
    --pids "nginx=$worker_pid" --arg-bytes "$ARG_BYTES" --connections "$USER_CONNECTIONS" \
    --duration "$WRK_SECONDS"
  kill "$nginx_pid"
  wait "$nginx_pid" || true
}

# run_bull TEST PRIORITIES BENCH.JS-ARGS...: for each of PRIORITIES (on: 1-10 at random), on an
# empty Redis.
run_bull() {
  [[ ${SKIP_BULLMQ:-0} == 1 ]] && return 0
  local test=$1 prios=$2
  shift 2
  local priorities
  for priorities in $prios; do
    flushall
    local flag=()
    [[ $priorities == on ]] && flag=(--priorities)
    record "bullmq-prio-$priorities" "$test" node bench/bullmq/bench.js --redis "$REDIS_URL" \
      --redis-pid "$REDIS_PID" --concurrency "$CONCURRENCY" --inflight "$CONNECTIONS" \
      --arg-bytes "$ARG_BYTES" "${flag[@]}" "$@"
  done
}

classic() {
  run_jq enqueue_single "off on" builtin --scenario push --batch 1 --jobs $ENQUEUE_JOBS
  run_bull enqueue_single "off on" --scenario add --batch 1 --jobs $ENQUEUE_JOBS
  run_jq enqueue_batch "off on" builtin --scenario push --batch 100 --jobs $ENQUEUE_JOBS
  run_bull enqueue_batch "off on" --scenario add --batch 100 --jobs $ENQUEUE_JOBS
  run_jq drain "off on" builtin --scenario drain --jobs $DRAIN_JOBS
  run_bull drain "off on" --scenario drain --jobs $DRAIN_JOBS
  run_jq e2e "off on" builtin --scenario e2e --batch $E2E_BATCH --jobs $E2E_JOBS
  run_bull e2e "off on" --scenario e2e --batch $E2E_BATCH --jobs $E2E_JOBS
  run_jq latency "off on" builtin --scenario latency --rate $LATENCY_RATE --duration $LATENCY_SECONDS
  run_bull latency "off on" --scenario latency --rate $LATENCY_RATE --duration $LATENCY_SECONDS
  run_jq memory "off on" builtin --scenario memory --batch 1000 --jobs $MEMORY_JOBS
  run_bull memory "off on" --scenario memory --batch 1000 --jobs $MEMORY_JOBS
}

issue14() {
  local single=(--batch 1 --connections $USER_CONNECTIONS --format json)
  local worker c
  run_jq push_single_json50 off builtin --scenario push "${single[@]}" --jobs $SINGLE_JOBS
  run_bull push_single_json50 off --scenario add --batch 1 --inflight $USER_CONNECTIONS \
    --jobs $SINGLE_JOBS
  run_wrk push_single_json50_wrk none --connections $USER_CONNECTIONS --duration $WRK_SECONDS
  run_floor
  for worker in jqworker-json jqworker-msgpack node-json node-msgpack; do
    run_jq "e2e_single_$worker" off "$worker" --scenario e2e "${single[@]}" \
      --jobs $EXTERNAL_E2E_JOBS
  done
  for worker in jqworker-json jqworker-msgpack; do
    run_wrk "e2e_single_${worker}_wrk" "$worker" --connections $USER_CONNECTIONS \
      --duration $WRK_SECONDS
  done
  run_bull e2e_single_worker off --scenario e2e --batch 1 --inflight $USER_CONNECTIONS --echo \
    --jobs $EXTERNAL_E2E_JOBS
  for c in 50 200; do
    run_jq "drain_external_c$c" "off on" jqworker-json --scenario drain --format json \
      --worker-concurrency $c --jobs $EXTERNAL_DRAIN_JOBS
    run_bull "drain_external_c$c" "off on" --scenario drain --concurrency $c --echo \
      --jobs $EXTERNAL_DRAIN_JOBS
  done
  run_jq steady_keep_result off jqworker-json --scenario steady --format json \
    --rate $STEADY_RATE --duration $STEADY_SECONDS
  run_bull steady_keep_result off --scenario steady --echo --rate $STEADY_RATE \
    --duration $STEADY_SECONDS
}

# count_syscalls PID FILE: counts the syscalls of process PID (every thread) into FILE until
# SIGINT: perf trace (kernel tracepoints, little overhead) where it works, else strace -c -f
# (ptrace: every call stops the thread, which slows the master far more).
count_syscalls() {
  if perf trace -s -o /dev/null -- true >/dev/null 2>&1; then
    exec perf trace -s -p "$1" -o "$2"
  fi
  exec strace -c -f -q -p "$1" -o "$2"
}

# syscall_run TEST WORKER JQBENCH-ARGS...: one untimed run with the master's syscalls counted;
# its syscalls per job go to $OUT as system jqmaster-syscalls.
syscall_run() {
  local test=$1 worker=$2
  shift 2
  start_master
  [[ $worker != builtin ]] && start_worker "$worker"
  jqbench_args off
  count_syscalls "$MASTER_PID" "$WORK/syscalls.txt" &
  local tracer_pid=$!
  sleep 0.5 # attached to every thread before the load starts
  local line
  line=$("$JQBENCH" "${JQBENCH_ARGS[@]}" "$@" | grep '^{' | tail -1) || true
  kill -INT "$tracer_pid"
  wait "$tracer_pid" || true
  stop_worker
  stop_master
  if [[ -z $line ]]; then
    log "syscalls $test FAILED (no result line)"
    return 0
  fi
  local counted
  counted=$(python3 bench/syscall_count.py "$WORK/syscalls.txt" "$line")
  echo "{\"system\":\"jqmaster-syscalls\",\"test\":\"$test\",\"result\":$counted}" >>"$OUT"
  log "syscalls $test: $(echo "$counted" | cut -c1-150)"
}

log "jqmaster source: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
  "$(git status --porcelain -- src api lua cmd 2>/dev/null | wc -l) files changed since"
[[ -n ${BASELINE_BIN:-} ]] && log "baseline: $BASELINE_BIN"
log "redis $(redis-server --version | awk '{print $3}') on port $REDIS_PORT; node $(node --version);" \
  "bullmq $([[ ${SKIP_BULLMQ:-0} == 1 ]] && echo skipped ||
    node -p 'require("./bench/bullmq/node_modules/bullmq/package.json").version');" \
  "$REPS repetitions of: $WORKLOADS; results in $OUT"
START=$(date +%s)
for rep in $(seq "$REPS"); do
  log "repetition $rep of $REPS"
  wants classic && classic
  wants issue14 && issue14
done
if wants issue14 && [[ $SYSCALLS == 1 ]]; then
  syscall_run push_single_json50 builtin --scenario push --batch 1 \
    --connections $USER_CONNECTIONS --format json --jobs $SYSCALL_PUSH_JOBS
  syscall_run steady_keep_result jqworker-json --scenario steady --format json \
    --rate $STEADY_RATE --duration $SYSCALL_STEADY_SECONDS
fi
log "done in $(($(date +%s) - START)) s"
node bench/summarize.js "$OUT"
