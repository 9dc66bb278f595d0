#!/usr/bin/env bash
# Scaling out by cost (docs/BENCHMARKS.md, "Scaling out"): the same work on one Redis and on a
# 3-master Redis Cluster, measured per job and per node, in one run:
#
#   flock /tmp/jq-build.lock bash bench/cluster.sh
#
# On one machine the cluster's nodes share the same cores, so speed says little; what scales is
# cost. For each setup it runs jqbench's sustained e2e (the built-in worker, pushes in batches of
# BATCH) and reads, before and after, every Redis node's INFO commandstats (commands run) and
# INFO cpu (used_cpu_user + used_cpu_sys), and jqbench's CPU of the jqmaster process. Then, on a
# cluster with a replica per master, single-job pushes with redis.replicas_ack 0 and 1 (the cost
# of WAIT). One JSON line per run goes to $OUT; bench/cluster_summary.py prints the tables.
#
# After the e2e runs of the current jqmaster on one Redis and on the cluster it times READ_CALLS
# (1000) reads that need every shard, GET /v1/stats and GET /v1/queues, one at a time
# (bench/fanout_reads.py): their Redis commands per call on each node show the fan-out.
#
# On one Redis it also runs the single pushes (no replicas, so no WAIT), the baseline for the
# cluster's push rows. With BASELINE_BIN=/path/to/an/older/jqmaster every repetition runs the
# one-Redis e2e and single pushes with that binary too (setup single-baseline, the same jqbench),
# taking turns with the current one (the order rotates by repetition): the summary prints
# current / baseline. Several older binaries: BASELINE_BIN="NAME=PATH NAME2=PATH2" (setups
# single-NAME, ...). PARTS (default "single cluster replicas") picks the parts to run: single
# (one Redis), cluster (3 masters), replicas (3 masters + 3 replicas, replicas_ack 0 and 1).
#
# The work is spread by shard: SHARDS (64) tags {0}..{63} fall 21/22/21 into the three masters'
# default slot ranges, and a master stores shard_run (64, set below) consecutive push requests
# in one shard before it moves to the next. So the work is the same on every node only when each
# shard gets the same number of runs: JOBS defaults to one full turn, 64 shards x 64 requests x
# BATCH jobs (204,800), PUSH_JOBS to five turns of single pushes (20,480). Other counts load the
# shards, and so the nodes, unevenly (100,000 jobs in batches of 50 fill shards 0-31 only).
#
# Environment: REPS (3), JOBS (SHARDS x 64 x BATCH), BATCH (50), SHARDS (64), PUSH_JOBS (20480),
# READ_CALLS (1000), SKIP_BUILD=1, BUILD_DIR (build-release), OUT
# (bench/results/cluster-<date>.jsonl), BASELINE_BIN, PARTS.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
REPS=${REPS:-3}
BATCH=${BATCH:-50}
SHARDS=${SHARDS:-64}
SHARD_RUN=64 # the config below sets it (jqmaster's default is 1024 since 2026-11-29)
JOBS=${JOBS:-$((SHARDS * SHARD_RUN * BATCH))}
PUSH_JOBS=${PUSH_JOBS:-$((5 * SHARDS * SHARD_RUN))}
READ_CALLS=${READ_CALLS:-1000}
BUILD_DIR=${BUILD_DIR:-build-release}
mkdir -p bench/results
OUT=${OUT:-bench/results/cluster-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
: >"$OUT"
log() { echo "cluster-bench: $*" >&2; }

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
  log "building Release binaries in $BUILD_DIR"
  BUILD_DIR=$BUILD_DIR BUILD_TYPE=Release scripts/build.sh jqmaster jqbench >&2
fi
JQMASTER=$ROOT/$BUILD_DIR/cmd/jqmaster
JQBENCH=$ROOT/$BUILD_DIR/cmd/jqbench
PARTS=${PARTS:-single cluster replicas}
BASELINE_BIN=${BASELINE_BIN:-}
# The one-Redis runs: SETUP=BINARY, the current jqmaster first.
BINARIES=("single=$JQMASTER")
for entry in $BASELINE_BIN; do
  [[ $entry == *=* ]] || entry=baseline=$entry
  if [[ ! -x ${entry#*=} ]]; then
    log "BASELINE_BIN: ${entry#*=} is not an executable"
    exit 2
  fi
  BINARIES+=("single-$entry")
done
part() { [[ " $PARTS " == *" $1 "* ]]; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

WORK=$(mktemp -d /tmp/jq-cluster-bench.XXXXXX)
PIDS=()
MASTER_PID=""
cleanup() {
  [[ -n $MASTER_PID ]] && kill "$MASTER_PID" 2>/dev/null && wait "$MASTER_PID" 2>/dev/null
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# wait_until SECONDS WHAT COMMAND...: polls COMMAND until it succeeds; fails after SECONDS, naming
# WHAT, so a node that never comes up stops the run instead of hanging it.
wait_until() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      log "gave up waiting for $what"
      return 1
    fi
    sleep 0.05
  done
}

# start_node PORT [cluster]: a redis-server without persistence; its pid goes to PIDS. A cluster
# node gets its bus port given: the default, PORT + 10000, does not exist for free ports above
# 55535 (Redis then refuses to start).
start_node() {
  local port=$1 dir=$WORK/node-$1
  mkdir -p "$dir"
  local cluster=()
  [[ ${2:-} == cluster ]] && cluster=(--cluster-enabled yes --cluster-config-file nodes.conf
    --cluster-port "$(free_port)" --cluster-node-timeout 2000 --cluster-require-full-coverage no)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    "${cluster[@]}" >"$dir/redis.log" 2>&1 &
  PIDS+=($!)
  if ! wait_until 10 "redis-server on $port" redis-cli -p "$port" ping; then
    tail -5 "$dir/redis.log" >&2
    exit 1
  fi
}

stop_nodes() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}

# make_cluster REPLICAS PORT...: joins the nodes; waits until every node says cluster_state:ok.
make_cluster() {
  local replicas=$1
  shift
  local addrs=()
  for p in "$@"; do addrs+=("127.0.0.1:$p"); done
  timeout 60 redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$replicas" \
    --cluster-yes >"$WORK/create.log" 2>&1 || { tail -20 "$WORK/create.log" >&2; exit 1; }
  for p in "$@"; do
    wait_until 30 "cluster_state:ok on $p" cluster_ok "$p" || exit 1
  done
  # A replica takes its master's data over a full sync first; wait until each one is linked.
  if ((replicas > 0)); then
    for p in "$@"; do
      wait_until 30 "replication on $p" replica_linked "$p" || exit 1
    done
  fi
}

cluster_ok() { redis-cli -p "$1" cluster info | grep -q cluster_state:ok; }

# replica_linked PORT: a master, or a replica whose link to its master is up.
replica_linked() {
  local info
  info=$(redis-cli -p "$1" info replication | tr -d '\r')
  grep -q '^role:master' <<<"$info" || grep -q '^master_link_status:up' <<<"$info"
}

# machine_busy_s: CPU seconds all cores have spent busy since boot (/proc/stat: user, nice,
# system, irq, softirq, steal). Over a run's window (window_s: from before the first snapshot to
# after the last), minus the CPU of the processes measured, it is the work of everything else
# (and of jqbench's own start and the snapshots): runs that overlapped other work show up.
machine_busy_s() {
  awk -v hz="$(getconf CLK_TCK)" '/^cpu / {printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz}' \
    /proc/stat
}

# snapshot PORT FILE: the node's INFO commandstats, cpu and replication, as redis-cli prints them.
snapshot() {
  local section
  for section in commandstats cpu replication; do redis-cli -p "$1" info "$section"; done |
    tr -d '\r' >"$2"
}

# node_delta PORT BEFORE AFTER: one node's work between two snapshots as JSON: its role (master
# or replica, as it was after), calls and CPU seconds (used_cpu_user + used_cpu_sys) in all, and
# calls and usec per command (to see which commands make a node's share).
node_delta() {
  python3 - "$@" <<'PY'
import json, sys
def read(path):
    cmds, cpu, role = {}, 0.0, "?"
    for line in open(path):
        key, _, value = line.strip().partition(":")
        if key.startswith("cmdstat_"):
            f = dict(kv.split("=") for kv in value.split(","))
            cmds[key[len("cmdstat_"):]] = (int(f["calls"]), int(f["usec"]))
        elif key in ("used_cpu_user", "used_cpu_sys"):
            cpu += float(value)
        elif key == "role":
            role = "replica" if value == "slave" else value
    return cmds, cpu, role
(c0, s0, _), (c1, s1, role) = read(sys.argv[2]), read(sys.argv[3])
by = {}
for cmd, (calls, usec) in c1.items():
    b = c0.get(cmd, (0, 0))
    if calls - b[0] > 0:
        by[cmd] = [calls - b[0], usec - b[1]]
print(json.dumps({"port": int(sys.argv[1]), "role": role, "calls": sum(v[0] for v in by.values()),
                  "cpu_s": round(s1 - s0, 6), "by_command": by}, separators=(",", ":")))
PY
}

# start_master URL [redis yaml lines]: $MASTER_BIN (the current jqmaster unless set) on a free
# port, waits for /readyz.
start_master() {
  local port
  port=$(free_port)
  cat >"$WORK/jqmaster.yaml" <<EOF
listen: 127.0.0.1:$port
shards: $SHARDS
shard_run: $SHARD_RUN
redis:
  url: $1
${2:-}
log:
  level: warn
EOF
  "${MASTER_BIN:-$JQMASTER}" --config "$WORK/jqmaster.yaml" >>"$WORK/jqmaster.log" 2>&1 &
  MASTER_PID=$!
  MASTER_URL=http://127.0.0.1:$port
  local deadline=$((SECONDS + 30))
  until curl -sf "$MASTER_URL/readyz" >/dev/null; do
    if ! kill -0 "$MASTER_PID" 2>/dev/null || ((SECONDS >= deadline)); then
      log "jqmaster did not become ready"
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

# measure SETUP TEST "PORT..." jqbench ARGS... | reads PATH: one jqbench run, or READ_CALLS
# GETs of PATH (bench/fanout_reads.py), with every node's commands and CPU before and after, as
# one JSON line.
measure() {
  local setup=$1 test=$2 ports=$3 kind=$4
  shift 4
  local cmd=("$JQBENCH" --url "$MASTER_URL" --quiet --pids "jqmaster=$MASTER_PID" "$@")
  [[ $kind == reads ]] && cmd=(python3 bench/fanout_reads.py "$MASTER_URL" "$MASTER_PID" "$1"
    "$READ_CALLS")
  local p busy0 busy1 t0 t1
  t0=$(date +%s.%N)
  busy0=$(machine_busy_s)
  for p in $ports; do snapshot "$p" "$WORK/before-$p"; done
  local line
  line=$(timeout 600 "${cmd[@]}" | grep '^{' | tail -1) || true
  for p in $ports; do snapshot "$p" "$WORK/after-$p"; done
  busy1=$(machine_busy_s)
  t1=$(date +%s.%N)
  local nodes=""
  for p in $ports; do
    nodes+="${nodes:+,}$(node_delta "$p" "$WORK/before-$p" "$WORK/after-$p")"
  done
  if [[ -z $line ]]; then
    log "$setup $test FAILED (no result line)"
    return 0
  fi
  local window busy
  window=$(awk "BEGIN {printf \"%.3f\", $t1 - $t0}")
  busy=$(awk "BEGIN {printf \"%.2f\", $busy1 - $busy0}")
  echo "{\"setup\":\"$setup\",\"test\":\"$test\",\"window_s\":$window,\"machine_busy_s\":$busy," \
    "\"nodes\":[$nodes],\"result\":$line}" >>"$OUT"
  log "$setup $test: $(echo "$line" | cut -c1-120)"
}

# measure_reads SETUP "PORT...": the reads that need every shard, after an e2e run (the store
# holds its queue and counters).
measure_reads() {
  measure "$1" read_stats "$2" reads /v1/stats
  measure "$1" read_queues "$2" reads /v1/queues
}

E2E=(jqbench --scenario e2e --batch "$BATCH" --jobs "$JOBS" --connections 16 --worker-concurrency 50
  --arg-bytes 16)
PUSH=(jqbench --scenario push --batch 1 --jobs "$PUSH_JOBS" --connections 16 --arg-bytes 16)

log "jqmaster source: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown);" \
  "redis $(redis-server --version | awk '{print $3}'); $REPS repetitions; parts $PARTS;" \
  "results in $OUT${BASELINE_BIN:+; baseline $BASELINE_BIN}"
for rep in $(seq "$REPS"); do
  log "repetition $rep of $REPS"
  # One Redis: e2e and single pushes, each on a fresh node; the binaries take turns, in an order
  # that rotates by repetition.
  shift_by=$(((rep - 1) % ${#BINARIES[@]}))
  binaries=("${BINARIES[@]:shift_by}" "${BINARIES[@]:0:shift_by}")
  for test in e2e push_single; do
    part single || break
    for entry in "${binaries[@]}"; do
      port=$(free_port)
      start_node "$port"
      MASTER_BIN=${entry#*=} start_master "redis://127.0.0.1:$port/0"
      if [[ $test == e2e ]]; then
        measure "${entry%%=*}" e2e "$port" "${E2E[@]}"
        [[ ${entry%%=*} == single ]] && measure_reads single "$port"
      else
        measure "${entry%%=*}" push_single "$port" "${PUSH[@]}"
      fi
      stop_master
      stop_nodes
    done
  done

  # Three masters, no replicas: the same work, split by slot; then single pushes on an emptied
  # cluster and a fresh master (a master's shard counter starts at shard 0).
  if part cluster; then
    ports=()
    for _ in 1 2 3; do
      ports+=("$(free_port)")
      start_node "${ports[-1]}" cluster
    done
    make_cluster 0 "${ports[@]}"
    seeds="redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}"
    start_master "$seeds"
    measure cluster3 e2e "${ports[*]}" "${E2E[@]}"
    measure_reads cluster3 "${ports[*]}"
    stop_master
    for p in "${ports[@]}"; do redis-cli -p "$p" flushall >/dev/null; done
    start_master "$seeds"
    measure cluster3 push_single "${ports[*]}" "${PUSH[@]}"
    stop_master
    stop_nodes
  fi

  # Three masters with a replica each: single-job pushes, replicas_ack 0 and 1 (which goes first
  # alternates by repetition).
  if part replicas; then
    ports=()
    for _ in 1 2 3 4 5 6; do
      ports+=("$(free_port)")
      start_node "${ports[-1]}" cluster
    done
    make_cluster 1 "${ports[@]}"
    seeds="redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}"
    acks=(0 1)
    ((rep % 2)) || acks=(1 0)
    for ack in "${acks[@]}"; do
      # FLUSHALL on a master replicates; a replica refuses it (READONLY).
      for p in "${ports[@]}"; do redis-cli -p "$p" flushall >/dev/null 2>&1 || true; done
      start_master "$seeds" "  replicas_ack: $ack"
      measure "cluster3+replicas-ack$ack" push_single "${ports[*]}" "${PUSH[@]}"
      stop_master
    done
    stop_nodes
  fi
done
python3 bench/cluster_summary.py "$OUT"
