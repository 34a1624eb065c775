#!/usr/bin/env bash
# Smoke run of `drover sim` end to end (ctest: sim_smoke): generate a small
# workload for the seed's cluster, replay it, compare two configurations,
# replay a Lublin slice, and check that every output is there and the
# summary says what it must. Usage: smoke.sh DROVER_BINARY SOURCE_DIR
set -euo pipefail
drover=$1
src=$2
out=$(mktemp -d "${TMPDIR:-/tmp}/drover-sim-smoke.XXXXXX")
trap 'rm -rf "$out"' EXIT

"$drover" sim gen --config "$src/examples/seed/slurm.conf" --jobs 300 --seed 3 --out "$out/seed.csv" 2>/dev/null
"$drover" sim run --config "$src/examples/seed/slurm.conf" --trace "$out/seed.csv" --out "$out/run" > "$out/run.txt"
for f in jobs.csv summary.json utilization_cpu.svg utilization_gpu.svg wait_cdf.svg; do
  test -s "$out/run/$f" || { echo "missing $out/run/$f"; exit 1; }
done
test "$(wc -l < "$out/run/jobs.csv")" -eq 301
grep -q '"jobs": 300' "$out/run/summary.json"
grep -q 'mean_bounded_slowdown' "$out/run.txt"

"$drover" sim compare --config "$src/examples/seed/slurm.conf" --config "$src/examples/demo/slurm.conf" \
  --trace "$out/seed.csv" --out "$out/cmp" > "$out/cmp.txt" || true  # the demo cluster may refuse some seed jobs
test -s "$out/cmp/compare.json"
test -s "$out/cmp/a/summary.json"
test -s "$out/cmp/b/summary.json"
grep -q 'B/A' "$out/cmp.txt"

lublin="$src/../shared/traces/lublin-256-1.swf"
if [ -f "$lublin" ]; then
  "$drover" sim run --config "$src/tests/sim/lublin_easy/slurm.conf" --trace "$lublin" --jobs 0:100 --json > "$out/l.json"
  grep -q '"trace_jobs": 100' "$out/l.json"
fi

# Errors name the file, the line and the field.
printf 'submit,run_time\n0,soon\n' > "$out/bad.csv"
if "$drover" sim run --config "$src/examples/seed/slurm.conf" --trace "$out/bad.csv" 2> "$out/err.txt"; then
  echo "a bad trace was accepted"; exit 1
fi
grep -q "bad.csv:2: field run_time" "$out/err.txt"
# Both configurations and --out are checked before anything is simulated:
# a missing B stops the comparison before A runs (nothing written), and an
# --out that cannot be made is said before the run, not after it.
if "$drover" sim compare --config "$src/examples/seed/slurm.conf" --config "$out/none.conf" \
    --trace "$out/seed.csv" --out "$out/cmpbad" 2> "$out/err.txt"; then
  echo "a missing configuration was accepted"; exit 1
fi
grep -q "B ($out/none.conf): cannot read" "$out/err.txt"
test ! -e "$out/cmpbad"
if "$drover" sim run --config "$src/examples/seed/slurm.conf" --trace "$out/seed.csv" \
    --out "$out/run.txt/x" 2> "$out/err.txt"; then
  echo "an --out under a file was accepted"; exit 1
fi
grep -q -- "--out $out/run.txt/x: cannot create the directory" "$out/err.txt"
echo "sim smoke: ok"
