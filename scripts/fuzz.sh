#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/, clang 14 with ASan and UBSan) into build-fuzz/ and
# runs each for FUZZ_SECONDS (default 20) from its seed corpus tests/fuzz/corpus/<target>/ (copied
# to a scratch folder: the committed corpus does not grow). A crash, leak, sanitizer report or
# abort fails the run; its input is kept as build-fuzz/crash-<target>-* to turn into a regression
# test (then add it to the target's corpus). Run by scripts/test.sh after the other tests.
#   FUZZ_SECONDS=60 scripts/fuzz.sh [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-20}
export CCACHE_NOHASHDIR=1
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-14 -DJQ_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)"

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for t in build-fuzz/tests/fuzz/fuzz_*; do targets+=("$(basename "$t" | sed 's/^fuzz_//')"); done
fi
# One fuzzer per core at a time: each is a single process, and the run's wall time is the CI's.
run_one() {
  local name=$1 corpus log
  corpus=$(mktemp -d /tmp/jq-fuzz-corpus.XXXXXX)
  if [[ -d tests/fuzz/corpus/$name ]]; then cp tests/fuzz/corpus/"$name"/* "$corpus"/; fi
  log=build-fuzz/fuzz-$name.log
  if build-fuzz/tests/fuzz/fuzz_"$name" -max_total_time="$SECONDS_EACH" -timeout=10 \
       -rss_limit_mb=2048 -max_len=65536 -artifact_prefix=build-fuzz/crash-"$name"- \
       "$corpus" >"$log" 2>&1; then
    echo "ok   fuzz $name: $(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1)s"
    rm -rf "$corpus"
    return 0
  fi
  echo "FAIL fuzz $name (log: $log):"
  grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -10
  rm -rf "$corpus"
  return 1
}
passed=0 failed=0 running=0
record() { if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi; }
for name in "${targets[@]}"; do
  if [[ $running -ge $(nproc) ]]; then
    record wait -n
    running=$((running - 1))
  fi
  run_one "$name" &
  running=$((running + 1))
done
while [[ $running -gt 0 ]]; do
  record wait -n
  running=$((running - 1))
done
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
