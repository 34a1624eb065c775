// Scheduling: builds the core's cycle input from the state, runs the cycle
// through CoreBridge and applies its decisions (starts become durable
// before their Launch is sent; pending jobs get their reason and plan).
#include <algorithm>
#include <chrono>
#include <optional>
#include <string_view>

#include "common/hostlist.hpp"
#include "ctld/log.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

core::JobProgress progress_of(const v1::JobRecord& r) {
  switch (r.state()) {
    case v1::PENDING: return core::JobProgress::kPending;
    case v1::RUNNING:
    case v1::SUSPENDED: return core::JobProgress::kRunning;
    case v1::COMPLETED: return core::JobProgress::kCompletedOk;
    case v1::CANCELLED: return core::JobProgress::kCancelled;
    default: return core::JobProgress::kFailed;
  }
}

// When a job began, for after:J+M: a job cancelled before it started counts
// from its cancel, as Slurm records it (0: not begun).
core::Time began_at(const v1::JobRecord& r) {
  return r.state() == v1::CANCELLED && r.start_time() == 0 ? r.end_time() : r.start_time();
}

// Outcomes for dependencies, from the jobs in memory. A job no longer in
// memory is kUnknown (Slurm treats a dependency on a purged job as met).
class StateHistory : public core::JobHistory {
 public:
  StateHistory(const std::map<core::JobId, Job>& jobs, const std::map<core::JobId, std::vector<core::JobId>>& arrays)
      : jobs_(jobs), arrays_(arrays) {}

  core::JobOutcome outcome(core::JobId job, int64_t array_task) const override {
    auto arr = arrays_.find(job);
    if (arr == arrays_.end()) {
      auto it = jobs_.find(job);
      if (it == jobs_.end()) return {};
      return {progress_of(it->second.rec), began_at(it->second.rec)};
    }
    return array_outcome(arr->second, array_task);
  }

 private:
  core::JobOutcome array_outcome(const std::vector<core::JobId>& ids, int64_t task) const {
    bool any_open = false, any_started = false, any_failed = false, any_cancelled = false, any = false;
    core::Time start = 0;
    for (core::JobId id : ids) {
      auto it = jobs_.find(id);
      if (it == jobs_.end()) continue;
      const v1::JobRecord& r = it->second.rec;
      if (task >= 0 && r.array_task_id() != task) continue;
      any = true;
      core::JobProgress p = progress_of(r);
      any_open = any_open || p == core::JobProgress::kPending || p == core::JobProgress::kRunning;
      any_started = any_started || p != core::JobProgress::kPending;
      any_failed = any_failed || p == core::JobProgress::kFailed;
      any_cancelled = any_cancelled || p == core::JobProgress::kCancelled;
      if (const core::Time began = began_at(r); began && (start == 0 || began < start)) start = began;
    }
    if (!any) return {};
    if (any_open) return {any_started ? core::JobProgress::kRunning : core::JobProgress::kPending, start};
    if (any_failed) return {core::JobProgress::kFailed, start};
    if (any_cancelled) return {core::JobProgress::kCancelled, start};
    return {core::JobProgress::kCompletedOk, start};
  }

  const std::map<core::JobId, Job>& jobs_;
  const std::map<core::JobId, std::vector<core::JobId>>& arrays_;
};

// `silent`: ControllerState::silent (a node that misses its heartbeats
// takes no new job, as Slurm's controller takes a node whose ping failed
// out of the available ones).
core::NodeAvail availability(const NodeRt& n, bool silent) {
  if (n.down || !n.responding || silent) return core::NodeAvail::kDown;
  if (n.drain || n.fail) return core::NodeAvail::kDrain;
  return core::NodeAvail::kUp;
}

int64_t micros_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

struct ControllerState::CycleInputs {
  std::vector<core::NodeAvail> avail;
  std::vector<core::RunningJob> running;
  std::vector<const core::JobSpec*> pending;  // outside every reservation
  std::map<std::string, std::vector<const core::JobSpec*>> in_reservation;  // --reservation's, by name
  std::vector<core::NodeBlock> blocks;
  std::unique_ptr<StateHistory> history;
  const core::FairShareFactors* fairshare = nullptr;

  core::CycleInput input(int64_t now) const {
    core::CycleInput in;
    in.now = now;
    in.node_avail = avail;
    in.running = running;
    in.pending = pending;
    in.blocks = blocks;
    in.history = history.get();
    in.fairshare = fairshare;
    return in;
  }

  // For the jobs outside every reservation: each reservation's nodes are
  // closed over its window.
  void outside(const std::map<std::string, Reservation>& resvs, int64_t now) {
    for (const auto& [name, r] : resvs) {
      if (r.end <= now) continue;
      for (core::NodeIndex n : r.nodes) blocks.push_back({n, r.start, r.end});
    }
  }
  // For the jobs of reservation r: only its nodes, and those only from its
  // start (its jobs may run on past its end, as Slurm lets them).
  void inside(const Reservation& r, int64_t now) {
    std::vector<uint8_t> in(avail.size(), 0);
    for (core::NodeIndex n : r.nodes) {
      if (n >= 0 && static_cast<size_t>(n) < in.size()) in[static_cast<size_t>(n)] = 1;
    }
    for (size_t i = 0; i < avail.size(); ++i) {
      if (!in[i]) avail[i] = core::NodeAvail::kDown;
    }
    if (r.start > now) {
      for (core::NodeIndex n : r.nodes) blocks.push_back({n, now, r.start});
    }
  }
};

ControllerState::CycleInputs ControllerState::cycle_inputs(int64_t now) const {
  CycleInputs ci;
  for (const auto& n : nodes_) ci.avail.push_back(availability(n, silent(n, now)));
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    if (j.rec.epilog_nodes_size() > 0) {
      // Over, its Epilogs running: nothing starts on those nodes until
      // they end, as on Slurm's COMPLETING nodes (an Epilog may clean up
      // after the job's user).
      for (const auto& name : j.rec.epilog_nodes()) {
        if (core::NodeIndex ni = bridge_->find_node(name); ni >= 0) ci.blocks.push_back({ni, now, now + 1});
      }
      continue;
    }
    if (holds_resources(j)) {
      core::RunningJob r;
      r.spec = &j.spec;
      r.partition = std::max(0, bridge_->find_partition(j.rec.partition()));
      r.qos = bridge_->find_qos(j.rec.qos());
      r.start = j.rec.start_time();
      r.end = j.rec.time_limit_s() == kInfinite ? core::kForever : j.rec.start_time() + agent_time_limit(j.rec);
      r.alloc = j.alloc;
      if (j.rec.state() == v1::SUSPENDED) {
        // Its CPUs are lent out while it is stopped; memory and GPUs stay
        // its own, until it resumes and has what it had left to run.
        if (r.end != core::kForever) r.end = now + std::max<int64_t>(1, r.end - j.rec.suspend_time());
        for (auto& t : r.alloc.nodes) {
          t.cores.clear();
          t.cpus = 0;
        }
      } else if (j.rec.completing() || r.end < now) {
        r.end = now + 1;  // about to free: the plan assumes it ends soon
      } else if (j.rec.preempt_at() > 0) {
        r.end = std::min(r.end, std::max(now + 1, j.rec.preempt_at()));  // preempted, in its GraceTime
      }
      // The same record as last cycle (both still unstamped here) keeps its
      // stamp: the core then keeps what the job holds instead of counting
      // it again.
      if (j.run_stamp == 0 || j.counted_revision != j.spec.revision || !(j.counted == r)) {
        j.run_stamp = ++run_stamps_;
        j.counted = r;
        j.counted_revision = j.spec.revision;
      }
      r.stamp = j.run_stamp;
      ci.running.push_back(std::move(r));
    } else if (is_pending(j) && !earlier_run_ending(id)) {
      const std::string& r = j.rec.desc().reservation();
      (r.empty() ? ci.pending : ci.in_reservation[r]).push_back(&j.spec);
    }
  }
  ci.history = std::make_unique<StateHistory>(jobs_, arrays_);
  ci.fairshare = &fairshare_;
  return ci;
}

// A requeued job whose earlier run still has srun steps its nodes have not
// reported ended waits for them (at most KillWait + SlurmdTimeout): its next
// run's steps take the same ids on the same nodes.
bool ControllerState::earlier_run_ending(core::JobId id) const {
  auto it = requeued_runs_.find(id);
  return it != requeued_runs_.end() && std::any_of(it->second.steps.begin(), it->second.steps.end(),
                                                    [](const v1::StepInfo& s) { return !all_nodes_ended(s); });
}

void ControllerState::schedule(core::PassKind pass, int64_t now, Effects& fx) {
  if (pass == core::PassKind::kFull || fairshare_dirty_) refresh_fairshare(now, fx);
  // PriorityFlags=CALCULATE_RUNNING: a running (or suspended) job's priority
  // moves on with its age and fair share, as a pending one's; otherwise it
  // stays what it had at its start (Slurm 22.05 on the anchor cluster: 6393
  // then 6586 two minutes on with the flag, 6586 kept without it).
  if (settings_.calculate_running && pass == core::PassKind::kFull) {
    for (core::JobId id : active_) {
      Job& j = jobs_.at(id);
      if (is_pending(j) || !is_started(j.rec) || j.rec.completing()) continue;
      j.rec.set_priority(priority_now(j, now).total);
    }
  }
  end_jobs_past_deadline(now, fx);
  CycleInputs ci = cycle_inputs(now);
  if (ci.pending.empty() && ci.in_reservation.empty()) return;
  // The jobs of a reservation are planned apart, after the others (they use
  // disjoint nodes over its window): each reservation's pass sees the
  // starts of the passes before it.
  ci.outside(reservations_, now);
  if (!ci.pending.empty()) {
    auto t0 = std::chrono::steady_clock::now();
    core::CycleResult result = bridge_->run_cycle(ci.input(now), pass);
    int64_t us = micros_since(t0);
    counters_.last_cycle_us = us;
    counters_.max_cycle_us = std::max(counters_.max_cycle_us, us);
    counters_.total_cycle_us += us;
    (pass == core::PassKind::kFull ? counters_.cycles_full : counters_.cycles_quick) += 1;
    PassCounters& pc = pass == core::PassKind::kFull ? counters_.full : counters_.quick;
    pc.cycles += 1;
    pc.last_us = us;
    pc.max_us = std::max(pc.max_us, us);
    pc.total_us += us;
    pc.last_depth = result.stats.tested;
    pc.total_depth += result.stats.tested;
    pc.last_queue = result.stats.pending;
    pc.total_queue += result.stats.pending;
    pc.last_when = now;
    pc.started += result.stats.started;
    pc.backfilled += result.stats.backfilled;
    pc.last_planned = result.stats.planned;
    pc.last_reserved = result.stats.reserved;
    apply_cycle(result, pass, now, fx);
    node_reasons(result, now);
    if (auto preempting = preemptors(result, now); !preempting.empty()) {
      CycleInputs after = cycle_inputs(now);  // with this pass's starts
      after.outside(reservations_, now);
      preempt_for(preempting, after.input(now), fx);
    }
    const bool full = pass == core::PassKind::kFull;
    if ((full && log_flag(config::flag_backfill())) || log_enabled(config::kLogDebug)) {
      fx.log.emplace_back(config::kLogInfo,
                          std::string(full ? "backfill" : "sched") + ": " + std::to_string(result.stats.pending) +
                              " pending, tested " + std::to_string(result.stats.tested) + ", started " +
                              std::to_string(result.stats.started) + " (" + std::to_string(result.stats.backfilled) +
                              " backfilled), planned " + std::to_string(result.stats.planned) + ", reserved " +
                              std::to_string(result.stats.reserved) + ", " + std::to_string(us) + " usec");
    }
  }
  for (const auto& [name, specs] : ci.in_reservation) {
    auto it = reservations_.find(name);
    if (it == reservations_.end()) {
      // Its reservation ended or was deleted: it can never start as it is.
      for (const core::JobSpec* s : specs) {
        Job* j = find_job(s->id);
        if (!j) continue;
        j->rec.set_reason("ReservationDeleted");
        j->planned_start = 0;
        j->sched_nodes.clear();
      }
      continue;
    }
    const Reservation& r = it->second;
    CycleInputs rc = cycle_inputs(now);  // with the starts made above
    rc.pending = specs;
    rc.inside(r, now);
    core::CycleResult result = bridge_->run_cycle(rc.input(now), pass);
    apply_cycle(result, pass, now, fx);
    for (const auto& p : result.pending) {
      Job* j = find_job(p.job->id);
      if (!j || !p.tested) continue;
      const bool plain_wait = p.reason == core::Reason::kResources || p.reason == core::Reason::kPriority;
      if (!r.active(now) && plain_wait) j->rec.set_reason("Reservation");  // Slurm's: waiting for it to start
      if (j->planned_start >= r.end) {  // no start inside the window
        j->planned_start = 0;
        j->sched_nodes.clear();
      }
    }
  }
}

// Slurm's reasons for a job outside the reservations that waits for
// reserved nodes: "ReqNodeNotAvail, May be reserved for other job" when it
// asked (-w) for a node of a reservation not yet over (as Slurm 22.05 said
// on the anchor cluster, also for one still to come); "ReqNodeNotAvail,
// Reserved for maintenance" when a MAINT reservation on its partition's
// nodes lies between now and its planned start (or it has none).
void ControllerState::node_reasons(const core::CycleResult& result, int64_t now) {
  const core::Cluster& c = bridge_->cluster();
  std::vector<uint8_t> held(c.nodes.size(), 0);
  std::vector<const Reservation*> maint;
  for (const auto& [name, r] : reservations_) {
    if (r.end <= now) continue;
    for (core::NodeIndex n : r.nodes) held[static_cast<size_t>(n)] = 1;
    if (r.maint) maint.push_back(&r);
  }
  std::vector<std::optional<PartitionRoom>> rooms(c.partitions.size());
  for (const auto& p : result.pending) {
    if (!p.tested || (p.reason != core::Reason::kResources && p.reason != core::Reason::kPriority)) continue;
    Job* j = find_job(p.job->id);
    if (!j) continue;
    if (!p.job->nodelist.empty()) {
      auto names = hostlist_expand(p.job->nodelist);
      std::vector<std::string> unavailable;
      bool reserved = false;
      for (const auto& n : names ? *names : std::vector<std::string>{}) {
        const core::NodeIndex i = c.find_node(n);
        if (i < 0) continue;
        reserved = reserved || held[static_cast<size_t>(i)];
        const NodeRt& rt = nodes_[static_cast<size_t>(i)];
        if (availability(rt, silent(rt, now)) != core::NodeAvail::kUp) unavailable.push_back(n);
      }
      if (reserved) {
        j->rec.set_reason("ReqNodeNotAvail, May be reserved for other job");
        continue;
      }
      if (!unavailable.empty()) j->rec.set_reason("ReqNodeNotAvail, UnavailableNodes:" + hostlist_compress(unavailable));
    } else if (const int32_t part = bridge_->find_partition(j->rec.partition()); part >= 0) {
      auto& room = rooms[static_cast<size_t>(part)];
      if (!room) room = partition_room(part, now);
      if (std::max(1, p.job->min_nodes) > room->up) {
        j->rec.set_reason(room->reason);
        continue;
      }
    }
    if (maint.empty()) continue;
    const int32_t part = bridge_->find_partition(j->rec.partition());
    if (part < 0) continue;
    const auto& part_nodes = c.partitions[static_cast<size_t>(part)].nodes;
    for (const Reservation* r : maint) {
      const bool before_plan = j->planned_start == 0 || j->planned_start >= r->start;
      const bool on_partition = std::any_of(r->nodes.begin(), r->nodes.end(), [&](core::NodeIndex n) {
        return std::find(part_nodes.begin(), part_nodes.end(), n) != part_nodes.end();
      });
      if (before_plan && on_partition) {
        j->rec.set_reason("ReqNodeNotAvail, Reserved for maintenance");
        break;
      }
    }
  }
}

void ControllerState::apply_cycle(const core::CycleResult& result, core::PassKind pass, int64_t now, Effects& fx) {
  for (const auto& d : result.starts) start_job(d, now, fx);
  for (const auto& p : result.pending) {
    Job* j = find_job(p.job->id);
    if (j) note_db_reason(j->rec);  // the reason the last pass left
    if (!j || !p.tested) continue;
    const bool own_hold = (p.reason == core::Reason::kJobHeldUser || p.reason == core::Reason::kJobHeldAdmin) &&
                          !j->rec.held_reason().empty();
    const std::string reason = own_hold ? j->rec.held_reason() : CoreBridge::reason_name(p.reason);
    if (reason != j->rec.reason() && log_flag(config::flag_trace_jobs())) {
      fx.log.emplace_back(config::kLogInfo, "trace: " + log_name(j->rec) + " pending, Reason " + j->rec.reason() +
                                                " -> " + reason);
    }
    j->rec.set_reason(reason);
    if (p.reason == core::Reason::kDependencyNeverSatisfied && kills_on_invalid_dependency(*j)) {
      cancel_invalid_dependency(*j, now, fx);
      continue;
    }
    j->rec.set_priority(p.priority);
    // PriorityFlags=INCR_ONLY: what sprio and a later revision start from
    // (the spec's floor is read at each use, never cached).
    j->spec.priority_floor = std::max(j->spec.priority_floor, p.priority);
    j->rec.set_last_sched_eval(now);
    j->never = p.never;
    bool held = p.reason == core::Reason::kJobHeldUser || p.reason == core::Reason::kJobHeldAdmin;
    // Not yet eligible: a held job too (Slurm 22.05 records no eligible
    // time for it, and sacct never lists it, even once cancelled so).
    bool waiting = p.reason == core::Reason::kDependency || p.reason == core::Reason::kBeginTime ||
                   p.reason == core::Reason::kDependencyNeverSatisfied || p.reason == core::Reason::kJobArrayTaskLimit ||
                   held;
    // A quick pass plans nothing: the full pass's planned start and nodes
    // (squeue --start, SchedNodeList) stand until the next full pass, as
    // Slurm's main scheduler leaves the backfill's, unless the job can no
    // longer start on resources alone (held, waiting on another job, never).
    bool keep_plan = pass == core::PassKind::kQuick && p.start == core::kNoPlan && !p.never && !held &&
                     p.reason != core::Reason::kDependency && p.reason != core::Reason::kDependencyNeverSatisfied;
    if (!keep_plan) {
      // scontrol show job's Scheduler=: the full pass is Drover's backfill
      // (Slurm marks a pending job its backfill evaluated "Backfill:*").
      j->rec.set_scheduler(pass == core::PassKind::kFull ? "Backfill:*" : "Main");
      j->planned_start = p.start == core::kNoPlan ? 0 : p.start;
      std::vector<std::string> names;
      for (auto ni : p.nodes) names.push_back(bridge_->cluster().nodes[ni].name);
      j->sched_nodes = hostlist_compress(names);
    }
    if (!waiting && j->rec.eligible_time() == 0) {
      j->rec.set_eligible_time(now);
      j->spec.eligible_time = now;
      j->spec.revision += 1;
    }
  }
}

// Each item of the job's dependency as the scheduler judged it at its last
// look (a singleton: waiting while the job's reason says so, or while it is held).
std::vector<core::DepItemState> ControllerState::dependency_states(const Job& j) const {
  StateHistory history(jobs_, arrays_);
  std::vector<core::DepItemState> out;
  for (const core::DepItem& it : j.spec.dependency.items) {
    if (it.kind == core::DepKind::kSingleton) {
      // A held job's singleton is not looked at until it is released: Slurm 22.05 showed
      // singleton(unfulfilled) for a held job with no other job of its name.
      const bool waits = j.rec.reason() == "Dependency" || j.rec.hold() != v1::HOLD_NONE;
      out.push_back(waits ? core::DepItemState::kWait : core::DepItemState::kMet);
    } else {
      out.push_back(core::dependency_item_state(it, j.spec, history, j.rec.last_sched_eval()));
    }
  }
  return out;
}

bool ControllerState::kills_on_invalid_dependency(const Job& j) const {
  const v1::JobDescriptor& d = j.rec.desc();
  return d.has_kill_on_invalid_dep() ? d.kill_on_invalid_dep() : settings_.kill_invalid_depend;
}

// --kill-on-invalid-dep=yes (or DependencyParameters=kill_invalid_depend):
// a job whose dependency can never be satisfied is cancelled, as Slurm's
// (sacct: CANCELLED, by no one).
void ControllerState::cancel_invalid_dependency(Job& j, int64_t now, Effects& fx) {
  fx.log.emplace_back(config::kLogInfo, log_name(j.rec) + " cancelled: its dependency can never be satisfied");
  j.rec.set_reason("None");
  cancel_pending(j, std::nullopt, "cancelled: its dependency can never be satisfied", now, fx);
}

// sbatch --deadline: a pending job that could no longer end by its deadline
// if it started now (its --time-min, else its time limit) ends DEADLINE
// without running, as Slurm 22.05's did on the anchor cluster (Reason
// DeadLine, started and ended at once, ExitCode 1:0 in sacct); a held job
// waits for its release first.
void ControllerState::end_jobs_past_deadline(int64_t now, Effects& fx) {
  std::vector<Job*> late;
  for (core::JobId id : active_) {
    Job& j = jobs_.at(id);
    const v1::JobDescriptor& d = j.rec.desc();
    if (d.deadline() <= 0 || !is_pending(j) || j.rec.hold() != v1::HOLD_NONE) continue;
    const int64_t limit = j.rec.time_limit_s();
    const int64_t need = d.time_min_s() > 0 ? d.time_min_s() : limit == kInfinite ? 0 : limit;
    if (now + need > d.deadline()) late.push_back(&j);
  }
  for (Job* j : late) {
    v1::JobRecord& r = j->rec;
    r.set_state(v1::DEADLINE);
    r.set_reason("DeadLine");
    r.set_start_time(now);
    r.set_end_time(now);
    r.set_exit_code(1);
    r.set_state_desc("its deadline " + format_timestamp(r.desc().deadline()) + " is too near to run " +
                     (r.desc().time_min_s() > 0 ? "its --time-min" : "its time limit"));
    fx.log.emplace_back(config::kLogInfo, log_name(r) + " ended DEADLINE: " + r.state_desc());
    put_job(*j, fx);
    mail_event(*j, kMailEnd, now, fx);
    counters_.failed += 1;
    fx.reschedule = true;
  }
}

// A job whose partition has fewer nodes that take jobs now than it asks
// for (-N, at least one) waits in Slurm 22.05's words on the anchor cluster:
// "ReqNodeNotAvail, UnavailableNodes:hm01" when some are DOWN (or not
// responding) and not drained, else "Nodes required for job are DOWN,
// DRAINED or reserved for jobs in higher priority partitions" (its only
// node drained, or DOWN+DRAIN).
ControllerState::PartitionRoom ControllerState::partition_room(int32_t part, int64_t now) const {
  const core::Cluster& c = bridge_->cluster();
  PartitionRoom room;
  std::vector<std::string> down;
  for (core::NodeIndex n : c.partitions[static_cast<size_t>(part)].nodes) {
    const NodeRt& rt = nodes_[static_cast<size_t>(n)];
    const core::NodeAvail a = availability(rt, silent(rt, now));
    if (a == core::NodeAvail::kUp) ++room.up;
    if (a == core::NodeAvail::kDown && !rt.drain && !rt.fail) down.push_back(c.nodes[static_cast<size_t>(n)].name);
  }
  room.reason = down.empty() ? std::string(kNodesRequiredUnavailable)
                             : "ReqNodeNotAvail, UnavailableNodes:" + hostlist_compress(down);
  return room;
}

// As Slurm's scheduler, at the start of each pass, keeps a pending job's
// standing reason unless it is None, Priority or Resources (its
// state_reason_prev_db, which sacct shows): the reason word, without what
// follows a comma ("ReqNodeNotAvail, UnavailableNodes:..."), a hold the
// controller set by its kind.
// It runs for every pending job each pass: views, and a copy only when the
// kept reason changes.
void ControllerState::note_db_reason(v1::JobRecord& r) {
  std::string_view reason = r.reason();
  if (!r.held_reason().empty() && reason == r.held_reason()) {
    reason = r.hold() == v1::HOLD_ADMIN ? "JobHeldAdmin" : "JobHeldUser";
  }
  if (reason == kNodesRequiredUnavailable) return;  // Slurm's words for Resources
  reason = reason.substr(0, reason.find(','));
  if (reason.empty() || reason == "None" || reason == "Priority" || reason == "Resources") return;
  if (r.db_reason() != reason) r.set_db_reason(std::string(reason));
}

void ControllerState::start_job(const core::StartDecision& d, int64_t now, Effects& fx) {
  Job* j = find_job(d.job->id);
  if (!j || d.alloc.nodes.empty()) return;
  const core::Cluster& c = bridge_->cluster();
  j->alloc = d.alloc;
  v1::JobRecord& r = j->rec;
  note_db_reason(r);
  r.set_state(v1::RUNNING);
  r.set_reason("None");
  r.set_start_time(now);
  // With --deadline and --time-min the job runs until its deadline at most,
  // as Slurm cuts its limit (end_jobs_past_deadline left only jobs whose
  // --time-min fits).
  int64_t limit = d.time_limit;
  if (r.desc().deadline() > now && r.desc().time_min_s() > 0 && (limit == kInfinite || now + limit > r.desc().deadline())) {
    limit = r.desc().deadline() - now;
  }
  r.set_end_time(limit == kInfinite ? 0 : now + limit);
  forget_suspensions(r);  // a requeued job's earlier run (the completing path skips requeue_job)
  r.set_time_limit_s(limit);
  r.set_partition(c.partitions[d.partition].name);
  if (d.qos >= 0) r.set_qos(c.qos[d.qos].name);
  *r.mutable_alloc() = allocation_to_proto(c, d.alloc);
  r.set_batch_host(c.nodes[d.alloc.nodes.front().node].name);
  r.set_scheduler(d.kind == core::StartKind::kBackfilled ? "Backfill" : "Main");
  r.set_last_sched_eval(now);
  r.set_priority(d.priority);
  r.set_launched(false);
  if (r.eligible_time() == 0) r.set_eligible_time(now);
  j->time_mails_sent = 0;
  r.set_warn_sent(false);
  r.set_preempted(false);
  r.set_preempt_at(0);
  r.set_preempt_requeue(false);
  r.set_preempted_by(0);
  mail_event(*j, kMailBegin, now, fx);
  j->planned_start = 0;
  j->sched_nodes.clear();
  j->launch_sent = true;
  if (!r.desc().batch()) r.set_launched(true);  // salloc / srun allocation: nothing runs until its steps
  if (!settings_.prolog_slurmctld.empty()) {
    // PrologSlurmctld first (CONFIGURING, as Slurm shows it); the rest once it has ended.
    r.set_configuring(true);
    fx.scripts.push_back(ctld_script(*j, true));
  }
  put_job(*j, fx);
  if (r.desc().batch()) start_batch_step(*j, now, fx);
  if (!r.configuring()) configured(*j, fx);
  for (const auto& t : d.alloc.nodes) nodes_[t.node].last_busy = now;
  counters_.started += 1;
  if (log_enabled(config::kLogInfo)) {
    std::vector<std::string> names;
    for (const auto& t : d.alloc.nodes) names.push_back(c.nodes[t.node].name);
    fx.log.emplace_back(config::kLogInfo, log_name(r) + " started: NodeList=" + hostlist_compress(names) +
                                              " CPUs=" + std::to_string(d.alloc.total_cpus()) + " Partition=" +
                                              r.partition() +
                                              (d.kind == core::StartKind::kBackfilled ? " (backfilled)" : ""));
  }
}

void ControllerState::configured(Job& j, Effects& fx) {
  if (settings_.prolog && settings_.prolog_alloc) {
    order_prologs(j, fx);
  } else if (j.rec.desc().batch()) {
    launch_batch(j, fx);
  }
}

void ControllerState::launch_batch(Job& j, Effects& fx) {
  if (j.rec.reason() == "Prolog") j.rec.set_reason("None");  // PrologFlags=Alloc: they are over
  AgentCommand cmd;
  cmd.kind = AgentCommand::kLaunch;
  cmd.node = j.rec.batch_host();
  cmd.job_id = j.rec.job_id();
  cmd.launch = build_launch(j, j.alloc.nodes.empty() ? core::NodeTake{} : j.alloc.nodes.front());
  fx.commands.push_back(std::move(cmd));
}

void ControllerState::launch_result(int64_t job_id, int32_t restart_count, const v1::LaunchReply& reply, int64_t now,
                                    Effects& fx) {
  Job* j = find_job(job_id);
  if (!j || j->rec.restart_count() != restart_count || !is_started(j->rec)) return;
  if (reply.started() || reply.already_known()) {
    confirm_launch(*j, fx);
    return;
  }
  if (reply.prolog_failed()) return prolog_failed(*j, j->rec.batch_host(), reply.failure(), now, fx);
  // The agent could not start it (unknown user, missing directory, ...).
  launch_failed(*j, reply.failure(), now, fx);
}

void ControllerState::launch_unreachable(int64_t job_id, int32_t restart_count, const std::string& why, int64_t now,
                                         Effects& fx) {
  Job* j = find_job(job_id);
  if (!j || j->rec.restart_count() != restart_count || !is_started(j->rec) || j->rec.launched()) return;
  // The call failed, but the agent may have started the job before the
  // connection broke: nothing is decided here. The node's next report lists
  // the step (adopted) or not (launched again); a node that stays silent is
  // lost after SlurmdTimeout and its jobs are requeued.
  j->launch_sent = false;
  j->rec.set_state_desc("launch on " + j->rec.batch_host() + " unconfirmed: " + why);
  (void)now;
  (void)fx;
}

void ControllerState::plan_test_only(const core::JobSpec& asked, const std::string& reservation, int64_t now,
                                     v1::SubmitReply& reply) {
  // As Slurm 22.05's --test-only: a hold makes no difference, and a job that
  // may not begin before --begin is planned on what is free now, from then on
  // (the plan cannot see which running jobs will have ended by then).
  core::JobSpec spec = asked;
  spec.hold = core::Hold::kNone;
  const int64_t begin = spec.begin_time > now ? spec.begin_time : 0;
  spec.begin_time = 0;
  CycleInputs ci = cycle_inputs(now);
  ci.pending = {&spec};
  if (auto it = reservations_.find(reservation); it != reservations_.end()) {
    ci.inside(it->second, now);
  } else {
    ci.outside(reservations_, now);
  }
  core::CycleResult r = bridge_->run_cycle(ci.input(now), core::PassKind::kFull);
  const core::Cluster& c = bridge_->cluster();
  if (!r.starts.empty()) {
    const auto& d = r.starts.front();
    std::vector<std::string> names;
    for (const auto& t : d.alloc.nodes) names.push_back(c.nodes[t.node].name);
    reply.set_planned_start(std::max(now, begin));
    reply.set_planned_nodes(hostlist_compress(names));
    reply.set_planned_partition(c.partitions[d.partition].name);
    int64_t cpus = 0;
    for (const auto& t : d.alloc.nodes) cpus += t.cpus;
    reply.set_planned_cpus(cpus);
    return;
  }
  if (!r.pending.empty()) {
    const auto& p = r.pending.front();
    reply.set_planned_start(p.start == core::kNoPlan ? 0 : std::max(p.start, begin));
    std::vector<std::string> names;
    for (auto ni : p.nodes) names.push_back(c.nodes[ni].name);
    reply.set_planned_nodes(hostlist_compress(names));
    if (p.partition >= 0) reply.set_planned_partition(c.partitions[p.partition].name);
    reply.add_warnings("job would wait: " + CoreBridge::reason_name(p.reason));
  }
}

}  // namespace drover::ctld
