#!/usr/bin/env bash
# ctest bench_smoke: drover-bench's scale-10k scenario with 1,000 pending
# jobs (a couple of seconds). Every pending job must end the cycle started
# or planned; the JSON has the fields the issue names; and the decisions
# are byte for byte the same when run again and when every node group is
# indexed from its first search (--index-threshold 0).
set -euo pipefail
bench=$1
run() { "$bench" --scenario scale-10k --pending 1000 --repeat 2 --json "$@"; }
field() { sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p" <<<"$2"; }
a=$(run)
for f in cycle_ms_median cycle_ms_min pending nodes planned rss_bytes_per_pending state_bytes_per_pending decisions; do
  [ -n "$(field "$f" "$a")" ] || { echo "bench_smoke: no \"$f\" in: $a" >&2; exit 1; }
done
pending=$(field pending "$a"); started=$(field started "$a"); planned=$(field planned "$a")
[ "$pending" = 1000 ] || { echo "bench_smoke: pending $pending, not 1000" >&2; exit 1; }
[ $((started + planned)) = "$pending" ] || { echo "bench_smoke: $started started + $planned planned != $pending pending" >&2; exit 1; }
b=$(run)
[ "$(field decisions "$a")" = "$(field decisions "$b")" ] || { echo "bench_smoke: two runs decided differently" >&2; exit 1; }
c=$(run --index-threshold 0)
[ "$(field decisions "$a")" = "$(field decisions "$c")" ] || { echo "bench_smoke: indexing every group changed the decisions" >&2; exit 1; }
echo "bench_smoke: $started started, $planned planned of $pending; decisions $(field decisions "$a") in all three runs"
