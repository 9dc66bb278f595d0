#!/usr/bin/env bash
# Where jqmaster (and Redis) spend their time in one jqbench workload: a short run under a
# profiler.
#
#   flock /tmp/jq-build.lock bash bench/profile.sh [WORKLOAD | JQBENCH-ARGS...]
#   PROFILER=perf flock /tmp/jq-build.lock bash bench/profile.sh steady
#
# WORKLOAD is one of the presets below (default e2e); anything else is taken as jqbench's
# arguments (after --url, --pids and --redis-url, which this script gives).
#   e2e          --scenario e2e --jobs 5000 --batch 50 (the built-in worker)
#   push_single  single JSON pushes over 50 keep-alive connections, no worker (issue 14, row a)
#   constrained  every job constrained (1,000 tenants, concurrency 2 each), pushed in batches of 50;
#                TENANTS=20 profiles constraints.sh's "tight" row instead (the limit binds)
#                while the built-in worker decodes and answers: bench/constraints.sh's throughput
#                row (50,000 jobs; 5,000 under callgrind)
#   e2e_single   single JSON pushes over 50 keep-alive connections while jqworker answers JSON in
#                its own process, concurrency 50 (issue 14, row b) (30,000 jobs; 5,000 under
#                callgrind)
#   drain        a backlog of single JSON jobs drained by jqworker answering JSON in its own
#                process, concurrency 50 (issue 14, row c); the pushes before it are counted too
#                (20,000 jobs; 5,000 under callgrind)
#   steady       2,000 jobs/s with keep_result, each result long-polled, jqworker answering JSON
#                in its own process (issue 14, row d); 200/s under callgrind, which cannot keep
#                up with more (RATE=N: N jobs/s instead)
# PROFILER:
#   callgrind  (default) jqmaster RelWithDebInfo (build/) under valgrind --tool=callgrind, its
#              instrumentation on for the run only; prints the functions with the most
#              instructions, by themselves and with their callees. Instruction counts do not
#              depend on how busy the machine is: the stable measure on a shared one. The raw
#              profile is kept in bench/results/ for callgrind_annotate or kcachegrind.
#   perf       jqmaster Release (build-release/) at full speed, `perf record -e cpu-clock` (a
#              software event: this VM has no hardware counters) of the master and redis-server,
#              kernel included; prints each process's share by library (kernel, libc, jqmaster,
#              ...) and the top symbols of each. The raw data is kept in bench/results/.
#              PERF_ARGS adds options to perf record (e.g. -g).
#   redis      jqmaster Release at full speed, Redis with slowlog-log-slower-than 0 (every command
#              a client sends logged with the µs Redis spent in it): per script (FCALL, named
#              by its function; EVALSHA of an older MASTER_BIN by its SHA1) and command, calls
#              and µs per job (bench/redis_scripts.py). The slow log itself costs Redis a little per command.
#   syscalls   jqmaster Release with its syscalls counted (`perf trace -s`: kernel tracepoints,
#              little overhead; `strace -c -f` where perf cannot trace): syscalls per job.
#              TRACED=worker counts the external worker's (jqworker) instead.
# NAMES=N: N more job names known to the master before the workload (bench/seed_names.py);
# ENDPOINTS=K: K more worker endpoints, each serving three of them; SPREAD=1: the jobs are spread
# over those names (jqbench --names N) and the K endpoints are the external worker's, as in
# bench/one_run.sh.
# ARG_BYTES=N: the presets push jobs whose argument is a string of N bytes (16 by default, as in
# bench/compare.sh).
# MASTER_BIN: profile this jqmaster binary instead of the build's (e.g. an earlier commit's Release
# build, to set a profile of the same workload beside it); jqbench and jqworker stay this build's.
# Every run also prints jqbench's JSON line (CPU per process, Redis commands per job) and Redis's
# INFO commandstats for the run.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PROFILER=${PROFILER:-callgrind}
ARG_BYTES=${ARG_BYTES:-16}  # the presets' job argument: a string of this many bytes
mkdir -p bench/results
STAMP=$(date -u +%Y%m%dT%H%M%SZ)

WORKER=builtin
ARGS=("$@")
[[ ${#ARGS[@]} -eq 0 ]] && ARGS=(e2e)
if [[ ${#ARGS[@]} -eq 1 ]]; then
  case ${ARGS[0]} in
    e2e) ARGS=(--scenario e2e --jobs 5000 --batch 50) ;;
    push_single)
      jobs=20000
      [[ $PROFILER == callgrind ]] && jobs=5000
      ARGS=(--scenario push --batch 1 --connections 50 --format json --arg-bytes "$ARG_BYTES" --jobs "$jobs")
      ;;
    constrained)
      jobs=50000
      [[ $PROFILER == callgrind ]] && jobs=5000
      ARGS=(--scenario constraints --parts throughput --constraint on --worker decode
        --tenants "${TENANTS:-1000}"
        --tenant-concurrency 2 --unconstrained-share 0 --worker-concurrency 50 --connections 16
        --batch 50 --jobs "$jobs")
      ;;
    e2e_single)
      WORKER=jqworker-json
      jobs=30000
      [[ $PROFILER == callgrind ]] && jobs=5000
      ARGS=(--scenario e2e --batch 1 --connections 50 --format json --arg-bytes "$ARG_BYTES" --jobs "$jobs")
      ;;
    drain)
      WORKER=jqworker-json
      jobs=20000
      [[ $PROFILER == callgrind ]] && jobs=5000
      ARGS=(--scenario drain --format json --arg-bytes "$ARG_BYTES" --worker-concurrency 50 --jobs "$jobs")
      ;;
    steady)
      WORKER=jqworker-json
      rate=${RATE:-2000}
      [[ $PROFILER == callgrind ]] && rate=${RATE:-200}
      ARGS=(--scenario steady --format json --arg-bytes "$ARG_BYTES" --rate "$rate" --duration 3)
      ;;
  esac
fi

case $PROFILER in
  callgrind) MASTER_BUILD=build ;;
  perf | syscalls | redis) MASTER_BUILD=build-release ;;
  *) echo "profile: PROFILER is callgrind, perf, syscalls or redis" >&2 && exit 2 ;;
esac
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  if [[ $MASTER_BUILD == build ]]; then BUILD_DIR=build scripts/build.sh jqmaster >&2; fi
  BUILD_DIR=build-release BUILD_TYPE=Release scripts/build.sh jqbench jqworker jqmaster >&2
fi

WORK=$(mktemp -d /tmp/jq-profile.XXXXXX)
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
MASTER_BIN=${MASTER_BIN:-$ROOT/$MASTER_BUILD/cmd/jqmaster}
MASTER=("$MASTER_BIN" --config "$WORK/jqmaster.yaml")
CALLGRIND_OUT=bench/results/callgrind-$STAMP.out
[[ $PROFILER == callgrind ]] &&
  MASTER=(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$ROOT/$CALLGRIND_OUT" "${MASTER[@]}")
"${MASTER[@]}" >"$WORK/master.log" 2>&1 &
MASTER_PID=$!
until curl -sf "http://127.0.0.1:$MASTER_PORT/readyz" >/dev/null; do
  if ! kill -0 "$MASTER_PID" 2>/dev/null; then
    echo "profile: jqmaster stopped at start-up:" >&2
    tail -20 "$WORK/master.log" >&2
    exit 1
  fi
  sleep 0.2
done

BENCH=(build-release/cmd/jqbench --url "http://127.0.0.1:$MASTER_PORT" --quiet
  --redis-url "redis://127.0.0.1:$REDIS_PORT/0")
PIDS="redis=$REDIS_PID,jqmaster=$MASTER_PID"
WORKER_URL=http://127.0.0.1:9  # the built-in worker's is jqbench's own
if [[ $WORKER != builtin ]]; then
  build-release/cmd/jqworker --listen 127.0.0.1:0 --no-stats --answer "${WORKER#jqworker-}" \
    >"$WORK/worker.log" 2>&1 &
  WORKER_PID=$!
  until grep -q 'listening on' "$WORK/worker.log"; do sleep 0.02; done
  WORKER_URL=http://$(grep -o 'listening on [^ ]*' "$WORK/worker.log" | awk '{print $3}')
  BENCH+=(--external-worker "$WORKER_URL/")
  PIDS="$PIDS,worker=$WORKER_PID"
fi
if [[ ${NAMES:-0} -gt 0 ]]; then
  [[ ${SPREAD:-0} == 1 ]] && BENCH+=(--name extra --names "$NAMES")
  SPREAD=${SPREAD:-0} python3 bench/seed_names.py "$NAMES" "http://127.0.0.1:$MASTER_PORT" \
    "${ENDPOINTS:-0}" "$WORKER_URL"
fi
BENCH+=(--pids "$PIDS" "${ARGS[@]}")

redis-cli -p "$REDIS_PORT" config resetstat >/dev/null
PROFILER_PID=""
case $PROFILER in
  callgrind) callgrind_control -i on "$MASTER_PID" >/dev/null 2>&1 ;;
  perf)
    PERF_OUT=bench/results/perf-$STAMP.data
    # PERF_ARGS: more for perf record, e.g. -g (call chains: the kernel's are complete, the
    # user-space ones stop at the first function without a frame pointer).
    # shellcheck disable=SC2086
    perf record -e cpu-clock -F 2000 ${PERF_ARGS:-} -p "$MASTER_PID,$REDIS_PID" -o "$PERF_OUT" -q &
    PROFILER_PID=$!
    sleep 0.5
    ;;
  redis)
    redis-cli -p "$REDIS_PORT" config set slowlog-max-len 10000000 >/dev/null
    redis-cli -p "$REDIS_PORT" config set slowlog-log-slower-than 0 >/dev/null
    redis-cli -p "$REDIS_PORT" slowlog reset >/dev/null
    ;;
  syscalls)
    TRACED_PID=$MASTER_PID
    [[ ${TRACED:-master} == worker ]] && TRACED_PID=$WORKER_PID
    if perf trace -s -o /dev/null -- true >/dev/null 2>&1; then
      perf trace -s -p "$TRACED_PID" -o "$WORK/syscalls.txt" &
    else
      strace -c -f -q -p "$TRACED_PID" -o "$WORK/syscalls.txt" &
    fi
    PROFILER_PID=$!
    sleep 0.5
    ;;
esac
LINE=$("${BENCH[@]}" | grep '^{')
echo "$LINE" >&2
case $PROFILER in
  callgrind) callgrind_control -i off "$MASTER_PID" >/dev/null 2>&1 ;;
  perf | syscalls) kill -INT "$PROFILER_PID" && wait "$PROFILER_PID" || true ;;
  redis)
    redis-cli -p "$REDIS_PORT" config set slowlog-log-slower-than -1 >/dev/null
    ;;
esac
echo "Redis commands during the run (calls, µs in Redis):" >&2
redis-cli -p "$REDIS_PORT" info commandstats | grep '^cmdstat' | grep -v resetstat |
  sed 's/cmdstat_//; s/:calls=/ /; s/,usec=/ /; s/,usec_per_call.*//' | sort -k2 -n -r | sed -n 1,12p >&2
kill "$MASTER_PID"
wait "$MASTER_PID" || true
MASTER_PID=""

case $PROFILER in
  callgrind)
    echo "== self (exclusive) instructions, top 25 =="
    callgrind_annotate --inclusive=no "$CALLGRIND_OUT" 2>/dev/null | sed -n '/^Ir/,$p' |
      sed -n '3,28p' | cut -c1-170
    # Sources are named relative to their build directory (ccache's CCACHE_BASEDIR), e.g.
    # build/../src/http/server.cpp.
    echo "== inclusive instructions of jqmaster's own functions, top 40 =="
    callgrind_annotate --inclusive=yes "$CALLGRIND_OUT" 2>/dev/null | grep -E '^ *[0-9,]+ \(' |
      grep -v '=>' | grep -E "/(src|api)/|hiredis" | sed -n '1,40p' | cut -c1-170
    echo "profile: $CALLGRIND_OUT"
    ;;
  perf)
    echo "== share of samples by process and library =="
    # sed, not head: it reads to the end, so perf never writes into a closed pipe.
    perf report -i "$PERF_OUT" --no-children --sort comm,dso --stdio -q 2>/dev/null |
      grep -v '^$' | sed -n '1,20p'
    for comm in jqmaster redis-server; do
      echo "== $comm: top symbols (share of all samples) =="
      perf report -i "$PERF_OUT" --no-children --comms "$comm" --sort dso,sym --stdio -q \
        2>/dev/null | grep -v '^$' | sed -n '1,40p' | cut -c1-150
    done
    echo "profile: $PERF_OUT (perf report -i ...)"
    ;;
  syscalls)
    python3 bench/syscall_count.py "$WORK/syscalls.txt" "$LINE"
    ;;
  redis)
    scripts=$MASTER_BUILD/src/generated/lua_scripts.cpp
    [[ $MASTER_BIN != "$ROOT/$MASTER_BUILD/cmd/jqmaster" ]] && scripts=$MASTER_BIN
    python3 bench/redis_scripts.py "$scripts" "$REDIS_PORT" "$LINE"
    ;;
esac
