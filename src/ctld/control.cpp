// scancel and scontrol hold/uhold/release/requeue/requeuehold/suspend/resume.
// Each target gets its own result; a refused target changes nothing.
#include <csignal>

#include "common/hostlist.hpp"
#include "ctld/state.hpp"
#include "ctld/steps.hpp"

namespace drover::ctld {
namespace {

v1::JobResult result(const std::string& target, const char* error = nullptr) {
  v1::JobResult r;
  r.set_target(target);
  r.set_ok(error == nullptr);
  if (error) r.set_error(error);
  return r;
}

bool user_matches(const v1::JobRecord& r, const std::string& user) {
  return user.empty() || r.user() == user || std::to_string(r.uid()) == user;
}

bool in_list(const std::string& list, const std::string& value) {
  if (list.empty()) return true;
  std::size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item == value) return true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return false;
}

bool runs_on(const v1::JobRecord& r, const std::set<std::string>& nodes) {
  if (nodes.empty()) return true;
  for (const auto& t : r.alloc().nodes()) {
    if (nodes.count(t.node())) return true;
  }
  return false;
}

bool matches_filters(const v1::JobRecord& r, const v1::CancelRequest& q, const std::set<std::string>& nodes) {
  if (!user_matches(r, q.user())) return false;
  if (!in_list(q.partition(), r.partition()) || !in_list(q.account(), r.account()) || !in_list(q.qos(), r.qos())) {
    return false;
  }
  if (!in_list(q.name(), r.desc().name()) || !in_list(q.reservation(), r.desc().reservation())) return false;
  if (!q.states().empty()) {
    bool any = false;
    for (int s : q.states()) any = any || s == r.state();
    if (!any) return false;
  }
  return runs_on(r, nodes);
}

std::set<std::string> node_set(const std::string& expr) {
  std::set<std::string> out;
  if (expr.empty()) return out;
  if (auto hosts = hostlist_expand(expr)) out.insert(hosts->begin(), hosts->end());
  return out;
}

}  // namespace

std::vector<v1::JobResult> ControllerState::cancel(const Caller& who, const v1::CancelRequest& req, int64_t now,
                                                   Effects& fx) {
  std::vector<v1::JobResult> out;
  std::vector<std::pair<std::string, Job*>> chosen;
  auto nodes = node_set(req.nodelist());
  if (req.targets().empty()) {
    for (core::JobId id : active_) {
      Job& j = jobs_.at(id);
      if (!is_final(j.rec.state()) && matches_filters(j.rec, req, nodes)) chosen.emplace_back(job_label(j.rec), &j);
    }
  }
  for (const auto& t : req.targets()) {
    auto jobs = resolve_target(t);
    if (jobs.empty()) out.push_back(result(t.text(), kInvalidJobId));
    for (Job* j : jobs) {
      if (matches_filters(j->rec, req, nodes)) chosen.emplace_back(t.array_tasks().empty() && jobs.size() == 1 ? t.text() : job_label(j->rec), j);
    }
  }
  for (auto& [label, j] : chosen) {
    if (!may_act_on(who, *j)) {
      out.push_back(result(label, kAccessDenied));
      continue;
    }
    v1::JobRecord& r = j->rec;
    if (is_final(r.state())) {
      // A signal to an ended job: Slurm 22.05's scancel looks for it among
      // the jobs still active and says it does not know it (anchor cluster);
      // cancelling one is "already done" (which scancel does not report).
      out.push_back(result(label, req.signal() != 0 ? kInvalidJobId : kAlreadyDone));
      continue;
    }
    if (req.dry_run()) {
      v1::JobResult& would = out.emplace_back(result(label));
      would.set_name(r.desc().name());
      would.set_partition(r.partition());
      continue;
    }
    // SIGKILL to a whole job is a cancel (CANCELLED by the caller, as the
    // anchor's Slurm 22.05 records `scancel -s KILL` and `-f -s KILL`); with
    // -b it kills the batch shell alone, and the job fails of it.
    bool kill = req.signal() == 0 || (req.signal() == SIGKILL && (!req.batch_only() || is_pending(*j)));
    if (!kill) {
      if (is_pending(*j)) {
        out.push_back(result(label, kCannotAlterNow));
        continue;
      }
      signal_running(*j, req, fx);
      out.push_back(result(label));
      continue;
    }
    std::string why = "cancelled by " + who.describe();
    if (is_pending(*j) && !r.completing()) {
      cancel_pending(*j, who.uid, why, now, fx);
    } else if (is_started(r)) {
      end_running(*j, v1::CANCELLED, why, who.uid, now, fx);
    }
    out.push_back(result(label));
  }
  return out;
}

// A job that never started ends CANCELLED: by `by_uid` (sacct's "CANCELLED
// by UID"), or by no one (an invalid dependency). Jobs waiting on it are
// judged again.
void ControllerState::cancel_pending(Job& j, std::optional<uint32_t> by_uid, const std::string& why, int64_t now,
                                     Effects& fx) {
  v1::JobRecord& r = j.rec;
  r.set_state(v1::CANCELLED);
  r.set_end_time(now);
  if (by_uid) r.set_cancelled_by(*by_uid);
  r.set_state_desc(why);
  put_job(j, fx);
  mail_event(j, kMailEnd, now, fx);
  counters_.canceled += 1;
  fx.reschedule = true;
}

// scancel --signal of a started job, as Slurm 22.05 sends it (SIGKILL
// without -b is a cancel, above): a signal to its srun steps only (the
// batch shell, which would die of most signals while it waits for a
// command, is left alone); -b to the batch shell alone; -f to the batch
// script and all its children (srun passes it on to its step). A job
// without a script (salloc) has only steps.
void ControllerState::signal_running(const Job& j, const v1::CancelRequest& req, Effects& fx) const {
  const v1::JobRecord& r = j.rec;
  if ((req.batch_only() || req.full()) && r.desc().batch()) {
    AgentCommand cmd = signal_command(r.job_id(), r.batch_host(), req.signal());
    cmd.batch_only = req.batch_only() && !req.full();
    fx.commands.push_back(std::move(cmd));
    return;
  }
  signal_steps(j, req.signal(), fx);
}

// A signal to the job's srun steps that still run (not its batch shell).
void ControllerState::signal_steps(const Job& j, int sig, Effects& fx) const {
  auto js = steps_.find(j.rec.job_id());
  if (js == steps_.end()) return;
  for (const auto& [id, s] : js->second.steps) {
    if (id < 0 || step_final(s)) continue;
    for (const auto& n : s.nodes()) {
      if (!n.ended()) fx.commands.push_back(signal_command(j.rec.job_id(), n.node(), sig, id));
    }
  }
}

namespace {

// What `action` may do to a job in its present state; nullptr when allowed.
const char* control_refusal(v1::ControlAction action, const Job& j, const Caller& who) {
  const v1::JobRecord& r = j.rec;
  switch (action) {
    case v1::HOLD:
    case v1::USER_HOLD:
    case v1::RELEASE:
      // A running (or suspended) job may be held too, as in Slurm 22.05: it
      // keeps running at priority 0, and a requeue brings it back held.
      if (is_final(r.state())) return kFinished;
      // A requeued job is pending while its processes end: it may be held
      // or released already (Slurm 22.05 released one it showed CG).
      if (r.completing() && !is_pending(j)) return kAlreadyDone;
      return (action == v1::RELEASE && r.hold() == v1::HOLD_ADMIN && !who.privileged) ? kAccessDenied : nullptr;
    case v1::REQUEUE:
    case v1::REQUEUE_HOLD:
      if (is_pending(j)) return kJobPending;
      if (!r.requeue()) return "Requested operation is presently disabled";  // root too, as Slurm's
      return r.completing() ? kAlreadyDone : nullptr;
    case v1::SUSPEND:
    case v1::RESUME:
      // Slurm's order of checks and words; suspending a suspended job does nothing and is no error.
      if (!who.privileged) return kAccessDenied;
      if (is_pending(j)) return kJobPending;
      if (r.completing() || is_final(r.state())) return kAlreadyDone;
      return action == v1::RESUME && r.state() != v1::SUSPENDED ? "Job is not suspended" : nullptr;
    default:
      return "Requested operation not supported on this job";
  }
}

}  // namespace

void ControllerState::split_array_element(Job& j, Effects& fx) {
  j.rec.set_array_split(true);
  auto it = arrays_.find(j.rec.array_job_id());
  if (it == arrays_.end()) return;
  Job* alone = nullptr;
  int left = 0;
  for (core::JobId id : it->second) {
    auto e = jobs_.find(id);
    if (e == jobs_.end()) continue;
    const v1::JobRecord& r = e->second.rec;
    if (r.state() != v1::PENDING || r.completing() || r.restart_count() != 0 || r.array_split()) continue;
    ++left;
    alone = &e->second;
  }
  if (left != 1) return;
  alone->rec.set_array_split(true);
  put_job(*alone, fx);
}

std::vector<v1::JobResult> ControllerState::top(const Caller& who, const v1::ControlRequest& req, int64_t now,
                                                Effects& fx) {
  std::vector<v1::JobResult> out;
  const bool user_top = cfg_.sched.enable_user_top;
  std::vector<Job*> named;  // in the order given, each once
  for (const auto& t : req.targets()) {
    auto jobs = resolve_target(t);
    if (jobs.empty()) out.push_back(result(t.text(), kInvalidJobId));
    for (Job* j : jobs) {
      std::string label = jobs.size() == 1 ? t.text() : job_label(j->rec);
      if (!who.privileged && !(user_top && who.uid == j->rec.uid())) {
        out.push_back(result(label, kAccessDenied));
      } else if (!is_pending(*j) || j->rec.completing()) {
        out.push_back(result(label, kNotPending));
      } else if (j->rec.hold() != v1::HOLD_NONE) {
        out.push_back(result(label, kJobHeld));  // Slurm 22.05's answer; its place waits for the release
      } else if (std::find(named.begin(), named.end(), j) == named.end()) {
        named.push_back(j);
        out.push_back(result(label));
      }
    }
  }
  if (named.empty()) return out;
  // The queue the first job names: its user, partition, account and QOS
  // (jobs submitted to one partition only); named jobs of another are left.
  // Held jobs (priority 0 until released) and jobs with an operator's
  // Priority= (which nice does not move) are not part of it.
  const v1::JobRecord& first = named.front()->rec;
  auto same_queue = [&](const Job& j) {
    const v1::JobRecord& r = j.rec;
    return is_pending(j) && !r.completing() && r.hold() == v1::HOLD_NONE && !r.has_admin_priority() &&
           r.uid() == first.uid() && r.partition() == first.partition() && r.account() == first.account() &&
           r.qos() == first.qos() && r.partition().find(',') == std::string::npos;
  };
  std::vector<Job*> queue;
  for (core::JobId id : active_) {
    auto it = jobs_.find(id);
    if (it != jobs_.end() && same_queue(it->second)) queue.push_back(&it->second);
  }
  auto by_priority = [](const Job* a, const Job* b) {
    return a->rec.priority() != b->rec.priority() ? a->rec.priority() > b->rec.priority()
                                                  : a->rec.job_id() < b->rec.job_id();
  };
  std::sort(queue.begin(), queue.end(), by_priority);
  std::vector<int64_t> priorities;
  for (const Job* j : queue) priorities.push_back(j->rec.priority());
  std::vector<Job*> order;
  for (Job* j : named) {
    if (same_queue(*j)) order.push_back(j);
  }
  for (Job* j : queue) {
    if (std::find(order.begin(), order.end(), j) == order.end()) order.push_back(j);
  }
  for (size_t k = 0; k < order.size(); ++k) {
    v1::JobRecord& r = order[k]->rec;
    const int64_t delta = r.priority() - priorities[k];  // a higher nice lowers the priority by as much
    if (delta == 0) continue;
    r.set_nice(static_cast<int32_t>(std::clamp<int64_t>(r.nice() + delta, -2147483645, 2147483645)));
    r.set_priority(priorities[k]);
    refresh_spec(*order[k]);
    put_job(*order[k], fx);
    fx.reschedule = true;
  }
  (void)now;
  return out;
}

std::vector<v1::JobResult> ControllerState::control(const Caller& who, const v1::ControlRequest& req, int64_t now,
                                                    Effects& fx) {
  if (req.action() == v1::TOP) return top(who, req, now, fx);
  std::vector<v1::JobResult> out;
  const bool suspends = req.action() == v1::SUSPEND || req.action() == v1::RESUME;
  for (const auto& t : req.targets()) {
    auto jobs = resolve_target(t);
    const auto missing = missing_tasks(t, jobs);
    const std::size_t first_result = out.size();
    // Slurm 22.05's scontrol suspend and resume say this of a job it does not know.
    if (jobs.empty() && missing.empty()) {
      out.push_back(result(t.text(), suspends ? "Unexpected message received" : kInvalidJobId));
    }
    for (Job* j : jobs) {
      std::string label = jobs.size() == 1 && missing.empty() ? t.text() : job_label(j->rec);
      if (!may_act_on(who, *j)) {
        // Slurm 22.05's words differ by operation (anchor cluster).
        const bool hold_or_release =
            req.action() == v1::HOLD || req.action() == v1::USER_HOLD || req.action() == v1::RELEASE;
        out.push_back(result(label, hold_or_release ? kInvalidUserId : kAccessDenied));
        continue;
      }
      if (const char* why = control_refusal(req.action(), *j, who)) {
        out.push_back(result(label, why));
        continue;
      }
      v1::JobRecord& r = j->rec;
      const bool holds = req.action() == v1::HOLD || req.action() == v1::REQUEUE_HOLD ||
                         (req.action() == v1::REQUEUE && r.state() == v1::SUSPENDED);
      v1::HoldKind hold = holds && who.privileged
                              ? v1::HOLD_ADMIN
                              : v1::HOLD_USER;
      switch (req.action()) {
        case v1::HOLD:
        case v1::USER_HOLD:
          // A user's hold leaves an operator's as it is (accepted, as Slurm
          // 22.05 on the anchor cluster): else releasing their own hold
          // would end the operator's.
          if (r.hold() == v1::HOLD_ADMIN && !who.privileged) break;
          r.clear_held_reason();
          r.set_hold(hold);
          r.set_reason(hold == v1::HOLD_ADMIN ? "JobHeldAdmin" : "JobHeldUser");
          break;
        case v1::RELEASE:
          if (r.hold() == v1::HOLD_NONE) break;  // nothing to release: no error, as in Slurm
          note_db_reason(r);  // it waited held
          r.clear_held_reason();
          r.set_hold(v1::HOLD_NONE);
          r.set_special_exit(false);
          r.set_reason("None");  // as Slurm's, also for a requeued job still waiting out its BeginTime
          break;
        case v1::SUSPEND:
          if (r.state() != v1::SUSPENDED) suspend_job(*j, now, fx);
          break;
        case v1::RESUME:
          resume_job(*j, now, fx);
          break;
        default: {
          // A suspended job goes back to the queue held, as in Slurm.
          if (req.action() == v1::REQUEUE_HOLD || r.state() == v1::SUSPENDED) r.set_hold(hold);
          // Slurm 22.05's reason for it (squeue "job requeued in held state").
          if (req.action() == v1::REQUEUE_HOLD) r.set_held_reason("job requeued in held state");
          // State=SpecialExit: SPECIAL_EXIT (SE) until released, as Slurm's.
          if (req.action() == v1::REQUEUE_HOLD && req.special_exit()) r.set_special_exit(true);
          if (is_started(r)) {
            requeue_started(*j, "requeued by " + who.describe(), who.uid, now, fx);
          } else {
            requeue_job(*j, now, fx);
          }
        }
      }
      if (!t.array_tasks().empty() && is_pending(*j)) split_array_element(*j, fx);
      refresh_spec(*j);
      const bool hold_change =
          req.action() == v1::HOLD || req.action() == v1::USER_HOLD || req.action() == v1::RELEASE;
      if (hold_change && is_started(r)) {
        // The scheduling passes price pending jobs only: a running job shows
        // priority 0 while held and its priority again once released.
        r.set_priority(priority_now(*j, now).total);
      }
      put_job(*j, fx);
      fx.reschedule = true;
      out.push_back(result(label));
    }
    add_missing_tasks(out, first_result, t.job_id(), missing);
  }
  return out;
}

}  // namespace drover::ctld
