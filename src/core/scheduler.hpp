// The scheduling core's entry points. One deterministic cycle over a
// snapshot of the cluster returns decisions: start these jobs on these
// resources now, hold a reservation for that one at time T, keep the rest
// pending with a reason (and a planned start when one is known). The
// controller calls it on events and on the backfill timer; the simulator
// calls it the same way on a virtual clock. Nothing here reads a clock,
// does I/O or keeps global state: same input, same output, byte for byte.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/cluster.hpp"
#include "core/fairshare.hpp"
#include "core/job.hpp"
#include "core/priority.hpp"
#include "core/reason.hpp"

namespace drover::core {

enum class NodeAvail : uint8_t {
  kUp,     // takes new work
  kDrain,  // keeps what runs, takes nothing new (DRAIN, DRAINING)
  kDown,   // takes nothing (DOWN, not responding, FUTURE)
};

// Outcomes of jobs the cycle needs for dependencies. The caller answers for
// every job it knows (pending, running, finished); kUnknown for a job it
// has forgotten (Slurm treats a dependency on a purged job as satisfied).
class JobHistory {
 public:
  virtual ~JobHistory() = default;
  // array_task < 0: the whole job (for an array: kCompletedOk only when every
  // element completed with exit 0, kFailed when any failed and all ended,
  // kRunning when any started).
  virtual JobOutcome outcome(JobId job, int64_t array_task) const = 0;
};

// One item of a job's dependency on another job (not singleton), as the
// cycle judges it: met, still waiting, or never to be met (what Slurm's
// Dependency= shows as the item gone, "(unfulfilled)" and "(failed)").
enum class DepItemState { kMet, kWait, kNever };
DepItemState dependency_item_state(const DepItem& item, const JobSpec& job, const JobHistory& history, Time now);

// Where a walk left jobs waiting: one flag per Cluster::partitions and one
// per node class of the scheduler (opaque to the caller). A job the walk
// reaches behind a waiting one is shown as kPriority rather than
// kResources, and a start on a class where one waits is kBackfilled.
struct WalkWaiting {
  std::vector<uint8_t> partitions;
  std::vector<uint8_t> classes;
};

// A node that takes no new work over [start, end): an advance reservation
// seen by the jobs outside it. Whatever running jobs leave free on it then
// is taken before the walk, as a reservation planned ahead of every job.
struct NodeBlock {
  NodeIndex node = 0;
  Time start = 0;
  Time end = kForever;
};

struct CycleInput {
  Time now = 0;
  std::span<const NodeAvail> node_avail;  // one per Cluster::nodes; empty: every node up
  std::span<const RunningJob> running;    // includes completing jobs still on their nodes
  std::span<const JobSpec* const> pending;  // any order; the cycle orders them
  const FairShareFactors* fairshare = nullptr;  // nullptr: every factor 1.0
  const JobHistory* history = nullptr;          // nullptr: dependencies on other jobs are unknown (satisfied)
  // When `pending` is only the head of a longer queue (CycleStats::settled):
  // one flag per Cluster::partitions, set where some job of the whole queue
  // may run (QueuePlace::partitions). Empty: the partitions of `pending`.
  std::span<const uint8_t> queue_partitions;
  // The waiting an earlier walk left (CycleResult::waiting), for a cycle
  // that carries that walk on: `pending` holds only the jobs of it that
  // shape what follows (its reservations) and the jobs queued behind all
  // of it. Their decisions are the whole queue's when the earlier walk's
  // other jobs would decide the same now (no job started or ended since,
  // priorities that do not move with time, none of them tested beyond
  // bf_max_job_test): the simulator's continued passes. nullptr: none.
  const WalkWaiting* waiting = nullptr;
  // The whole queue's length when `pending` is only a part of it (the
  // cache of the jobs left out is kept for the next cycle); 0: pending.
  size_t queue_length = 0;
  // Nodes closed to the jobs of this cycle over a time window (advance
  // reservations they are not in); starts before the window that end by its
  // start still fit. Empty: none.
  std::span<const NodeBlock> blocks = {};
};

enum class PassKind {
  kFull,   // the backfill pass: every pending job (up to bf_max_job_test) is planned
  kQuick,  // the event pass: the first default_queue_depth jobs, in priority order
};

struct CycleOptions {
  PassKind pass = PassKind::kFull;
  // Give jobs beyond the reservation depth (bf_reserve_depth) an estimated
  // start too. The controller wants it (squeue --start, why); a simulator
  // that only needs decisions may turn it off: starts and reservations do
  // not change, only the estimates are left out.
  bool estimate_unreserved = true;
  // FCFS (sched/builtin): once the queue of every partition that its jobs
  // may use is blocked, no later
  // job can start in this cycle, and the plans (and reservations) of the
  // jobs behind only serve their estimated starts. A simulator that only
  // needs decisions may turn them off: starts do not change; those jobs
  // still get their reasons (holds, dependencies, limits, never), without
  // a planned start or a reservation.
  bool plan_behind_blocked = true;
  // Fill CycleResult::waiting (for CycleInput::waiting of a later cycle).
  bool report_waiting = false;
};

enum class StartKind : uint8_t {
  kImmediate,   // no job ahead of it in the queue was left waiting
  kBackfilled,  // started while a job ahead of it waits (it delays none of them)
};

struct StartDecision {
  const JobSpec* job = nullptr;
  int32_t partition = 0;
  int32_t qos = -1;
  Allocation alloc;
  Time end = kForever;  // now + time limit
  Seconds time_limit = 0;
  StartKind kind = StartKind::kImmediate;
  int64_t priority = 0;  // its priority in this cycle (a running job's Priority=, as Slurm keeps it)
};

inline constexpr Time kNoPlan = -1;

struct PendingPlan {
  const JobSpec* job = nullptr;
  Time start = kNoPlan;      // planned (or estimated) start; kNoPlan: none within bf_window / blocked
  int64_t priority = 0;
  std::vector<NodeIndex> nodes;  // planned nodes (SCHEDNODES); empty when none
  int32_t partition = -1;    // the partition it is planned in (or its first)
  Reason reason = Reason::kNone;
  bool tested = false;       // this pass looked at it (a quick pass tests only the head of the queue)
  bool reserved = false;     // holds resources in the plan from `start` on
  bool never = false;        // cannot run on this cluster as configured (reason says which limit)
};

struct CycleStats {
  int64_t pending = 0;       // jobs given to the cycle
  int64_t tested = 0;        // jobs the walk looked at
  int64_t started = 0;
  int64_t backfilled = 0;    // of started, how many out of priority order
  int64_t started_behind_reservation = 0;  // of started, how many after the walk had made a reservation
  int64_t reserved = 0;      // jobs holding a reservation
  int64_t planned = 0;       // pending jobs with a planned start or a definite reason
  int64_t beyond_window = 0; // could not be planned within bf_window
  int64_t profile_steps = 0; // size of the availability profile at the end
  int64_t index_visits = 0;  // index entries the searches bounded (work done)
  int64_t rise_checks = 0;   // moments the searches checked
  int64_t demands = 0;       // distinct demands held resolved after the cycle (jobs that ask the same share one)
  // Queue positions walked before the decisions were settled: from there
  // on no job could start, take a reservation or move one (the test limit
  // was reached, or every partition the queue's jobs may use was blocked,
  // in a quick pass or in an FCFS pass without plans behind a blocked
  // queue); the jobs further back only got their reasons. -1: not settled
  // before the end of the queue. A caller that keeps its own ordered queue
  // (Scheduler::queue_place) and gives a cycle only the head of it
  // (CycleInput::queue_partitions) gets the decisions of the whole queue
  // when this is >= 0, provided no job further back could leave the queue
  // (on its dependencies, or QueuePlace::can_run false).
  int64_t settled = -1;
};

// Where a job stands in a cycle's queue: the smaller key comes first
// (partition PriorityTier, then priority, both highest first; then submit
// time, job id and array index).
struct QueueKey {
  int64_t tier = 0;      // negated
  int64_t priority = 0;  // negated
  Time submit = 0;
  JobId id = 0;
  int32_t array_task = -1;
  auto operator<=>(const QueueKey&) const = default;
};

struct QueuePlace {
  QueueKey key;  // moves with time only through the age and fair-share weights
  // False when a cycle would find that the job can never run here as
  // configured (PendingPlan::never from its request alone, not from its
  // dependencies).
  bool can_run = true;
  std::vector<int32_t> partitions;  // the partitions it may run in (empty when it cannot run)
};

struct CycleResult {
  std::vector<StartDecision> starts;
  std::vector<PendingPlan> pending;  // every job of CycleInput::pending not started, in queue order
  CycleStats stats;
  WalkWaiting waiting;  // at the end of the walk (only with CycleOptions::report_waiting)
};

// Why a job cannot start, in words a person can act on: one line per node
// group considered (which nodes, what they lack now or ever, when they free
// up) and the planned start.
struct Explanation {
  std::vector<std::string> lines;
};

// A scheduler for one cluster. Keeps only what is derived from the cluster
// (node groups, eligibility caches) between cycles; every decision comes
// from the CycleInput alone.
class Scheduler {
 public:
  explicit Scheduler(const Cluster& cluster);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  const Cluster& cluster() const;
  CycleResult run_cycle(const CycleInput& in, const CycleOptions& opts = {});
  Explanation explain(const CycleInput& in, const JobSpec& job);

  // Where `job` would stand in a cycle at `now` with these fair-share
  // factors, for a caller that keeps its own ordered queue.
  QueuePlace queue_place(const JobSpec& job, Time now, const FairShareFactors* fs);

  // Tests: search every node the plain way instead of through the index and
  // the bounds learnt during the cycle. Decisions must not change; only the
  // work done does.
  void use_reference_search(bool on);
  // Node groups of at most this many nodes (default: all) are searched node
  // by node until a cycle has searched one about 32 times over, then
  // through an index built from there on; 0 indexes every group at its
  // first search. Decisions are the same either way.
  void set_index_threshold(size_t nodes);

  struct Impl;  // internal (core/cycle.hpp)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace drover::core
