// How jobs leave RUNNING: their processes ended (finish_job), the controller
// ends them (end_running: cancel, node down), or they go back to the queue
// (requeue_job); and how they pause (suspend_job, resume_job).
#include <algorithm>
#include <csignal>
#include <set>

#include "ctld/accounting.hpp"
#include "ctld/log.hpp"
#include "ctld/persist.hpp"
#include "ctld/state.hpp"
#include "ctld/steps.hpp"

namespace drover::ctld {
namespace {

// Slurm's reason for a job that ended this way (squeue %r, sacct Reason).
const char* end_reason(v1::JobState st) {
  switch (st) {
    case v1::FAILED: return "NonZeroExitCode";
    case v1::TIMEOUT: return "TimeLimit";
    case v1::OUT_OF_MEMORY: return "OutOfMemory";
    case v1::NODE_FAIL: return "NodeDown";
    default: return "None";
  }
}

}  // namespace

void ControllerState::finish_job(Job& j, v1::JobState st, int exit_code, int exit_signal, const std::string& why,
                                 int64_t now, Effects& fx, const char* reason) {
  v1::JobRecord& r = j.rec;
  bool was_running = is_started(r);
  if (r.state() == v1::SUSPENDED) close_suspension(r, now);
  if (was_running) {
    r.set_state(st);
    r.set_end_time(now);
  }
  // Also for a job end_running already moved to its final state (an
  // allocation past its time limit: Reason=TimeLimit, as Slurm's). A script
  // a signal killed keeps NonZeroExitCode on purpose (docs/cli.md).
  r.set_reason(reason ? reason : end_reason(r.state()));
  r.set_completing(false);
  r.set_configuring(false);
  // Preempted (CANCEL): 0:0 however its script ended, as Slurm 22.05's.
  if (!was_running && r.state() == v1::PREEMPTED) exit_code = exit_signal = 0;
  r.set_exit_code(exit_code);
  r.set_exit_signal(exit_signal);
  if (!why.empty()) r.set_state_desc(why);
  end_job_steps(j, now, fx);
  for (const auto& t : j.alloc.nodes) nodes_[t.node].last_busy = now;
  // With Prolog or Epilog set it holds its nodes, COMPLETING, until each
  // node's Epilog has ended (job_scripts.cpp).
  if (!begin_epilogs(j, fx)) j.alloc = core::Allocation{};
  j.terminate_sent = false;
  j.awaiting_node = false;
  put_job(j, fx);
  mail_event(j, kMailEnd, now, fx);
  if (was_running && !settings_.epilog_slurmctld.empty()) fx.scripts.push_back(ctld_script(j, false));
  if (log_enabled(config::kLogInfo)) {
    fx.log.emplace_back(config::kLogInfo, log_name(r) + " ended: " + state_name(r.state()) + " ExitCode=" +
                                              std::to_string(exit_code) + ":" + std::to_string(exit_signal) +
                                              (why.empty() ? "" : " (" + why + ")"));
  }
  counters_.completed += 1;
  if (r.state() == v1::COMPLETED) {
    counters_.completed_ok += 1;
  } else if (r.state() == v1::CANCELLED) {
    counters_.canceled += 1;
  } else {
    counters_.failed += 1;
  }
  fx.reschedule = true;
}

void ControllerState::launch_failed(Job& j, const std::string& why, int64_t now, Effects& fx) {
  // FAILED, Reason=JobLaunchFailure, ExitCode=0:53 and its batch step
  // CANCELLED (end_job_steps), as Slurm 22.05 showed a batch job whose -o
  // named a missing directory on the anchor cluster. StateDesc keeps the why.
  constexpr int kLaunchFailureCode = 53;
  constexpr std::string_view kPrefix = "launch failed: ";  // the agent's words may have it already
  finish_job(j, v1::FAILED, 0, kLaunchFailureCode, why.starts_with(kPrefix) ? why : std::string(kPrefix) + why, now,
             fx, "JobLaunchFailure");
}

void ControllerState::end_running(Job& j, v1::JobState st, const std::string& reason, uint32_t by_uid, int64_t now,
                                  Effects& fx) {
  v1::JobRecord& r = j.rec;
  if (r.state() == v1::SUSPENDED) close_suspension(r, now);  // its processes get SIGCONT with their SIGTERM
  r.set_state(st);
  r.set_end_time(now);
  if (st == v1::CANCELLED) r.set_cancelled_by(by_uid);
  r.set_state_desc(reason);
  core::NodeIndex host = bridge_->find_node(r.batch_host());
  bool reachable = host >= 0 && nodes_[host].responding;
  const bool script_sent = !r.configuring() && j.prologs_pending.empty();
  if (!reachable || !r.desc().batch() || !script_sent) {
    // Nobody can clean up on a node that does not answer: the job is over.
    // An allocation (salloc, srun) has no script to wait for: it is over
    // too, and its steps are ended on their nodes (end_job_steps). So is a
    // job whose script was not sent yet (its PrologSlurmctld or, with
    // PrologFlags=Alloc, its nodes' Prologs still running).
    finish_job(j, st, 0, st == v1::CANCELLED ? SIGKILL : 0, reason, now, fx);
    return;
  }
  r.set_completing(true);
  j.terminate_sent = true;
  put_job(j, fx);
  for (const auto& t : r.alloc().nodes()) {
    fx.commands.push_back(terminate_command(r.job_id(), t.node(), state_name(st), reason));
  }
}

namespace {

// A job back in the queue waits for its hold, if it has one (scontrol hold
// of the running job, requeuehold), as Slurm shows it at once.
std::string requeued_reason(const v1::JobRecord& r) {
  if (r.hold() != v1::HOLD_NONE && !r.held_reason().empty()) return r.held_reason();
  return r.hold() == v1::HOLD_ADMIN ? "JobHeldAdmin" : r.hold() == v1::HOLD_USER ? "JobHeldUser" : "None";
}

}  // namespace

void ControllerState::requeue_started(Job& j, const std::string& why, uint32_t by_uid, int64_t now, Effects& fx,
                                      EndNotice told) {
  v1::JobRecord& r = j.rec;
  const std::size_t mails = fx.mails.size();
  const std::size_t commands = fx.commands.size();
  end_running(j, v1::CANCELLED, why, by_uid, now, fx);
  fx.mails.resize(mails);  // a requeue mails Requeued, not Ended
  tell_ends_as(fx.commands, commands, told);
  mail_event(j, kMailRequeue, now, fx);
  if (!r.completing()) return requeue_job(j, now, fx);
  // Back to the queue once its processes have ended (the end report clears completing).
  return_to_queue(j, now, fx);
}

void ControllerState::return_to_queue(Job& j, int64_t now, Effects& fx, int exit_code) {
  v1::JobRecord& r = j.rec;
  record_requeued_run(j, now, fx, exit_code);
  r.set_state(v1::PENDING);
  r.set_restart_count(r.restart_count() + 1);
  r.clear_cancelled_by();
  if (r.desc().batch()) {
    // As Slurm 22.05 on the anchor cluster: SubmitTime becomes the requeue's
    // time, and the job waits (BeginTime) until its EligibleTime, the
    // credential lifetime and a second later.
    r.set_submit_time(now);
    r.set_eligible_time(0);
    r.mutable_desc()->set_begin_time(std::max(r.desc().begin_time(), now + settings_.requeue_wait_s));
  }
  const bool held = r.hold() != v1::HOLD_NONE;
  r.set_reason(!held && r.desc().begin_time() > now ? "BeginTime" : requeued_reason(r));
}

// The run a requeue ends, kept for sacct -D as Slurm's database keeps it: the
// job as it ran, REQUEUED 0:0 (PREEMPTED 0:0 when a preemption requeued it)
// with its batch step CANCELLED 0:15 (REQUEUED and FAILED with `exit_code`,
// the script's, for RequeueExit), and its srun steps; the next run starts
// its step ids again from 0.
void ControllerState::record_requeued_run(Job& j, int64_t now, Effects& fx, int exit_code) {
  const v1::JobRecord& r = j.rec;
  if (r.start_time() <= 0 || r.state() == v1::PENDING) return;
  v1::JobRecord run = r;
  run.set_state(r.preempted() ? v1::PREEMPTED : v1::REQUEUED);
  run.set_completing(false);
  if (run.end_time() <= 0) run.set_end_time(now);
  run.set_exit_code(exit_code);
  run.set_exit_signal(0);
  run.clear_cancelled_by();
  std::vector<v1::StepInfo> steps;
  bool open = false;  // a step some node has not reported ended
  if (auto it = steps_.find(r.job_id()); it != steps_.end()) {
    for (auto& [id, s] : it->second.steps) {
      if (id < 0) continue;
      if (!step_final(s)) {
        s.set_state("CANCELLED");
        s.set_end_time(now);
      }
      open = open || !all_nodes_ended(s);
      steps.push_back(s);
      fx.batch.erase(store::Erase{kStepsTable, step_name(r.job_id(), id)});
    }
    std::erase_if(it->second.steps, [](const auto& kv) { return kv.first >= 0; });
    it->second.next_id = 0;
  }
  put_run_record(run, steps, now, fx);
  if (open) requeued_runs_[r.job_id()] = RequeuedRun{std::move(run), std::move(steps), now};
}

void ControllerState::put_run_record(const v1::JobRecord& run, const std::vector<v1::StepInfo>& steps, int64_t now,
                                     Effects& fx) const {
  v1::AccountingJob a = accounting_job(*bridge_, run, steps, now);
  a.mutable_job()->mutable_desc()->clear_script();
  a.mutable_job()->mutable_desc()->clear_environment();
  std::string payload;
  a.SerializeToString(&payload);
  fx.batch.put(store::Put{kJobRunsTable, std::to_string(run.job_id()) + "." + std::to_string(run.restart_count()),
                          std::move(payload), {{"job_id", run.job_id()}}});
}

// As Slurm 22.05 did on the anchor cluster: the run is recorded REQUEUED
// with the script's exit code and its batch step FAILED with it; the job
// waits out the credential lifetime (BeginTime), or with RequeueExitHold is
// held in SPECIAL_EXIT (JobHeldUser); scontrol keeps showing the exit code.
// A script that a signal ended, and a job cancelled or timed out, are not
// requeued.
bool ControllerState::requeue_on_exit(Job& j, const v1::StepReport& s, int64_t end, Effects& fx) {
  v1::JobRecord& r = j.rec;
  const v1::JobState st = state_from_agent(s.state());
  const int code = s.exit_code();
  if (!r.desc().batch() || r.state() != v1::RUNNING || r.completing() || s.exit_signal() != 0 ||
      (st != v1::COMPLETED && st != v1::FAILED) || code < 0 || code > 255) {
    return false;
  }
  const bool hold = settings_.requeue_exit_hold.test(static_cast<std::size_t>(code));
  if (!hold && !settings_.requeue_exit.test(static_cast<std::size_t>(code))) return false;
  r.set_state(v1::FAILED);
  r.set_end_time(end);
  r.set_exit_code(code);
  r.set_exit_signal(0);
  end_job_steps(j, end, fx);  // the batch step FAILED with the code; srun steps still running are ended
  r.set_state_desc("requeued: the batch script exited " + std::to_string(code) +
                   (hold ? " (RequeueExitHold)" : " (RequeueExit)"));
  mail_event(j, kMailRequeue, end, fx);
  return_to_queue(j, end, fx, code);
  if (hold) {
    r.set_hold(v1::HOLD_USER);
    r.set_special_exit(true);
    r.set_reason("JobHeldUser");
  }
  refresh_spec(j);  // the scheduler sees it held, or waiting for its BeginTime
  free_requeued_run(j, fx);
  if (log_enabled(config::kLogInfo)) fx.log.emplace_back(config::kLogInfo, log_name(r) + " " + r.state_desc());
  return true;
}

void ControllerState::free_requeued_run(Job& j, Effects& fx) {
  if (begin_epilogs(j, fx)) {
    put_job(j, fx);
  } else {
    release_nodes(j, fx);
  }
}

void ControllerState::requeue_job(Job& j, int64_t now, Effects& fx) {
  v1::JobRecord& r = j.rec;
  if (is_started(r)) mail_event(j, kMailRequeue, now, fx);  // scontrol requeue mails for itself
  return_to_queue(j, now, fx);
  r.set_completing(false);
  r.set_start_time(0);
  r.set_end_time(0);
  forget_suspensions(r);
  r.set_batch_host("");
  r.set_launched(false);
  r.clear_alloc();
  j.alloc = core::Allocation{};
  j.launch_sent = false;
  j.terminate_sent = false;
  j.awaiting_node = false;
  refresh_spec(j);
  put_job(j, fx);
  fx.reschedule = true;
}

// scontrol suspend, as Slurm's: every process of the job is stopped
// (SIGSTOP), its CPUs are lent to other jobs while its memory and GPUs stay
// its own (cycle_inputs, node_infos), and its time limit pauses: the batch
// host enforces none until the resume.
void ControllerState::suspend_job(Job& j, int64_t now, Effects& fx) {
  v1::JobRecord& r = j.rec;
  const int64_t ran = r.suspend_time() ? r.pre_suspend_s() + (now - r.suspend_time()) : now - r.start_time();
  r.set_pre_suspend_s(std::max<int64_t>(0, ran));
  r.set_suspend_time(now);
  r.set_state(v1::SUSPENDED);
  stop_on_nodes(j, fx);
}

void ControllerState::stop_on_nodes(const Job& j, Effects& fx) const {
  const v1::JobRecord& r = j.rec;
  signal_job_everywhere(j, SIGSTOP, fx);
  if (r.desc().batch() && r.time_limit_s() != kInfinite) fx.commands.push_back(time_limit_command(r, 0));
  step_time_limits(j, true, fx);  // srun steps with their own -t stop counting too
}

int64_t ControllerState::over_time_s(const v1::JobRecord& r) const {
  int64_t minutes = cfg_.over_time_limit;
  if (const config::PartitionConfig* p = cfg_.find_partition(r.partition()); p && p->over_time_limit) {
    minutes = *p->over_time_limit;
  }
  return minutes == config::kUnlimited ? -1 : minutes * 60;
}

void ControllerState::step_time_limits(const Job& j, bool none, Effects& fx) const {
  auto it = steps_.find(j.rec.job_id());
  if (it == steps_.end()) return;
  for (const auto& [id, s] : it->second.steps) {
    if (step_final(s) || s.time_limit_s() <= 0) continue;
    for (const auto& n : s.nodes()) {
      AgentCommand cmd = time_limit_command(j.rec, none ? 0 : step_time_limit(j.rec, s, enforced_time_limit(j.rec)));
      cmd.node = n.node();
      cmd.step_id = id;
      fx.commands.push_back(std::move(cmd));
    }
  }
}

void ControllerState::confirm_launch(Job& j, Effects& fx) {
  if (j.rec.launched()) return;
  j.rec.set_launched(true);
  put_job(j, fx);
  // Suspended before its script started: the SIGSTOP may have found nothing
  // to stop, and the launch brought a time limit. Stop it now.
  if (j.rec.state() == v1::SUSPENDED) stop_on_nodes(j, fx);
}

// scontrol resume: SIGCONT everywhere, and the end moves on by the pause.
// Its CPUs are counted as its own again even if another job took them
// meanwhile (Slurm's warning: resuming may oversubscribe them).
void ControllerState::resume_job(Job& j, int64_t now, Effects& fx) {
  v1::JobRecord& r = j.rec;
  const int64_t paused = close_suspension(r, now);
  if (r.end_time()) r.set_end_time(r.end_time() + paused);
  r.set_state(v1::RUNNING);
  signal_job_everywhere(j, SIGCONT, fx);
  if (r.desc().batch() && r.time_limit_s() != kInfinite) fx.commands.push_back(time_limit_command(r, enforced_time_limit(r)));
  // The job's srun steps with their own -t: their end moves on by the pause too.
  if (auto it = steps_.find(r.job_id()); it != steps_.end()) {
    for (auto& [id, s] : it->second.steps) {
      if (step_final(s) || s.time_limit_s() <= 0) continue;
      s.set_suspended_s(s.suspended_s() + paused);
      put_step(s, fx);
    }
  }
  step_time_limits(j, false, fx);
}

AgentCommand time_limit_command(const v1::JobRecord& r, int64_t seconds) {
  AgentCommand cmd;
  cmd.kind = AgentCommand::kSetTimeLimit;
  cmd.node = r.batch_host();
  cmd.job_id = r.job_id();
  cmd.time_limit_s = seconds;
  return cmd;
}

void tell_ends_as(std::vector<AgentCommand>& commands, std::size_t from, EndNotice told) {
  for (std::size_t i = from; i < commands.size(); ++i) {
    AgentCommand& c = commands[i];
    if (c.kind != AgentCommand::kTerminate) continue;
    c.requeue = told == EndNotice::kRequeue;
    c.preempt = told == EndNotice::kPreempt;
    if (c.preempt) c.state = "CANCELLED";  // the steps' own state (the job's is PREEMPTED)
  }
}

AgentCommand terminate_command(int64_t job_id, const std::string& node, const std::string& state,
                               std::string reason, int64_t step_id) {
  AgentCommand cmd;
  cmd.kind = AgentCommand::kTerminate;
  cmd.node = node;
  cmd.job_id = job_id;
  cmd.step_id = step_id;
  cmd.state = state;
  cmd.reason = std::move(reason);
  return cmd;
}

AgentCommand signal_command(int64_t job_id, const std::string& node, int sig, int64_t step_id) {
  AgentCommand cmd;
  cmd.kind = AgentCommand::kSignal;
  cmd.node = node;
  cmd.job_id = job_id;
  cmd.step_id = step_id;
  cmd.signal = sig;
  return cmd;
}

void ControllerState::signal_job_everywhere(const Job& j, int sig, Effects& fx) const {
  std::set<std::string> nodes;
  if (j.rec.desc().batch() && !j.rec.batch_host().empty()) nodes.insert(j.rec.batch_host());
  if (auto it = steps_.find(j.rec.job_id()); it != steps_.end()) {
    for (const auto& [id, s] : it->second.steps) {
      if (step_final(s)) continue;
      for (const auto& n : s.nodes()) nodes.insert(n.node());
    }
  }
  for (const auto& node : nodes) {
    AgentCommand cmd = signal_command(j.rec.job_id(), node, sig);
    cmd.every_step = true;
    fx.commands.push_back(std::move(cmd));
  }
}

void ControllerState::mail_event(const Job& j, unsigned event, int64_t now, Effects& fx) const {
  const v1::JobRecord& r = j.rec;
  if (r.desc().mail_type().empty()) return;
  const MailContext ctx{settings_.mail_domain, settings_.cluster_name};
  std::vector<Mail> mails;
  const bool summary = r.array_job_id() > 0 && !(mail_bits(r.desc().mail_type()) & kMailArrayTasks) &&
                       (event == kMailBegin || event == kMailEnd);
  if (!summary) {
    mails = job_mail(r, event, now, ctx);
  } else {
    std::vector<const v1::JobRecord*> elements{&r};
    if (auto it = arrays_.find(r.array_job_id()); it != arrays_.end()) {
      for (core::JobId id : it->second) {
        auto e = jobs_.find(id);
        if (id == r.job_id() || e == jobs_.end()) continue;
        const v1::JobRecord& other = e->second.rec;
        // The summary goes with the first element to start and the last to end.
        if (event == kMailBegin && other.start_time() > 0) return;
        if (event == kMailEnd && !is_final(other.state())) return;
        elements.push_back(&other);
      }
    }
    std::sort(elements.begin(), elements.end(),
              [](const v1::JobRecord* a, const v1::JobRecord* b) { return a->job_id() < b->job_id(); });
    mails = array_summary_mail(elements, event, ctx);
  }
  for (auto& m : mails) fx.mails.push_back(std::move(m));
}

void ControllerState::time_limit_mails(int64_t now, Effects& fx) {
  static const std::pair<unsigned, int> kSteps[] = {
      {kMailTimeLimit50, 50}, {kMailTimeLimit80, 80}, {kMailTimeLimit90, 90}, {kMailTimeLimit, 100}};
  for (core::JobId id : active_) {
    Job& j = jobs_.at(id);
    const v1::JobRecord& r = j.rec;
    if (r.state() != v1::RUNNING || r.time_limit_s() == kInfinite || r.time_limit_s() <= 0 ||
        r.desc().mail_type().empty()) {
      continue;
    }
    const unsigned bits = mail_bits(r.desc().mail_type());
    const int64_t ran = std::max<int64_t>(0, now - r.start_time() - r.suspended_s());
    for (const auto& [bit, pct] : kSteps) {
      if (!(bits & bit) || (j.time_mails_sent & bit) || ran * 100 < r.time_limit_s() * pct) continue;
      j.time_mails_sent |= bit;
      mail_event(j, bit, now, fx);
    }
  }
}

// Slurm's --signal without B: goes to every step of the job, not its batch
// shell, once, when the job comes within the signal's seconds of its time
// limit (suspended time not counted). With B: the batch step's own daemon
// sends it (stepd.cpp).
void ControllerState::warn_signals(int64_t now, Effects& fx) {
  for (core::JobId id : active_) {
    Job& j = jobs_.at(id);
    v1::JobRecord& r = j.rec;
    const auto& sig = r.desc().signal();
    if (sig.signal() <= 0 || sig.batch_shell_only() || r.warn_sent() || r.state() != v1::RUNNING ||
        r.time_limit_s() == kInfinite || r.time_limit_s() <= 0) {
      continue;
    }
    if (now < r.start_time() + agent_time_limit(r) - sig.seconds_before()) continue;
    r.set_warn_sent(true);
    put_job(j, fx);
    signal_steps(j, sig.signal(), fx);
  }
}

}  // namespace drover::ctld
