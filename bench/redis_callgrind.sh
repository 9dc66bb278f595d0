#!/usr/bin/env bash
# Instructions redis-server spends on the constrained workload, under callgrind: a count that
# depends little on how busy the machine is (runs of one binary differ by about 2 %), to compare
# two jqmaster binaries on the same work.
#
#   flock /tmp/jq-build.lock bash bench/redis_callgrind.sh MASTER_BIN OUT.callgrind
#   callgrind_annotate OUT.callgrind | head -40      # PROGRAM TOTALS / JOBS = per job
#
# bench/one_run.sh with REDIS_CALLGRIND (a fresh Redis under callgrind and MASTER_BIN, no external
# worker) running bench/profile.sh's `constrained` load: JOBS jobs (default 5,000), TENANTS
# (default 20: the limit binds). BUILD_DIR: where jqbench is (build-release).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1
OUT=$2
JOBS=${JOBS:-5000}
JQMASTER=$BIN WORKER=none REDIS_CALLGRIND=$OUT bash bench/one_run.sh --scenario constraints \
  --parts throughput --constraint on --worker decode --tenants "${TENANTS:-20}" \
  --tenant-concurrency 2 --unconstrained-share 0 --worker-concurrency 50 --connections 16 \
  --batch 50 --arg-bytes 0 --priorities 1 --jobs "$JOBS"
echo "redis_callgrind: $(callgrind_annotate "$OUT" | grep 'PROGRAM TOTALS' | awk '{print $1}')" \
  "instructions for $JOBS jobs in $OUT"
