#!/usr/bin/env bash
# Drover's side of ../shared/anchors/slurm/bench.sh: the same measurements,
# made the same way, on the anchor's cluster (its slurm.conf, started with
# `drover up`: a controller and 9 agents on this host, GPUs emulated).
#
#   bash bench/cluster_bench.sh                 # N=1000 REPS=3
#   N=200 REPS=1 ONLY="a ah c" bash bench/cluster_bench.sh
#
# (a)  N sequential `sbatch -p compute --wrap true` while the jobs run, one shell loop
#      (and the CPU per job: the machine's, the controller's, the agents', the step daemons' with their jobs)
# (ah) the same with --hold (the submit path alone)
# (b)  CONC concurrent submitters, N jobs in all
# (c)  submit -> RUNNING on an idle cluster (poll squeue every ~10 ms), LAT samples; a `true` job's turnaround
# (d)  drain N held `sleep 1` jobs released at once (scontrol release), then (d2) one --array=0-(N-1) `sleep 1`
# (m)  controller RSS after the jobs above (the anchor: slurmctld 323 MB after ~18,000 jobs),
#      then (m') restarted over the store: its RSS, the jobs it recovered of those stored, `drover up`'s time
# Submissions are made as a plain user (BENCH_USER, created when running as
# root), with an empty environment, as the anchor did with alice.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/build/bin
N=${N:-1000}; REPS=${REPS:-3}; CONC=${CONC:-4}; LAT=${LAT:-10}
ONLY=${ONLY:-a ah b c d d2 m}
CONF=${CONF:-$ROOT/../shared/anchors/slurm/etc/slurm.conf}
[ -f "$CONF" ] || CONF=/work/shared/anchors/slurm/etc/slurm.conf
STATE=${STATE:-/tmp/drover-bench}
U=${BENCH_USER:-droverbench}
OUT=${OUT:-$ROOT/bench/results}; mkdir -p "$OUT"
STAMP=$(date +%Y%m%dT%H%M%S)
TSV=$OUT/cluster-$STAMP.tsv; LOG=$OUT/cluster-$STAMP.log
exec > >(tee -a "$LOG") 2>&1

if [ "$(id -u)" = 0 ]; then
  id "$U" >/dev/null 2>&1 || useradd -m -s /bin/bash "$U"
  W=/home/$U/bench; install -d -o "$U" -g "$U" "$W"
  AS() { runuser -u "$U" -- env -i HOME=/home/$U USER=$U LOGNAME=$U PATH=$BIN:/usr/bin:/bin LANG=C.UTF-8 \
           DROVER_CONF=$STATE/slurm.conf N=$N CONC=$CONC bash -c "cd $W && $1"; }
else
  U=$(id -un); W=$STATE/work; mkdir -p "$W"
  AS() { env -i HOME=$HOME USER=$U PATH=$BIN:/usr/bin:/bin LANG=C.UTF-8 DROVER_CONF=$STATE/slurm.conf N=$N CONC=$CONC \
           bash -c "cd $W && $1"; }
fi
export PATH=$BIN:$PATH DROVER_CONF=$STATE/slurm.conf
ms_now() { echo $(( $(date +%s%N) / 1000000 )); }
rec() { echo -e "$1\t$2\t$3" >> "$TSV"; echo "  -> $1 rep$2 = $3"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
active() { squeue -h -r -t PD,R,CG -o %i 2>/dev/null | wc -l; }
wait_idle() { local n=0; while [ "$(active)" != 0 ] && [ $n -lt 3000 ]; do sleep 0.2; n=$((n+1)); done; }
# MaxJobCount (10000) counts finished jobs kept for MinJobAge (300 s), as in Slurm: wait for room, as the anchor did.
wait_room() { while [ "$(squeue -h -r -t all -o %i 2>/dev/null | wc -l)" -gt 7000 ]; do sleep 5; done; }
# CPU time spent by the whole machine (user+nice+system+irq+softirq), in ms.
busy_ms() { awk -v hz="$(getconf CLK_TCK)" '/^cpu /{print int(($2+$3+$4+$7+$8)*1000/hz)}' /proc/stat; }
# CPU time (ms) of the controller, of the agents, and of what the agents reaped
# (the step daemons and the jobs' own processes), from /proc/PID/stat. Step
# daemons forked by an agent's fork server are reaped by the server, a child
# of the agent: its own and its reaped children's time count as the steps'.
daemon_ms() {
  local hz f p c; hz=$(getconf CLK_TCK)
  for f in "$STATE"/pids/*.pid; do
    p=$(cat "$f")
    awk -v n="$(basename "$f" .pid)" -v hz="$hz" '{printf "%s %d %d\n", n, ($14+$15)*1000/hz, ($16+$17)*1000/hz}' "/proc/$p/stat" 2>/dev/null
    [ "$(basename "$f")" = controller.pid ] && continue
    for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
      awk -v hz="$hz" '{printf "server 0 %d\n", ($14+$15+$16+$17)*1000/hz}' "/proc/$c/stat" 2>/dev/null
    done
  done | awk '{if ($1 == "controller") c += $2; else { a += $2; s += $3 }} END {print c+0, a+0, s+0}'
}
median() { sort -g | awk '{a[NR]=$1} END{if(NR==0)print "NA"; else if(NR%2)print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

echo "=== cluster_bench.sh $STAMP N=$N REPS=$REPS CONC=$CONC LAT=$LAT user=$U conf=$CONF load $(load)"
"$BIN/drover" up --config "$CONF" --state "$STATE" || exit 1
# The anchor's slurm.conf enforces associations (AccountingStorageEnforce):
# the bench user gets one, as the anchor's setup.sh gives alice hers.
sacctmgr -i add account research Description=research Organization=anchor >/dev/null 2>&1
sacctmgr -i add user "$U" Account=research >/dev/null 2>&1
sinfo
scancel -u "$U" 2>/dev/null; wait_idle

for rep in $(seq 1 "$REPS"); do
  echo "===== repetition $rep (load $(load))"
  if [[ " $ONLY " == *" a "* ]]; then
    wait_room; wait_idle
    echo "(a) sequential $N x sbatch (jobs run: true)   load $(load)"
    t0=$(ms_now); c0=$(busy_ms); read -r dc0 da0 ds0 <<< "$(daemon_ms)"
    fails=$(AS 'f=0; for i in $(seq 1 $N); do sbatch -p compute -J bench-a -o /dev/null --wrap true >/dev/null 2>>err.a || f=$((f+1)); done; echo $f')
    t1=$(ms_now); wait_idle; t2=$(ms_now); c1=$(busy_ms); read -r dc1 da1 ds1 <<< "$(daemon_ms)"
    rec a_seq_submit_per_s "$rep" "$(awk -v d=$((t1-t0)) -v n=$N 'BEGIN{printf "%.1f", n*1000/d}')"
    rec a_seq_fails "$rep" "$fails"
    rec a_seq_drain_after_submit_s "$rep" "$(awk -v d=$((t2-t1)) 'BEGIN{printf "%.2f", d/1000}')"
    # the machine's CPU per job, submission to drain (includes the squeue polls of wait_idle)
    rec a_cpu_ms_per_job "$rep" "$(awk -v c=$((c1-c0)) -v n=$N 'BEGIN{printf "%.2f", c/n}')"
    # of which: the controller, the agents, and the step daemons with the jobs they ran
    rec a_cpu_ms_per_job_controller "$rep" "$(awk -v c=$((dc1-dc0)) -v n=$N 'BEGIN{printf "%.2f", c/n}')"
    rec a_cpu_ms_per_job_agents "$rep" "$(awk -v c=$((da1-da0)) -v n=$N 'BEGIN{printf "%.2f", c/n}')"
    rec a_cpu_ms_per_job_steps "$rep" "$(awk -v c=$((ds1-ds0)) -v n=$N 'BEGIN{printf "%.2f", c/n}')"
  fi
  if [[ " $ONLY " == *" ah "* ]]; then
    wait_room; wait_idle
    echo "(a') sequential $N x sbatch --hold   load $(load)"
    t0=$(ms_now)
    fails=$(AS 'f=0; for i in $(seq 1 $N); do sbatch -H -p compute -J bench-ah -o /dev/null --wrap true >/dev/null 2>>err.ah || f=$((f+1)); done; echo $f')
    t1=$(ms_now)
    rec ah_seq_held_submit_per_s "$rep" "$(awk -v d=$((t1-t0)) -v n=$N 'BEGIN{printf "%.1f", n*1000/d}')"
    rec ah_seq_held_fails "$rep" "$fails"
    t0=$(ms_now); AS 'scancel -u $USER'; wait_idle; t1=$(ms_now)
    rec ah_scancel_all_s "$rep" "$(awk -v d=$((t1-t0)) 'BEGIN{printf "%.2f", d/1000}')"
  fi
  if [[ " $ONLY " == *" b "* ]]; then
    wait_room; wait_idle
    echo "(b) $CONC concurrent submitters, $N jobs total   load $(load)"
    t0=$(ms_now)
    fails=$(AS 'per=$((N/CONC)); for c in $(seq 1 $CONC); do ( f=0; for i in $(seq 1 $per); do sbatch -p compute -J bench-b -o /dev/null --wrap true >/dev/null 2>>err.b || f=$((f+1)); done; echo $f > fails.$c ) & done; wait; t=0; for x in fails.*; do t=$((t+$(cat $x))); done; echo $t; rm -f fails.*')
    t1=$(ms_now); wait_idle; t2=$(ms_now)
    rec b_conc${CONC}_submit_per_s "$rep" "$(awk -v d=$((t1-t0)) -v n=$N 'BEGIN{printf "%.1f", n*1000/d}')"
    rec b_conc${CONC}_fails "$rep" "$fails"
  fi
  if [[ " $ONLY " == *" c "* ]]; then
    wait_idle; sleep 1
    echo "(c) submit->RUNNING latency, $LAT samples   load $(load)"
    lat=(); e2e=(); sb=()
    for k in $(seq 1 "$LAT"); do
      wait_idle; sleep "$(awk -v r=$RANDOM 'BEGIN{printf "%.3f", 0.2 + (r % 800) / 1000}')"
      r=$(AS 't0=$(date +%s%N); id=$(sbatch --parsable -p compute -J bench-c -o /dev/null --wrap "sleep 30") || exit 1; t1=$(date +%s%N)
             for n in $(seq 3000); do s=$(squeue -h -j $id -o %T); [ "$s" = RUNNING ] && break; sleep 0.01; done; t2=$(date +%s%N)
             echo $id $(( (t1-t0)/1000000 )) $(( (t2-t0)/1000000 ))') || { echo "   sbatch failed"; continue; }
      set -- $r; id=$1; sb+=("$2"); lat+=("$3")
      scancel "$id"; wait_idle
      r2=$(AS 't0=$(date +%s%N); id=$(sbatch --parsable -p compute -J bench-c2 -o /dev/null --wrap true) || exit 1
              for n in $(seq 3000); do s=$(squeue -h -j $id -t PD,R,CG -o %T 2>/dev/null); [ -z "$s" ] && break; sleep 0.01; done; t2=$(date +%s%N)
              echo $(( (t2-t0)/1000000 ))')
      e2e+=("$r2")
      echo "   sample $k: sbatch ${sb[-1]} ms, submit->RUNNING ${lat[-1]} ms, true-job turnaround ${e2e[-1]} ms"
    done
    rec c_sbatch_call_ms_median "$rep" "$(printf '%s\n' "${sb[@]}" | median)"
    rec c_submit_to_running_ms_median "$rep" "$(printf '%s\n' "${lat[@]}" | median)"
    rec c_submit_to_running_ms_min "$rep" "$(printf '%s\n' "${lat[@]}" | sort -g | head -1)"
    rec c_submit_to_running_ms_max "$rep" "$(printf '%s\n' "${lat[@]}" | sort -g | tail -1)"
    rec c_true_job_turnaround_ms_median "$rep" "$(printf '%s\n' "${e2e[@]}" | median)"
  fi
  if [[ " $ONLY " == *" d "* ]]; then
    wait_room; wait_idle
    echo "(d) drain $N x 'sleep 1' (held, then one scontrol release)   load $(load)"
    ids=$(AS 'for i in $(seq 1 $N); do sbatch --parsable -H -p compute -J bench-d -o /dev/null --wrap "sleep 1"; done' | paste -sd' ')
    sleep 1
    t0=$(ms_now); AS "scontrol release $ids"; t1=$(ms_now)
    peak=0
    while :; do
      a=$(squeue -h -r -t PD,R,CG -o %T 2>/dev/null | sort | uniq -c | awk '{c[$2]=$1} END{printf "%d %d %d", c["PENDING"]+0, c["RUNNING"]+0, c["COMPLETING"]+0}')
      set -- $a; [ "$2" -gt "$peak" ] && peak=$2
      [ $(( $1 + $2 + $3 )) = 0 ] && break
      sleep 0.2
    done
    t2=$(ms_now)
    rec d_drain_s "$rep" "$(awk -v d=$((t2-t0)) 'BEGIN{printf "%.2f", d/1000}')"
    rec d_drain_jobs_per_s "$rep" "$(awk -v d=$((t2-t0)) -v n=$N 'BEGIN{printf "%.1f", n*1000/d}')"
    rec d_release_cmd_ms "$rep" "$((t1-t0))"
    rec d_peak_running "$rep" "$peak"
  fi
  if [[ " $ONLY " == *" d2 "* ]]; then
    wait_room; wait_idle
    echo "(d2) drain --array=0-$((N-1)) 'sleep 1' (from submission)   load $(load)"
    t0=$(ms_now); AS 'sbatch -p compute -J bench-d2 -o /dev/null --array=0-$((N-1)) --wrap "sleep 1" >/dev/null'
    wait_idle; t2=$(ms_now)
    rec d2_array_drain_s "$rep" "$(awk -v d=$((t2-t0)) 'BEGIN{printf "%.2f", d/1000}')"
    rec d2_array_jobs_per_s "$rep" "$(awk -v d=$((t2-t0)) -v n=$N 'BEGIN{printf "%.1f", n*1000/d}')"
  fi
done
if [[ " $ONLY " == *" m "* ]]; then
  pid=$(cat "$STATE/pids/controller.pid")
  rec m_controller_rss_mb 1 "$(awk '/VmRSS/{printf "%.1f", $2/1024}' /proc/$pid/status)"
  rec m_jobs_submitted_since_start 1 "$(scontrol show config >/dev/null; squeue -h -t all -o %i | wc -l) in memory (MinJobAge)"
  rec m_agent_rss_mb_max 1 "$(for f in "$STATE"/pids/agent-*.pid; do awk '/VmRSS/{print $2/1024}' /proc/$(cat $f)/status; done | sort -g | tail -1)"
  # (m') the controller restarted (SIGTERM, then `drover up` starts it again)
  # over the store these runs and earlier ones left: every job since the
  # state directory was made stays there for sacct, and memory holds only what
  # MinJobAge keeps.
  kill -TERM "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  t0=$(ms_now); "$BIN/drover" up --config "$CONF" --state "$STATE" >/dev/null; t1=$(ms_now)
  pid=$(cat "$STATE/pids/controller.pid")
  read -r kept next <<< "$(grep 'recovered .* jobs from' "$STATE/logs/controller.log" | tail -1 |
                           sed -E 's/.*recovered ([0-9]+) jobs from .*next job id ([0-9]+).*/\1 \2/')"
  rec m_restart_up_s 1 "$(awk -v d=$((t1-t0)) 'BEGIN{printf "%.2f", d/1000}')"
  rec m_restart_jobs_in_store 1 "$((next - 1))"
  rec m_restart_jobs_recovered 1 "$kept"
  rec m_controller_rss_after_restart_mb 1 "$(awk '/VmRSS/{printf "%.1f", $2/1024}' /proc/$pid/status)"
  rec m_controller_peak_rss_after_restart_mb 1 "$(awk '/VmHWM/{printf "%.1f", $2/1024}' /proc/$pid/status)"
fi
echo "=== summary: each measurement's repetitions, then their median ==="
for k in $(cut -f1 "$TSV" | sort -u); do
  vals=$(awk -F'\t' -v k="$k" '$1==k{printf " %s", $3}' "$TSV")
  echo "$k:$vals (median $(awk -F'\t' -v k="$k" '$1==k{print $3}' "$TSV" | median))"
done
"$BIN/drover" down --state "$STATE"
