// Jobs as the core sees them: what a user asked for (JobSpec, before
// partition defaults are applied), what a running job holds (Allocation),
// and how a finished job ended (for dependencies).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/dependency.hpp"
#include "common/gres.hpp"
#include "common/tres.hpp"
#include "core/cluster.hpp"

namespace drover::core {

// kAfterCorr: each array element waits for the same element of the named
// array to complete successfully.
enum class DepKind { kAfter, kAfterAny, kAfterOk, kAfterNotOk, kAfterCorr, kSingleton };

struct DepItem {
  DepKind kind = DepKind::kAfterAny;
  JobId job = 0;            // unused for kSingleton
  int64_t array_task = -1;  // "123_4": only that element; -1: the job (every element of an array)
  Seconds delay = 0;        // after:ID+minutes, in seconds
};

struct Dependency {
  std::vector<DepItem> items;
  bool any = false;  // items joined by '?': one satisfied item is enough
  bool empty() const { return items.empty(); }
};

// From the parsed --dependency text (common/dependency.hpp): one item per
// job named; afterburstbuffer counts as afterany (Drover has no burst buffers).
Dependency dependency_from(const DependencySpec& spec);

enum class Hold { kNone, kUser, kAdmin };

// A GPU count with an optional type: --gpus=h100:4, --gpus-per-node=2.
struct GpuReq {
  std::string type;
  int32_t count = 0;  // 0 = not requested
  bool operator==(const GpuReq&) const = default;
};

// What the user asked for. Zero / negative / empty means "not asked"; the
// core fills partition and cluster defaults (core/request.hpp).
struct JobSpec {
  JobId id = 0;
  uint64_t revision = 0;       // the caller bumps it whenever it changes the spec (the core caches by it)
  JobId array_job_id = 0;      // 0: not an array element
  int32_t array_task_id = -1;
  int32_t array_max_running = 0;  // --array=...%N; 0 = no throttle
  std::string name;
  std::string user;
  uint32_t uid = 0;
  // The controller's jobs: who submitted, from where, and the user's groups,
  // which partitions' AllowGroups, RootOnly, DisableRootJobs and AllocNodes
  // check. Unknown in the simulator (its traces' users have no uids).
  bool identity_known = false;
  std::vector<std::string> groups;
  std::string alloc_node;
  std::string account;
  std::string qos;                      // "" = the partition's or "normal"
  std::vector<std::string> partitions;  // "" = the default partition; first that can run it
  Time submit_time = 0;
  Time begin_time = 0;                  // --begin; 0 = now
  Time eligible_time = 0;               // when its dependency was met (the caller records it); 0 = not yet

  int32_t min_nodes = 0, max_nodes = 0;  // -N min[-max]; 0 = not asked
  int32_t ntasks = 0;                    // -n
  int32_t ntasks_per_node = 0;
  int32_t cpus_per_task = 0;             // -c; 0 = 1
  int32_t min_cpus_per_node = 0;         // --mincpus
  int64_t min_tmp_disk_mb = 0;           // --tmp: nodes with at least this TmpDisk
  int32_t sockets_per_node = 0;          // -B S:C:T: nodes with at least these; 0 = not asked
  int32_t cores_per_socket = 0;
  int32_t threads_per_core = 0;
  int32_t ntasks_per_socket = 0;         // at most this many tasks per socket / core; 0 = not asked
  int32_t ntasks_per_core = 0;
  bool spread_job = false;               // --spread-job: as many nodes as hold a task now, tasks evenly
  int64_t mem_per_node_mb = -1;          // --mem; 0 = all the node's memory; -1 = not asked
  int64_t mem_per_cpu_mb = -1;
  int64_t mem_per_gpu_mb = -1;
  std::vector<GresSpec> gres;            // --gres, per node (gpu:h100:8)
  GpuReq gpus;                           // --gpus, per job
  GpuReq gpus_per_node;
  GpuReq gpus_per_task;
  int32_t cpus_per_gpu = 0;
  TresMap licenses;                      // -L fsbw:2 -> {"license/fsbw": 2}

  std::string constraint;                // -C expression
  std::string prefer;                    // --prefer expression: tried first, in place of -C
  std::string nodelist;                  // -w hostlist
  std::string exclude;                   // -x hostlist
  bool exclusive = false;                // --exclusive
  bool exclusive_user = false;           // --exclusive=user: shares nodes with this user's jobs only

  Seconds time_limit = -1;               // -t; -1 = partition default; kInfinite = UNLIMITED
  Hold hold = Hold::kNone;
  int32_t nice = 0;
  std::optional<int64_t> admin_priority; // scontrol update Priority=
  int64_t priority_floor = 0;            // PriorityFlags=INCR_ONLY: the highest priority it had (0: none)
  Dependency dependency;
};

// Resources a job holds on one node.
struct GresTake {
  int32_t pool = 0;                 // index into NodeSpec::gres
  int32_t count = 0;
  std::vector<int32_t> devices;     // indices into the pool's device_ids (empty for plain counts)
  bool operator==(const GresTake&) const = default;
};

struct NodeTake {
  NodeIndex node = 0;
  std::vector<int32_t> cores;       // core ids, ascending (socket-major: socket s holds s*cores_per_socket ...)
  int32_t cpus = 0;                 // cores * threads_per_core (what SLURM_CPUS_ON_NODE says)
  int64_t mem_mb = 0;
  std::vector<GresTake> gres;
  int32_t tasks = 0;                // tasks placed on this node
  bool operator==(const NodeTake&) const = default;
};

struct Allocation {
  std::vector<NodeTake> nodes;      // in the cluster's node order
  bool exclusive = false;           // whole nodes: nothing else may share them
  int32_t total_cpus() const;
  int64_t total_gpus(const Cluster& c) const;
  TresMap tres(const Cluster& c) const;  // cpu, mem, node, gres/gpu, gres/gpu:type
  bool operator==(const Allocation&) const = default;
};

// A job holding resources now (running, or completing: still on its nodes).
struct RunningJob {
  const JobSpec* spec = nullptr;  // the request it was started from (user, qos, array, name ...)
  int32_t partition = 0;
  int32_t qos = -1;               // index into Cluster::qos; -1 = none
  Time start = 0;
  Time end = kForever;            // start + time limit (kForever: no limit); the plan assumes it ends then
  Allocation alloc;
  // The caller's promise, for a cheaper cycle: a nonzero stamp names this
  // record unchanged (spec, partition, qos, end, alloc) since an earlier
  // cycle of the same Scheduler that was given the same stamp; a record
  // that changes gets a new one. The cycle then keeps what such jobs hold
  // from one cycle to the next and only counts what changed. 0: no
  // promise (the cycle counts every running job afresh, as when any
  // record has 0). The decisions are the same either way.
  uint64_t stamp = 0;
  bool operator==(const RunningJob&) const = default;  // the spec by address
};

// How a job that left the queue ended, for dependencies.
enum class JobProgress { kUnknown, kPending, kRunning, kCompletedOk, kFailed, kCancelled };

struct JobOutcome {
  JobProgress progress = JobProgress::kUnknown;
  Time start = 0;  // for after:ID+delay (a job cancelled before it started: its cancel)
};

}  // namespace drover::core
