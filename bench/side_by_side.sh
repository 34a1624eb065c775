#!/usr/bin/env bash
# Real Slurm and Drover on this machine, measured the same way in the same
# minutes: ROUNDS rounds of (Slurm's ../shared/anchors/slurm/bench.sh, then
# Drover's bench/cluster_bench.sh), both with N jobs and the measurements in
# ONLY (default "a ah": sequential sbatch with the jobs running, and held).
# Both clusters use the anchor's slurm.conf and its ports, so they run one
# after the other: the anchor's setup.sh before each Slurm run (it installs
# Slurm's Debian packages the first time), its stop.sh after.
#
#   bash bench/side_by_side.sh                  # ROUNDS=2 N=1000
#
# The host's speed swings by tens of percent from minute to minute, so only
# a pair of runs taken back to back compares the two; the ratio per round is
# printed and kept in bench/results/side-<stamp>.tsv (round, system, metric, value).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ANCHOR=${ANCHOR:-$ROOT/../shared/anchors/slurm}
[ -d "$ANCHOR" ] || ANCHOR=/work/shared/anchors/slurm
ROUNDS=${ROUNDS:-2}; N=${N:-1000}; ONLY=${ONLY:-a ah}
OUT=${OUT:-$ROOT/bench/results}; mkdir -p "$OUT"
STAMP=$(date +%Y%m%dT%H%M%S)
TSV=$OUT/side-$STAMP.tsv
[ "$(id -u)" = 0 ] || { echo "side_by_side.sh: run as root (the anchor's setup.sh starts Slurm's daemons)" >&2; exit 2; }
[ -x "$ROOT/build/bin/drover" ] || { echo "side_by_side.sh: build Drover first (bash scripts/build.sh)" >&2; exit 2; }
pick() { grep -E "^($1)"$'\t' "$2" | awk -F'\t' '{print $1"\t"$3}'; }
for r in $(seq 1 "$ROUNDS"); do
  echo "=== round $r of $ROUNDS ($(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
  if ! (cd "$ANCHOR" && bash setup.sh >/dev/null 2>&1); then
    echo "side_by_side.sh: the anchor's setup.sh failed; see $ANCHOR/setup.sh" >&2
    exit 1
  fi
  sdir=$(mktemp -d)
  (cd "$ANCHOR" && N=$N REPS=1 ONLY="$ONLY" SLURM_ANCHOR_OUT=$sdir bash bench.sh >/dev/null 2>&1)
  (cd "$ANCHOR" && bash stop.sh >/dev/null 2>&1)
  pick "a_seq_submit_per_s|ah_seq_held_submit_per_s" "$sdir"/bench-*.tsv | sed "s/^/$r\tslurm\t/" >> "$TSV"
  cp "$sdir"/bench-*.log "$OUT/side-$STAMP-r$r-slurm.log" 2>/dev/null
  rm -rf "$sdir"
  ddir=$(mktemp -d)
  N=$N REPS=1 ONLY="$ONLY" OUT=$ddir bash "$ROOT/bench/cluster_bench.sh" >/dev/null 2>&1
  pick "a_seq_submit_per_s|ah_seq_held_submit_per_s|a_cpu_ms_per_job" "$ddir"/cluster-*.tsv | sed "s/^/$r\tdrover\t/" >> "$TSV"
  cp "$ddir"/cluster-*.log "$OUT/side-$STAMP-r$r-drover.log" 2>/dev/null
  rm -rf "$ddir"
  awk -F'\t' -v r="$r" '$1==r {v[$2" "$3]=$4} END {
    s=v["slurm a_seq_submit_per_s"]; d=v["drover a_seq_submit_per_s"];
    sh=v["slurm ah_seq_held_submit_per_s"]; dh=v["drover ah_seq_held_submit_per_s"];
    printf "  (a)  sequential sbatch, jobs running: Slurm %s/s, Drover %s/s", s, d; if (s > 0) printf ", %.1fx", d / s; print "";
    if (sh != "") { printf "  (a\x27) held: Slurm %s/s, Drover %s/s", sh, dh; if (sh > 0) printf ", %.1fx", dh / sh; print "" } }' "$TSV"
done
echo "results: $TSV"
