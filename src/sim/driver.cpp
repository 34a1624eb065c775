#include "sim/driver.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "core/request.hpp"
#include "core/scheduler.hpp"
#include "sim/fair_share_feed.hpp"
#include "sim/job_history.hpp"
#include "sim/node_ledger.hpp"

namespace drover::sim {

const char* start_how_name(StartHow h) {
  switch (h) {
    case StartHow::kImmediate: return "immediate";
    case StartHow::kBackfilled: return "backfilled";
    case StartHow::kReserved: return "reserved";
  }
  return "immediate";
}

const char* job_state_name(JobState s) {
  switch (s) {
    case JobState::kPending: return "PENDING";
    case JobState::kRunning: return "RUNNING";
    case JobState::kCompleted: return "COMPLETED";
    case JobState::kFailed: return "FAILED";
    case JobState::kTimeout: return "TIMEOUT";
    case JobState::kRejected: return "REJECTED";
    case JobState::kNeverRan: return "NEVER_RAN";
  }
  return "PENDING";
}

namespace {

using Clock = std::chrono::steady_clock;
// (time, job index), earliest first; ties by index for determinism.
using TimedJob = std::pair<core::Time, int32_t>;
using MinHeap = std::priority_queue<TimedJob, std::vector<TimedJob>, std::greater<>>;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

class Driver {
 public:
  Driver(const core::Cluster& c, const Trace& t, const SimOptions& o);
  Result<SimResult> run();

 private:
  core::Time next_time() const;
  Status step(core::Time t);
  bool complete_until(core::Time t);
  bool arrive_until(core::Time t);
  void submit(int32_t idx, core::Time t);
  void release_followers(core::JobId id, core::Time t);
  Status run_pass(core::PassKind kind, bool whole_queue = false, bool carry_on = false);
  void enqueue(int32_t idx);
  void count_in_queue(int32_t idx, int sign);  // +1 joins the queue, -1 leaves it
  bool behind_settled(int32_t idx) const;
  std::vector<uint8_t> partitions_in_queue() const;  // part_jobs_ > 0, per partition
  Status start(core::StartDecision& d);  // takes d.alloc
  void record_start(int32_t idx, const core::StartDecision& d, Seconds run);
  void record_shares(int32_t idx, const core::Allocation& alloc);
  void note_pending(const core::PendingPlan& p);
  void finish(int32_t idx, core::Time t);
  void drop_leftovers();
  int32_t index_of(const core::JobSpec* s) const { return static_cast<int32_t>(s - specs_.data()); }
  void report_progress(bool force);

  const core::Cluster& c_;
  const Trace& trace_;
  const SimOptions& opts_;
  core::Scheduler sched_;
  std::vector<core::JobSpec> specs_;  // the requests, at stable addresses
  SimResult out_;
  SimHistory history_;
  NodeLedger ledger_;
  FairShareFeed fairshare_;
  std::vector<uint8_t> reserved_;     // held a reservation in an earlier cycle
  std::vector<core::Reason> last_reason_;
  std::vector<uint8_t> leaving_;      // started or dropped this cycle (out of pending_)
  std::vector<core::Time> charged_;   // fair share charged up to
  std::vector<int32_t> slot_;         // position in running_, -1 when not running
  std::vector<int32_t> arrivals_;     // job indices by submit time
  std::size_t next_arrival_ = 0;
  MinHeap late_arrivals_;             // SWF feedback: submitted after a preceding job ended
  MinHeap completions_;
  std::set<core::Time> wakeups_;      // begin times
  std::unordered_map<core::JobId, std::vector<int32_t>> followers_;  // preceding job id -> waiting jobs
  std::unordered_map<core::JobId, std::vector<Seconds>> after_delays_;  // after:ID+minutes: ID -> delays
  std::vector<const core::JobSpec*> pending_;  // in queue order while head_only_ (else as submitted)
  // The queue's head is enough for a pass that settles early (FCFS or a
  // quick pass, blocked in every partition: CycleStats::settled). That
  // holds while the queue order does not move with time, no job waits on
  // another (a dependency can end a job behind the head: never satisfied)
  // and every pending job can run here (one that cannot leaves the queue
  // when a pass first looks at it).
  bool head_only_ = false;
  std::vector<core::QueuePlace> place_;  // of each job, while head_only_
  int64_t cannot_run_ = 0;            // pending jobs that can never run here
  std::vector<int64_t> part_jobs_;    // pending jobs that may run in each partition
  std::vector<uint8_t> queue_parts_;  // part_jobs_ > 0 (CycleInput::queue_partitions)
  // The last full pass settled (FCFS, blocked in every partition in use,
  // with every blocked job planned within bf_window) ahead of settled_key_,
  // in the partitions settled_parts_; cleared by anything that could
  // change what a full pass decides (CycleStats::settled).
  bool settled_full_ = false;
  core::QueueKey settled_key_;
  std::vector<uint8_t> settled_parts_;
  std::vector<int32_t> arrived_;      // jobs queued at this step
  // A backfill pass at a step whose only events were submits queued behind
  // every pending job carries the last backfill walk on (the core's
  // CycleInput::waiting): it gets that walk's reservations and the new
  // jobs. The walk's other jobs would meet what they met then (no job
  // started or ended since, and priorities that do not move with time),
  // so they would decide the same: still waiting. That holds while the
  // walk started no job behind a reservation (the reservation may then go
  // to other nodes), planned every job within bf_window and tested every
  // job (bf_max_job_test).
  bool carry_ok_ = false;
  std::vector<const core::JobSpec*> carried_;  // the walk's reserved jobs, in queue order
  core::WalkWaiting carried_waiting_;
  std::vector<uint8_t> is_carried_;   // per job: in carried_ (during a pass that carries on)
  size_t carry_from_ = 0;             // pending_[carry_from_, end): this step's submits
  static constexpr size_t kShortestHead = 16;
  size_t head_ = kShortestHead;       // how many head jobs the next such pass gets
  std::vector<core::RunningJob> running_;
  std::vector<int32_t> running_idx_;  // job index of running_[i]
  uint64_t stamps_ = 0;               // RunningJob::stamp of the last start
  std::map<std::pair<std::string, std::string>, int64_t> user_qos_jobs_;  // (user, qos) pending+running
  std::map<std::string, int64_t> qos_jobs_;
  std::vector<std::string> resolved_qos_;
  core::Time now_ = 0;
  core::Time next_full_ = 0;
  bool changed_since_full_ = true;   // an event since the last full pass
  bool time_dependent_ = false;      // priorities change as time passes (age, fair share)
  int64_t done_ = 0;
  Clock::time_point wall0_ = Clock::now();
  int64_t progress_tick_ = 0;
};

bool has_submit_limits(const core::Cluster& c, const std::string& qos) {
  int32_t q = qos.empty() ? -1 : c.find_qos(qos);
  return q >= 0 && (c.qos[q].max_submit_jobs_per_user != core::kNoLimit || c.qos[q].grp_submit_jobs != core::kNoLimit);
}

std::set<std::pair<std::string, std::string>> associations(const Trace& t) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& j : t.jobs) out.emplace(j.spec.account, j.spec.user);
  return out;
}

Driver::Driver(const core::Cluster& c, const Trace& t, const SimOptions& o)
    : c_(c),
      trace_(t),
      opts_(o),
      sched_(c),
      history_(t, out_.jobs),
      ledger_(c),
      fairshare_(c, associations(t), o.fairshare_interval) {
  const core::PriorityParams& prio = c.priority;
  time_dependent_ = prio.kind == core::PriorityKind::kMultifactor && (prio.weight_age > 0 || prio.weight_fairshare > 0);
  head_only_ = !o.whole_queue && !time_dependent_ && std::none_of(t.jobs.begin(), t.jobs.end(), [](const TraceJob& j) {
    return !j.spec.dependency.empty();
  });
  if (head_only_) {
    place_.resize(t.jobs.size());
    part_jobs_.assign(c.partitions.size(), 0);
  }
  const std::size_t n = t.jobs.size();
  specs_.reserve(n);
  for (const auto& j : t.jobs) specs_.push_back(j.spec);
  last_reason_.assign(n, core::Reason::kNone);
  for (const auto& j : t.jobs) {
    for (const auto& item : j.spec.dependency.items) {
      if (item.kind == core::DepKind::kAfter && item.delay > 0) after_delays_[item.job].push_back(item.delay);
    }
  }
  out_.jobs.resize(n);
  reserved_.assign(n, 0);
  is_carried_.assign(n, 0);
  leaving_.assign(n, 0);
  charged_.assign(n, 0);
  slot_.assign(n, -1);
  resolved_qos_.resize(n);
  arrivals_.resize(n);
  for (std::size_t i = 0; i < n; ++i) arrivals_[i] = static_cast<int32_t>(i);
  std::stable_sort(arrivals_.begin(), arrivals_.end(),
                   [&](int32_t a, int32_t b) { return specs_[a].submit_time < specs_[b].submit_time; });
}

core::Time Driver::next_time() const {
  core::Time t = core::kForever;
  if (next_arrival_ < arrivals_.size()) t = std::min(t, specs_[arrivals_[next_arrival_]].submit_time);
  if (!late_arrivals_.empty()) t = std::min(t, late_arrivals_.top().first);
  if (!completions_.empty()) t = std::min(t, completions_.top().first);
  if (!wakeups_.empty()) t = std::min(t, *wakeups_.begin());
  // The periodic pass matters only while something could still change, and
  // only when something did change since the last one: with priorities that
  // do not move with time (no age or fair-share weight), a full pass over
  // the same running and pending jobs starts nothing the last one did not.
  const bool could_change = !running_.empty() || t != core::kForever;
  const bool worth_it = changed_since_full_ || time_dependent_ || opts_.whole_queue;
  if (!pending_.empty() && c_.sched.bf_interval > 0 && could_change && worth_it) t = std::min(t, next_full_);
  return t;
}

Result<SimResult> Driver::run() {
  if (!arrivals_.empty()) {
    now_ = specs_[arrivals_.front()].submit_time;
    next_full_ = now_;
    out_.last_end = now_;
  }
  while (true) {
    core::Time t = next_time();
    if (t != core::kForever) {
      if (auto st = step(t); !st) return st.error();
      report_progress(false);
      continue;
    }
    if (pending_.empty()) break;
    // Nothing left to happen: one last full pass (the last one may have been
    // a quick pass that did not look at every job); if it starts nothing,
    // what is still pending can never start.
    std::size_t before = running_.size();
    if (auto st = run_pass(core::PassKind::kFull, true); !st) return st.error();
    if (running_.size() == before) break;
  }
  drop_leftovers();
  out_.first_submit = arrivals_.empty() ? 0 : trace_.jobs[arrivals_.front()].spec.submit_time;
  ledger_.close(out_.last_end);
  out_.nodes = ledger_.totals();
  out_.stats.wall_s = seconds_since(wall0_);
  report_progress(true);
  return std::move(out_);
}

Status Driver::step(core::Time t) {
  now_ = t;
  ++out_.stats.events;
  arrived_.clear();
  const size_t queued_before = pending_.size();
  const core::JobSpec* old_tail = pending_.empty() ? nullptr : pending_.back();
  bool changed = complete_until(t);
  bool stale = changed;
  bool carry_on = carry_ok_ && !changed;
  if (arrive_until(t)) {
    changed = true;
    stale = stale || !std::all_of(arrived_.begin(), arrived_.end(), [&](int32_t idx) { return behind_settled(idx); });
    // Queued behind every job that was pending: pending_ (in queue order)
    // still starts with those (a job queued ahead of one moves it back).
    carry_on = carry_on && (queued_before == 0 || pending_[queued_before - 1] == old_tail);
  } else {
    carry_on = false;  // nothing new to decide
  }
  while (!wakeups_.empty() && *wakeups_.begin() <= t) {
    wakeups_.erase(wakeups_.begin());
    changed = stale = true;
    carry_on = false;
  }
  if (changed && !carry_on) carry_ok_ = false;  // the last walk no longer stands
  const int64_t test_limit = c_.sched.bf_max_job_test;
  if (test_limit != core::kNoLimit && test_limit >= 0 && pending_.size() > static_cast<size_t>(test_limit)) {
    carry_on = false;
  }
  carry_from_ = queued_before;
  if (fairshare_.due(t)) {
    for (std::size_t i = 0; i < running_.size(); ++i) {
      fairshare_.charge(running_[i], charged_[running_idx_[i]], t);
      charged_[running_idx_[i]] = t;
    }
    fairshare_.recompute(t);
  }
  // The backfill timer ticks on a grid from the first submit; a tick that
  // fell while the queue was empty (or was skipped: nothing to decide) did
  // nothing, so only a tick at t runs, wherever the last one was.
  const Seconds interval = c_.sched.bf_interval;
  bool full = interval == 0 || (interval > 0 && t >= next_full_ && (t - next_full_) % interval == 0);
  if (interval > 0 && t >= next_full_) next_full_ = t - (t - next_full_) % interval + interval;
  changed_since_full_ |= stale;
  if (pending_.empty()) return {};
  if (full && (changed_since_full_ || time_dependent_ || opts_.whole_queue)) {
    changed_since_full_ = false;
    return run_pass(core::PassKind::kFull, false, carry_on);
  }
  if (changed) return run_pass(core::PassKind::kQuick);
  return {};
}

bool Driver::complete_until(core::Time t) {
  bool any = false;
  while (!completions_.empty() && completions_.top().first <= t) {
    int32_t idx = completions_.top().second;
    completions_.pop();
    finish(idx, t);
    any = true;
  }
  return any;
}

bool Driver::arrive_until(core::Time t) {
  bool any = false;
  while (next_arrival_ < arrivals_.size() && specs_[arrivals_[next_arrival_]].submit_time <= t) {
    int32_t idx = arrivals_[next_arrival_++];
    const TraceJob& j = trace_.jobs[idx];
    int32_t pred = j.preceding > 0 ? history_.index_of(j.preceding) : -1;
    const bool pred_live = pred >= 0 && (out_.jobs[pred].state == JobState::kPending || out_.jobs[pred].state == JobState::kRunning);
    if (pred_live) {
      followers_[j.preceding].push_back(idx);  // SWF feedback: wait for the preceding job to end
      continue;
    }
    submit(idx, t);
    any = true;
  }
  while (!late_arrivals_.empty() && late_arrivals_.top().first <= t) {
    submit(late_arrivals_.top().second, t);
    late_arrivals_.pop();
    any = true;
  }
  return any;
}

void Driver::release_followers(core::JobId id, core::Time t) {
  auto it = followers_.find(id);
  if (it == followers_.end()) return;
  for (int32_t f : it->second) {
    core::Time at = std::max(specs_[f].submit_time, t + trace_.jobs[f].think_time);
    late_arrivals_.emplace(at, f);
  }
  followers_.erase(it);
}

void Driver::submit(int32_t idx, core::Time t) {
  core::JobSpec& s = specs_[idx];
  JobRecord& r = out_.jobs[idx];
  r.submit = t;
  s.submit_time = t;
  core::SubmitContext ctx;
  core::SubmitVerdict v = core::check_submit(c_, s, ctx);
  if (v.accepted && has_submit_limits(c_, v.qos)) {  // they need the counts under the resolved QOS
    ctx.user_jobs_per_qos[v.qos] = user_qos_jobs_[{s.user, v.qos}];
    ctx.jobs_per_qos[v.qos] = qos_jobs_[v.qos];
    v = core::check_submit(c_, s, ctx);
  }
  if (!v.accepted) {
    r.state = JobState::kRejected;
    r.note = v.error + (v.drover_line.empty() ? "" : " (" + v.drover_line + ")");
    ++done_;
    release_followers(s.id, t);
    return;
  }
  resolved_qos_[idx] = v.qos;
  ++user_qos_jobs_[{s.user, v.qos}];
  ++qos_jobs_[v.qos];
  if (s.dependency.empty()) s.eligible_time = std::max(t, s.begin_time);
  ++s.revision;
  for (const auto& item : s.dependency.items) {  // after:ID+minutes on a job that already started
    int32_t target = item.kind == core::DepKind::kAfter ? history_.index_of(item.job) : -1;
    if (target >= 0 && out_.jobs[target].started() && out_.jobs[target].start + item.delay > t) {
      wakeups_.insert(out_.jobs[target].start + item.delay);
    }
  }
  if (s.begin_time > t) wakeups_.insert(s.begin_time);
  enqueue(idx);
  arrived_.push_back(idx);
}

// A job that joins the queue behind where the last full pass settled
// changes nothing a full pass would decide: the jobs ahead of it meet the
// same running jobs and free resources (no job started or ended since),
// and it only gets its reason. Its partitions must be ones the queue
// already blocked.
bool Driver::behind_settled(int32_t idx) const {
  if (!head_only_ || !settled_full_) return false;
  const core::QueuePlace& p = place_[idx];
  if (!p.can_run || !(settled_key_ < p.key)) return false;
  return std::all_of(p.partitions.begin(), p.partitions.end(),
                     [&](int32_t part) { return settled_parts_[static_cast<size_t>(part)] != 0; });
}

void Driver::enqueue(int32_t idx) {
  const core::JobSpec* s = &specs_[idx];
  if (!head_only_) {
    pending_.push_back(s);
    return;
  }
  place_[idx] = sched_.queue_place(*s, now_, fairshare_.factors());
  count_in_queue(idx, +1);
  const core::QueueKey& key = place_[idx].key;
  auto at = std::upper_bound(pending_.begin(), pending_.end(), key,
                             [&](const core::QueueKey& k, const core::JobSpec* p) { return k < place_[index_of(p)].key; });
  pending_.insert(at, s);
}

std::vector<uint8_t> Driver::partitions_in_queue() const {
  std::vector<uint8_t> out(part_jobs_.size(), 0);
  for (size_t p = 0; p < part_jobs_.size(); ++p) out[p] = part_jobs_[p] > 0;
  return out;
}

void Driver::count_in_queue(int32_t idx, int sign) {
  if (!head_only_) return;
  const core::QueuePlace& p = place_[idx];
  if (!p.can_run) cannot_run_ += sign;
  for (int32_t part : p.partitions) part_jobs_[static_cast<size_t>(part)] += sign;
}

Status Driver::run_pass(core::PassKind kind, bool whole_queue, bool carry_on) {
  core::CycleInput in;
  in.now = now_;
  in.running = running_;
  in.pending = pending_;
  in.fairshare = fairshare_.factors();
  in.history = &history_;
  core::CycleOptions opts;
  opts.pass = kind;
  // The replay needs decisions, not the estimated starts of jobs without a
  // reservation (the core's decisions do not depend on them).
  opts.estimate_unreserved = false;
  opts.plan_behind_blocked = false;
  const bool may_settle = kind == core::PassKind::kQuick || c_.sched.policy == core::QueuePolicy::kFcfs;
  const bool head = head_only_ && !whole_queue && cannot_run_ == 0 && may_settle && pending_.size() > head_;
  size_t given = head ? head_ : pending_.size();
  if (head) {
    queue_parts_ = partitions_in_queue();
    in.queue_partitions = queue_parts_;
  }
  // A backfill walk the next pass may carry on (Driver::carry_ok_).
  const bool walk = head_only_ && !whole_queue && kind == core::PassKind::kFull &&
                    c_.sched.policy == core::QueuePolicy::kBackfill;
  opts.report_waiting = walk;
  carry_on = carry_on && walk;  // step() asks only while carry_ok_
  std::vector<const core::JobSpec*> carried;
  if (carry_on) {
    carried = carried_;
    carried.insert(carried.end(), pending_.begin() + static_cast<std::ptrdiff_t>(carry_from_), pending_.end());
    for (const core::JobSpec* s : carried_) is_carried_[index_of(s)] = 1;
    in.waiting = &carried_waiting_;
  }
  in.queue_length = pending_.size();
  auto t0 = Clock::now();
  core::CycleResult res;
  if (carry_on) {
    in.pending = carried;
    res = sched_.run_cycle(in, opts);
    ++out_.stats.carried_passes;
  }
  while (!carry_on) {
    in.pending = std::span<const core::JobSpec* const>(pending_).first(given);
    res = sched_.run_cycle(in, opts);
    if (given == pending_.size() || res.stats.settled >= 0) break;
    given = std::min(pending_.size(), given * 4);  // the head was not enough: a longer one
  }
  if (head) {
    const size_t walked = res.stats.settled >= 0 ? static_cast<size_t>(res.stats.settled) : given;
    head_ = std::max<size_t>(kShortestHead, 2 * walked);
    out_.stats.head_passes += given < pending_.size();
  }
  out_.stats.core_wall_s += seconds_since(t0);
  ++(kind == core::PassKind::kFull ? out_.stats.full_passes : out_.stats.quick_passes);
  if (kind == core::PassKind::kFull) {
    // Jobs this pass started after it had made a reservation run in the
    // next one, and that reservation may then go to other nodes at the same
    // start (the least-free node wins the tie), which can let another job
    // start: the next tick runs.
    const bool fcfs = c_.sched.policy == core::QueuePolicy::kFcfs;
    if (res.stats.started_behind_reservation > 0) changed_since_full_ = true;
    // A job planned beyond bf_window may come within it as time passes,
    // and a later tick would then reserve for it.
    if (res.stats.beyond_window > 0) changed_since_full_ = true;
    settled_full_ = fcfs && head_only_ && res.stats.settled > 0 && res.stats.beyond_window == 0;
    if (settled_full_) {
      // in.pending is in queue order (head_only_): the last job the walk decided
      settled_key_ = place_[index_of(in.pending[static_cast<size_t>(res.stats.settled) - 1])].key;
      settled_parts_ = partitions_in_queue();
    }
  } else if (!res.starts.empty()) {
    changed_since_full_ = true;  // a start the last full pass did not decide
  }
  if (opts_.on_cycle) opts_.on_cycle(in, opts, res);
  // (after on_cycle: `in` may point at the waiting this replaces)
  carry_ok_ = walk && res.stats.started_behind_reservation == 0 && res.stats.beyond_window == 0 &&
              res.stats.tested == static_cast<int64_t>(in.pending.size());
  if (carry_ok_) {
    carried_.clear();
    for (const core::PendingPlan& p : res.pending) {
      if (p.reserved) carried_.push_back(p.job);
    }
    carried_waiting_ = std::move(res.waiting);
  }
  for (auto& d : res.starts) {
    if (auto st = start(d); !st) return st;
  }
  for (const auto& p : res.pending) {
    if (!is_carried_[index_of(p.job)]) note_pending(p);  // a carried job: as the walk it carries on left it
  }
  for (const core::JobSpec* s : carried) is_carried_[index_of(s)] = 0;
  std::erase_if(pending_, [&](const core::JobSpec* s) {
    if (leaving_[index_of(s)] == 0) return false;
    count_in_queue(index_of(s), -1);
    return true;
  });
  return {};
}

void Driver::record_start(int32_t idx, const core::StartDecision& d, Seconds run) {
  JobRecord& r = out_.jobs[idx];
  r.start = now_;
  r.end = now_ + run;
  r.partition = d.partition;
  r.qos = d.qos;
  r.nodes = static_cast<int32_t>(d.alloc.nodes.size());
  r.cpus = d.alloc.total_cpus();
  for (const auto& take : d.alloc.nodes) {
    r.gpus += ledger_.gpus_of(take);
    r.mem_mb += take.mem_mb;
  }
  r.how = reserved_[idx] ? StartHow::kReserved
                         : (d.kind == core::StartKind::kBackfilled ? StartHow::kBackfilled : StartHow::kImmediate);
  r.state = JobState::kRunning;
}

// What the job holds in each partition its nodes belong to (for the plots).
void Driver::record_shares(int32_t idx, const core::Allocation& alloc) {
  std::map<int32_t, PartitionShare> shares;
  for (const auto& take : alloc.nodes) {
    for (int32_t p : c_.nodes[take.node].partitions) {
      auto& s = shares[p];
      s.job = idx;
      s.partition = p;
      s.cpus += take.cpus;
      s.gpus += ledger_.gpus_of(take);
    }
  }
  for (const auto& [p, s] : shares) out_.shares.push_back(s);
}

Status Driver::start(core::StartDecision& d) {
  const int32_t idx = index_of(d.job);
  const TraceJob& j = trace_.jobs[idx];
  JobRecord& r = out_.jobs[idx];
  // OverTimeLimit: a job that outruns its limit ends TIMEOUT that much later.
  const Seconds over = d.partition >= 0 ? c_.partitions[static_cast<std::size_t>(d.partition)].over_time : 0;
  const Seconds hard = d.time_limit == kInfinite || over == kInfinite ? kInfinite : d.time_limit + over;
  Seconds run = j.run_time < 0 ? d.time_limit : std::min(j.run_time, hard);
  if (run == kInfinite) {
    return Error{fmt::format("job {} ({}): it runs to its time limit (--run-to-limit) but the limit is UNLIMITED",
                             j.label, j.where)};
  }
  record_start(idx, d, run);
  const bool killed = j.run_time >= 0 && j.run_time > hard;
  leaving_[idx] = killed ? 2 : 1;  // 2: will end TIMEOUT
  charged_[idx] = now_;
  ledger_.apply(d.alloc, +1, now_);
  record_shares(idx, d.alloc);
  core::RunningJob rj{d.job, d.partition, d.qos, now_, d.end, std::move(d.alloc)};
  rj.stamp = ++stamps_;  // never changed while it runs: the core keeps what it holds between passes
  slot_[idx] = static_cast<int32_t>(running_.size());
  running_.push_back(std::move(rj));
  running_idx_.push_back(idx);
  completions_.emplace(r.end, idx);
  if (auto it = after_delays_.find(d.job->id); it != after_delays_.end()) {
    for (Seconds delay : it->second) wakeups_.insert(now_ + delay);  // after:ID+minutes becomes due then
  }
  return {};
}

void Driver::note_pending(const core::PendingPlan& p) {
  const int32_t idx = index_of(p.job);
  if (p.reserved) reserved_[idx] = 1;
  if (p.tested) last_reason_[idx] = p.reason;
  core::JobSpec& s = specs_[idx];
  if (p.never) {  // it can never run here as configured: it leaves the queue
    JobRecord& r = out_.jobs[idx];
    r.state = JobState::kNeverRan;
    r.note = std::string(core::reason_name(p.reason));
    leaving_[idx] = 1;
    ++done_;
    --user_qos_jobs_[{s.user, resolved_qos_[idx]}];
    --qos_jobs_[resolved_qos_[idx]];
    release_followers(s.id, now_);
    return;
  }
  const bool waits_on_dependency =
      p.reason == core::Reason::kDependency || p.reason == core::Reason::kDependencyNeverSatisfied;
  if (s.eligible_time == 0 && !waits_on_dependency && p.tested) {
    s.eligible_time = now_;  // its dependency is met: age (priority) counts from now
    ++s.revision;
  }
}

void Driver::finish(int32_t idx, core::Time t) {
  JobRecord& r = out_.jobs[idx];
  const TraceJob& j = trace_.jobs[idx];
  const int32_t slot = slot_[idx];
  core::RunningJob& rj = running_[slot];
  fairshare_.charge(rj, charged_[idx], t);
  ledger_.apply(rj.alloc, -1, t);
  r.state = leaving_[idx] == 2 ? JobState::kTimeout : (j.fails ? JobState::kFailed : JobState::kCompleted);
  out_.last_end = std::max(out_.last_end, t);
  const int32_t last = static_cast<int32_t>(running_.size()) - 1;
  if (slot != last) {
    running_[slot] = std::move(running_[last]);
    running_idx_[slot] = running_idx_[last];
    slot_[running_idx_[slot]] = slot;
  }
  running_.pop_back();
  running_idx_.pop_back();
  slot_[idx] = -1;
  const core::JobSpec& s = specs_[idx];
  --user_qos_jobs_[{s.user, resolved_qos_[idx]}];
  --qos_jobs_[resolved_qos_[idx]];
  ++done_;
  release_followers(s.id, t);
}

void Driver::drop_leftovers() {
  for (const core::JobSpec* s : pending_) {
    const int32_t idx = index_of(s);
    JobRecord& r = out_.jobs[idx];
    r.state = JobState::kNeverRan;
    r.note = std::string(core::reason_name(last_reason_[idx]));
    ++done_;
  }
  for (const auto& [pred, waiting] : followers_) {
    for (int32_t f : waiting) {
      out_.jobs[f].state = JobState::kNeverRan;
      out_.jobs[f].note = "its preceding job (SWF field 17) never ended";
    }
  }
  pending_.clear();
}

void Driver::report_progress(bool force) {
  if (!opts_.progress) return;
  if (!force && (++progress_tick_ & 255) != 0) return;
  opts_.progress(Progress{done_, static_cast<int64_t>(trace_.jobs.size()), now_});
}

}  // namespace

Result<SimResult> simulate(const core::Cluster& cluster, const Trace& trace, const SimOptions& opts) {
  Driver d(cluster, trace, opts);
  return d.run();
}

}  // namespace drover::sim
