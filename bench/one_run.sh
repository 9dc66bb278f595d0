#!/usr/bin/env bash
# One jqbench run against a fresh Redis, a fresh master and (by default) an external jqworker
# answering JSON, for same-run before/after comparisons of one workload:
#
#   for i in 1 2 3; do for io in 1 2; do IO_THREADS=$io bench/one_run.sh; done; done
#   JQMASTER=/path/to/old/jqmaster bench/one_run.sh   # another build of the master
#   bench/one_run.sh --scenario drain --format json --jobs 20000
#
# Arguments are jqbench's scenario flags (default: the steady row of compare.sh, 2,000 jobs/s
# with keep_result and a long-polled result per job, 3 s). Prints jqbench's JSON line, with the
# CPU of redis, jqmaster, the worker and jqbench. Environment:
# - JQMASTER (build-release's), IO_THREADS (0: the master's default), SHARDS (16, the default);
# - WORKER (jqworker-json | jqworker-msgpack | none: the scenario runs without
#   --external-worker), BUILD_DIR (build-release);
# - PERF=FILE (perf record -g of the master into FILE, PERF_DELAY s after the start for
#   PERF_SECONDS s);
# - REDIS_CALLGRIND=FILE (redis-server under callgrind, counting its instructions over the whole
#   jqbench run into FILE: `callgrind_annotate FILE | head`, PROGRAM TOTALS / jobs = per job;
#   pushes included);
# - SCHEDSTAT=DELAY (DELAY s after the start, each process's time on a CPU and waiting in a run
#   queue, and each CPU's idle time, over 1.5 s, on stderr: bench/schedstat.py);
# - METRICS=FILE (the master's /metrics after the run: jq_redis_command_duration_seconds_count
#   counts each script's calls);
# - NAMES=N (N more job names known to the master before the run, whose queues the worker serves
#   too: bench/seed_names.py), and ENDPOINTS=K (K more worker endpoints, each serving three of
#   those names, at URLs nothing listens on); SPREAD=1: the jobs are spread over those names at
#   random (jqbench --name extra --names N), and the K endpoints are the worker's too (its
#   /endpoint-<k>), so they get jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-release}
JQMASTER=${JQMASTER:-$PWD/$BUILD_DIR/cmd/jqmaster}
BIN=$PWD/$BUILD_DIR/cmd
WORKER=${WORKER:-jqworker-json}
ARGS=("$@")
[[ ${#ARGS[@]} -eq 0 ]] && ARGS=(--scenario steady --format json --rate 2000 --duration 3)

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
WORK=$(mktemp -d /tmp/jq-one-run.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
wait_for() {  # DESCRIPTION COMMAND...: up to 10 s
  for _ in $(seq 500); do "${@:2}" >/dev/null 2>&1 && return 0; sleep 0.02; done
  echo "one_run: $1 did not come up" >&2
  exit 1
}

REDIS_PORT=$(free_port)
MASTER_PORT=$(free_port)
REDIS_WRAP=()
if [[ -n ${REDIS_CALLGRIND:-} ]]; then
  REDIS_WRAP=(valgrind --tool=callgrind --callgrind-out-file="$REDIS_CALLGRIND" --instr-atstart=no)
fi
"${REDIS_WRAP[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$WORK" >"$WORK/redis.log" 2>&1 &
REDIS_PID=$!
PIDS+=("$REDIS_PID")
wait_for redis-server redis-cli -p "$REDIS_PORT" ping
cat >"$WORK/jqmaster.yaml" <<YAML
listen: 127.0.0.1:$MASTER_PORT
io_threads: ${IO_THREADS:-0}
shards: ${SHARDS:-16}
redis:
  url: redis://127.0.0.1:$REDIS_PORT/0
log:
  level: warn
YAML
"$JQMASTER" --config "$WORK/jqmaster.yaml" >"$WORK/jqmaster.log" 2>&1 &
MASTER_PID=$!
PIDS=("$MASTER_PID" "${PIDS[@]}")
wait_for jqmaster curl -sf "http://127.0.0.1:$MASTER_PORT/readyz"
pids="redis=$REDIS_PID,jqmaster=$MASTER_PID"
EXTRA=()
WORKER_URL=http://127.0.0.1:9
if [[ $WORKER != none ]]; then
  "$BIN/jqworker" --listen 127.0.0.1:0 --no-stats --answer "${WORKER#jqworker-}" \
    >"$WORK/worker.log" 2>&1 &
  WORKER_PID=$!
  PIDS=("$WORKER_PID" "${PIDS[@]}")
  wait_for jqworker grep -q 'listening on' "$WORK/worker.log"
  WORKER_URL=http://$(grep -o 'listening on [^ ]*' "$WORK/worker.log" | awk '{print $3}')
  EXTRA=(--external-worker "$WORKER_URL/")
  pids="$pids,worker=$WORKER_PID"
fi
if [[ ${NAMES:-0} -gt 0 ]]; then
  [[ ${SPREAD:-0} == 1 ]] && EXTRA+=(--name extra --names "$NAMES")
  SPREAD=${SPREAD:-0} python3 bench/seed_names.py "$NAMES" "http://127.0.0.1:$MASTER_PORT" \
    "${ENDPOINTS:-0}" "$WORKER_URL"
fi
if [[ -n ${PERF:-} ]]; then
  (sleep "${PERF_DELAY:-1.5}"
    perf record -F 2000 -g -p "$MASTER_PID" -o "$PERF" -- sleep "${PERF_SECONDS:-3}") \
    >/dev/null 2>&1 &
  PERF_PID=$!
fi
[[ -n ${REDIS_CALLGRIND:-} ]] && callgrind_control -i on "$REDIS_PID" >/dev/null 2>&1
if [[ -n ${SCHEDSTAT:-} ]]; then
  (sleep "$SCHEDSTAT"
    bench_pid=$(pgrep -f "jqbench --url http://127.0.0.1:$MASTER_PORT" | head -1)
    python3 bench/schedstat.py 1.5 "$pids,jqbench=$bench_pid") &
fi
"$BIN/jqbench" --url "http://127.0.0.1:$MASTER_PORT" --quiet --pids "$pids" \
  --redis-url "redis://127.0.0.1:$REDIS_PORT/0" --worker-concurrency 50 --connections 50 \
  --arg-bytes 16 --priorities 1 "${EXTRA[@]}" "${ARGS[@]}" | grep '^{' | tail -1
[[ -n ${REDIS_CALLGRIND:-} ]] && callgrind_control -i off "$REDIS_PID" >/dev/null 2>&1
[[ -n ${METRICS:-} ]] && curl -sf "http://127.0.0.1:$MASTER_PORT/metrics" >"$METRICS"
[[ -n ${PERF:-} ]] && wait "$PERF_PID"
exit 0
