#!/usr/bin/env bash
# The main job: install what is missing, build, start the demo cluster on this
# machine (`drover up --demo`: a controller and ten agents, GPUs emulated),
# run the seed's workflow through sbatch (the three templates of
# examples/seed/jobs), show the queue and the nodes while it runs, print the
# jobs' outputs, and stop the cluster.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/install-deps.sh build
bash scripts/build.sh

bin=$root/build/bin
state=${DROVER_MAIN_STATE:-/tmp/drover-main}
echo
echo "== drover config check --config examples/demo/slurm.conf"
rc=0
"$bin/drover" config check --config examples/demo/slurm.conf || rc=$?
[ "$rc" -le 2 ] || exit "$rc"  # 1: warnings, 2: errors; only a crash stops the main job

echo
echo "== drover up --demo --state $state"
"$bin/drover" up --demo --state "$state"
export DROVER_CONF=$state/slurm.conf PATH=$bin:$PATH
trap '"$bin/drover" down --state "$state"' EXIT

# The templates call `python infer.py` and `python preprocess.py --input N`,
# the article's programs, which this repository does not have: a stand-in
# `python` on the jobs' PATH says what each would work on, and takes 2 s.
work=$(mktemp -d /tmp/drover-seed.XXXXXX)
mkdir -p "$work/bin"
cat > "$work/bin/python" <<'EOF'
#!/bin/sh
sleep 2
case "$1" in
  infer.py) echo "infer.py on $SLURMD_NODENAME: GPU $CUDA_VISIBLE_DEVICES, $SLURM_CPUS_ON_NODE CPUs, job $SLURM_JOB_ID" ;;
  preprocess.py) echo "preprocess.py --input $3 on $SLURMD_NODENAME: array task $SLURM_ARRAY_TASK_ID of job $SLURM_ARRAY_JOB_ID, $SLURM_CPUS_ON_NODE CPUs, ${SLURM_MEM_PER_NODE}M" ;;
  *) echo "python stand-in: $*" ;;
esac
EOF
chmod 755 "$work/bin/python"
# train.sbatch runs `torchrun ... train.py` in each of its 32 srun tasks;
# where torchrun is not installed, a stand-in says which rank ran where and
# which GPUs it was given.
torchrun_note="torchrun is installed here, so each task ran it"
if ! command -v torchrun >/dev/null 2>&1; then
  cat > "$work/bin/torchrun" <<'EOF'
#!/bin/sh
echo "torchrun stand-in ($*): rank $SLURM_PROCID of $SLURM_NTASKS on $SLURMD_NODENAME, local rank $SLURM_LOCALID, GPUs $CUDA_VISIBLE_DEVICES"
EOF
  chmod 755 "$work/bin/torchrun"
  torchrun_note="torchrun is not installed here, so a stand-in printed each rank and its GPUs"
fi
export PATH=$work/bin:$PATH
cd "$work"
jobs=examples/seed/jobs
echo
echo "== sbatch the seed's workflow (in $work)"
echo "\$ sbatch --constraint=h100 $jobs/train.sbatch"
train=$(sbatch --parsable --constraint=h100 "$root/$jobs/train.sbatch")
echo "Submitted batch job $train"
echo "\$ sbatch --array=0-7%4 $jobs/preprocess.sbatch"
pre=$(sbatch --parsable --array=0-7%4 "$root/$jobs/preprocess.sbatch")
echo "Submitted batch job $pre"
echo "\$ sbatch -d afterok:$pre $jobs/inference.sbatch"
inf=$(sbatch --parsable -d "afterok:$pre" "$root/$jobs/inference.sbatch")
echo "Submitted batch job $inf"
echo "\$ sbatch -p compute --gres=gpu:16 --wrap true   (can never run: refused as Slurm does)"
sbatch -p compute --gres=gpu:16 --wrap true || true

for i in $(seq 1 60); do
  echo
  echo "-- $(date +%T)  squeue"
  squeue
  left=$(squeue -h -t PD,R,CG | wc -l)
  if [ "$i" = 1 ] || [ "$left" = 0 ]; then
    echo "-- sinfo"
    sinfo
  fi
  [ "$left" = 0 ] && break
  sleep 1
done

echo
echo "== how the jobs ended (squeue -t all -j $train,$pre,$inf)"
squeue -t all -j "$train,$pre,$inf" -o "%.10i %.10P %.16j %.10T %.6D %.20N %r"
echo
echo "== scontrol show job $train (the four exclusive h100 nodes of the training template)"
scontrol show job "$train" | grep -E "JobState|NodeList|NumNodes|TRES"
echo
echo "== the jobs' outputs"
for f in slurm-*.out; do
  echo "--- $f"
  cat "$f"
done
echo
echo "(train.sbatch's srun started 32 tasks, 8 on each of its four exclusive 8-GPU nodes; each runs"
echo " bash -c \"torchrun ...\": $torchrun_note.)"
