// A job as the controller keeps it: the durable record (the store's payload,
// v1::JobRecord), the core's view of it (core::JobSpec, rebuilt whenever the
// record changes) and, while it holds resources, its allocation in core
// terms. Conversions between the three live here.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/job.hpp"
#include "ctld/core_bridge.hpp"
#include "drover/v1/jobs.pb.h"
#include "drover/v1/steps.pb.h"

namespace drover::ctld {

struct Job {
  v1::JobRecord rec;
  core::JobSpec spec;
  core::Allocation alloc;  // running or completing: what it holds
  // ---- not durable: this controller process's view ----
  int64_t planned_start = 0;     // pending: the cycle's planned start
  std::string sched_nodes;       // pending: planned nodes
  bool never = false;            // pending: can never run as configured
  bool launch_sent = false;      // a Launch RPC was sent in this process's life
  bool terminate_sent = false;
  bool awaiting_node = false;    // recovered while running: the node has not reported it yet
  // PrologFlags=Alloc: the nodes whose Prolog has not answered yet; the
  // batch script is launched once none is left.
  std::set<core::NodeIndex> prologs_pending;
  // Running: the record the last scheduling cycle was given, and its
  // RunningJob::stamp; a record that differs in anything (or a spec at
  // another revision) gets a new stamp.
  mutable core::RunningJob counted;
  mutable uint64_t counted_revision = 0;
  mutable uint64_t run_stamp = 0;
  // Pending: the nodes it would start on were the cluster idle
  // (CoreBridge::nodes_when_idle), for the spec at idle_nodes_revision.
  mutable int32_t idle_nodes = 0;
  mutable uint64_t idle_nodes_revision = 0;
  unsigned time_mails_sent = 0;  // TIME_LIMIT* mails of this run (mail.hpp bits)
};

bool is_final(v1::JobState s);
bool is_pending(const Job& j);
// Started and not ended: RUNNING, or SUSPENDED by scontrol suspend.
bool is_started(const v1::JobRecord& r);
// Seconds it has run by `now` (or ran, once final), its suspensions left out.
int64_t run_seconds(const v1::JobRecord& r, int64_t now);
// The time limit the batch host enforces, in seconds from the start (0:
// none): the job's limit plus the time it spent suspended.
int64_t agent_time_limit(const v1::JobRecord& r);
// That limit with OverTimeLimit's seconds added (`over_s` < 0: UNLIMITED,
// so none).
int64_t with_over_time(int64_t limit, int64_t over_s);
// An srun step's time limit on its nodes, in seconds from the step's start
// (0: none of its own): its -t plus the time the job was suspended while it
// ran, and never past the job's own end (`job_limit`, as the batch host
// enforces it; 0: none).
int64_t step_time_limit(const v1::JobRecord& r, const v1::StepInfo& s, int64_t job_limit);
// A suspension ends (resume, or the job ends while suspended): its length,
// which is added to the record's suspended_s.
int64_t close_suspension(v1::JobRecord& r, int64_t now);
// A new run starts unpaused.
void forget_suspensions(v1::JobRecord& r);
// Running, or ended while its processes are still being cleaned up.
bool holds_resources(const Job& j);

// Slurm's state names ("PENDING", "OUT_OF_MEMORY").
const char* state_name(v1::JobState s);
// A job as the controller's log names it: "job 12", or "job 15 (12_3)" for an array element.
std::string log_name(const v1::JobRecord& r);
v1::JobState state_from_agent(const std::string& name);

// The core's view of the record. `identity`: with who submitted it, from
// where, and the user's groups, which partitions' AllowGroups, RootOnly,
// DisableRootJobs and AllocNodes check (what admits and schedules a job);
// without, for describing a job's request (sacct's ReqTRES), which neither
// needs the groups looked up nor may be refused by them.
enum class Identity { kWith, kWithout };
core::JobSpec spec_from_record(const v1::JobRecord& rec, Identity identity = Identity::kWith);
// Rebuilds j.spec from j.rec and bumps its revision (the core caches by it).
void refresh_spec(Job& j);
core::Dependency dependency_from_proto(const v1::Dependency& d);

// Allocation <-> durable form (node names, node-global GPU indexes).
v1::JobAllocation allocation_to_proto(const core::Cluster& c, const core::Allocation& a);
core::Allocation allocation_from_proto(const CoreBridge& b, const v1::JobAllocation& a);

// Node-global index of device `device` of pool `pool` (GPUs of every gpu
// pool numbered in pool order, as CUDA_VISIBLE_DEVICES counts them).
int32_t global_gpu_index(const core::NodeSpec& n, int32_t pool, int32_t device);
// The type of node `n`'s GPU at a node-global index (global_gpu_index's);
// empty when untyped or out of range.
std::string gpu_type(const core::NodeSpec& n, int32_t index);
// The node-global indexes of the GPUs a job holds on one node, ascending.
std::vector<int32_t> gpu_indexes(const core::NodeSpec& n, const core::NodeTake& t);

// "123", "123_4" (array element), as Slurm names a job in messages.
std::string job_label(const v1::JobRecord& rec);

// A target's results from `from` on, with "A_T: Invalid job id specified" for each task of
// `missing` (ControllerState::missing_tasks), in task order.
void add_missing_tasks(std::vector<v1::JobResult>& out, std::size_t from, int64_t array_id,
                       const std::vector<int64_t>& missing);

}  // namespace drover::ctld
