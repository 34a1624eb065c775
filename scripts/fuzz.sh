#!/usr/bin/env bash
# Build Drover's libFuzzer targets (clang++-16, ASan + UBSan) into build-fuzz/
# and run them. Usage:
#   scripts/fuzz.sh [TARGET|all] [RUNS]      (defaults: all, 1000000 runs each)
# TARGET is a file name in fuzz/ without "_fuzz.cpp" (hostlist, time,
# tres_gres, slurm_conf) or with it. Each run starts from the seeds in
# fuzz/corpus/<target>/ and keeps what it learns in fuzz-out/<target>/corpus;
# crashes land in fuzz-out/<target>/ (crash-*, leak-*, timeout-*). Extra
# libFuzzer flags can be given in FUZZ_FLAGS (e.g. FUZZ_FLAGS=-max_total_time=60).
# Exit status: 0 when every target ran its runs without a finding.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

what=${1:-all}
runs=${2:-1000000}
cxx=${CXX_FUZZ:-clang++-16}
build=build-fuzz

command -v "$cxx" >/dev/null || { echo "fuzz.sh: $cxx not found (bash scripts/install-deps.sh fuzz)" >&2; exit 2; }
if [ ! -f "$build/build.ninja" ]; then
  CXX="$cxx" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDROVER_FUZZ=ON -DDROVER_BUILD_TESTS=OFF -DDROVER_BUILD_BENCH=OFF >/dev/null
fi

targets=()
if [ "$what" = all ]; then
  for f in fuzz/*_fuzz.cpp; do targets+=("$(basename "$f" .cpp)"); done
else
  targets+=("${what%_fuzz}_fuzz")
  [ -f "fuzz/${targets[0]}.cpp" ] || { echo "fuzz.sh: no target ${targets[0]} (fuzz/*_fuzz.cpp)" >&2; exit 2; }
fi

ninja -C "$build" -j "$(nproc)" "${targets[@]}"

status=0
for t in "${targets[@]}"; do
  out="fuzz-out/$t"
  mkdir -p "$out/corpus"
  seeds="fuzz/corpus/$t"
  [ -d "$seeds" ] || seeds=""
  echo "== $t: $runs runs"
  start=$EPOCHREALTIME
  set +e
  # shellcheck disable=SC2086
  "$build/fuzz/$t" -runs="$runs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/" ${FUZZ_FLAGS:-} "$out/corpus" $seeds > "$out/log.txt" 2>&1
  rc=$?
  set -e
  end=$EPOCHREALTIME
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log.txt" | tail -1)
  printf '%s: exit %d, %s runs in %.1f s, corpus %s files (log: %s/log.txt)\n' \
    "$t" "$rc" "${execs:-?}" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$(ls "$out/corpus" | wc -l)" "$out"
  if [ "$rc" -ne 0 ]; then
    status=1
    grep -m1 -E 'ERROR|SUMMARY|runtime error|_fuzz:' "$out/log.txt" || true
    ls "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* 2>/dev/null || true
  fi
done
exit $status
