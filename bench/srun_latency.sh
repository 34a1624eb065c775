#!/usr/bin/env bash
# srun launch latency: `srun -N K -n K true` outside an allocation (allocate,
# run, release) and inside one (a step in a salloc allocation), for K nodes.
#
#   bash bench/srun_latency.sh                 # Drover: a 16-node emulated cluster (drover up), K = 1 4 16
#   MODE=slurm bash bench/srun_latency.sh      # real Slurm already up (../shared/anchors/slurm/setup.sh), K = 1 4 8
#   bash bench/slurm_16node.sh up && SLURM_CONF=/tmp/slurm16/slurm.conf MODE=slurm KS="1 4 16" PART=bench \
#     bash bench/srun_latency.sh; bash bench/slurm_16node.sh down   # real Slurm with the same 16 nodes
#
# REPS (default 20) runs per figure; prints the median, min and max in ms and
# writes a TSV to bench/results/srun-latency-<mode>-<time>.tsv.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
MODE=${MODE:-drover}
REPS=${REPS:-20}
stamp=$(date -u +%Y%m%dT%H%M%S)
mkdir -p "$root/bench/results"
tsv="$root/bench/results/srun-latency-$MODE-$stamp.tsv"

now_ns() { date +%s%N; }

if [ "$MODE" = drover ]; then
  B="$root/build/bin"
  SRUN="$B/srun"; SALLOC="$B/salloc"
  KS=${KS:-"1 4 16"}
  PART=${PART:-bench}
  state=${STATE:-/tmp/drover-srun-bench}
  rm -rf "$state"; mkdir -p "$state"
  conf="$state/bench.conf"
  {
    echo "ClusterName=srunbench"
    echo "SlurmctldHost=localhost"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core_Memory"
    echo "DefMemPerCPU=256"
    for i in $(seq 1 16); do
      printf 'NodeName=n%02d NodeHostname=localhost NodeAddr=127.0.3.%d Port=%d CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=8192\n' \
        "$i" "$i" $((18100 + i))
    done
    echo "PartitionName=bench Nodes=n[01-16] Default=YES MaxTime=INFINITE State=UP"
  } > "$conf"
  "$B/drover" up --config "$conf" --state "$state" >/dev/null
  export DROVER_CONF="$state/slurm.conf"
  trap '"$B/drover" down --state "$state" >/dev/null 2>&1 || true' EXIT
else
  SRUN=/usr/bin/srun; SALLOC=/usr/bin/salloc
  KS=${KS:-"1 4 8"}
  PART=${PART:-interactive}
fi

median() { sort -n | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# Times `srun -N K -n K true` REPS times; prints one figure (ms) per line.
outside() {
  local k=$1
  for _ in $(seq "$REPS"); do
    local t0; t0=$(now_ns)
    "$SRUN" -p "$PART" -N "$k" -n "$k" true
    echo $(( ($(now_ns) - t0) / 1000 ))
  done
}

inside() {
  local k=$1
  "$SALLOC" -Q -p "$PART" -N "$k" -n "$k" bash -c '
    for _ in $(seq '"$REPS"'); do
      t0=$(date +%s%N); '"$SRUN"' -N '"$k"' -n '"$k"' true; echo $(( ($(date +%s%N) - t0) / 1000 ))
    done'
}

printf 'mode\twhere\tnodes\treps\tmedian_ms\tmin_ms\tmax_ms\tload\n' > "$tsv"
for k in $KS; do
  for where in inside outside; do
    vals=$("$where" "$k" | awk '{printf "%.1f\n", $1/1000}')
    med=$(echo "$vals" | median)
    min=$(echo "$vals" | sort -n | head -1)
    max=$(echo "$vals" | sort -n | tail -1)
    load=$(cut -d' ' -f1 /proc/loadavg)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$MODE" "$where" "$k" "$REPS" "$med" "$min" "$max" "$load" >> "$tsv"
    printf '%-7s %-8s N=%-3s median %7s ms  (min %s, max %s; load %s)\n' "$MODE" "$where" "$k" "$med" "$min" "$max" "$load"
  done
done
echo "results: $tsv"
