// The simulator's driver: an event-driven virtual clock around
// core::Scheduler::run_cycle, called the way the controller calls it — a
// quick pass (PassKind::kQuick) after submit and completion events, a full
// backfill pass (PassKind::kFull) every bf_interval seconds, and at every
// event when bf_interval is 0 (Drover's extension). Every scheduling decision
// comes from the core; the driver only keeps time, starts what the core
// starts, ends jobs at their run time (or kills them at their limit) and
// records what happened.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "core/cluster.hpp"
#include "core/scheduler.hpp"
#include "sim/trace.hpp"

namespace drover::sim {

// How a job got its start: at once with nobody ahead of it waiting, out of
// priority order into a hole (StartDecision::kBackfilled), or after holding a
// reservation in an earlier cycle (PendingPlan::reserved).
enum class StartHow : uint8_t { kImmediate, kBackfilled, kReserved };

enum class JobState : uint8_t {
  kPending,    // (only while the simulation runs)
  kRunning,    // (only while the simulation runs)
  kCompleted,  // ran its run time
  kFailed,     // ran its run time and failed (the trace says so)
  kTimeout,    // killed at its time limit
  kRejected,   // refused at submit (core::check_submit): it can never run here
  kNeverRan,   // still pending when nothing else could happen (reason in note)
};

const char* start_how_name(StartHow h);  // "immediate", "backfilled", "reserved"
const char* job_state_name(JobState s);  // Slurm's words: "COMPLETED", "TIMEOUT", ...

struct JobRecord {
  core::Time submit = 0;  // when it entered the queue (later than the trace's with SWF feedback)
  core::Time start = -1;
  core::Time end = -1;
  int32_t partition = -1;  // index into Cluster::partitions
  int32_t qos = -1;        // index into Cluster::qos
  int32_t nodes = 0;
  int32_t cpus = 0;
  int64_t gpus = 0;
  int64_t mem_mb = 0;
  StartHow how = StartHow::kImmediate;
  JobState state = JobState::kPending;
  std::string note;  // why it was rejected or never ran
  bool started() const { return start >= 0; }
};

// What one running job holds in one partition (its nodes that belong to it),
// for the per-partition utilisation plots.
struct PartitionShare {
  int32_t job = 0;
  int32_t partition = 0;
  int32_t cpus = 0;
  int32_t gpus = 0;
};

// Resource-seconds allocated on one node over the run.
struct NodeTotals {
  double cpu_s = 0;
  double gpu_s = 0;
  double mem_mb_s = 0;
  double stranded_gpu_s = 0;  // GPUs idle while the node's cores or memory were all allocated
};

struct SimStats {
  int64_t quick_passes = 0;
  int64_t full_passes = 0;
  int64_t events = 0;       // distinct virtual times the clock stopped at
  int64_t head_passes = 0;  // passes given only the head of the queue (it settled them)
  int64_t carried_passes = 0;  // full passes that carried the last walk on (its reservations and new submits)
  double wall_s = 0;        // wall-clock time of simulate()
  double core_wall_s = 0;   // of which inside run_cycle
};

struct SimResult {
  std::vector<JobRecord> jobs;         // one per trace job, in trace order
  std::vector<NodeTotals> nodes;       // one per Cluster::nodes
  std::vector<PartitionShare> shares;  // in start order
  core::Time first_submit = 0;
  core::Time last_end = 0;
  SimStats stats;
};

struct Progress {
  int64_t done = 0;   // jobs that have left the queue for good (ended, rejected)
  int64_t total = 0;
  core::Time now = 0;
};

struct SimOptions {
  Seconds fairshare_interval = 300;  // recompute fair-share factors this often (PriorityCalcPeriod)
  std::function<void(const Progress&)> progress;  // called every few hundred events; may be empty
  // Called after every scheduling cycle with what the core was given and
  // what it decided (tests check invariants with it); may be empty.
  std::function<void(const core::CycleInput&, const core::CycleOptions&, const core::CycleResult&)> on_cycle;
  // Give every pass the whole queue, even where its head decides the pass
  // (CycleStats::settled), and run every backfill tick, even those that
  // could decide nothing new. The results are the same; tests compare them.
  bool whole_queue = false;
};

// Runs the trace against the cluster from an empty machine. Errors: a job
// that would run forever (--run-to-limit with an UNLIMITED limit).
Result<SimResult> simulate(const core::Cluster& cluster, const Trace& trace, const SimOptions& opts = {});

}  // namespace drover::sim
