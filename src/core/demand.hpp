// Internal: a JobSpec resolved against one partition into what each node
// must give (Demand), with the partition's and the cluster's defaults
// applied. Shared by the submit check, the summaries and the cycle.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "core/cluster.hpp"
#include "core/constraint.hpp"
#include "core/job.hpp"
#include "core/reason.hpp"

namespace drover::core {

// TRES amounts as a sorted flat list: what the cycle keeps per job (a map
// costs several times the memory for the five or six names a job has).
class TresList {
 public:
  using value_type = std::pair<std::string, int64_t>;
  using const_iterator = std::vector<value_type>::const_iterator;
  TresList() = default;
  explicit TresList(const TresMap& m) : v_(m.begin(), m.end()) {}
  // From unsorted items; a name given twice is summed.
  explicit TresList(std::vector<value_type> items);
  const_iterator begin() const { return v_.begin(); }
  const_iterator end() const { return v_.end(); }
  const_iterator find(std::string_view name) const {
    auto it = std::lower_bound(v_.begin(), v_.end(), name,
                               [](const value_type& e, std::string_view n) { return e.first < n; });
    return it != v_.end() && it->first == name ? it : v_.end();
  }
  int64_t get(std::string_view name) const {
    auto it = find(name);
    return it == end() ? 0 : it->second;
  }

 private:
  std::vector<value_type> v_;
};

enum class MemMode : uint8_t { kPerNode, kPerCpu, kPerGpu, kWholeNode };

struct GresNeed {
  std::string name;  // "gpu"
  std::string type;  // "" = any type
  int32_t count = 0; // per node
  bool operator==(const GresNeed&) const = default;
};

struct Demand {
  int32_t partition = 0;
  int32_t qos = -1;
  int32_t assoc = -1;  // the job's user association with limits (Cluster::assocs), or -1
  Seconds time_limit = kInfinite;
  int32_t min_nodes = 1, max_nodes = 1;
  int32_t tasks = 1;
  int32_t tasks_per_node = 0;  // > 0: every node runs this many (the last may run fewer); 0: spread freely
  int32_t cpus_per_task = 1;
  int32_t min_cpus_per_node = 0;
  int64_t min_tmp_disk_mb = 0;  // --tmp: a node filter, like the features
  int32_t sockets = 0, cores_per_socket = 0, threads_per_core = 0;  // -B: node filters too (0: any)
  int32_t tasks_per_socket = 0, tasks_per_core = 0;  // caps on a node's tasks (0: none)
  MemMode mem_mode = MemMode::kPerNode;
  int64_t mem_mb = 0;
  std::vector<GresNeed> gres;  // per node
  GpuReq gpus_per_task;
  int32_t cpus_per_gpu = 0;
  bool whole_node = false;
  // -N min-max with -n: started on as many nodes as hold a task now, up to
  // the range's top (sbatch(1): "as many nodes as possible within the range
  // specified and without delaying the initiation of the job"); planned
  // ahead on as few as hold it.
  bool widest = false;
  // -N min-max without -n: planned on min nodes, one task each, and started
  // with as many more free nodes as the range's top allows, one task on each
  // (Slurm 22.05 ran `-N 2-3` on three idle nodes, NumTasks=3). 0: no range.
  int32_t grow_to = 0;
  bool even = false;  // --spread-job: the tasks dealt evenly over those nodes (else the first take the rest)
  // -N k -n m with neither --ntasks-per-node nor whole nodes: planned as an
  // even shape (tasks_per_node), started with the first nodes as full as
  // they hold and one task on each of the rest, as Slurm 22.05 lays it out
  // (-N2 -n4 ran 3,1; -N3 -n6 4,1,1).
  bool pack = false;
  // --gpus=N over several nodes (gres[gpus_index] holds N / nodes, rounded
  // up, on each): planned evenly, started with the first nodes as full as
  // they hold and one GPU on each of the rest, as Slurm 22.05 laid it out
  // (--gpus=4 -N2 ran 3,1; --gpus=10 on 8-GPU nodes 8,2). 0: not asked.
  int32_t gpus_total = 0;
  int32_t gpus_index = -1;
  std::vector<Constraint> alternatives;  // at least one: --prefer's (the first `preferred`), then -C's
  int32_t preferred = 0;
  std::vector<NodeIndex> required;  // -w, ascending
  std::vector<NodeIndex> excluded;  // -x, ascending
  TresMap licenses;

  // Every node holds the same share: a fixed number of nodes, each with
  // tasks_per_node tasks (single-node jobs included).
  bool fixed_shape() const { return tasks_per_node > 0; }

  // Every field compared: the scheduler shares what a demand comes to
  // between the jobs whose demands are equal.
  bool operator==(const Demand&) const = default;
};

// What each node must give for `tasks` tasks placed on it. Units: cores
// (whole cores, as cons_tres allocates), MB, units of each gres pool of
// this node. `fits` is false when the node can never give it.
struct NodeNeed {
  int32_t cores = 0;
  int32_t cpus = 0;   // cores * threads
  int64_t mem_mb = 0;
  std::vector<int32_t> pool;  // per NodeSpec::gres pool
  int32_t gpus = 0;
  bool fits = true;
};

NodeNeed need_on(const Demand& d, const NodeSpec& node, int32_t tasks_on_node);

// The demand with `gpus` in place of its --gpus share per node (Demand::gpus_index).
Demand with_gpus_per_node(const Demand& d, int32_t gpus);

// Does the node's configuration give what --tmp and -B ask (at least that
// TmpDisk, sockets, cores per socket, threads per core)? Alike for a group.
bool node_config_fits(const Demand& d, const NodeSpec& node);

// Does the node's configuration satisfy the job's non-capacity filters:
// partition, feature alternative `alt`, -w/-x, --tmp, -B?
bool node_eligible(const Demand& d, const Cluster& c, NodeIndex n, size_t alt);

// Why a request was refused while resolving it. `details` and `error` are
// Slurm's words; `drover_line` is Drover's.
struct Refusal {
  std::vector<std::string> details;
  std::string error;
  std::string drover_line;
};

// A job that names a QOS no qos.conf/sacctmgr line defines: Slurm's "Invalid qos specification".
std::optional<Refusal> unknown_qos(const Cluster& c, const JobSpec& job);

// The nodes a host-list option names (-w, -x), or Slurm's "Invalid node name specified" with which
// name no node has. Empty for an empty expression.
Result<std::vector<NodeIndex>, Refusal> resolve_nodes(const Cluster& c, const std::string& expr, const char* option);

// Resolve for one partition. A refusal is a request no configuration of
// this partition can satisfy as written (unknown QOS, bad constraint
// syntax, node names); capacity is checked separately (check_capacity).
Result<Demand, Refusal> resolve_demand(const Cluster& c, const JobSpec& job, int32_t partition);

// Can some set of the partition's nodes, as configured (ignoring what runs
// and node states), ever hold the job? Returns the refusal if not.
std::optional<Refusal> check_capacity(const Cluster& c, const Demand& d);

// Limits that leave a job pending (Slurm accepts it) rather than refusing
// it: partition time and node limits, QOS MaxWall and per-job TRES limits.
// kNone when none applies. It depends on the demand alone.
Reason static_limit_reason(const Cluster& c, const Demand& d);

struct PriorityBreakdown;
class FairShareFactors;
// A job's requested amount of a TRES by name (0 when none).
class TresLookup {
 public:
  virtual ~TresLookup() = default;
  virtual int64_t get(std::string_view name) const = 0;
};
// Priority with the demand already resolved (see priority.hpp).
PriorityBreakdown priority_for(const Cluster& c, const JobSpec& job, int32_t partition, const Demand* d,
                               const TresLookup& tres, const FairShareFactors* fs, Time now, Time eligible);

// The weighted factors that stay the same while a job waits with the same
// request in the same partition (job size, partition, QOS, TRES): a cycle
// keeps their sum per job and only adds age and fair share.
struct PriorityTerms {
  double job_size = 0, partition = 0, qos = 0;
  double job_size_factor = 0, partition_factor = 0, qos_factor = 0;
  std::vector<std::pair<const std::string*, double>> tres;  // PriorityWeightTRES names (in Cluster), weighted
  double fixed = 0;  // job_size + partition + qos + each of tres, in that order
};
PriorityTerms priority_terms(const Cluster& c, int32_t partition, const Demand* d, const TresLookup& tres);
// The total priority from the terms' `fixed` sum; the same number priority_for gives.
int64_t priority_total(const Cluster& c, const JobSpec& job, double fixed, const FairShareFactors* fs, Time now,
                       Time eligible);

// The TRES one job asks for in total (cpu, mem, node, gres/gpu[:type],
// license/*), counting tasks_per_node tasks per node.
// What the job holds (--exclusive: its whole nodes) or, as_requested,
// what it asked for: Slurm's ReqTRES and NumCPUs of a pending job.
TresMap demand_tres(const Cluster& c, const Demand& d, bool as_requested = false);
// The GPUs the job asks for, over all its nodes.
int64_t demand_gpus(const Demand& d);
// The CPUs the job asks for (tasks x -c, --mincpus, --cpus-per-gpu), before
// --exclusive widens them to whole nodes: what Slurm shows for a pending
// job (NumCPUs, squeue %C) and counts in its job size priority.
int64_t requested_cpus(const Demand& d);

// A job's billing TRES from its TRES counts (cpu, mem in MB, node, gres/...,
// license/...) under its partition's TRESBillingWeights (none: its CPUs),
// as a fractional figure (fair-share usage) and as the whole count shown
// as billing= (billing_count).
double billing_units(const Cluster& c, const PartitionSpec& part, const TresMap& tres);
int64_t billing_count(double units);

}  // namespace drover::core
