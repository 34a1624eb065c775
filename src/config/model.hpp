// The configuration as the admin wrote it: slurm.conf (with Include),
// gres.conf and qos.conf, each value already parsed and defaulted, each
// entity remembering where it was defined. Loading never throws and never
// stops at the first problem: diagnostics collect everything found.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.hpp"
#include "common/duration.hpp"
#include "common/gres.hpp"
#include "common/result.hpp"
#include "common/tres.hpp"

namespace drover::config {

inline constexpr int64_t kUnlimited = -1;  // for counts: no limit set

// Where each key of an entity was written, keyed by canonical key name
// ("Gres", "RealMemory"); used to point diagnostics at the exact column.
// The location is that of the key's first character (the value starts after
// "Key="). Keys inherited from a NodeName=DEFAULT / PartitionName=DEFAULT line
// point at that DEFAULT line.
using KeyLocs = std::map<std::string, SourceLoc>;

struct NodeConfig {
  std::string name;      // one node, after expanding NodeName=gpu[01-32]
  std::string hostname;  // NodeHostname (default: name)
  std::string addr;      // NodeAddr (default: hostname)
  int port = 0;          // Port (0: SlurmdPort)
  int cpus = 1;          // CPUs (default: boards*sockets*cores*threads)
  int boards = 1;
  int sockets = 1;
  int cores_per_socket = 1;
  int threads_per_core = 1;
  int64_t real_memory_mb = 1;  // RealMemory (Slurm's default is 1)
  int64_t tmp_disk_mb = 0;
  std::vector<GresSpec> gres;          // Gres=gpu:h100:8
  std::vector<std::string> features;   // Feature= / Features=
  // scontrol update NodeName= ActiveFeatures=: the ones jobs' constraints
  // match (unset: all of features).
  std::optional<std::vector<std::string>> active_features;
  uint32_t weight = 1;
  std::string state = "UNKNOWN";       // State= as written (upper-cased)
  std::string reason;                  // Reason=
  std::optional<int64_t> mem_spec_limit_mb;  // MemSpecLimit
  int core_spec_count = 0;             // CoreSpecCount
  SourceLoc loc;                       // the NodeName= line
  KeyLocs key_locs;
};

// NodeSet=NAME with Nodes=hostlist and/or Feature=FEAT: a name a partition's
// Nodes= may use for those nodes (and for every node with that feature).
struct NodeSetConfig {
  std::string name;
  std::string nodes_expr;  // Nodes= as written
  std::string feature;     // Feature=
  SourceLoc loc;
};

struct PartitionConfig {
  std::string name;
  std::string nodes_expr;           // Nodes= as written ("ALL" allowed)
  std::vector<std::string> nodes;   // expanded, in order
  bool is_default = false;          // Default=YES
  Seconds max_time = kInfinite;     // MaxTime
  std::optional<Seconds> default_time;  // DefaultTime (unset: MaxTime applies)
  int64_t max_nodes = kUnlimited;   // MaxNodes
  int64_t min_nodes = 0;            // MinNodes
  std::string state = "UP";         // UP | DOWN | DRAIN | INACTIVE
  uint32_t priority_tier = 1;
  uint32_t priority_job_factor = 1;
  std::string preempt_mode;         // PreemptMode= as written (upper case); "": the cluster's
  Seconds grace_time = 0;           // GraceTime= (seconds) a preempted job of it gets
  std::optional<int64_t> over_time_limit;  // OverTimeLimit= minutes (kUnlimited); unset: the cluster's
  std::string oversubscribe = "NO"; // NO | YES[:N] | FORCE[:N] | EXCLUSIVE
  std::string qos;                  // QOS= (partition QOS)
  std::vector<std::string> allow_qos;       // empty: ALL
  std::vector<std::string> deny_qos;
  std::vector<std::string> allow_accounts;  // empty: ALL
  std::vector<std::string> deny_accounts;
  bool root_only = false;           // RootOnly=YES: only root's jobs
  bool disable_root_jobs = false;   // DisableRootJobs=YES: no job of root
  std::string alloc_nodes;          // AllocNodes= hostlist expression as written; "": ALL
  bool exclusive_user = false;
  std::optional<int64_t> def_mem_per_cpu_mb;
  std::optional<int64_t> def_mem_per_gpu_mb;
  std::optional<int64_t> max_mem_per_node_mb;
  std::optional<int64_t> max_mem_per_cpu_mb;   // MaxMemPerCPU
  std::optional<int64_t> def_mem_per_node_mb;  // DefMemPerNode
  std::optional<int64_t> def_cpu_per_gpu;      // DefCpuPerGPU
  int64_t max_cpus_per_node = kUnlimited;      // MaxCPUsPerNode
  std::vector<std::string> allow_groups;       // empty: ALL
  bool hidden = false;                         // Hidden
  std::string tres_billing_weights;            // TRESBillingWeights as written
  // TRESBillingWeights parsed: canonical TRES name -> weight per unit (per MB for mem).
  std::map<std::string, double> tres_billing;
  SourceLoc loc;
  KeyLocs key_locs;
};

// One gres.conf line, expanded to the nodes it names (or all nodes when
// NodeName is absent).
struct GresLine {
  std::string node_expr;              // NodeName= as written (empty: every node)
  std::vector<std::string> nodes;     // expanded
  std::string name;                   // Name=gpu
  std::string type;                   // Type=h100
  std::vector<std::string> files;     // File=/dev/nvidia[0-7], expanded
  std::optional<int64_t> count;       // Count=
  std::string cores_expr;             // Cores=0-63 as written
  std::vector<int> cores;             // expanded core ids
  std::string links;                  // Links=
  std::string flags;                  // Flags=
  std::string autodetect;             // AutoDetect= on this line (lower-case)
  // A line with AutoDetect= and no Name= only sets AutoDetect for its nodes
  // (gres.conf allows that): `name` is then empty and the line describes no
  // devices (skip it when counting devices).
  SourceLoc loc;
  KeyLocs key_locs;

  // Devices this line gives each of its nodes: File count, else Count, else 1.
  int64_t device_count() const;
};

struct QosConfig {
  std::string name;
  int64_t priority = 0;
  TresMap grp_tres;
  int64_t grp_jobs = kUnlimited;
  int64_t grp_submit_jobs = kUnlimited;
  TresMap max_tres_per_job;
  TresMap max_tres_per_node;
  TresMap max_tres_per_user;
  int64_t max_jobs_per_user = kUnlimited;
  int64_t max_submit_jobs_per_user = kUnlimited;
  Seconds max_wall = kInfinite;     // MaxWall / MaxTime
  double usage_factor = 1.0;
  std::vector<std::string> flags;   // as written, e.g. DenyOnLimit, NoReserve
  bool deny_on_limit = false;
  bool no_reserve = false;
  std::string description;
  std::vector<std::string> preempt;       // Preempt=: QOS names its jobs may preempt
  std::string preempt_mode;               // PreemptMode= (upper case); "": the cluster's
  std::optional<Seconds> preempt_exempt_time;
  Seconds grace_time = 0;                 // GraceTime= (seconds) a preempted job of it gets
  SourceLoc loc;
  KeyLocs key_locs;
};

// SchedulerParameters, Slurm's bf_* keys with Slurm's defaults except where
// Drover documents its own (bf_max_job_test: unlimited; bf_reserve_depth).
struct SchedulerParams {
  Seconds bf_interval = 30;
  int64_t bf_max_job_test = kUnlimited;  // Slurm's default is 500
  Seconds bf_resolution = 60;
  int64_t bf_window_minutes = 1440;
  int64_t bf_reserve_depth = kUnlimited; // Drover extension: 1 = EASY, unlimited = conservative
  bool bf_continue = false;
  bool enable_user_top = false;          // scontrol top by a job's owner
  bool nohold_on_prolog_fail = false;    // a failed Prolog requeues the job without a hold
  int64_t bf_max_job_user = 0;           // 0: no per-user cap
  int64_t bf_max_job_part = 0;
  int64_t bf_max_time = -1;              // -1: bf_interval
  int64_t default_queue_depth = 100;
  int64_t sched_interval = 60;
  int64_t max_script_size = 4194304;     // bytes of a batch script (Slurm's default, 4 MiB)
  std::map<std::string, std::string> raw;  // every key as written (lower-case name -> value)
};

struct ClusterConfig {
  // --- slurm.conf globals ---
  std::string cluster_name;
  std::vector<std::string> slurmctld_hosts;  // SlurmctldHost (may repeat), "name(addr)" kept as written
  int slurmctld_port = 6817;
  int slurmd_port = 6818;
  std::string state_save_location = "/var/spool/drover";
  std::string slurmd_spool_dir = "/var/spool/drover/d";
  std::string slurm_user = "root";
  std::string auth_type = "auth/drover";
  std::string select_type = "select/cons_tres";
  std::string select_type_parameters = "CR_Core_Memory";
  std::string scheduler_type = "sched/backfill";
  SchedulerParams sched;
  std::string preempt_type = "preempt/none";
  std::string preempt_mode = "OFF";       // as written, upper case: OFF, CANCEL, REQUEUE, SUSPEND[,GANG], GANG
  Seconds preempt_exempt_time = 0;
  std::string priority_type = "priority/basic";
  uint32_t priority_weight_age = 0;
  uint32_t priority_weight_fairshare = 0;
  uint32_t priority_weight_job_size = 0;
  uint32_t priority_weight_partition = 0;
  uint32_t priority_weight_qos = 0;
  std::map<std::string, double> priority_weight_tres;  // canonical TRES name -> weight
  Seconds priority_decay_half_life = 7 * 86400;
  Seconds priority_max_age = 7 * 86400;
  bool priority_favor_small = false;
  // PriorityFlags as written (upper case): the NO_NORMAL_* ones act
  // (config/core_cluster.cpp); `config check` names those not built.
  std::vector<std::string> priority_flags;
  std::vector<std::string> gres_types;
  std::vector<std::string> accounting_storage_tres;
  std::string enforce_part_limits = "NO";  // NO | ANY | ALL | YES
  int64_t max_job_count = 10000;
  int64_t max_array_size = 1001;
  int64_t max_step_count = 40000;     // MaxStepCount: steps one job may create
  int64_t max_tasks_per_node = 512;   // MaxTasksPerNode: tasks of one step on a node
  int64_t over_time_limit = 0;        // OverTimeLimit: minutes a job may run past its time limit (kUnlimited)
  Seconds min_job_age = 300;
  Seconds kill_wait = 30;
  Seconds message_timeout = 10;  // the commands' window for reaching the controller
  std::map<std::string, int64_t> licenses;  // Licenses=fsbw:20,matlab*2,lic: name -> count (1 when omitted)
  std::optional<int64_t> def_cpu_per_gpu;  // DefCpuPerGPU
  std::optional<int64_t> def_mem_per_cpu_mb;
  std::optional<int64_t> def_mem_per_gpu_mb;
  std::optional<int64_t> max_mem_per_cpu_mb;
  std::optional<int64_t> def_mem_per_node_mb;
  std::optional<int64_t> max_mem_per_node_mb;

  // --- entities ---
  std::vector<NodeConfig> nodes;
  std::vector<PartitionConfig> partitions;
  std::vector<NodeSetConfig> node_sets;
  std::vector<GresLine> gres_lines;
  std::string gres_autodetect;  // gres.conf global AutoDetect=
  std::vector<QosConfig> qos;

  // --- provenance ---
  std::string slurm_conf_path;
  std::string gres_conf_path;  // empty: none found
  std::string qos_conf_path;   // empty: none found
  std::vector<std::string> files_read;
  // Every slurm.conf global key as written: canonical name -> (value, where).
  std::map<std::string, std::pair<std::string, SourceLoc>> globals_written;
  // Keys Drover accepts without a table entry of its own (SlurmdTimeout,
  // AuthInfo, SlurmdParameters, ...), as written: canonical name -> value
  // (the last one given). The daemons read the few they act on from here.
  std::map<std::string, std::string> passive_values;
  std::map<std::string, SourceLoc> passive_locs;  // where each was written (the last time)
  Diagnostics diags;

  const NodeConfig* find_node(std::string_view name) const;
  // A passive key's value as written (`passive_values`), or nullptr.
  const std::string* passive(const std::string& key) const;
  // Where a passive key was written (its file and line), else slurm.conf alone.
  SourceLoc passive_loc(const std::string& key) const;
  // The same without its surrounding blanks; "" when it is not written (a
  // program the daemons run: Prolog=, TaskProlog=, HealthCheckProgram=).
  std::string passive_text(const std::string& key) const;
  // The value of `item=` in a passive key's comma list
  // (AuthInfo=key=/etc/drover/drover.key,ttl=60), or nullopt.
  std::optional<std::string> passive_item(const std::string& key, std::string_view item) const;
  // AuthInfo's key= file, else /etc/drover/drover.key.
  std::string auth_key_path() const;
  // AuthInfo's socket=: the host's local signer (rpc/local_signer.hpp),
  // else /run/drover/auth.sock.
  std::string auth_socket_path() const;
  // The first SlurmctldHost's address ("name(addr)": addr), else "localhost".
  std::string controller_host() const;
  // The port node `n`'s agent listens on: its Port=, else SlurmdPort.
  int node_port(const NodeConfig& n) const { return n.port ? n.port : slurmd_port; }
  const PartitionConfig* find_partition(std::string_view name) const;
  const QosConfig* find_qos(std::string_view name) const;
  const PartitionConfig* default_partition() const;  // first Default=YES, else nullptr
};


struct LoadOptions {
  std::string slurm_conf;  // required
  // Empty: look for gres.conf / qos.conf beside slurm.conf; absent files are fine.
  std::string gres_conf;
  std::string qos_conf;
  // What a command reads (ParseOptions::globals_only): the global options
  // that say where the controller is (command_keys()); no nodes,
  // partitions, gres.conf or qos.conf.
  bool globals_only = false;
};

inline constexpr const char* kDefaultConfigPath = "/etc/drover/slurm.conf";

// The slurm.conf every command and daemon reads: --config PATH when given
// (non-empty), else $DROVER_CONF when set and non-empty, else $SLURM_CONF
// when set and non-empty (what tools that drive Slurm's commands pass, such
// as Open OnDemand), else kDefaultConfigPath.
std::string resolve_config_path(std::string_view flag_value);
// The same with the environment values passed in (nullptr: unset).
std::string resolve_config_path(std::string_view flag_value, const char* drover_conf,
                                const char* slurm_conf = nullptr);

// Errors only when slurm.conf itself cannot be read; everything else is a
// diagnostic in ClusterConfig::diags (unknown key = warning with the nearest
// known key; bad value = error with file:line:column, key, value, expectation).
Result<ClusterConfig> load_config(const LoadOptions& opts);

}  // namespace drover::config
