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
# Environment: REPS (3), JOBS (100000), BATCH (50), SHARDS (64: splits 21/22/21 over the three
# masters' default slot ranges, so each node gets the same work within 10%), PUSH_JOBS (20000),
# SKIP_BUILD=1, BUILD_DIR (build-release), OUT (bench/results/cluster-<date>.jsonl).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
REPS=${REPS:-3}
JOBS=${JOBS:-100000}
BATCH=${BATCH:-50}
SHARDS=${SHARDS:-64}
PUSH_JOBS=${PUSH_JOBS:-20000}
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

# start_node PORT [cluster]: a redis-server without persistence; its pid goes to PIDS.
start_node() {
  local port=$1 dir=$WORK/node-$1
  mkdir -p "$dir"
  local cluster=()
  [[ ${2:-} == cluster ]] && cluster=(--cluster-enabled yes --cluster-config-file nodes.conf
    --cluster-node-timeout 2000 --cluster-require-full-coverage no)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    "${cluster[@]}" >"$dir/redis.log" 2>&1 &
  PIDS+=($!)
  until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.05; done
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
  redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$replicas" --cluster-yes \
    >"$WORK/create.log" 2>&1
  for p in "$@"; do
    until redis-cli -p "$p" cluster info | grep -q cluster_state:ok; do sleep 0.05; done
  done
}

# node_stats PORT: {"calls": N, "cpu_s": S} from INFO commandstats and INFO cpu.
node_stats() {
  redis-cli -p "$1" info commandstats | tr -d '\r' |
    awk -F'[=,:]' '/^cmdstat_/ {calls += $3} END {printf "%d", calls}'
  echo -n " "
  redis-cli -p "$1" info cpu | tr -d '\r' |
    awk -F: '/^used_cpu_(user|sys):/ {s += $2} END {printf "%.6f\n", s}'
}

start_master() {  # URL [redis yaml lines]
  local port
  port=$(free_port)
  cat >"$WORK/jqmaster.yaml" <<EOF
listen: 127.0.0.1:$port
shards: $SHARDS
redis:
  url: $1
${2:-}
log:
  level: warn
EOF
  "$JQMASTER" --config "$WORK/jqmaster.yaml" >>"$WORK/jqmaster.log" 2>&1 &
  MASTER_PID=$!
  MASTER_URL=http://127.0.0.1:$port
  until curl -sf "$MASTER_URL/readyz" >/dev/null; do
    kill -0 "$MASTER_PID" 2>/dev/null || { tail -20 "$WORK/jqmaster.log" >&2; exit 1; }
    sleep 0.02
  done
}

stop_master() {
  kill "$MASTER_PID"
  wait "$MASTER_PID" || true
  MASTER_PID=""
}

# measure SETUP TEST "PORT..." JQBENCH-ARGS...: one jqbench run with every node's commands and
# CPU before and after, as one JSON line.
measure() {
  local setup=$1 test=$2 ports=$3
  shift 3
  local before=() after=() p
  for p in $ports; do before+=("$(node_stats "$p")"); done
  local line
  line=$("$JQBENCH" --url "$MASTER_URL" --quiet --pids "jqmaster=$MASTER_PID" "$@" |
    grep '^{' | tail -1) || true
  for p in $ports; do after+=("$(node_stats "$p")"); done
  local nodes="" i=0
  for p in $ports; do
    read -r c0 s0 <<<"${before[$i]}"
    read -r c1 s1 <<<"${after[$i]}"
    nodes+="${nodes:+,}{\"port\":$p,\"calls\":$((c1 - c0)),\"cpu_s\":$(awk "BEGIN {print $s1 - $s0}")}"
    i=$((i + 1))
  done
  if [[ -z $line ]]; then
    log "$setup $test FAILED (no result line)"
    return 0
  fi
  echo "{\"setup\":\"$setup\",\"test\":\"$test\",\"nodes\":[$nodes],\"result\":$line}" >>"$OUT"
  log "$setup $test: $(echo "$line" | cut -c1-120)"
}

E2E=(--scenario e2e --batch "$BATCH" --jobs "$JOBS" --connections 16 --worker-concurrency 50
  --arg-bytes 16)
PUSH=(--scenario push --batch 1 --jobs "$PUSH_JOBS" --connections 16 --arg-bytes 16)

log "jqmaster source: commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown);" \
  "redis $(redis-server --version | awk '{print $3}'); $REPS repetitions; results in $OUT"
for rep in $(seq "$REPS"); do
  log "repetition $rep of $REPS"
  # One Redis.
  port=$(free_port)
  start_node "$port"
  start_master "redis://127.0.0.1:$port/0"
  measure single e2e "$port" "${E2E[@]}"
  stop_master
  stop_nodes

  # Three masters, no replicas: the same work, split by slot.
  ports=()
  for i in 1 2 3; do
    ports+=("$(free_port)")
    start_node "${ports[-1]}" cluster
  done
  make_cluster 0 "${ports[@]}"
  start_master "redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}"
  measure cluster3 e2e "${ports[*]}" "${E2E[@]}"
  stop_master
  stop_nodes

  # Three masters with a replica each: single-job pushes, replicas_ack 0 then 1.
  ports=()
  for i in 1 2 3 4 5 6; do
    ports+=("$(free_port)")
    start_node "${ports[-1]}" cluster
  done
  make_cluster 1 "${ports[@]}"
  for ack in 0 1; do
    for p in "${ports[@]}"; do redis-cli -p "$p" flushall >/dev/null 2>&1 || true; done
    start_master "redis+cluster://127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}" \
      "  replicas_ack: $ack"
    measure "cluster3+replicas-ack$ack" push_single "${ports[*]}" "${PUSH[@]}"
    stop_master
  done
  stop_nodes
done
python3 bench/cluster_summary.py "$OUT"
