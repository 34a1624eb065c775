#include "cli/scontrol_show.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cli/display_values.hpp"
#include "cli/squeue_output.hpp"
#include "common/gres.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

// Lines of one record, joined by "\n   " (multi-line) or " " (-o).
struct Record {
  bool one_line = false;
  std::vector<std::string> lines;

  template <class... Args>
  void add(fmt::format_string<Args...> f, Args&&... args) {
    lines.push_back(fmt::format(f, std::forward<Args>(args)...));
  }
  std::string sep() const { return one_line ? " " : "\n   "; }
  std::string joined() const { return join(lines, sep()); }
  // Nodes and partitions: the record, then a blank line unless -o.
  std::string finish() const { return joined() + (one_line ? "\n" : "\n\n"); }
  // Jobs end their last line with the separator too (Slurm's trailing "   ").
  std::string finish_job() const { return joined() + sep() + (one_line ? "\n" : "\n\n"); }
};

std::string null_or(const std::string& s) { return or_text(s, "(null)"); }
std::string yes_no_upper(bool v) { return v ? "YES" : "NO"; }
std::string unlimited_or(int64_t v) { return v > 0 ? std::to_string(v) : "UNLIMITED"; }

std::string job_id_line(const JobView& j) {
  std::string array;
  if (j.array_job_id != 0) {
    array = fmt::format(" ArrayJobId={} ArrayTaskId={}", j.array_job_id, squeue_array_task(j));
    if (j.array_max_running > 0) array += fmt::format(" ArrayTaskThrottle={}", j.array_max_running);
  }
  return fmt::format("JobId={}{} JobName={}", j.job_id, array, j.name);
}

std::string num_nodes_text(const JobView& j) {
  if (j.state == JobState::kPending && j.max_nodes > 0) return fmt::format("{}-{}", j.num_nodes, j.max_nodes);
  return std::to_string(j.num_nodes);
}

std::string memory_field(const JobView& j) {
  // Per CPU when so asked (or defaulted), else per node: --mem=0 shows MinMemoryNode=0.
  if (j.mem_per_cpu_mb > 0 && j.mem_per_node_mb <= 0) return fmt::format("MinMemoryCPU={}", memory_text(j.mem_per_cpu_mb));
  return fmt::format("MinMemoryNode={}", memory_text(j.mem_per_node_mb));
}

void add_job_times(Record& r, const JobView& j, UnixTime now) {
  r.add("RunTime={} TimeLimit={} TimeMin={}", format_duration_hms(job_run_time(j, now)), limit_text_hms(j.time_limit),
        j.time_min > 0 ? format_duration_hms(j.time_min) : "N/A");
  r.add("SubmitTime={} EligibleTime={}", time_or(j.submit_time, "Unknown"), time_or(j.eligible_time, "Unknown"));
  r.add("AccrueTime={}", time_or(j.accrue_time, "Unknown"));
  r.add("StartTime={} EndTime={} Deadline={}", time_or(j.start_time, "Unknown"), time_or(j.end_time, "Unknown"),
        time_or(j.deadline, "N/A"));
  r.add("SuspendTime={} SecsPreSuspend={} LastSchedEval={} Scheduler={}", time_or(j.suspend_time, "None"),
        j.pre_suspend_time, time_or(j.last_sched_eval, "Unknown"), j.scheduler);
}

void add_job_resources(Record& r, const JobView& j, bool details) {
  r.add("Partition={} AllocNode:Sid={}:{}", j.partition, j.alloc_node, j.alloc_sid);
  r.add("ReqNodeList={} ExcNodeList={}", null_or(j.req_nodes), null_or(j.exc_nodes));
  bool sched = j.state == JobState::kPending && !j.sched_nodes.empty();
  r.add("NodeList={}{}", j.nodes, sched ? " SchedNodeList=" + j.sched_nodes : "");
  if (!j.batch_host.empty() && j.state != JobState::kPending) r.add("BatchHost={}", j.batch_host);
  r.add("NumNodes={} NumCPUs={} NumTasks={} CPUs/Task={} ReqB:S:C:T=0:0:{}:{}", num_nodes_text(j), j.num_cpus,
        j.num_tasks, j.cpus_per_task, star_or(j.cores_per_socket), star_or(j.threads_per_core));
  r.add("TRES={}", format_tres(j.tres));
  r.add("Socks/Node={} NtasksPerN:B:S:C={}:0:{}:{} CoreSpec=*", star_or(j.sockets_per_node), j.ntasks_per_node,
        star_or(j.ntasks_per_socket), star_or(j.ntasks_per_core));
  if (details && !j.node_detail.empty()) {
    r.add("JOB_GRES={}", null_or(j.job_gres));
    for (const auto& n : j.node_detail)
      r.add("  Nodes={} CPU_IDs={} Mem={} GRES={}", n.nodes, n.cpu_ids, n.mem_mb, n.gres);
  }
  r.add("MinCPUsNode={} {} MinTmpDiskNode={}", j.min_cpus_per_node, memory_field(j), memory_text(j.min_tmp_disk_mb));
  r.add("Features={} DelayBoot={}", null_or(j.features), format_duration_hms(j.delay_boot));
  if (!j.cluster_features.empty()) r.add("ClusterFeatures={}", j.cluster_features);
  if (!j.reservation.empty()) r.add("Reservation={}", j.reservation);  // only when set, as Slurm
  r.add("OverSubscribe={} Contiguous={} Licenses={} Network={}", j.over_subscribe, j.contiguous ? 1 : 0,
        null_or(j.licenses), null_or(j.network));
}

}  // namespace

std::string render_job_detail(const JobView& j, UnixTime now, bool one_line, bool details) {
  Record r{one_line, {}};
  r.lines.push_back(job_id_line(j));
  r.add("UserId={}({}) GroupId={}({}) MCS_label={}", j.user, j.uid, j.group, j.gid, or_text(j.mcs_label, "N/A"));
  r.add("Priority={} Nice={} Account={} QOS={}", j.priority, j.nice, null_or(j.account), null_or(j.qos));
  // One word, as Slurm prints it: "ReqNodeNotAvail,_UnavailableNodes:cpu4".
  std::string reason = j.reason;
  std::replace(reason.begin(), reason.end(), ' ', '_');
  r.add("JobState={} Reason={} Dependency={}", job_state_long(j.state), reason, null_or(j.dependency));
  r.add("Requeue={} Restarts={} BatchFlag={} Reboot=0 ExitCode={}:{}", j.requeue ? 1 : 0, j.restarts,
        j.batch ? 1 : 0, j.exit_code, j.exit_signal);
  if (details) r.add("DerivedExitCode={}:{}", j.derived_exit_code, j.derived_exit_signal);
  add_job_times(r, j, now);
  add_job_resources(r, j, details);
  r.add("Command={}", null_or(j.command));
  r.add("WorkDir={}", j.work_dir);
  if (!j.comment.empty()) r.add("Comment={} ", j.comment);
  if (j.batch) {  // an allocation's (salloc, srun) streams are its steps': Slurm 22.05 showed none
    r.add("StdErr={}", j.std_err);
    r.add("StdIn={}", j.std_in);
    r.add("StdOut={}", j.std_out);
  }
  r.add("Power=");
  if (!j.cpus_per_tres.empty()) r.add("CpusPerTres={}", j.cpus_per_tres);
  if (!j.mem_per_tres.empty()) r.add("MemPerTres={}", j.mem_per_tres);
  if (!j.tres_per_job.empty()) r.add("TresPerJob={}", j.tres_per_job);
  if (!j.tres_per_node.empty()) r.add("TresPerNode={}", j.tres_per_node);
  if (!j.tres_per_task.empty()) r.add("TresPerTask={}", j.tres_per_task);
  // Only with --mail-type: Slurm 22.05 showed no Mail line for --mail-user alone.
  if (!j.mail_type.empty() && !iequals(j.mail_type, "NONE"))
    r.add("MailUser={} MailType={}", null_or(j.mail_user), j.mail_type);
  return r.finish_job();
}

std::string render_node_detail(const NodeView& n, bool one_line) {
  Record r{one_line, {}};
  r.add("NodeName={} Arch={} CoresPerSocket={} ", n.name, n.arch, n.cores_per_socket);
  r.add("CPUAlloc={} CPUEfctv={} CPUTot={} CPULoad={}", n.alloc_cpus, n.cpus_effective > 0 ? n.cpus_effective : n.cpus,
        n.cpus, n.cpu_load < 0 ? std::string("N/A") : fmt::format("{:.2f}", n.cpu_load));
  r.add("AvailableFeatures={}", null_or(n.features));
  r.add("ActiveFeatures={}", null_or(n.features_active));
  r.add("Gres={}", format_gres_list(n.gres));
  r.add("NodeAddr={} NodeHostName={} Port={} Version={}", n.addr, n.hostname, n.port, n.version);
  r.add("OS={} ", n.os);
  r.add("RealMemory={} AllocMem={} FreeMem={} Sockets={} Boards={}", n.real_memory_mb, n.alloc_memory_mb,
        n.free_memory_mb < 0 ? std::string("N/A") : std::to_string(n.free_memory_mb), n.sockets, n.boards);
  r.add("State={} ThreadsPerCore={} TmpDisk={} Weight={} Owner={} MCS_label={}", node_state_complete(n.state),
        n.threads_per_core, n.tmp_disk_mb, n.weight, or_text(n.owner, "N/A"), or_text(n.mcs_label, "N/A"));
  r.add("Partitions={} ", join(n.partitions, ","));
  r.add("BootTime={} SlurmdStartTime={}", time_or(n.boot_time, "None"), time_or(n.slurmd_start_time, "None"));
  r.add("LastBusyTime={}", time_or(n.last_busy_time, "Unknown"));
  r.add("CfgTRES={}", format_tres(n.cfg_tres));
  r.add("AllocTRES={}", format_tres(n.alloc_tres));
  r.add("CapWatts=n/a");
  r.add("CurrentWatts=0 AveWatts=0");
  r.add("ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s");
  if (!n.reason.empty())
    r.add("Reason={} [{}@{}]", n.reason, or_text(n.reason_user, "root"), time_or(n.reason_time, "Unknown"));
  if (!n.comment.empty()) r.add("Comment={}", n.comment);
  return r.finish();
}

std::string render_step_detail(const StepDetailView& s, bool one_line) {
  Record r;
  r.one_line = one_line;
  r.add("StepId={} UserId={} StartTime={} TimeLimit={}", s.id, s.uid, time_or(s.start_time, "Unknown"),
        limit_text_hms(s.time_limit));
  r.add("State={} Partition={} NodeList={}", s.state, null_or(s.partition), null_or(s.nodes));
  // Slurm 22.05 counts the batch step's CPUs and TRES nowhere here (anchor cluster).
  r.add("Nodes={} CPUs={} Tasks={} Name={} Network=(null)", s.num_nodes, s.batch ? 0 : s.cpus, s.tasks, null_or(s.name));
  r.add("TRES={}", s.batch ? std::string("(null)") : null_or(s.tres));
  r.add("ResvPorts=(null)");
  r.add("CPUFreqReq=Default{}", s.batch ? "" : " Dist=" + or_text(s.distribution, "Block"));
  r.add("SrunHost:Pid={}:{}", null_or(s.srun_host), s.srun_pid);
  return r.finish();
}

std::string render_partition_detail(const PartitionView& p, bool one_line) {
  Record r{one_line, {}};
  r.add("PartitionName={}", p.name);
  std::string accounts = p.deny_accounts.empty() ? "AllowAccounts=" + p.allow_accounts : "DenyAccounts=" + p.deny_accounts;
  std::string qos = p.deny_qos.empty() ? "AllowQos=" + p.allow_qos : "DenyQos=" + p.deny_qos;
  r.add("AllowGroups={} {} {}", p.allow_groups, accounts, qos);
  r.add("AllocNodes={} Default={} QoS={}", p.alloc_nodes, yes_no_upper(p.is_default), or_text(p.qos, "N/A"));
  r.add("DefaultTime={} DisableRootJobs={} ExclusiveUser={} GraceTime={} Hidden={}", limit_text_hms(p.default_time),
        yes_no_upper(p.disable_root_jobs), yes_no_upper(p.exclusive_user), p.grace_time, yes_no_upper(p.hidden));
  r.add("MaxNodes={} MaxTime={} MinNodes={} LLN={} MaxCPUsPerNode={}", unlimited_or(p.max_nodes),
        limit_text_hms(p.max_time), p.min_nodes, yes_no_upper(p.lln), unlimited_or(p.max_cpus_per_node));
  r.add("Nodes={}", p.nodes);
  r.add("PriorityJobFactor={} PriorityTier={} RootOnly={} ReqResv={} OverSubscribe={}", p.priority_job_factor,
        p.priority_tier, yes_no_upper(p.root_only), yes_no_upper(p.req_resv), p.over_subscribe);
  r.add("OverTimeLimit={} PreemptMode={}", p.over_time_limit, p.preempt_mode);
  r.add("State={} TotalCPUs={} TotalNodes={} SelectTypeParameters={}", p.state, p.total_cpus, p.total_nodes,
        p.select_type_parameters);
  r.add("JobDefaults={}", null_or(p.job_defaults));
  std::string def = p.def_mem_per_cpu_mb > 0 ? fmt::format("DefMemPerCPU={}", p.def_mem_per_cpu_mb)
                                             : fmt::format("DefMemPerNode={}", unlimited_or(p.def_mem_per_node_mb));
  std::string max = p.max_mem_per_cpu_mb > 0 ? fmt::format("MaxMemPerCPU={}", p.max_mem_per_cpu_mb)
                                             : fmt::format("MaxMemPerNode={}", unlimited_or(p.max_mem_per_node_mb));
  r.add("{} {}", def, max);
  r.add("TRES={}", format_tres(p.tres));
  if (!p.tres_billing_weights.empty()) r.add("TRESBillingWeights={}", p.tres_billing_weights);
  return r.finish();
}

std::string render_reservation_detail(const ReservationView& v, bool one_line) {
  Record r{one_line, {}};
  const Seconds span = v.end_time > v.start_time ? v.end_time - v.start_time : 0;
  r.add("ReservationName={} StartTime={} EndTime={} Duration={}", v.name, time_or(v.start_time, "Unknown"),
        time_or(v.end_time, "Unknown"), format_duration_hms(span));
  r.add("Nodes={} NodeCnt={} CoreCnt={} Features=(null) PartitionName={} Flags={}", null_or(v.nodes), v.node_count,
        v.core_count, null_or(v.partition), join(v.flags, ","));  // no flag: `Flags=`, as Slurm 22.05
  r.add("TRES={}", v.cpu_count > 0 ? fmt::format("cpu={}", v.cpu_count) : std::string("(null)"));
  r.add("Users={} Groups=(null) Accounts={} Licenses=(null) State={} BurstBuffer=(null) Watts=n/a",
        null_or(join(v.users, ",")), null_or(join(v.accounts, ",")), v.active ? "ACTIVE" : "INACTIVE");
  r.add("MaxStartDelay=(null)");
  return r.finish();
}

std::string render_config(const ConfigView& config) {
  std::string out = fmt::format("Configuration data as of {}\n", time_or(config.as_of, "Unknown"));
  for (const auto& e : config.entries) out += fmt::format("{:<23} = {}\n", e.key, e.value);
  if (!config.trailer.empty()) {
    out += "\n";
    for (const auto& line : config.trailer) out += line + "\n";
  }
  return out;
}

std::string config_seconds(int64_t secs) { return fmt::format("{} sec", secs); }
std::string config_yes_no(bool v) { return v ? "Yes" : "No"; }
std::string config_text(const std::string& v) { return or_text(v, "(null)"); }

}  // namespace drover::cli
