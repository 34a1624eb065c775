// squeue's field table: -o letters, -O names, headers and values.
#include <fmt/format.h>

#include "cli/display_values.hpp"
#include "cli/squeue_internal.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using Row = SqueueRow;

std::string num(int64_t v) { return std::to_string(v); }

std::string time_left(const Row& r) {
  const JobView& j = *r.job;
  if (j.time_limit == kInfinite || j.time_limit == kNotSet) return limit_text(j.time_limit);
  Seconds left = j.time_limit - job_run_time(j, r.now);
  return format_duration(left < 0 ? 0 : left);
}

// %R: the reason in parentheses for a job that is pending, timed out or
// failed (as Slurm's squeue), otherwise its nodes.
std::string reason_list(const JobView& j) {
  bool waiting_or_failed =
      j.state == JobState::kPending || j.state == JobState::kTimeout || j.state == JobState::kFailed;
  return waiting_or_failed ? fmt::format("({})", j.reason) : j.nodes;
}

std::string min_memory(const JobView& j) {
  return memory_text(j.mem_per_node_mb > 0 ? j.mem_per_node_mb : j.mem_per_cpu_mb);
}

Seconds pending_time(const Row& r) {
  const JobView& j = *r.job;
  if (j.submit_time == kNoTime) return 0;
  UnixTime until = j.start_time != kNoTime && j.state != JobState::kPending ? j.start_time : r.now;
  return until > j.submit_time ? until - j.submit_time : 0;
}

Field<Row> F(char code, std::string_view long_name, std::string_view header,
             std::function<std::string(const Row&)> value) {
  return Field<Row>{FieldInfo{code, long_name, header}, std::move(value)};
}

// Node lists are printed whole, header and value, in -o formats.
Field<Row> N(char code, std::string_view long_name, std::string_view header,
             std::function<std::string(const Row&)> value) {
  return Field<Row>{FieldInfo{code, long_name, header, false, false}, std::move(value)};
}

// Durations are printed whole even when wider than the column (squeue -l's
// "7-00:00:00" in the 9-wide TIME_LIMIT column).
Field<Row> D(char code, std::string_view long_name, std::string_view header,
             std::function<std::string(const Row&)> value) {
  return Field<Row>{FieldInfo{code, long_name, header, false, true}, std::move(value)};
}

}  // namespace

const std::vector<Field<SqueueRow>>& squeue_fields() {
  static const std::vector<Field<Row>> fields = {
      F('a', "Account", "ACCOUNT", [](const Row& r) { return or_text(r.job->account, "(null)"); }),
      F('A', "JobID", "JOBID", [](const Row& r) { return num(r.job->job_id); }),
      F('b', "tres-per-node", "TRES_PER_NODE", [](const Row& r) { return or_text(r.job->tres_per_node, "N/A"); }),
      F(0, "Gres", "TRES_PER_NODE", [](const Row& r) { return or_text(r.job->tres_per_node, "N/A"); }),
      F('B', "BatchHost", "EXEC_HOST", [](const Row& r) { return or_text(r.job->batch_host, "n/a"); }),
      F('c', "MinCpus", "MIN_CPUS", [](const Row& r) { return num(r.job->min_cpus_per_node); }),
      F('C', "NumCPUs", "CPUS", [](const Row& r) { return num(r.job->num_cpus); }),
      F('d', "MinTmpDisk", "MIN_TMP_DISK", [](const Row& r) { return memory_text(r.job->min_tmp_disk_mb); }),
      F('D', "NumNodes", "NODES", [](const Row& r) { return num(r.job->num_nodes); }),
      F('e', "EndTime", "END_TIME", [](const Row& r) {
        // A started job without a time limit ends at no known time: Slurm 22.05's NONE.
        if (r.job->end_time <= 0 && r.job->start_time > 0 && r.job->time_limit == kInfinite) return std::string("NONE");
        return time_or(r.job->end_time, "N/A");
      }),
      F('E', "Dependency", "DEPENDENCY", [](const Row& r) { return or_text(r.job->dependency, "(null)"); }),
      F('f', "Feature", "FEATURES", [](const Row& r) { return or_text(r.job->features, "(null)"); }),
      F('F', "ArrayJobID", "ARRAY_JOB_ID",
        [](const Row& r) { return num(r.job->array_job_id ? r.job->array_job_id : r.job->job_id); }),
      F('g', "GroupName", "GROUP", [](const Row& r) { return r.job->group; }),
      F('G', "GroupID", "GROUP", [](const Row& r) { return num(r.job->gid); }),
      F('h', "OverSubscribe", "OVER_SUBSCRIBE", [](const Row& r) { return r.job->over_subscribe; }),
      F(0, "Shared", "OVER_SUBSCRIBE", [](const Row& r) { return r.job->over_subscribe; }),
      F('H', "Sockets", "SOCKETS_PER_NODE", [](const Row& r) { return star_or(r.job->sockets_per_node); }),
      F('i', "JobArrayID", "JOBID", [](const Row& r) { return squeue_job_id(*r.job); }),
      F('I', "Cores", "CORES_PER_SOCKET", [](const Row& r) { return star_or(r.job->cores_per_socket); }),
      F('j', "Name", "NAME", [](const Row& r) { return r.job->name; }),
      F('J', "Threads", "THREADS_PER_CORE", [](const Row& r) { return star_or(r.job->threads_per_core); }),
      F('k', "Comment", "COMMENT", [](const Row& r) { return or_text(r.job->comment, "(null)"); }),
      F('K', "ArrayTaskID", "ARRAY_TASK_ID", [](const Row& r) { return squeue_array_task(*r.job); }),
      D('l', "TimeLimit", "TIME_LIMIT", [](const Row& r) { return limit_text(r.job->time_limit); }),
      D('L', "TimeLeft", "TIME_LEFT", time_left),
      F('m', "MinMemory", "MIN_MEMORY", [](const Row& r) { return min_memory(*r.job); }),
      D('M', "TimeUsed", "TIME", [](const Row& r) { return format_duration(job_run_time(*r.job, r.now)); }),
      F('n', "ReqNodes", "REQ_NODES", [](const Row& r) { return r.job->req_nodes; }),
      N('N', "NodeList", "NODELIST", [](const Row& r) { return r.job->nodes; }),
      F('o', "Command", "COMMAND", [](const Row& r) { return or_text(r.job->command, "(null)"); }),
      F('O', "Contiguous", "CONTIGUOUS", [](const Row& r) { return num(r.job->contiguous ? 1 : 0); }),
      F('p', "Priority", "PRIORITY", [](const Row& r) { return priority_fraction(r.job->priority); }),
      F('P', "Partition", "PARTITION", [](const Row& r) { return r.job->partition; }),
      F('q', "QOS", "QOS", [](const Row& r) { return or_text(r.job->qos, "(null)"); }),
      F('Q', "PriorityLong", "PRIORITY", [](const Row& r) { return num(r.job->priority); }),
      F('r', "Reason", "REASON", [](const Row& r) { return r.job->reason; }),
      Field<Row>{FieldInfo{'R', "ReasonList", "NODELIST(REASON)", true, false},
                 [](const Row& r) { return reason_list(*r.job); },
                 [](const Row& r) { return reason_list(*r.job).rfind('(', 0) == 0; }},
      F('S', "StartTime", "START_TIME", [](const Row& r) { return time_or(r.job->start_time, "N/A"); }),
      F('t', "StateCompact", "ST", [](const Row& r) { return job_state_compact(r.job->state); }),
      F('T', "State", "STATE", [](const Row& r) { return job_state_long(r.job->state); }),
      F('u', "UserName", "USER", [](const Row& r) { return r.job->user; }),
      F('U', "UserID", "UID", [](const Row& r) { return num(r.job->uid); }),
      F('v', "Reservation", "RESERVATION", [](const Row& r) { return or_text(r.job->reservation, "(null)"); }),
      F('V', "SubmitTime", "SUBMIT_TIME", [](const Row& r) { return time_or(r.job->submit_time, "N/A"); }),
      F('w', "WCKey", "WCKEY", [](const Row& r) { return or_text(r.job->wckey, "(null)"); }),
      F('W', "Licenses", "LICENSES", [](const Row& r) { return or_text(r.job->licenses, "(null)"); }),
      F('x', "", "EXC_NODES", [](const Row& r) { return r.job->exc_nodes; }),
      F('X', "CoreSpec", "CORE_SPEC", [](const Row&) { return std::string("N/A"); }),
      F('y', "Nice", "NICE", [](const Row& r) { return num(r.job->nice); }),
      N('Y', "SchedNodes", "SCHEDNODES", [](const Row& r) { return or_text(r.job->sched_nodes, "(null)"); }),
      F('z', "SCT", "S:C:T",
        [](const Row& r) {
          return fmt::format("{}:{}:{}", star_or(r.job->sockets_per_node), star_or(r.job->cores_per_socket),
                             star_or(r.job->threads_per_core));
        }),
      F('Z', "WorkDir", "WORK_DIR", [](const Row& r) { return r.job->work_dir; }),
      // No node selection data in Drover: Slurm 22.05 printed an empty header and value.
      F('s', "SelectJobInfo", "", [](const Row&) { return std::string(); }),
      // -O only
      F(0, "AccrueTime", "ACCRUE_TIME", [](const Row& r) { return time_or(r.job->accrue_time, "N/A"); }),
      F(0, "cpus-per-tres", "CPUS_PER_TRES", [](const Row& r) { return or_text(r.job->cpus_per_tres, "N/A"); }),
      F(0, "mem-per-tres", "MEM_PER_TRES", [](const Row& r) { return or_text(r.job->mem_per_tres, "N/A"); }),
      D(0, "MinTime", "TIME_MIN", [](const Row& r) { return format_duration(r.job->time_min); }),
      F(0, "NTPerCore", "NTASKS_PER_CORE",
        [](const Row& r) { return r.job->ntasks_per_core > 0 ? num(r.job->ntasks_per_core) : std::string("N/A"); }),
      F(0, "NTPerSocket", "NTASKS_PER_SOCKET",
        [](const Row& r) { return r.job->ntasks_per_socket > 0 ? num(r.job->ntasks_per_socket) : std::string("N/A"); }),
      // What Drover does not have (heterogeneous jobs, federation, burst
      // buffers, boards, switches, profiling, resizing, preemption times),
      // each as Slurm 22.05 printed it for a job without it (anchor cluster;
      // VIALBLE is Slurm's spelling).
      F(0, "admin_comment", "ADMIN_COMMENT", [](const Row&) { return std::string("(null)"); }),
      F(0, "system_comment", "SYSTEM_COMMENT", [](const Row&) { return std::string("(null)"); }),
      F(0, "BoardsPerNode", "BOARDS_PER_NODE", [](const Row&) { return std::string("0"); }),
      F(0, "SPerBoard", "SOCKETS_PER_BOARD", [](const Row&) { return std::string("0"); }),
      F(0, "NTPerBoard", "NTASKS_PER_BOARD", [](const Row&) { return std::string("0"); }),
      F(0, "BurstBuffer", "BURST_BUFFER", [](const Row&) { return std::string("(null)"); }),
      F(0, "BurstBufferState", "BURST_BUFFER_STATE", [](const Row&) { return std::string("(null)"); }),
      F(0, "ClusterFeature", "CLUSTER_FEATURES", [](const Row&) { return std::string("(null)"); }),
      F(0, "Prefer", "PREFER", [](const Row&) { return std::string("(null)"); }),
      D(0, "DelayBoot", "DELAY_BOOT", [](const Row&) { return std::string("0:00"); }),
      F(0, "HetJobID", "HET_JOB_ID", [](const Row&) { return std::string("N/A"); }),
      F(0, "HetJobIDSet", "HET_JOB_ID_SET", [](const Row&) { return std::string("N/A"); }),
      F(0, "HetJobOffset", "HET_JOB_OFFSET", [](const Row&) { return std::string("N/A"); }),
      F(0, "Origin", "ORIGIN", [](const Row&) { return std::string("NA"); }),
      F(0, "OriginRaw", "ORIGIN_RAW", [](const Row&) { return std::string("NA"); }),
      F(0, "SiblingsActive", "ACTIVE_SIBLINGS", [](const Row&) { return std::string("NA"); }),
      F(0, "SiblingsActiveRaw", "ACTIVE_SIBLINGS_RAW", [](const Row&) { return std::string("NA"); }),
      F(0, "SiblingsViable", "VIABLE_SIBLINGS", [](const Row&) { return std::string("NA"); }),
      F(0, "SiblingsViableRaw", "VIALBLE_SIBLINGS_RAW", [](const Row&) { return std::string("NA"); }),
      F(0, "PreemptTime", "PREEMPT_TIME", [](const Row&) { return std::string("N/A"); }),
      F(0, "ResizeTime", "RESIZE_TIME", [](const Row&) { return std::string("N/A"); }),
      F(0, "Profile", "PROFILE", [](const Row&) { return std::string("NotSet"); }),
      F(0, "Reboot", "REBOOT", [](const Row&) { return std::string("0"); }),
      F(0, "ReqSwitch", "REQ_SWITCH", [](const Row&) { return std::string("0"); }),
      F(0, "AllocNodes", "ALLOC_NODES", [](const Row& r) { return r.job->alloc_node; }),
      F(0, "AllocSID", "ALLOC_SID", [](const Row& r) { return num(r.job->alloc_sid); }),
      F(0, "BatchFlag", "BATCH_FLAG", [](const Row& r) { return num(r.job->batch ? 1 : 0); }),
      F(0, "Cluster", "CLUSTER", [](const Row& r) { return or_text(r.job->cluster, "N/A"); }),
      F(0, "cpus-per-task", "CPUS_PER_TASK", [](const Row& r) { return num(r.job->cpus_per_task); }),
      F(0, "Deadline", "DEADLINE", [](const Row& r) { return time_or(r.job->deadline, "N/A"); }),
      F(0, "DerivedEC", "DERIVED_EC", [](const Row& r) { return num(r.job->derived_exit_code); }),
      F(0, "EligibleTime", "ELIGIBLE_TIME", [](const Row& r) { return time_or(r.job->eligible_time, "N/A"); }),
      F(0, "exit_code", "EXIT_CODE", [](const Row& r) { return num(r.job->exit_code); }),
      F(0, "LastSchedEval", "LAST_SCHED_EVAL", [](const Row& r) { return time_or(r.job->last_sched_eval, "N/A"); }),
      F(0, "MaxCPUs", "MAX_CPUS",
        [](const Row& r) { return num(r.job->max_cpus ? r.job->max_cpus : r.job->num_cpus); }),
      F(0, "MaxNodes", "MAX_NODES",
        [](const Row& r) { return num(r.job->max_nodes ? r.job->max_nodes : r.job->num_nodes); }),
      F(0, "MCSLabel", "MCSLABEL", [](const Row& r) { return or_text(r.job->mcs_label, "N/A"); }),
      F(0, "Network", "NETWORK", [](const Row& r) { return or_text(r.job->network, "(null)"); }),
      F(0, "NTPerNode", "NTASKS_PER_NODE", [](const Row& r) { return num(r.job->ntasks_per_node); }),
      F(0, "NumTasks", "TASKS", [](const Row& r) { return num(r.job->num_tasks); }),
      F(0, "PendingTime", "PENDING_TIME", [](const Row& r) { return num(pending_time(r)); }),
      F(0, "Requeue", "REQUEUE", [](const Row& r) { return num(r.job->requeue ? 1 : 0); }),
      F(0, "RestartCnt", "RESTART_COUNT", [](const Row& r) { return num(r.job->restarts); }),
      F(0, "STDERR", "STDERR", [](const Row& r) { return r.job->std_err; }),
      F(0, "STDIN", "STDIN", [](const Row& r) { return r.job->std_in; }),
      F(0, "STDOUT", "STDOUT", [](const Row& r) { return r.job->std_out; }),
      F(0, "tres-alloc", "TRES_ALLOC", [](const Row& r) { return format_tres(r.job->tres); }),
      F(0, "tres-per-job", "TRES_PER_JOB", [](const Row& r) { return or_text(r.job->tres_per_job, "N/A"); }),
      F(0, "tres-per-socket", "TRES_PER_SOCKET",
        [](const Row& r) { return or_text(r.job->tres_per_socket, "N/A"); }),
      F(0, "tres-per-task", "TRES_PER_TASK", [](const Row& r) { return or_text(r.job->tres_per_task, "N/A"); }),
  };
  return fields;
}

// squeue -s: the fields that mean something for a step.
const std::vector<Field<SqueueStepRow>>& squeue_step_fields() {
  using S = SqueueStepRow;
  // Node lists are printed whole (header too), durations whole, as for jobs.
  auto f = [](char code, std::string_view long_name, std::string_view header, std::function<std::string(const S&)> value,
              bool cut = true, bool cut_header = true) {
    return Field<S>{FieldInfo{code, long_name, header, cut, cut_header}, std::move(value)};
  };
  auto used = [](const S& r) {
    UnixTime start = r.step->start_time;
    return format_duration(start == kNoTime || r.now < start ? 0 : r.now - start);
  };
  auto null_or = [](const std::string& v) { return or_text(v, "(null)"); };
  // Slurm 22.05's step fields and headers (anchor cluster); the batch step
  // counts no CPUs there. Drover has no network or container for a step.
  // The per-node GRES are headed TRES_PER_JOB there, for %b and -O alike.
  static const std::vector<Field<S>> fields = {
      f('b', "tres-per-node", "TRES_PER_JOB", [=](const S& r) { return null_or(r.step->tres_per_node); }),
      f(0, "Gres", "TRES_PER_JOB", [=](const S& r) { return null_or(r.step->tres_per_node); }),
      f(0, "tres-per-task", "TRES_PER_TASK", [=](const S& r) { return null_or(r.step->tres_per_task); }),
      f(0, "tres-per-socket", "TRES_PER_SOCKET", [](const S&) { return std::string("(null)"); }),
      f(0, "tres-bind", "TRES_BIND", [=](const S& r) { return null_or(r.step->tres_bind); }),
      f(0, "tres-freq", "TRES_FREQ", [](const S&) { return std::string("(null)"); }),
      f('A', "NumTasks", "TASKS", [](const S& r) { return num(r.step->ntasks); }),
      f('i', "StepId", "STEPID", [](const S& r) { return squeue_step_id(*r.step); }),
      f('j', "StepName", "NAME", [](const S& r) { return r.step->name; }),
      f('l', "TimeLimit", "TIME_LIMIT", [](const S& r) { return limit_text(r.step->time_limit); }),
      f('M', "TimeUsed", "TIME", used, false),
      // %N only: -O takes Nodes for a step, and calls NodeList invalid (Slurm 22.05).
      f('N', "", "NODELIST", [](const S& r) { return r.step->nodes; }, false, false),
      f('P', "Partition", "PARTITION", [](const S& r) { return r.step->job.partition; }),
      f('S', "StartTime", "START_TIME", [](const S& r) { return time_or(r.step->start_time, "N/A"); }),
      f('u', "UserName", "USER", [](const S& r) { return r.step->job.user; }),
      f('U', "UserID", "UID", [](const S& r) { return num(r.step->job.uid); }),
      f(0, "StepState", "STATE", [](const S& r) { return r.step->state; }),
      f(0, "NumCPUs", "NUM_CPUS", [](const S& r) { return num(r.step->step_id < 0 ? 0 : r.step->cpus); }),
      f(0, "JobID", "JOB_ID", [](const S& r) { return num(r.step->job.job_id); }),
      f(0, "ArrayJobID", "ARRAY_JOB_ID", [](const S& r) { return num(r.step->job.array_job_id); }),
      f(0, "ArrayTaskID", "ARRAY_TASK_ID",
        [](const S& r) {
          return r.step->job.array_task_id ? num(*r.step->job.array_task_id) : std::string("N/A");
        }),
      f(0, "Cluster", "CLUSTER", [](const S& r) { return r.step->job.cluster; }),
      f(0, "Network", "NETWORK", [](const S&) { return std::string("(null)"); }),
      f(0, "Container", "CONTAINER", [](const S&) { return std::string("(null)"); }),
      f(0, "Nodes", "NODELIST", [](const S& r) { return r.step->nodes; }, false, false),
  };
  return fields;
}

}  // namespace drover::cli
