#!/usr/bin/env bash
# Real Slurm (Debian's slurm-wlm 22.05) with the same 16 emulated nodes as
# bench/srun_latency.sh gives Drover, for the srun latency comparison at 16
# nodes (the anchor cluster, ../shared/anchors/slurm, has 9 nodes):
#
#   bash bench/slurm_16node.sh up      # slurmctld + 16 slurmd on this host (no slurmdbd)
#   SLURM_CONF=/tmp/slurm16/slurm.conf MODE=slurm KS="1 4 16" PART=bench bash bench/srun_latency.sh
#   bash bench/slurm_16node.sh down    # stops the daemons it started (by their pid files)
#
# Needs root, munge and the slurm-wlm packages (the anchor's setup.sh installs
# them). Its own ports (6917, 17101-17116) and directories under /tmp/slurm16
# keep it apart from the anchor cluster.
set -euo pipefail
DIR=${SLURM16_DIR:-/tmp/slurm16}
CONF=$DIR/slurm.conf
cmd=${1:-}

stop() {
  for f in "$DIR"/run/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    if [ -n "$pid" ] && grep -q slurm "/proc/$pid/comm" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
    rm -f "$f"
  done
}

case "$cmd" in
  up)
    for b in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged; do
      [ -x "$b" ] || { echo "slurm_16node.sh: $b is missing (run ../shared/anchors/slurm/setup.sh first)" >&2; exit 1; }
    done
    mkdir -p "$DIR/state" "$DIR/run" "$DIR/log"
    {
      echo "ClusterName=s16"
      echo "SlurmctldHost=localhost"
      echo "SlurmctldPort=6917"
      echo "SlurmUser=root"
      echo "AuthType=auth/munge"
      echo "CredType=cred/munge"
      echo "StateSaveLocation=$DIR/state"
      echo "SlurmdSpoolDir=$DIR/spool/%n"
      echo "SlurmctldPidFile=$DIR/run/slurmctld.pid"
      echo "SlurmdPidFile=$DIR/run/slurmd-%n.pid"
      echo "SlurmctldLogFile=$DIR/log/slurmctld.log"
      echo "SlurmdLogFile=$DIR/log/slurmd-%n.log"
      echo "ProctrackType=proctrack/linuxproc"
      echo "TaskPlugin=task/none"
      echo "MpiDefault=none"
      echo "ReturnToService=2"
      echo "SlurmdParameters=config_overrides"
      echo "MailProg=/bin/true"
      echo "SchedulerType=sched/backfill"
      echo "SelectType=select/cons_tres"
      echo "SelectTypeParameters=CR_Core_Memory"
      echo "DefMemPerCPU=256"
      echo "AccountingStorageType=accounting_storage/none"
      echo "JobAcctGatherType=jobacct_gather/none"
      echo "NodeName=n[01-16] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[17101-17116] CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=8192"
      echo "PartitionName=bench Nodes=n[01-16] Default=YES MaxTime=INFINITE State=UP"
    } > "$CONF"
    if ! pgrep -x munged >/dev/null; then
      install -d -o munge -g munge -m 755 /run/munge
      runuser -u munge -- /usr/sbin/munged
    fi
    export SLURM_CONF=$CONF
    /usr/sbin/slurmctld -f "$CONF"
    for i in $(seq -w 1 16); do
      mkdir -p "$DIR/spool/n$i"
      /usr/sbin/slurmd -f "$CONF" -N "n$i"
    done
    for _ in $(seq 60); do
      idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
      [ "$idle" -ge 16 ] && { echo "slurm_16node.sh: 16 nodes idle (SLURM_CONF=$CONF)"; exit 0; }
      sleep 1
    done
    echo "slurm_16node.sh: the nodes did not all come up; see $DIR/log" >&2
    sinfo >&2 || true
    exit 1
    ;;
  down) stop ;;
  *) echo "usage: bash bench/slurm_16node.sh up|down" >&2; exit 2 ;;
esac
