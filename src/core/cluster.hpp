// The scheduling core's static picture of a cluster: nodes with their
// sockets, cores, memory and generic resources (typed GPUs with device
// indices and the cores they are close to), partitions, QOS, priority and
// scheduler settings. Built once per configuration (config::build_core_cluster)
// and shared, read-only, by every cycle. Pure data: no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/duration.hpp"
#include "common/tres.hpp"

namespace drover::core {

using Time = int64_t;       // seconds: Unix time in the controller, virtual time in the simulator
using JobId = int64_t;
using NodeIndex = int32_t;  // position in Cluster::nodes
inline constexpr Time kForever = INT64_MAX / 4;  // "no end"; saturating arithmetic stays below overflow
inline constexpr int64_t kNoLimit = -1;          // counts: no limit set

// One kind of generic resource on a node: gpu:h100 (8 devices), or a plain
// count such as bandwidth:lustre (no devices).
struct GresPool {
  std::string name;  // "gpu"
  std::string type;  // "h100"; "" when untyped
  int32_t count = 0;
  // Devices (gres.conf File=): the minor numbers of /dev/nvidiaN in order,
  // one per unit; empty for a plain count. close_cores[i] are the core ids
  // device i is close to (gres.conf Cores=); empty = close to every core.
  std::vector<int32_t> device_ids;
  std::vector<std::vector<int32_t>> close_cores;
  bool no_consume = false;
};

struct NodeSpec {
  std::string name;
  int32_t sockets = 1;
  int32_t cores_per_socket = 1;
  int32_t threads_per_core = 1;
  int32_t cpus = 1;  // CPUs as configured; cores() * threads_per_core when consistent
  int64_t mem_mb = 1;
  std::vector<GresPool> gres;
  std::vector<std::string> features;  // sorted, unique
  uint32_t weight = 1;
  int64_t tmp_disk_mb = 0;            // TmpDisk: what --tmp may ask of it
  std::vector<int32_t> partitions;    // indices into Cluster::partitions, ascending

  // Allocation is in whole cores (cons_tres CR_Core*): a job asking for one
  // CPU on a ThreadsPerCore=2 node is given one core, two CPUs.
  int32_t cores() const;
  int32_t gpus() const;  // devices of every pool named "gpu"
  bool has_feature(std::string_view f) const;
};

// Which running jobs a job may preempt, as Slurm's preempt/ plugins.
enum class PreemptType : uint8_t {
  kNone,           // preempt/none
  kQos,            // preempt/qos: a job's QOS lists (Preempt=) the QOS it may preempt
  kPartitionPrio,  // preempt/partition_prio: jobs of partitions of a lower PriorityTier
};

// How a preempted job ends. kCluster: not set here (a QOS's or a
// partition's), the cluster's applies. kSuspend and kGang are Slurm's modes
// that Drover does not build: a job they would preempt is not preempted
// (`drover config check` says so).
enum class PreemptMode : uint8_t { kCluster, kOff, kCancel, kRequeue, kSuspend, kGang };

// slurm.conf's global preemption settings.
struct PreemptPolicy {
  PreemptType type = PreemptType::kNone;
  PreemptMode mode = PreemptMode::kOff;
  Seconds exempt_time = 0;  // PreemptExemptTime: a job that has run less is not preempted
};

enum class PartitionState { kUp, kDown, kDrain, kInactive };

struct PartitionSpec {
  std::string name;
  std::vector<NodeIndex> nodes;  // configured order
  bool is_default = false;
  Seconds max_time = kInfinite;
  std::optional<Seconds> default_time;  // unset: MaxTime
  int64_t max_nodes = kNoLimit;
  int64_t min_nodes = 0;
  PartitionState state = PartitionState::kUp;
  uint32_t priority_tier = 1;
  PreemptMode preempt_mode = PreemptMode::kCluster;  // PreemptMode= (preempt/partition_prio)
  Seconds grace_time = 0;                            // GraceTime= (preempt/partition_prio)
  // OverTimeLimit (the partition's, else the cluster's): how long its jobs
  // run past their time limit before they end TIMEOUT; kInfinite: never.
  // The scheduler plans on the limit itself.
  Seconds over_time = 0;
  uint32_t priority_job_factor = 1;
  // TRESBillingWeights: TRES name -> weight per unit (per MB for mem);
  // empty: a job bills its CPUs.
  std::map<std::string, double> billing_weights;
  bool exclusive = false;               // OverSubscribe=EXCLUSIVE: every job takes whole nodes
  bool exclusive_user = false;
  std::string qos;                      // partition QOS ("" = none)
  std::vector<std::string> allow_qos;   // empty = all
  std::vector<std::string> deny_qos;
  std::vector<std::string> allow_accounts;  // empty = all
  std::vector<std::string> deny_accounts;
  // Who may run here (checked for jobs whose submitter is known,
  // JobSpec::identity_known): AllowGroups (empty = all; root always),
  // RootOnly, DisableRootJobs, and the hosts jobs may be submitted from
  // (AllocNodes, expanded; empty = all).
  std::vector<std::string> allow_groups;
  bool root_only = false;
  bool disable_root_jobs = false;
  std::vector<std::string> alloc_nodes;
  std::optional<int64_t> def_mem_per_cpu_mb, def_mem_per_gpu_mb, def_mem_per_node_mb;
  std::optional<int64_t> max_mem_per_cpu_mb, max_mem_per_node_mb;
  std::optional<int64_t> def_cpu_per_gpu;
  int64_t max_cpus_per_node = kNoLimit;
  TresMap total_tres;  // cpu, mem, node, gres/gpu[:type] over the partition's nodes (for TRES weights)
};

struct QosSpec {
  std::string name;
  int64_t priority = 0;
  TresMap grp_tres;             // cpu, mem, node, gres/gpu, gres/gpu:h100, license/x
  int64_t grp_jobs = kNoLimit;
  int64_t grp_submit_jobs = kNoLimit;
  TresMap max_tres_per_job;
  TresMap max_tres_per_node;
  TresMap max_tres_per_user;
  int64_t max_jobs_per_user = kNoLimit;
  int64_t max_submit_jobs_per_user = kNoLimit;
  Seconds max_wall = kInfinite;
  double usage_factor = 1.0;
  bool deny_on_limit = false;   // Flags=DenyOnLimit: a job over a per-job limit is refused at submit
  bool no_reserve = false;      // Flags=NoReserve: its jobs get no reservation in the backfill plan
  std::vector<std::string> preempt;                  // Preempt=: the QOS its jobs may preempt (preempt/qos)
  PreemptMode preempt_mode = PreemptMode::kCluster;  // PreemptMode= of its jobs (preempt/qos)
  std::optional<Seconds> preempt_exempt_time;        // PreemptExemptTime= of its jobs
  Seconds grace_time = 0;                            // GraceTime= of its jobs (preempt/qos)
};

// An association's limits (sacctmgr's, on an account or on a user in an
// account), enforced under AccountingStorageEnforce=limits. Group limits
// (Grp*) count every job at or below the association; the per-user ones
// (MaxJobs, MaxSubmitJobs, MaxTRES per job, MaxWall) apply to each user
// association, which takes the nearest one set on itself or an account
// above it.
struct AssocLimitSpec {
  std::string account, user;  // user "" for the account's own row
  int32_t parent = -1;        // the row above: a user's account, an account's parent; -1 at the top
  TresMap grp_tres;
  int64_t grp_jobs = kNoLimit;
  int64_t grp_submit_jobs = kNoLimit;
  int64_t max_jobs = kNoLimit;
  int64_t max_submit_jobs = kNoLimit;
  TresMap max_tres_per_job;
  Seconds max_wall = kInfinite;
  // The per-user limits in force for this row: each its own or the nearest
  // one set above it (MaxTRES per TRES). Filled by Cluster::set_assocs.
  struct InForce {
    int64_t max_jobs = kNoLimit;
    int64_t max_submit_jobs = kNoLimit;
    TresMap max_tres_per_job;
    Seconds max_wall = kInfinite;
  } in_force;
};

enum class PriorityKind { kBasic, kMultifactor };

struct PriorityParams {
  PriorityKind kind = PriorityKind::kBasic;
  uint32_t weight_age = 0, weight_fairshare = 0, weight_job_size = 0, weight_partition = 0,
           weight_qos = 0;
  std::map<std::string, double> weight_tres;  // canonical TRES name ("cpu", "gres/gpu") -> weight
  Seconds max_age = 7 * 86400;
  Seconds decay_half_life = 7 * 86400;
  bool favor_small = false;
  // PriorityFlags=NO_NORMAL_PART, _QOS, _TRES: the factor as it is (a
  // partition's PriorityJobFactor, a QOS's Priority, a TRES count), not
  // as a fraction of the largest (or of the partition's total).
  bool raw_partition = false, raw_qos = false, raw_tres = false;
  // PriorityFlags=SMALL_RELATIVE_TO_TIME: the job-size factor is the job's
  // share of the cluster's CPUs divided by its time limit in minutes.
  bool size_relative_to_time = false;
  // PriorityFlags=ACCRUE_ALWAYS: the age factor grows from submission.
  bool accrue_always = false;
  // PriorityFlags=INCR_ONLY: a pending job's priority never goes down (its
  // fair share may fall; the priority keeps the highest it had).
  bool incr_only = false;
  // PriorityFlags=MAX_TRES: a job's billing is the largest of its weighted
  // cpu, mem, node and gres plus the sum of its other weighted TRES.
  bool max_tres = false;
};

enum class QueuePolicy { kFcfs, kBackfill };  // sched/builtin, sched/backfill

struct SchedParams {
  QueuePolicy policy = QueuePolicy::kBackfill;
  Seconds bf_window = 1440 * 60;      // plans start no later than now + bf_window
  Seconds bf_resolution = 60;         // planned times are rounded up to this
  int64_t bf_max_job_test = kNoLimit; // jobs the backfill walk tests (kNoLimit: all)
  int64_t bf_reserve_depth = kNoLimit;// jobs that hold a reservation (1 = EASY, kNoLimit = conservative)
  Seconds bf_interval = 30;           // 0: a full pass at every event (Drover extension)
  int64_t default_queue_depth = 100;  // jobs the quick pass (on events) tests
  bool enforce_part_limits = false;   // EnforcePartLimits != NO: refuse at submit instead of pending
};

// Nodes alike in everything the scheduler looks at: cores, memory, gres
// pools, features, weight and partitions. Filled by Cluster::finalize().
struct NodeGroup {
  std::vector<NodeIndex> members;  // cluster order
};

struct Cluster {
  std::string name;
  std::vector<NodeSpec> nodes;
  std::vector<PartitionSpec> partitions;
  std::vector<QosSpec> qos;
  std::vector<AssocLimitSpec> assocs;  // empty unless association limits are enforced (set_assocs)
  PriorityParams priority;
  SchedParams sched;
  PreemptPolicy preempt;
  std::optional<int64_t> def_cpu_per_gpu;  // DefCpuPerGPU, when the partition sets none
  std::optional<int64_t> def_mem_per_cpu_mb, def_mem_per_gpu_mb, def_mem_per_node_mb;
  std::optional<int64_t> max_mem_per_cpu_mb, max_mem_per_node_mb;
  TresMap licenses;  // cluster-wide license counts (Licenses=fsbw:10)
  TresMap total_tres;  // whole cluster: cpu, mem, node, gres/gpu, gres/gpu:type
  std::vector<NodeGroup> groups;      // by first member
  std::vector<int32_t> group_of;      // per node

  // Lookups by name (linear in small tables, indexed for nodes).
  int32_t find_partition(std::string_view name) const;  // -1 when absent
  int32_t find_qos(std::string_view name) const;        // -1 when absent
  NodeIndex find_node(std::string_view name) const;     // -1 when absent
  int32_t default_partition() const;                    // -1 when none is Default=YES
  // The association of `user` in `account` (-1 when none has limits).
  int32_t find_assoc(std::string_view account, std::string_view user) const;
  // Installs association limits (parents given by index) and fills each
  // row's in_force limits.
  void set_assocs(std::vector<AssocLimitSpec> a);

  // Call after filling nodes/partitions: builds the name index, each node's
  // partition list, the node groups and the TRES totals.
  void finalize();

 private:
  std::map<std::string, NodeIndex, std::less<>> node_index_;
  std::map<std::pair<std::string, std::string>, int32_t, std::less<>> assoc_index_;
};

// "gpu" or "gpu:h100" as a TRES name.
std::string gres_tres_name(std::string_view name, std::string_view type);
// Adds a node's cpu, mem (MiB), node (1) and consumable gres/NAME[:TYPE] to `t`.
void add_node_tres(const NodeSpec& n, TresMap& t);

}  // namespace drover::core
