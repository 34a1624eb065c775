// What the controller tells a node agent to run: a batch script, or the tasks
// of one step that fall on this node. Plain data, filled by the RPC layer from
// the controller's message; serialised to the agent's spool so that a step
// daemon (and a restarted agent) can read it back.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.hpp"

namespace drover::agent {

// Slurm's step names: "123.batch", "123.0". kBatchStep marks the batch script.
inline constexpr int64_t kBatchStep = -2;

struct StepKey {
  uint64_t job_id = 0;
  int64_t step_id = kBatchStep;

  bool is_batch() const { return step_id == kBatchStep; }
  std::string str() const;  // "123.batch" / "123.0"
  auto operator<=>(const StepKey&) const = default;
};

struct ArrayInfo {
  uint64_t array_job_id = 0;  // SLURM_ARRAY_JOB_ID (%A)
  uint32_t task_id = 0;       // SLURM_ARRAY_TASK_ID (%a)
  uint32_t task_count = 0;
  uint32_t task_min = 0;
  uint32_t task_max = 0;
  uint32_t task_step = 1;
};

// --signal=[B:]SIG@SECS: deliver `signal` `seconds_before` the time limit.
struct WarnSignal {
  int signal = 0;
  int64_t seconds_before = 60;
  bool batch_shell_only = false;  // "B:" — only the batch shell, none of its children
};

// Facts of the whole allocation, identical on every node of the job.
struct JobInfo {
  uint64_t job_id = 0;
  std::string job_name;
  std::string user;  // SLURM_JOB_USER; the agent resolves uid/gid/groups from it
  uid_t uid = 0;     // must match the user's passwd entry
  gid_t gid = 0;     // the job's primary group (SLURM_JOB_GID)
  std::string account, partition, qos, reservation;
  std::string cluster_name;
  std::string working_cluster;  // SLURM_WORKING_CLUSTER
  std::string submit_dir;   // SLURM_SUBMIT_DIR; also the default working directory
  std::string submit_host;  // SLURM_SUBMIT_HOST
  std::vector<std::string> nodes;          // the allocation's nodes, expanded, in order
  std::vector<int> cpus_per_node;          // parallel to `nodes`
  std::vector<int> tasks_per_node;         // the job's task layout, parallel to `nodes`
  // -n as requested, or implied (--ntasks-per-node x nodes: the anchor's 2-node
  // job with --ntasks-per-node=1 has SLURM_NTASKS=2); SLURM_NTASKS only when set.
  std::optional<int> ntasks;
  std::optional<int> ntasks_per_node;      // --ntasks-per-node as requested
  std::optional<int> cpus_per_task;        // -c as requested
  std::optional<int64_t> mem_per_node_mb;  // --mem (or the partition default)
  std::optional<int64_t> mem_per_cpu_mb;   // --mem-per-cpu (or DefMemPerCPU)
  // GPU request options exactly as the user wrote them; each sets its
  // SLURM_* variable only when given (SLURM_GPUS, SLURM_GPUS_PER_NODE, ...).
  std::string gpus_opt, gpus_per_node_opt, gpus_per_task_opt, cpus_per_gpu_opt, mem_per_gpu_opt;
  std::string ntasks_per_gpu_opt;
  std::optional<ArrayInfo> array;
  int prio_process = 0;  // the submitter's nice value (SLURM_PRIO_PROCESS)
  int restart_count = 0;  // SLURM_RESTART_COUNT when > 0
  // The submitter's environment as captured at submit time ("K=V"), and its
  // --export value as written ("ALL", "NONE", "ALL,K=v", "K1,K2"). The agent
  // resolves the pair (see job_env.hpp); the controller stores both verbatim.
  std::vector<std::string> submit_env;
  std::string export_spec = "ALL";
  std::string conf_path;  // the cluster config (SLURM_CONF / DROVER_CONF)
};

// Which tasks of a step run on this node, and how the step is laid out.
struct StepLayout {
  std::vector<std::string> nodes;    // the step's nodes, expanded, in order
  std::vector<int> tasks_per_node;   // parallel to `nodes`
  int node_index = 0;                // this node's position in `nodes` (SLURM_NODEID for the step)
  std::vector<int> global_task_ids;  // ranks placed on this node (SLURM_GTIDS); ranks' local ids follow the order
  std::optional<int> cpus_per_task;  // the step's -c, when given
  std::string gpus_opt;              // the step's --gpus as written (recorded; Slurm 22.05 put no SLURM_GPUS in its tasks' environment)
  std::optional<int64_t> mem_per_cpu_mb;
  std::optional<int64_t> mem_per_node_mb;
  std::string launcher_host;         // srun's address (SLURM_SRUN_COMM_HOST, SLURM_LAUNCH_NODE_IPADDR)
  int launcher_port = 0;             // srun's port (SLURM_SRUN_COMM_PORT, SLURM_STEP_LAUNCHER_PORT)
  std::optional<mode_t> umask;       // srun's umask (SLURM_UMASK), applied to the tasks
  bool kill_on_bad_exit = false;     // srun -K: a task ending non-zero kills the step's other tasks here
  // With launcher_port set and no -o/-e/-i pattern, each task's stdout and
  // stderr (and stdin: every task's with stdin_all, else task stdin_task's) are TCP
  // connections to srun, each opened with the line "DROVERIO <io_key> <rank> <0|1|2>\n".
  std::string io_key;
  bool stdin_all = false;
  int stdin_task = 0;  // without stdin_all: the one task that gets srun's stdin (a number no task has: a file of that name)
  // srun --mpi as given ("pmix", "pmix_v4"; empty or "none": no MPI support):
  // with pmix the step daemon serves PMIx to the tasks (pmix_server.hpp).
  std::string mpi;
  // srun --pty: task 0 runs in a pseudo-terminal of this size, relayed by the
  // step daemon over task 0's stdin and stdout connections (stderr is the
  // same terminal), with window sizes from srun on a fourth connection
  // ("DROVERIO <io_key> 0 4", lines "ROWS COLS"); the other tasks' streams
  // are /dev/null, as Slurm's.
  bool pty = false;
  int pty_rows = 0;
  int pty_cols = 0;
  // srun --task-prolog / --task-epilog: run as the user before and after each
  // task, after slurm.conf's TaskProlog and before its TaskEpilog.
  std::string task_prolog;
  std::string task_epilog;
  // The step's effective --gpu-bind (common/task_layout.hpp); empty: every
  // task sees every GPU of the step on its node.
  std::string gpu_bind;
  // -m as given (empty: block): how the ranks were spread; shown as
  // SLURM_DISTRIBUTION when show_distribution.
  std::string distribution;
  bool show_distribution = false;
  bool in_allocation = false;  // srun ran inside an allocation it did not make (batch job, salloc)
};

// What this node gives the job or step: the enforcement inputs.
struct GpuDevice {
  int index = 0;            // node-global index (SLURM_JOB_GPUS)
  std::string device_file;  // "/dev/nvidia3"; empty when unknown (no device isolation then)
};

struct NodeAlloc {
  std::string node_name;        // SLURMD_NODENAME
  int cpus = 1;                 // CPUs allocated here (SLURM_CPUS_ON_NODE)
  std::vector<int> cpu_ids;     // OS CPU ids to confine to (empty: no confinement)
  int64_t mem_limit_mb = 0;     // memory limit on this node; 0: none
  std::vector<GpuDevice> gpus;  // GPUs allocated here
};

// Standard streams. Patterns follow sbatch's filename patterns (io_pattern.hpp).
struct IoSpec {
  std::string stdout_pattern;  // empty: "slurm-%j.out" (batch) / "slurm-%A_%a.out" (array)
  std::string stderr_pattern;  // empty: same file as stdout
  std::string stdin_path;      // empty: /dev/null
  bool append = false;         // --open-mode=append (default truncate)
};

struct LaunchRequest {
  JobInfo job;
  StepKey key;                  // key.job_id == job.job_id
  StepLayout layout;            // numeric steps only
  std::string script;           // batch: the script text (must start with "#!")
  std::vector<std::string> argv;  // numeric steps: the command of every task
  std::string multi_prog;       // srun --multi-prog: the file's text; argv[0] names it, argv[1..] are added
  std::string work_dir;         // --chdir; empty: job.submit_dir
  NodeAlloc alloc;
  IoSpec io;
  int64_t time_limit_s = 0;     // 0: unlimited; counted from `start_time`
  int64_t start_time = 0;       // unix seconds the limit runs from (the job's start); 0: now
  std::optional<WarnSignal> warn_signal;
  // slurm.conf's TaskProlog and TaskEpilog, as the agent read them: run as
  // the user around each task of every step (and the batch script).
  std::string task_prolog;
  std::string task_epilog;
};

// --- serialisation (spool records) ---
nlohmann::json to_json(const LaunchRequest& r);
Result<LaunchRequest> launch_request_from_json(const nlohmann::json& j);

// Checks that a request is complete and consistent (ids match, layouts have
// one entry per node, a batch request has a script starting with "#!", a step
// has a command). Errors name the field and the step ("123.0: ...").
Status validate(const LaunchRequest& r);

}  // namespace drover::agent
