// Internal: the state of one scheduling cycle and the caches the Scheduler
// keeps between cycles. Only scheduler*.cpp, search.cpp, placement.cpp,
// limits.cpp and explain.cpp include this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/demand.hpp"
#include "core/profile.hpp"
#include "core/scheduler.hpp"

namespace drover::core {

// a + b, or kForever when that reaches it (b may be kForever).
inline Time sat_add(Time a, Time b) { return b >= kForever - a ? kForever : a + b; }

// Nodes with one configuration, partition set, features and weight.
struct NodeClass {
  const NodeSpec* spec = nullptr;  // the first member's (all members are alike)
  std::vector<NodeIndex> members;  // cluster order
  int dims = 2;                    // cores, memory, then one per gres pool
  bool has_gpus = false;
  std::vector<int64_t> capacity;   // dims values
};

// A job's need on the nodes of one class.
struct ClassNeed {
  int32_t cls = 0;
  std::vector<int64_t> amount;  // dims values for tasks_per_node tasks (fixed shapes) or one task
};

// One partition a job may run in, resolved. Everything here follows from
// the demand: jobs whose demands are equal (array elements, a workflow's
// like tasks) share one (Scheduler::Impl::part_choice).
struct PartChoice {
  int32_t partition = 0;
  int32_t partition_qos = -1;              // the partition's QOS (index into Cluster::qos)
  Demand demand;
  Reason static_reason = Reason::kNone;
  bool never = false;                      // no node can ever hold it here
  std::vector<int64_t> tres;               // the job's tracked TRES in this partition (TresIds)
  double priority_fixed = 0;               // PriorityTerms::fixed: what does not change while it waits
  std::vector<std::vector<ClassNeed>> alts;  // per feature alternative: classes in preference order
};

struct JobCache {
  JobId id = 0;
  uint64_t revision = 0;
  uint32_t seen = 0;         // cycle number (low 32 bits) of the last cycle that saw it
  // Its place in the queue order of the cycle (low 32 bits) that last
  // ordered it: a queue whose priorities did not move is merged, not
  // sorted again. Only a hint (order_queue checks the order it gives).
  mutable uint32_t ranked_in = 0;
  mutable uint32_t rank = 0;
  // PriorityFlags=INCR_ONLY: the highest priority a cycle gave it since
  // this revision (JobSpec::priority_floor carries it over a new revision).
  mutable int64_t priority_floor = 0;
  bool refused = false;      // no partition resolves (the partition was removed, ...)
  std::vector<std::shared_ptr<const PartChoice>> parts;
};

// Per-node facts the cycle needs beyond the profile: which cores and devices are in use now.
struct NodeUse {
  std::vector<uint8_t> core_used;
  std::vector<std::vector<uint8_t>> dev_used;  // per pool with device ids
};

// The TRES names the cycle tracks (those a QOS limit, a priority weight or
// a license names, plus cpu and gres/gpu), numbered: jobs' and usage's
// amounts are dense arrays over them.
class TresIds {
 public:
  void build(const Cluster& c);
  size_t size() const { return names_.size(); }
  int32_t id(std::string_view name) const;  // -1 when not tracked
  const std::string& name(size_t i) const { return names_[i]; }
  int32_t cpu() const { return cpu_; }
  // The dense amounts of a TRES map (names not tracked are dropped).
  std::vector<int64_t> dense(const TresMap& m) const;
  // What an allocation holds (plus licenses), densely.
  void held(const Cluster& c, const Allocation& a, const TresMap& licenses, std::vector<int64_t>& out) const;

 private:
  std::vector<std::string> names_;
  std::map<std::string, int32_t, std::less<>> ids_;
  int32_t cpu_ = 0, mem_ = -1, node_ = -1;
  // Per node group and gres pool: the tracked ids a unit of the pool counts in.
  std::vector<std::vector<std::vector<int32_t>>> pool_ids_;
};

// Usage against QOS and license limits, counted over running jobs and the
// jobs this cycle starts, on dense TRES arrays.
class LimitUsage {
 public:
  void reset(const Cluster& c, const TresIds& ids);
  // sign -1 takes back what an add with the same arguments counted.
  void add(int32_t qos, int32_t partition_qos, const std::string& user, int32_t assoc,
           const std::vector<int64_t>& tres, JobId array_job, int sign = 1);
  void add_array_element(JobId array_job, int sign = 1);  // only the array count (no limit needs the rest)
  // First limit the job would pass over if it started now, or kNone.
  Reason check(int32_t qos, int32_t partition_qos, const std::string& user, int32_t assoc,
               const std::vector<int64_t>& tres) const;
  int64_t array_running(JobId array_job) const;
  bool active() const { return active_; }

 private:
  struct Use {
    std::vector<int64_t> tres;
    int64_t jobs = 0;
  };
  struct Limits {
    std::vector<int64_t> grp, per_user;  // -1: no limit
    int64_t grp_jobs = kNoLimit, jobs_per_user = kNoLimit;
    bool per_user_any = false;  // some per-user limit: only then is use counted per user
  };
  Reason check_one(int32_t qos, const std::string& user, const std::vector<int64_t>& tres) const;
  Reason check_assoc(int32_t assoc, const std::vector<int64_t>& tres) const;
  struct AssocLimits {
    std::vector<int64_t> grp;  // -1: no limit
    int64_t grp_jobs = kNoLimit;
    int64_t max_jobs = kNoLimit;  // a user row's own or the nearest account's above
    int32_t parent = -1;
  };
  std::vector<AssocLimits> assoc_limits_;
  std::vector<Use> assoc_use_;
  std::vector<Reason> assoc_grp_reason_;  // per TRES id
  Use& use_of(std::vector<Use>& v, size_t i);
  const TresIds* ids_ = nullptr;
  bool active_ = false;
  std::vector<Limits> limits_;
  std::vector<Reason> grp_reason_, user_reason_;  // per TRES id
  std::vector<int64_t> license_total_;            // per TRES id; -1 for non-licenses
  std::vector<Use> qos_;
  std::map<std::pair<int32_t, std::string>, Use, std::less<>> user_;
  std::vector<int64_t> licenses_;
  std::map<JobId, int64_t> arrays_;
};

// A placement found by the search: start time and nodes, with each node's
// task count and what it takes in the profile (flat: node i's amounts are
// flat[off[i] .. off[i+1])).
struct Placement {
  Time start = kNever;
  std::vector<NodeIndex> nodes;
  std::vector<int32_t> tasks;
  std::vector<int64_t> flat;
  // Node i's amounts are flat[off[i], off[i + 1]); empty until the first
  // add (a placement that never gets a node allocates nothing).
  std::vector<uint32_t> off;
  int32_t partition = -1;
  size_t alt = 0;
  std::vector<int32_t> gpus;  // --gpus packed (Demand::gpus_total): each node's share; else empty

  void add(NodeIndex n, int32_t t, const int64_t* amount, size_t count) {
    if (off.empty()) off.push_back(0);
    nodes.push_back(n);
    tasks.push_back(t);
    flat.insert(flat.end(), amount, amount + count);
    off.push_back(static_cast<uint32_t>(flat.size()));
  }
  void add(NodeIndex n, int32_t t, const std::vector<int64_t>& amount) { add(n, t, amount.data(), amount.size()); }
  void reserve(size_t n, size_t dims) {  // room for n nodes of `dims` amounts each
    nodes.reserve(n);
    tasks.reserve(n);
    flat.reserve(n * dims);
    off.reserve(n + 1);
  }
  const int64_t* amount(size_t i) const { return flat.data() + off[i]; }
};

// A lower bound learnt during a cycle: on this class, a job needing at
// least `need` on each of at least `nodes` nodes for at least `d` seconds
// cannot start before `at`. Valid for the rest of the cycle because free
// capacity only shrinks as the walk starts and reserves jobs.
struct FrontierPoint {
  std::vector<int64_t> need;
  Time d = 0;
  int32_t nodes = 1;
  Time at = 0;
};

class Frontier {
 public:
  void reset(size_t classes, bool off = false) {
    // The recent points' storage is kept from cycle to cycle (only marked unused).
    recent_.resize(classes);
    for (Recent& r : recent_) r.used = r.next = r.dims = 0;
    exact_.clear();
    off_ = off;
  }
  Time lower_bound(int32_t cls, const std::vector<int64_t>& need, Time d, int32_t nodes) const;
  void learn(int32_t cls, const std::vector<int64_t>& need, Time d, int32_t nodes, Time at);

 private:
  // Every shape learnt, by exact shape (the bound repeats of a shape get);
  // and the latest few per class, for shapes that dominate them.
  static constexpr size_t kRecent = 32;
  static uint64_t key(int32_t cls, const std::vector<int64_t>& need, Time d, int32_t nodes);
  std::unordered_map<uint64_t, std::vector<FrontierPoint>> exact_;  // by hash; entries compared in full
  // A ring of the latest kRecent points per class (the order does not
  // matter: lower_bound takes the latest bound any of them gives).
  // Column by column (the scan reads `at` of every point and the rest of
  // few): slot i's need is need[i * dims, (i + 1) * dims).
  struct Recent {
    Time at[kRecent];
    Time d[kRecent];
    int32_t nodes[kRecent];
    size_t dims = 0;  // of this class's needs (set by the first point)
    std::vector<int64_t> need;
    size_t used = 0;  // slots [0, used) are this cycle's
    size_t next = 0;  // once full, the oldest (overwritten next)
  };
  std::vector<Recent> recent_;
  bool off_ = false;
};

// Earlier-is-better queue order entry.
struct QueueEntry {
  const JobSpec* job = nullptr;
  const JobCache* cache = nullptr;
  uint32_t tier = 0;
  int64_t priority = 0;
};

// What one running job counts in the QOS and array limits.
struct HeldLimits {
  bool counted = false;            // it has a spec: limits (or its array) count it
  int32_t qos = -1, partition_qos = -1;
  int32_t assoc = -1;              // the user's association with limits (Cluster::assocs)
  std::string user;
  std::vector<int64_t> tres;       // TresIds::held (only when limits are active)
  JobId array_job = 0;
};

// A stamped running job, as the cycle counted it in (kept between cycles).
struct Held {
  uint64_t stamp = 0;
  uint64_t seen = 0;               // the last cycle whose input had it
  Time end = 0;                    // the end of its cut in the profiles
  Allocation alloc;
  HeldLimits limits;
};

struct Scheduler::Impl {
  explicit Impl(const Cluster& cl);

  // ---- built once ----
  const Cluster& c;
  std::vector<NodeClass> classes;
  std::vector<int32_t> class_of;  // per node
  TresIds tres_ids;
  std::vector<int64_t> held_scratch;
  std::vector<int32_t> leaf_of;   // per node: its position in its class
  std::vector<int32_t> partition_qos;  // per partition: its QOS (index into Cluster::qos, -1: none)

  // ---- kept between cycles ----
  std::unordered_map<const JobSpec*, JobCache> cache;
  // The PartChoices the cache holds, by demand_hash() of their demand:
  // one per distinct demand. Those no cache entry holds any more are
  // dropped when the cache forgets jobs, or once the table has doubled
  // since it was last swept.
  std::unordered_multimap<uint64_t, std::shared_ptr<const PartChoice>> shared_parts;
  size_t shared_parts_sweep_at = 1024;
  std::shared_ptr<const PartChoice> part_choice(Demand d);
  void sweep_shared_parts();
  uint64_t cycle_no = 0;
  // Bumped whenever the kept state (the running jobs in the profiles) changes.
  uint64_t kept_version = 0;
  // commit() calls this cycle (starts and reservations taken in the profiles).
  uint64_t commits = 0;
  // The last reservation searched for a job that was the first to need one
  // while nothing had been committed in its cycle. Another cycle may take it
  // as it is: the profiles from now on are those it was searched in (the
  // same kept state, nothing committed before it), so every node's earliest
  // start is the same or, where it was before now, now; the k best nodes
  // and their k-th start do not change, nor do the ties (free cores now).
  struct FirstReservation {
    const JobSpec* job = nullptr;
    uint64_t revision = 0;
    const PartChoice* pc = nullptr;
    Time searched_at = 0;
    uint64_t kept_version = 0;
    Placement p;  // none kept while job is null
  } first_reservation;
  bool reference_search = false;  // tests: look at every node, learn nothing (Scheduler::use_reference_search)
  // Classes up to this size are searched node by node at first
  // (Scheduler::set_index_threshold; by default all): cheaper than
  // building their index when a cycle makes few searches, as event passes
  // with a short queue do; each gets its index once the cycle has looked
  // at all its members about this many times. Building one costs about as
  // much as looking at every member a few dozen times, so a cycle with a
  // short queue (event passes: the 10,000-job scale-10k replay took half
  // as long) waits for 32 such looks; a cycle with a long queue will search
  // most groups many times and builds after 4 (a 1,000-job queue on
  // scale-10k took twice as long with 32).
  size_t small_class = SIZE_MAX;
  static constexpr int64_t kSearchesBeforeIndexShortQueue = 32;
  static constexpr int64_t kSearchesBeforeIndexLongQueue = 4;
  static constexpr int64_t kLongQueue = 256;  // jobs the cycle will test
  // A class this small is searched member by member for longer: its
  // index costs more to build than the scans it saves (the Lublin EASY
  // replay, 256 nodes: 5.46 G -> 5.07 G instructions, decisions unchanged).
  static constexpr size_t kSmallClass = 256;
  static constexpr int64_t kSearchesBeforeIndexSmallClass = 128;
  int64_t searches_before_index = kSearchesBeforeIndexShortQueue;
  std::vector<int64_t> exhaustive_visits;  // per class: visits before its index was built this cycle

  // What running jobs hold, kept between cycles when the caller stamps
  // its RunningJob records (RunningJob::stamp): the profiles, node use and
  // limit counts as the last setup left them are restored (the cycle's
  // own starts and reservations undone), then only the running jobs that
  // came, went or changed are counted in or out. Any unstamped record, a
  // node whose state changed, or time going back: everything is counted
  // afresh, as the first cycle does.
  bool have_base = false;  // `held` mirrors the running jobs of the last setup
  Time base_now = 0;
  std::vector<NodeAvail> base_avail;
  std::vector<Held> held;                       // slots; stamp 0: free
  std::vector<uint32_t> free_held;
  std::unordered_map<uint64_t, uint32_t> held_of;  // stamp -> slot
  std::vector<uint32_t> held_at;                // per input position last cycle: its slot (a quick first guess)
  std::vector<uint32_t> held_match;             // scratch: per input position, its slot or UINT32_MAX
  HeldLimits held_limits_scratch;               // unstamped jobs are counted through this one
  // The cycle's own changes, undone at the next setup: nodes it touched
  // (their profile and use before the first touch) and the limits its
  // starts added.
  std::vector<uint8_t> dirty;  // per node: kSavedProfile, kSavedUse (what is saved)
  std::vector<NodeIndex> dirty_list;
  std::vector<NodeProfile> saved_prof;
  std::vector<NodeUse> saved_use;
  std::vector<HeldLimits> cycle_limit_adds;
  // Before the cycle first changes node n's profile or its cores and devices in use.
  static constexpr uint8_t kSavedProfile = 1, kSavedUse = 2;
  void touch(NodeIndex n, uint8_t what);
  void undo_cycle();
  bool rebuild(const CycleInput& input);       // true: it kept a Held per running job
  bool sync_running(const CycleInput& input);  // false: it cannot (nothing changed yet)
  // What a job with this spec (nullptr: none), QOS, partition and
  // allocation counts in the limits: a running job, or one the cycle starts.
  void limits_of(const JobSpec* spec, int32_t qos, int32_t partition, const Allocation& a, HeldLimits& out);
  void adopt(Held& h, const RunningJob& r);
  // Count a running job in (sign 1) or out (-1) from now to `end`: its cut
  // in the profiles, and unless profile_only its cores and devices in use
  // and its limit counts (`lim`; nullptr: none).
  void count_running(const Allocation& a, Time end, int sign, bool profile_only, const HeldLimits* lim);
  void count_limits(const HeldLimits& lim, int sign);
  void count_held(const Held& h, int sign, bool profile_only) {
    count_running(h.alloc, h.end, sign, profile_only, &h.limits);
  }
  Time held_end(const RunningJob& r) const { return round_up(std::max(r.end, now + 1)); }

  // ---- one cycle ----
  Time now = 0;
  Time res = 1;
  Time window = 0;
  std::vector<NodeAvail> avail;
  std::vector<NodeProfile> prof;
  // Free cores now per node, as reservations break ties on it (the least
  // free first): read once per cycle from the profile, forgotten when the
  // cycle commits on the node. One small array instead of three profile
  // lines for every tie the search weighs.
  struct CoresNow {
    int64_t cores = 0;
    uint64_t cycle = 0;  // valid in this cycle_no
  };
  std::vector<CoresNow> cores_now_cache;
  int64_t cores_now(NodeIndex n) {
    CoresNow& e = cores_now_cache[static_cast<size_t>(n)];
    if (e.cycle != cycle_no) e = CoresNow{prof[static_cast<size_t>(n)].free_at(now)[0], cycle_no};
    return e.cores;
  }
  std::vector<ClassIndex> index;    // built on first use in a cycle (idx())
  std::vector<uint8_t> index_built;
  ClassIndex& idx(int32_t cls);
  Time window_end() const { return now + window; }
  // Per class: how many of its nodes are idle (no job at all) over time. A
  // job taking every core of a node can start at T on k nodes only if at
  // least k are idle at every moment of [T, T + d): a bound and a quick
  // "no" for such jobs (the search still picks the nodes).
  std::vector<NodeProfile> idle;
  std::vector<uint8_t> idle_built;
  // The same counts for the kept state alone (the running jobs, without
  // this cycle's starts and reservations), kept from cycle to cycle while
  // have_base: each cycle's `idle` starts as a copy.
  std::vector<NodeProfile> idle_base;
  std::vector<uint8_t> idle_base_built;
  std::vector<std::pair<Time, int64_t>> idle_edges;  // scratch for build_idle()
  const NodeProfile& idle_of(int32_t cls);
  // From the profiles as they are now; `kept`: as the kept state has them.
  void build_idle(int32_t cls, bool kept, NodeProfile& out);
  // Takes `amount` from n's profile over [t0, t1), keeping idle_base current.
  void take_kept(NodeIndex n, Time t0, Time t1, const int64_t* amount);
  std::vector<NodeUse> use;
  LimitUsage limits;
  Frontier frontier;
  const CycleInput* in = nullptr;
  const JobSpec* explain_target = nullptr;  // explain(): describe this job when the walk reaches it
  Explanation* explain_out = nullptr;

  // scheduler.cpp
  CycleResult run(const CycleInput& input, const CycleOptions& opts);
  void order_queue(std::vector<QueueEntry>& queue);
  uint32_t last_queue_size = 0;
  void setup(const CycleInput& input);
  void apply_blocks(std::span<const NodeBlock> blocks);
  const JobCache& cached(const JobSpec& job);
  QueueEntry entry(const JobSpec& job, const FairShareFactors* fs, Time at);
  Time round_up(Time t) const;

  // search.cpp: where and when a job could run.
  std::optional<Placement> start_now(const PartChoice& pc, const JobSpec& job);
  // While set (run(): a reservation not yet in the profiles that takes
  // every core of its nodes from its start on), searches for a start now
  // pass over the nodes marked with this stamp: the job would run into it.
  uint32_t held_off = 0;
  std::vector<uint32_t> held_off_mark;  // per node
  uint32_t held_off_stamp = 0;          // the last stamp given
  // FCFS walks (the quick pass; every pass of sched/builtin): a job that
  // waits with -w leaves the rest of its partition to the jobs behind it
  // and closes only its named nodes to their starts now, as Slurm's main
  // scheduler did on the anchor cluster (a job for idle cpu03 started at
  // once behind one waiting for a busy cpu01; without -w the partition
  // waits for the backfill pass). Cleared by run().
  std::vector<uint8_t> closed_now;  // per node, when any_closed
  bool any_closed = false;
  // --exclusive=user and ExclusiveUser=YES: per node, whose jobs hold it
  // over which times (running jobs until their end, jobs started or given a
  // reservation this cycle over their window), and whether each is
  // user-exclusive. Two jobs of different users conflict on a node when
  // either is user-exclusive and their windows overlap. Empty when no job
  // of the cycle, running or pending, is user-exclusive: nothing to check.
  struct UserHold {
    const std::string* user = nullptr;
    bool exclusive = false;
    Time from = 0, to = kForever;
  };
  std::vector<std::vector<UserHold>> node_users;
  bool user_exclusive(const JobSpec& job, int32_t partition) const {
    return job.exclusive_user || c.partitions[static_cast<size_t>(partition)].exclusive_user;
  }
  void collect_node_users(const CycleInput& input);
  // Records the job on the nodes over [from, to); nothing while node_users is empty.
  void add_node_users(const std::vector<NodeIndex>& nodes, const JobSpec& job, bool exclusive, Time from, Time to);
  // The end of the last hold on node n that conflicts with `job` over
  // [from, to) (so the job may not be there before it), or 0 when none does.
  Time user_blocked_until(NodeIndex n, const JobSpec& job, int32_t partition, Time from, Time to) const;
  // Earliest start at or after not_before within the window.
  std::optional<Placement> plan_later(const PartChoice& pc, const JobSpec& job, bool for_reservation, Time not_before);
  void commit(const PartChoice& pc, const Placement& p, Time end);  // take the resources in the profile
  // Adds delta to `into` over the idle periods of n within [t0, t1). With
  // `throughout`, a node idle over all of [t0, t1) is left to the caller
  // and counted there instead.
  void count_idle_in(NodeProfile& into, NodeIndex n, Time t0, Time t1, int64_t delta, int64_t* throughout = nullptr);
  std::vector<std::pair<int32_t, int64_t>> commit_idle;  // scratch for commit(): (class, nodes)
  // Earliest T >= from with k idle nodes of the class at every moment of
  // [T, T + d); `from` when the job does not take whole nodes' cores.
  Time idle_bound(const ClassNeed& cn, int32_t k, Time d, Time from);
  // idle_bound(cn, k, d, now) == now, remembered while the class's idle
  // counts do not change: an answer for d holds for every shorter d (yes)
  // or every longer one (no), so most of a pass's questions need no walk.
  bool idle_now(const ClassNeed& cn, int32_t k, Time d);
  struct IdleNowMemo {
    Time yes_up_to = -1;     // k idle nodes over [now, now + d) for every d <= this
    Time no_from = INT64_MAX;  // ... and for no d >= this (above any d: kForever is a d)
  };
  std::vector<std::vector<IdleNowMemo>> idle_now_memo;  // [class][k - 1]; cleared when idle[class] changes

  // placement.cpp: concrete cores and devices on nodes, now.
  Allocation allocate(const PartChoice& pc, const Placement& p);

  // explain.cpp
  void describe(const JobSpec& job, const JobCache& jc, Explanation& ex);

  // Seconds the job may run (its time limit, kForever when none).
  static Time duration(const PartChoice& pc);
};

}  // namespace drover::core
