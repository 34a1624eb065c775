#!/usr/bin/env bash
# The Lublin-1 figures of docs/sim.md: mean bounded slowdown (τ = 10 s),
# CPU utilisation, mean wait and makespan for textbook FCFS and EASY
# (tests/sim/lublin_*), on the whole trace and on each 1,024-job slice from
# an empty cluster. Usage: scripts/sim_lublin_figures.sh [build/bin/drover]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
drover=${1:-$root/build/bin/drover}
trace=$root/../shared/traces/lublin-256-1.swf
printf '| policy | jobs | mean bounded slowdown | CPU utilisation | mean wait (s) | makespan (s) | backfilled |\n'
printf '|---|---|---|---|---|---|---|\n'
row() {  # policy, --jobs value or "all"
  local args=()
  [ "$2" != all ] && args=(--jobs "$2")
  "$drover" sim run --config "$root/tests/sim/lublin_$1/slurm.conf" --trace "$trace" "${args[@]}" --json |
    python3 -c '
import json, sys
s = json.load(sys.stdin)
print("| {} | {} | {:.1f} | {:.3f} | {:.0f} | {:.0f} | {:.3f} |".format(sys.argv[1], sys.argv[2], s["mean_bounded_slowdown"],
      s["utilization"]["cpu"], s["mean_wait_s"], s["makespan_s"], s["backfilled_fraction"]))' "$1" "$2"
}
for policy in fcfs easy; do
  row "$policy" all
  for first in 0 1024 2048 3072 4096 5120 6144 7168 8192; do row "$policy" "$first:1024"; done
done
