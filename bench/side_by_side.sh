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
#
# With (a), each side's CPU per job is kept too (a_cpu_ms_per_job: all of the
# machine's CPU time from the first submission until the queue is empty,
# divided by N). Drover's comes from cluster_bench.sh, which brackets exactly
# that. For Slurm the anchor's bench.sh runs (a) alone, bracketed whole
# (its few commands before the loop included), less what the idle cluster
# spends in as long (measured over IDLE_S seconds just before).
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
IDLE_S=${IDLE_S:-5}
pick() { grep -E "^($1)"$'\t' | awk -F'\t' '{print $1"\t"$3}'; }
busy_ms() { awk -v hz="$(getconf CLK_TCK)" '/^cpu /{print int(($2+$3+$4+$7+$8)*1000/hz)}' /proc/stat; }
ms_now() { echo $(( $(date +%s%N) / 1000000 )); }
slurm_bench() { (cd "$ANCHOR" && N=$N REPS=1 ONLY="$1" SLURM_ANCHOR_OUT=$sdir bash bench.sh >/dev/null 2>&1); }
for r in $(seq 1 "$ROUNDS"); do
  echo "=== round $r of $ROUNDS ($(date +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
  if ! (cd "$ANCHOR" && bash setup.sh >/dev/null 2>&1); then
    echo "side_by_side.sh: the anchor's setup.sh failed; see $ANCHOR/setup.sh" >&2
    exit 1
  fi
  sdir=$(mktemp -d)
  rest=" $ONLY "
  if [[ "$rest" == *" a "* ]]; then
    rest=${rest/ a / }
    i0=$(busy_ms); w0=$(ms_now); sleep "$IDLE_S"; i1=$(busy_ms); w1=$(ms_now)
    c0=$(busy_ms); t0=$(ms_now); slurm_bench a; c1=$(busy_ms); t1=$(ms_now)
    awk -v c=$((c1-c0)) -v t=$((t1-t0)) -v i=$((i1-i0)) -v w=$((w1-w0)) -v n="$N" -v r="$r" \
      'BEGIN{printf "%s\tslurm\ta_cpu_ms_per_job\t%.2f\n", r, (c - i * t / w) / n}' >> "$TSV"
  fi
  [ -n "${rest// /}" ] && slurm_bench "$rest"
  (cd "$ANCHOR" && bash stop.sh >/dev/null 2>&1)
  cat "$sdir"/bench-*.tsv 2>/dev/null | pick "a_seq_submit_per_s|ah_seq_held_submit_per_s" | sed "s/^/$r\tslurm\t/" >> "$TSV"
  cat "$sdir"/bench-*.log > "$OUT/side-$STAMP-r$r-slurm.log" 2>/dev/null
  rm -rf "$sdir"
  ddir=$(mktemp -d)
  N=$N REPS=1 ONLY="$ONLY" OUT=$ddir bash "$ROOT/bench/cluster_bench.sh" >/dev/null 2>&1
  cat "$ddir"/cluster-*.tsv 2>/dev/null | pick "a_seq_submit_per_s|ah_seq_held_submit_per_s|a_cpu_ms_per_job" |
    sed "s/^/$r\tdrover\t/" >> "$TSV"
  cp "$ddir"/cluster-*.log "$OUT/side-$STAMP-r$r-drover.log" 2>/dev/null
  rm -rf "$ddir"
  awk -F'\t' -v r="$r" '$1==r {v[$2" "$3]=$4} END {
    s=v["slurm a_seq_submit_per_s"]; d=v["drover a_seq_submit_per_s"];
    sh=v["slurm ah_seq_held_submit_per_s"]; dh=v["drover ah_seq_held_submit_per_s"];
    printf "  (a)  sequential sbatch, jobs running: Slurm %s/s, Drover %s/s", s, d; if (s > 0) printf ", %.1fx", d / s; print "";
    sc=v["slurm a_cpu_ms_per_job"]; dc=v["drover a_cpu_ms_per_job"];
    if (sc != "") printf "       the machine'"'"'s CPU per job: Slurm %s ms, Drover %s ms\n", sc, dc;
    if (sh != "") { printf "  (a\x27) held: Slurm %s/s, Drover %s/s", sh, dh; if (sh > 0) printf ", %.1fx", dh / sh; print "" } }' "$TSV"
done
echo "results: $TSV"
