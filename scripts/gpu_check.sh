#!/usr/bin/env bash
# Checks Drover on a machine with real NVIDIA GPUs, from the bundle that
# scripts/gpu_bundle.sh made (.gpucheck/: binaries and libraries, nothing to
# install). Run as root from the repository root:
#   bash scripts/gpu_check.sh [REPORT_DIR]
# It checks, printing PASS/FAIL/NOTE per line and a summary (exit 1 on a FAIL):
#  1. drover-detect finds through NVML the GPUs nvidia-smi lists (--check-nvidia-smi);
#     and whether their Fabric Manager registration leaves them usable;
#  2. a node that declares more GPUs than found gets Slurm's reason;
#  3. a controller and two agents on this host: the node declaring what is
#     there comes up idle, the other "inval" with that reason;
#  4. a batch job given GPUs gets CUDA_VISIBLE_DEVICES, and a CUDA program in
#     it (drover-detect --cuda: libcuda, a context, 1 MiB allocated) sees
#     exactly the GPUs that SLURM_JOB_GPUS names, by UUID;
#  5. an srun step given one GPU sees that GPU;
#  6. a job given no GPU: what CUDA lets it use (isolation through the devices
#     cgroup where the host has one);
#  7. a second job asking for every GPU waits (Resources) while the first holds
#     them, then runs; a job asking for more GPUs than any node has is refused.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
B=$root/.gpucheck
report=${1:-${OUT:-/tmp/gpu-check-report}}
mkdir -p "$report"
W=/tmp/drover-gpu-check
rm -rf "$W"
mkdir -p "$W/bin" "$W/out"
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cp "$B"/bin/* "$W/bin/"
for c in sbatch squeue sinfo scontrol scancel sacct srun salloc sacctmgr sprio sdiag sshare sreport sstat sbcast; do ln -sf drover-cli "$W/bin/$c"; done
export PATH=$W/bin:$PATH
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
note() { echo "NOTE $*"; }
jq_py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

echo "== host"
uname -r; grep PRETTY_NAME /etc/os-release; ldd --version | head -1
grep cgroup /proc/mounts
echo "own cgroups:"; cat /proc/self/cgroup
for f in /sys/fs/cgroup/cgroup.controllers /sys/fs/cgroup/cgroup.subtree_control /sys/fs/cgroup/unified/cgroup.controllers; do [[ -r $f ]] && echo "$f: $(cat "$f")"; done
ls -l /dev/nvidia* 2>&1
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total --format=csv
if ldd "$W/bin/drover" | grep -q 'not found'; then ldd "$W/bin/drover" | grep 'not found'; fail "libraries missing for drover"; fi

echo "== 1. detection against nvidia-smi"
drover-detect --check-nvidia-smi >"$report/detect.json" 2>"$report/detect.err"
rc=$?
cat "$report/detect.json" "$report/detect.err"
ngpu=$(jq_py "$report/detect.json" 'len(d["gpus"])')
gtype=$(jq_py "$report/detect.json" 'd["gpus"][0]["type"] if d["gpus"] else ""')
smi_n=$(nvidia-smi -L | grep -c '^GPU ')
if [[ $rc == 0 && $ngpu == "$smi_n" && $ngpu -ge 1 ]]; then pass "drover-detect: $ngpu GPU(s) of type $gtype through NVML, nvidia-smi agrees"
else fail "drover-detect rc=$rc found ${ngpu:-?} GPU(s), nvidia-smi lists $smi_n"; fi
gh=$(jq_py "$report/detect.json" 'd["gpu_health"]')
fm=$(jq_py "$report/detect.json" '" ".join(str(g["index"]) + ":" + g.get("fabric_state", "?") for g in d["gpus"])')
fmv=$(jq_py "$report/detect.json" 'd["fabric_manager_version"] or "not asked (no NVSwitch)"')
if [[ -z $gh ]]; then pass "GPU health: no problem (Fabric Manager state by GPU: $fm; nv-fabricmanager: $fmv)"; else note "$gh: the agent will drain gpu1"; fi
drover-detect --cuda >"$report/cuda-host.json"; echo "drover-detect --cuda (host, rc $?):"; cat "$report/cuda-host.json"

more=$((ngpu + 7))
cat >"$W/slurm.conf" <<CONF
ClusterName=gpucheck
AuthInfo=key=$W/drover.key
SlurmctldHost=localhost
SlurmctldPort=16817
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool/%n
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
DisableRootJobs=NO
TaskPlugin=task/cgroup
ProctrackType=proctrack/cgroup
SchedulerParameters=bf_interval=2
NodeName=gpu1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=16818 CPUs=2 RealMemory=1024 Gres=gpu:$gtype:$ngpu
NodeName=gpu2 NodeHostname=localhost NodeAddr=127.0.0.2 Port=16819 CPUs=2 RealMemory=1024 Gres=gpu:$gtype:$more
PartitionName=gpu Nodes=gpu1,gpu2 Default=YES MaxTime=INFINITE State=UP
CONF
cat >"$W/gres.conf" <<CONF
AutoDetect=nvml
CONF
export DROVER_CONF=$W/slurm.conf
(umask 077; head -c 64 /dev/urandom >"$W/drover.key")

echo "== 2. a node declaring more GPUs than found"
drover agent --detect --config "$W/slurm.conf" --node gpu2 >"$report/detect-gpu2.json"
reason=$(jq_py "$report/detect-gpu2.json" 'd["config_check"]["drain_reason"]')
want="gres/gpu count reported lower than configured ($ngpu < $more)"
[[ $reason == "$want" ]] && pass "drain reason: $reason" || fail "drain reason '$reason', want '$want'"
drover config check --config "$W/slurm.conf" >"$report/config-check.txt" 2>&1; echo "config check rc $?"; cat "$report/config-check.txt"

echo "== 3. controller and two agents"
setsid drover controller --config "$W/slurm.conf" >"$W/controller.log" 2>&1 < /dev/null &
for n in gpu1 gpu2; do
  setsid drover agent --node $n --config "$W/slurm.conf" >"$W/agent-$n.out" 2>&1 < /dev/null &
done
sleep 0.5
for _ in $(seq 60); do
  [[ $(timeout 5 sinfo -h -N -o '%N %t' 2>/dev/null | grep -c -E 'idle|drain') == 2 ]] && break
  sleep 0.25
done
sinfo -N -o '%N %G %t %E' | tee "$report/sinfo.txt"
grep -q '^gpu1 .* idle' "$report/sinfo.txt" && pass "gpu1 idle with its GPUs" || fail "gpu1 not idle"
# Slurm 22.05 shows such a node "inval" (registered with less than slurm.conf declares); drained if an admin drained it too.
grep -qE "^gpu2 gpu:$gtype:$more (inval|drain) " "$report/sinfo.txt" && grep -qF "$want" "$report/sinfo.txt" &&
  pass "gpu2 $(awk '$1 == "gpu2" {print $3}' "$report/sinfo.txt"): $want" || fail "gpu2 not inval/drained with '$want'"
scontrol show node gpu1 | tee "$report/node-gpu1.txt"
head -20 "$W/agent-gpu1.out"

echo "== 4. a batch job given every GPU of gpu1"
cat >"$W/gpujob.sh" <<'JOB'
#!/bin/bash
#SBATCH -J gpujob
#SBATCH -p gpu
echo "SLURM_JOB_GPUS=${SLURM_JOB_GPUS-unset} CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-unset} GPU_DEVICE_ORDINAL=${GPU_DEVICE_ORDINAL-unset} SLURM_GPUS_ON_NODE=${SLURM_GPUS_ON_NODE-unset}"
cat /proc/self/cgroup
drover-detect --cuda > "$JOBOUT/cuda-batch.json"; echo "cuda rc $?"
srun -n1 --gres=gpu:1 drover-detect --cuda > "$JOBOUT/cuda-step.json"; echo "step cuda rc $?"
timeout 120 python3 -c 'import torch; print("torch sees", torch.cuda.device_count(), "GPU(s):", [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())])' 2>&1 | tail -1
sleep 8
JOB
export JOBOUT=$W/out
j1=$(sbatch --parsable --gres=gpu:$ngpu -w gpu1 -o "$W/out/gpujob.out" "$W/gpujob.sh")
echo "job $j1"
sleep 1
j2=$(sbatch --parsable --gres=gpu:$ngpu -o "$W/out/second.out" --wrap 'echo second CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES')
j3=$(sbatch --parsable -w gpu1 -o "$W/out/nogpu.out" --wrap "echo CUDA_VISIBLE_DEVICES=\${CUDA_VISIBLE_DEVICES-unset}; drover-detect --cuda > $W/out/cuda-nogpu.json; echo cuda rc \$?")
sleep 2
squeue -o '%i %j %t %R %b' | tee "$report/squeue.txt"
grep -q "^$j2 .* PD (Resources)" "$report/squeue.txt" && pass "second all-GPU job waits for Resources" || fail "second job not pending (Resources)"
for _ in $(seq 300); do [[ -z $(timeout 5 squeue -h -o %i) ]] && break; sleep 0.4; done
scontrol show job -d "$j1" > "$report/job1.txt"
sacct -j "$j1,$j2,$j3" -o JobID,JobName,State,ExitCode,AllocTRES%60 | tee "$report/sacct.txt"
cat "$W/out/gpujob.out"; cp "$W"/out/* "$report/" 2>/dev/null
jobgpus=$(grep -o 'SLURM_JOB_GPUS=[^ ]*' "$W/out/gpujob.out" | cut -d= -f2)
cvd=$(grep -o 'CUDA_VISIBLE_DEVICES=[^ ]*' "$W/out/gpujob.out" | cut -d= -f2)
want_uuids=$(python3 - "$report/detect.json" "$jobgpus" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
idx = [int(x) for x in sys.argv[2].split(",") if x.isdigit()]
print(",".join(sorted(g["uuid"] for g in d["gpus"] if g["index"] in idx)))
PY
)
seen=$(jq_py "$W/out/cuda-batch.json" '",".join(sorted(x["uuid"] for x in d["cuda"]["devices"] if x["use"].startswith("ok")))' 2>/dev/null)
[[ -n $cvd && $cvd != unset ]] && pass "CUDA_VISIBLE_DEVICES=$cvd SLURM_JOB_GPUS=$jobgpus" || fail "CUDA_VISIBLE_DEVICES not set in the GPU job"
[[ -n $want_uuids && $seen == "$want_uuids" ]] && pass "the CUDA program in the job uses exactly its GPUs: $seen" || fail "CUDA in the job used '$seen', want '$want_uuids'"
step_n=$(jq_py "$W/out/cuda-step.json" 'sum(1 for x in d["cuda"]["devices"] if x["use"].startswith("ok"))' 2>/dev/null)
[[ $step_n == 1 ]] && pass "srun --gres=gpu:1 step: CUDA uses 1 GPU" || fail "srun step: CUDA used ${step_n:-?} GPU(s)"
grep -q "second CUDA_VISIBLE_DEVICES=" "$W/out/second.out" 2>/dev/null && pass "the waiting job ran once the GPUs were free: $(cat "$W/out/second.out")" || fail "second job did not run"

echo "== 6. a job given no GPU"
cat "$W/out/nogpu.out"
nog=$(jq_py "$W/out/cuda-nogpu.json" 'sum(1 for x in d["cuda"]["devices"] if x["use"].startswith("ok"))' 2>/dev/null)
if [[ $nog == 0 ]]; then pass "a job without GPUs can use none (CUDA: $(jq_py "$W/out/cuda-nogpu.json" 'd["cuda"]["status"]') , $(jq_py "$W/out/cuda-nogpu.json" 'd["cuda"]["device_count"]') listed)"
else note "a job without GPUs could use $nog GPU(s) through CUDA: the agent says why not enforced:"; grep -i -E 'device|enforce' "$W/agent-gpu1.out" | head -5; fi

echo "== 7. more GPUs than any node has"
sbatch --gres=gpu:$((more + 1)) --wrap true >"$report/toomany.txt" 2>&1; rc=$?
cat "$report/toomany.txt"
[[ $rc != 0 ]] && pass "--gres=gpu:$((more + 1)) refused at submit (rc $rc)" || fail "--gres=gpu:$((more + 1)) accepted"

echo "== agent log (gpu1)"
cat "$W/agent-gpu1.out" | head -40
cp "$W"/*.log "$W"/*.out "$W/slurm.conf" "$report/" 2>/dev/null
pkill -f "drover controller --config $W" ; pkill -f "drover agent --node gpu" ; sleep 0.5
echo "== summary: $fails failure(s)"
[[ $fails == 0 ]]
