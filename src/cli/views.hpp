// Views: plain data the output commands (squeue, sinfo, sacct, sprio, sshare,
// scontrol show) render. The controller's replies are mapped into these; the
// renderers never compute scheduling facts, only format them.
//
// Conventions: times are Unix seconds (kNoTime = not known), durations are
// Seconds (kInfinite = no limit, kNotSet = not established), memory is MiB
// ("MB" in Slurm's words), an empty string means "not set" and is printed as
// Slurm prints a missing value for that field ("(null)", "N/A", "" ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/job_state.hpp"
#include "cli/node_state.hpp"
#include "cli/usage_stats.hpp"
#include "common/duration.hpp"
#include "common/gres.hpp"
#include "common/tres.hpp"

namespace drover::cli {

inline constexpr Seconds kNotSet = -1;  // a time limit not yet established

// One job record as squeue and `scontrol show job` see it. A job array is
// several records: one per element that left the pending state, plus one for
// the elements still pending together (array_pending_tasks non-empty).
struct JobView {
  // ---- identity ----
  int64_t job_id = 0;                      // this record's own id (squeue %A, -O JobID)
  int64_t array_job_id = 0;                // the array's id; 0 when not part of an array
  std::optional<int64_t> array_task_id;    // this element's index (set for single elements)
  std::vector<int64_t> array_pending_tasks;  // indexes still pending in this record, ascending
  int64_t array_max_running = 0;           // --array throttle "%N"; 0 = none
  std::string name;
  std::string user;                        // user name
  int64_t uid = 0;
  std::string group;                       // group name
  int64_t gid = 0;
  std::string account, partition, qos, reservation, wckey, comment, cluster;
  std::string mcs_label;                   // "" prints as N/A

  // ---- state ----
  JobState state = JobState::kPending;
  std::string reason = "None";             // Slurm's reason word: "Resources", "Priority", "Dependency", ...
  std::string dependency;                  // as Slurm shows it: "afterok:1(unfulfilled)"; "" = none
  int64_t priority = 0;                    // the job's priority (an unsigned 32-bit value in Slurm)
  int64_t nice = 0;
  bool requeue = true;
  int restarts = 0;
  bool batch = true;                       // submitted by sbatch (BatchFlag)
  int exit_code = 0;                       // ExitCode=<exit_code>:<exit_signal>
  int exit_signal = 0;
  int derived_exit_code = 0;               // DerivedExitCode=<code>:<signal> (scontrol -d)
  int derived_exit_signal = 0;
  std::string scheduler = "Main";          // which pass last evaluated it: Main, Backfill, Backfill:*

  // ---- times ----
  UnixTime submit_time = kNoTime;
  UnixTime eligible_time = kNoTime;
  UnixTime accrue_time = kNoTime;
  UnixTime start_time = kNoTime;           // actual, or expected for a pending job (kNoTime: unknown)
  UnixTime end_time = kNoTime;             // actual, or expected (start + limit)
  UnixTime suspend_time = kNoTime;         // last suspension
  Seconds pre_suspend_time = 0;            // run time before the last suspension (SecsPreSuspend)
  UnixTime last_sched_eval = kNoTime;
  UnixTime deadline = kNoTime;
  Seconds time_limit = kNotSet;            // kInfinite for UNLIMITED
  Seconds time_min = 0;                    // 0 = N/A

  // ---- resources ----
  std::string nodes;                       // allocated nodes (hostlist); "" when none
  std::string sched_nodes;                 // nodes a pending job is expected to use; "" = unknown
  std::string batch_host;                  // node running the batch script; "" when none
  std::string req_nodes, exc_nodes;        // -w / -x hostlists
  int64_t num_nodes = 1;                   // allocated, or minimum requested while pending
  int64_t max_nodes = 0;                   // requested maximum; 0 = none
  int64_t num_cpus = 1;                    // allocated, or requested while pending
  int64_t max_cpus = 0;                    // 0 = same as num_cpus
  int64_t num_tasks = 1;
  int64_t cpus_per_task = 1;
  int64_t min_cpus_per_node = 1;
  int64_t ntasks_per_node = 0;             // 0 = not requested
  int64_t mem_per_cpu_mb = 0;              // MinMemoryCPU (one of the two is set)
  int64_t mem_per_node_mb = 0;             // MinMemoryNode
  int64_t min_tmp_disk_mb = 0;
  int64_t sockets_per_node = 0, cores_per_socket = 0, threads_per_core = 0;  // 0 = "*"
  int64_t ntasks_per_socket = 0, ntasks_per_core = 0;                        // 0 = "*"
  Seconds delay_boot = 0;
  std::string cluster_features;            // --cluster-constraint; "" = no line
  TresMap tres;                            // allocated (running) or requested (pending)
  std::string tres_per_node;               // "gres:gpu:8"; "" = N/A
  std::string tres_per_job, tres_per_task, tres_per_socket;
  std::string cpus_per_tres, mem_per_tres;  // --cpus-per-gpu, --mem-per-gpu: "gres:gpu:8"; "" = no line
  std::string features, licenses, network;
  std::string over_subscribe = "OK";       // OK, NO, YES, USER, MCS
  bool contiguous = false;
  // scontrol -d: what a job that holds (or held) resources holds, per run of
  // nodes alike; empty when the controller did not send it.
  struct NodeDetail {
    std::string nodes, cpu_ids;
    int64_t mem_mb = 0;
    std::string gres;  // "gpu:h100:2(IDX:0-1)"; "" = none
  };
  std::string job_gres;                    // "gpu:h100:2,gpu:a100:2"; "" = none
  std::vector<NodeDetail> node_detail;

  // ---- files ----
  std::string command, work_dir, std_in, std_out, std_err;
  std::string alloc_node;                  // submit host
  int64_t alloc_sid = 0;                   // submitting session id
  std::string mail_user;                   // "" = none
  std::string mail_type;                   // as Slurm names it: "END", "BEGIN,END"; "" = none
};

// A node as sinfo and `scontrol show node` see it.
struct GresUse {
  std::string name = "gpu";
  std::string type;         // "" when untyped
  int64_t count = 0;        // allocated
  std::string indexes;      // allocated device indexes "0-5"; "" prints as N/A
};

struct NodeView {
  std::string name;
  std::string addr, hostname;
  int64_t port = 0;
  std::string version = "22.05.8";
  std::string arch = "x86_64";
  std::string os;
  NodeState state;
  int64_t cpus = 0;                  // CPUTot
  int64_t cpus_effective = 0;        // CPUEfctv; 0 = same as cpus
  int64_t alloc_cpus = 0;
  int64_t boards = 1, sockets = 1, cores_per_socket = 1, threads_per_core = 1;
  double cpu_load = -1;              // < 0 = N/A
  int64_t real_memory_mb = 0;
  int64_t alloc_memory_mb = 0;
  int64_t free_memory_mb = -1;       // < 0 = N/A
  int64_t tmp_disk_mb = 0;
  int64_t weight = 1;
  std::string features;              // available, comma list; "" = (null)
  std::string features_active;
  std::vector<GresSpec> gres;        // configured
  std::vector<GresUse> gres_used;    // one per configured gres (sinfo GresUsed)
  std::vector<std::string> partitions;
  std::string reason;                // "" = none
  UnixTime reason_time = kNoTime;
  std::string reason_user;           // user name who set the reason
  uint32_t reason_uid = 0;           // and their uid (sinfo's UserLong: "root(0)")
  UnixTime boot_time = kNoTime, slurmd_start_time = kNoTime, last_busy_time = kNoTime;
  TresMap cfg_tres, alloc_tres;
  std::string owner;                 // "" = N/A
  std::string mcs_label;             // "" = N/A
  std::string comment, extra;
};

// A partition as sinfo and `scontrol show partition` see it.
struct PartitionView {
  std::string name;
  bool is_default = false;
  bool hidden = false;
  std::string state = "UP";             // UP, DOWN, DRAIN, INACTIVE
  std::string nodes;                    // hostlist expression as configured
  std::vector<std::string> node_names;  // the nodes, in configured order
  Seconds max_time = kInfinite;
  Seconds default_time = kNotSet;       // kNotSet = NONE
  int64_t min_nodes = 0;                // sinfo JOB_SIZE lower bound shows at least 1
  int64_t max_nodes = 0;                // 0 = UNLIMITED
  int64_t max_cpus_per_node = 0;        // 0 = UNLIMITED
  int64_t total_cpus = 0, total_nodes = 0;
  std::string allow_groups = "ALL", allow_accounts = "ALL", allow_qos = "ALL", alloc_nodes = "ALL";
  std::string tres_billing_weights;  // as written; "": none (no TRESBillingWeights= line)
  std::string deny_accounts, deny_qos;  // "" = not set (not shown)
  std::string qos;                      // partition QOS; "" = N/A
  bool root_only = false, exclusive_user = false, lln = false, req_resv = false, disable_root_jobs = false;
  std::string over_subscribe = "NO";    // NO, EXCLUSIVE, YES:4, FORCE:4
  int64_t grace_time = 0;
  int64_t priority_job_factor = 1, priority_tier = 1;
  std::string over_time_limit = "NONE";
  std::string preempt_mode = "OFF";
  std::string select_type_parameters = "NONE";
  std::string job_defaults;             // "" = (null)
  int64_t def_mem_per_cpu_mb = 0, def_mem_per_node_mb = 0;  // 0 = UNLIMITED (per node shown)
  int64_t max_mem_per_cpu_mb = 0, max_mem_per_node_mb = 0;
  TresMap tres;
};

// An advance reservation as `scontrol show reservation` and `sinfo -T` see it.
struct ReservationView {
  std::string name;
  UnixTime start_time = kNoTime, end_time = kNoTime;
  std::string nodes;                    // hostlist expression
  int64_t node_count = 0, core_count = 0, cpu_count = 0;
  std::vector<std::string> users, accounts, flags;
  std::string partition;                // "" = (null)
  bool active = false;
};

// One row of sacct: a job (step empty) or one of its steps.
struct AccountingRecord {
  int64_t job_id = 0;                      // JobIDRaw
  // sacct -B / --env-vars (jobs only): unset when the caller may not see them;
  // "NONE" for a job without a batch script (salloc, srun).
  std::optional<std::string> batch_script;
  std::optional<std::vector<std::string>> environment;
  // sacct's Flags (jobs only): "SchedMain,StartRecieved" (Slurm's spelling)
  // once started, "StartRecieved" for a job that ended before it started.
  std::string flags;
  int64_t array_job_id = 0;                // 0 when not an array element
  std::optional<int64_t> array_task_id;
  std::vector<int64_t> array_pending_tasks;  // pending remainder of an array (compressed in JobID)
  int64_t array_max_running = 0;
  // The whole array in one record (every element cancelled before any
  // started): its JobID is the array's id alone, as Slurm 22.05's.
  bool whole_array = false;
  bool start_none = false;                 // Start prints "None" (a cancelled pending remainder)
  std::string step;                        // "" for the job; "batch", "extern", "0", "1", ...
  std::string job_name;                    // steps: "batch", "extern" or the step's name
  std::string partition, account, qos, user, group, cluster, reservation, wckey, comment, constraints;
  int64_t qos_id = 0;  // QOSRAW: the QOS's id (sacctmgr show qos format=id); 0: unknown
  int64_t uid = 0, gid = 0;
  std::string submit_line;  // SubmitLine: the command that submitted the job
  std::string layout;       // Layout (steps): "Unknown" for batch, an srun step's distribution ("Block")
  bool partition_time_limit = false;  // Timelimit "Partition_Limit": held, with no -t of its own
  std::string work_dir;
  std::string node_list;                   // "" prints as "None assigned"
  JobState state = JobState::kPending;
  std::optional<int64_t> cancelled_by_uid; // "CANCELLED by 0"
  std::string reason = "None";
  int exit_code = 0, exit_signal = 0;
  int derived_exit_code = 0, derived_exit_signal = 0;
  UnixTime submit = kNoTime, eligible = kNoTime, start = kNoTime, end = kNoTime;
  Seconds time_limit = kNotSet;            // job: kInfinite / seconds; steps: kNotSet (blank)
  Seconds suspended = 0;
  int64_t alloc_cpus = 0;                  // NCPUS / AllocCPUS
  int64_t req_cpus = 0;
  int64_t nnodes = 0;                      // allocated, or requested while pending
  int64_t ntasks = 0;                      // steps; 0 = blank
  int64_t priority = 0;
  TresMap req_tres, alloc_tres;
  int64_t req_mem_mb = 0;                  // ReqMem
  std::optional<UsageStats> usage;         // steps: what their tasks used (MaxRSS, AveCPU, ...); unset = blank
  double total_cpu_sec = 0, user_cpu_sec = 0, system_cpu_sec = 0;  // with fractions; a job's: its steps'
  bool has_cpu_usage = false;              // CPU usage known (a step with usage; a job with such a step)
  bool has_step_usage = false;             // a job: one of its steps was measured (sacct -X too)
};

// One pending job's priority factors (sprio). Weighted values are integers
// as sprio prints them; normalized ones are 0..1.
struct PriorityView {
  int64_t job_id = 0;
  std::string partition, user, account, qos;
  int64_t priority = 0;  // total
  int64_t site = 0, age = 0, assoc = 0, fairshare = 0, jobsize = 0, partition_factor = 0, qos_factor = 0;
  int64_t nice = 0;
  std::vector<std::pair<std::string, int64_t>> tres;  // weighted TRES factors: {"cpu", 2}, {"gres/gpu", 1250}
  double norm_priority = 0, norm_age = 0, norm_assoc = 0, norm_fairshare = 0, norm_jobsize = 0,
         norm_partition = 0, norm_qos = 0;
  std::vector<std::pair<std::string, double>> norm_tres;
};

// Configured priority weights (sprio -w, and which columns sprio shows).
struct PriorityWeights {
  int64_t age = 0, assoc = 0, fairshare = 0, jobsize = 0, partition = 0, qos = 0;
  std::string tres;  // as configured: "CPU=1000,GRES/gpu=5000"; "" = none
};

// One association row of sshare, in tree order (parents before children).
struct ShareView {
  int depth = 0;                // 0 for root; account names are indented by depth
  std::string account;
  std::string user;             // "" for an account row
  std::string cluster, partition;
  std::optional<int64_t> raw_shares;  // unset for root (blank)
  double norm_shares = 0;
  int64_t raw_usage = 0;
  std::optional<double> norm_usage;  // unset for root (blank)
  double effective_usage = 0;
  std::optional<double> fairshare;  // set for user rows
  std::optional<double> level_fs;   // unset = blank; infinity prints as "inf"
  std::string grp_tres_mins, grp_tres_raw, tres_run_mins;
};

}  // namespace drover::cli
