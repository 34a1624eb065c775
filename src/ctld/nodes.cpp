// Agents' registrations and heartbeats, node state changes by operators,
// and the housekeeping timer (nodes that stop answering, old jobs).
#include <algorithm>

#include "common/node_reasons.hpp"
#include "common/strings.hpp"
#include "ctld/log.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

v1::StepRef step_ref(const v1::StepReport& s) { return s.step(); }

bool batch_step(const v1::StepRef& s) { return s.step_id() == -2; }

}  // namespace

Result<v1::NodeReportReply> ControllerState::node_report(const v1::NodeReport& report, bool registering, int64_t now,
                                                         Effects& fx) {
  core::NodeIndex ni = bridge_->find_node(report.node());
  if (ni < 0) {
    return make_error("node '" + report.node() + "' is not in " + settings_.conf_path +
                      "; start the agent with a NodeName the controller's slurm.conf declares");
  }
  NodeRt& n = nodes_[ni];
  bool new_session = !n.registered || n.agent_start != report.agent_start_time();
  n.registered = true;
  n.last_heard = now;
  if (n.last_busy == 0) n.last_busy = now;  // never busy: idle since it registered (Slurm's LastBusyTime)
  n.agent_start = report.agent_start_time();
  if (report.boot_time()) n.boot_time = report.boot_time();
  if (!report.version().empty()) n.version = report.version();
  if (!report.os().empty()) n.os = report.os();
  if (!report.arch().empty()) n.arch = report.arch();
  if (!report.hostname().empty()) n.hostname = report.hostname();
  n.cpu_load = report.cpu_load();
  n.free_mem_mb = report.free_memory_mb();
  bool was_down_unresponsive = n.down && n.reason == "Not responding";
  if (!n.responding && was_down_unresponsive && settings_.return_to_service) {
    n.down = false;
    n.reason.clear();
    put_node(ni, now, fx);
  }
  n.responding = true;
  if (registering) {
    // Slurm drains a node that registers with less than configured, with a reason naming both numbers.
    if (!report.drain_reason().empty() && !(n.drain && n.reason == report.drain_reason())) {
      n.drain = true;
      n.invalid_reg = true;
      n.reason = report.drain_reason();
      n.reason_time = now;
      n.reason_uid = settings_.slurm_user_uid;
      n.reason_user = cfg_.slurm_user;
      put_node(ni, now, fx);
    }
  }
  apply_gpu_health(ni, report.gpu_health(), now, fx);
  v1::NodeReportReply reply;
  reply.set_heartbeat_interval_s(static_cast<int32_t>(settings_.heartbeat_s));
  reply.set_cluster(settings_.cluster_name);
  std::set<int64_t> reported;
  for (const auto& s : report.steps()) {
    if (batch_step(s.step())) reported.insert(s.step().job_id());
    apply_step_report(ni, s, now, fx, reply);
  }
  reconcile_node(ni, reported, new_session, now, fx);
  if (new_session) restop_suspended(ni, fx);
  epilogs_reported(ni, report, now, fx, reply);
  if (new_session) epilogs_owed(ni, reply);
  if (settings_.health_states) reply.set_node_state(cpu_state(ni));
  fx.reschedule = true;
  return reply;
}

std::string ControllerState::cpu_state(core::NodeIndex ni) const {
  int64_t cpus = 0;
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    if (!is_started(j.rec) || j.rec.state() == v1::SUSPENDED) continue;  // a suspended job's CPUs are lent out
    for (const auto& t : j.alloc.nodes) cpus += t.node == ni ? t.cpus : 0;
  }
  if (cpus == 0) return "IDLE";
  return cpus >= bridge_->cluster().nodes[ni].cpus ? "ALLOCATED" : "MIXED";
}

void ControllerState::apply_step_report(core::NodeIndex ni, const v1::StepReport& s, int64_t now, Effects& fx,
                                        v1::NodeReportReply& reply) {
  if (!batch_step(s.step())) return apply_srun_step_report(ni, s, now, fx, reply);
  Job* j = find_job(s.step().job_id());
  const std::string& node = bridge_->cluster().nodes[ni].name;
  bool here = j && j->rec.batch_host() == node;
  if (!s.ended()) {
    bool should_run = here && is_started(j->rec);
    if (should_run) {
      j->awaiting_node = false;
      confirm_launch(*j, fx);
    } else {
      // A job whose end (or requeue, or preemption) was decided a moment ago
      // has its Terminate on the way, with what its step daemon is to say
      // ("*** JOB 12 ON cpu1 CANCELLED AT ... DUE TO PREEMPTION ***"): a
      // report sent before it arrived must not end the step quietly first.
      // Later, the report ends it in case the Terminate was lost.
      if (here && j->terminate_sent && j->rec.completing() && now - j->rec.end_time() < kTerminateInFlightS) return;
      // Unknown to the controller, ended for it (completing: the Terminate may
      // have met the launch still in progress), or not placed here: it must
      // not run. Ending a step is idempotent on the agent.
      *reply.add_terminate() = step_ref(s);
      if (j && here) j->terminate_sent = true;
    }
    return;
  }
  *reply.add_acknowledged() = step_ref(s);
  if (here) keep_batch_usage(*j, s, fx);
  // Already recorded (a repeated report; or the job's Epilogs are running).
  if (!here || !holds_resources(*j) || j->rec.epilog_nodes_size() > 0) return;
  if (j->rec.state() == v1::PENDING) return free_requeued_run(*j, fx);
  int64_t end = s.end_time() ? s.end_time() : now;
  // The report may come before the launch's answer (launch_result).
  if (s.launch_failed()) return launch_failed(*j, s.reason(), end, fx);
  if (requeue_on_exit(*j, s, end, fx)) return;
  finish_job(*j, state_from_agent(s.state()), s.exit_code(), s.exit_signal(), s.reason(), end, fx);
}

// What the batch script's processes used, with its step's record: kept by
// the job's end (finish_job) or, when the job had ended first (a cancel, a
// time limit), written here.
void ControllerState::keep_batch_usage(const Job& j, const v1::StepReport& s, Effects& fx) {
  if (s.usage_size() == 0) return;
  auto js = steps_.find(j.rec.job_id());
  if (js == steps_.end()) return;
  auto b = js->second.steps.find(kBatchStepId);
  if (b == js->second.steps.end() || b->second.nodes_size() == 0 || b->second.nodes(0).usage_size() > 0) return;
  *b->second.mutable_nodes(0)->mutable_usage() = s.usage();
  if (step_final(b->second)) put_step(b->second, fx);
}

void ControllerState::apply_gpu_health(core::NodeIndex ni, const std::string& problem, int64_t now, Effects& fx) {
  NodeRt& n = nodes_[ni];
  const bool ours = n.drain && n.reason.rfind(kGpuHealthPrefix, 0) == 0;
  const std::string& name = bridge_->cluster().nodes[ni].name;
  if (problem.empty() && ours) {
    log_line("node " + name + ": GPUs healthy again; drain lifted (was: " + n.reason + ")");
    n.drain = false;
    n.reason.clear();
    n.reason_time = now;
    put_node(ni, now, fx);
  } else if (!problem.empty() && (!n.drain || (ours && n.reason != problem))) {
    // A drain by an admin (or for less than declared) keeps its own reason.
    log_error("node " + name + ": " + problem + "; draining it");
    drain_node(ni, problem, now, fx);
  }
}

void ControllerState::restop_suspended(core::NodeIndex ni, Effects& fx) const {
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    if (j.rec.state() != v1::SUSPENDED) continue;
    if (std::any_of(j.alloc.nodes.begin(), j.alloc.nodes.end(), [&](const core::NodeTake& t) { return t.node == ni; })) {
      stop_on_nodes(j, fx);
    }
  }
}

// Jobs this node should be running but did not report: a job whose launch
// was never confirmed is launched (again: the agent's spool would list it
// had it started); a confirmed one missing from the first report of an
// agent session was lost with the node's spool (NODE_FAIL). Within a session
// a confirmed job is never judged by a report that may predate its launch.
void ControllerState::reconcile_node(core::NodeIndex ni, const std::set<int64_t>& reported, bool new_session,
                                     int64_t now, Effects& fx) {
  const std::string& node = bridge_->cluster().nodes[ni].name;
  std::vector<core::JobId> ids(active_.begin(), active_.end());  // put_job changes active_
  for (core::JobId id : ids) {
    Job& j = jobs_.at(id);
    if (!is_started(j.rec) || j.rec.batch_host() != node || reported.count(id)) continue;
    if (!j.rec.desc().batch()) continue;  // an allocation: its steps are settled by their own reports
    if (j.launch_sent && !j.rec.launched()) continue;  // a Launch is in flight
    if (j.rec.configuring()) continue;                 // its PrologSlurmctld runs first
    if (!j.rec.launched()) {
      j.awaiting_node = false;
      j.launch_sent = true;
      launch_batch(j, fx);
      continue;
    }
    if (!new_session) continue;
    j.awaiting_node = false;
    finish_job(j, v1::NODE_FAIL, 0, 0, "node " + node + " no longer knows the job (its spool was lost)", now, fx);
  }
}

// A node of running jobs' allocations failed (DOWN by an admin, or silent
// past SlurmdTimeout). Batch jobs whose script ran there are requeued or end
// NODE_FAIL (the script is gone). Any other job holding the node (another
// node of a batch job, any node of a salloc/srun allocation) ends NODE_FAIL
// as well (its script and steps elsewhere are terminated), unless it was
// submitted with --no-kill: then it keeps running on its other nodes, and
// only its steps' parts on the failed node fail (Slurm's -k).
void ControllerState::node_lost(core::NodeIndex ni, const std::string& why, int64_t now, Effects& fx) {
  const std::string& node = bridge_->cluster().nodes[ni].name;
  forget_epilogs_on(ni, fx);
  std::vector<core::JobId> ids(active_.begin(), active_.end());  // put_job changes active_
  for (core::JobId id : ids) {
    Job& j = jobs_.at(id);
    if (!holds_resources(j) || j.rec.epilog_nodes_size() > 0) continue;  // over: Epilogs on other nodes
    const bool host = j.rec.batch_host() == node;
    const bool there = host || std::any_of(j.alloc.nodes.begin(), j.alloc.nodes.end(),
                                           [&](const core::NodeTake& t) { return t.node == ni; });
    if (!there) continue;
    // The script is not lost (another node, or an allocation: salloc's shell runs elsewhere).
    if (!(host && j.rec.desc().batch()) && is_started(j.rec)) {
      if (j.rec.completing()) continue;
      bool any_left = std::any_of(j.alloc.nodes.begin(), j.alloc.nodes.end(),
                                  [&](const core::NodeTake& t) { return !nodes_[t.node].down; });
      if (j.rec.desc().no_kill() && any_left) {
        fail_steps_on(j, node, "node " + node + " " + why, now, fx);
      } else {
        end_running(j, v1::NODE_FAIL, "node " + node + " " + why, 0, now, fx);
      }
      continue;
    }
    if (!host) continue;
    if (is_started(j.rec) && j.rec.requeue() && settings_.job_requeue) {
      j.rec.set_state_desc("requeued: node " + node + " " + why);
      requeue_job(j, now, fx);
      continue;
    }
    if (j.rec.state() == v1::PENDING) {
      requeue_job(j, now, fx);
      continue;
    }
    if (is_started(j.rec)) {
      j.rec.set_end_time(now);
      finish_job(j, v1::NODE_FAIL, 0, 0, "node " + node + " " + why, now, fx);
    } else {
      finish_job(j, j.rec.state(), j.rec.exit_code(), j.rec.exit_signal(), "", j.rec.end_time(), fx);
    }
  }
}

void ControllerState::housekeeping(int64_t now, Effects& fx) {
  if (start_time_ == 0) {
    start_time_ = now;
    resume_configuring(fx);
    // The events (events.cpp): the cluster's TRES, and each node's state
    // as recovered (a store written before events were kept has none).
    cluster_event(now, fx);
    for (core::NodeIndex i = 0; i < static_cast<core::NodeIndex>(nodes_.size()); ++i) node_event(i, now, fx);
  }
  allocation_timeouts(now, fx);
  inactive_allocations(now, fx);
  time_limit_mails(now, fx);
  warn_signals(now, fx);
  preempt_after_grace(now, fx);
  reservation_windows(now, fx);
  for (core::NodeIndex i = 0; i < static_cast<core::NodeIndex>(nodes_.size()); ++i) {
    NodeRt& n = nodes_[i];
    if (!n.registered) {
      // Never heard since this controller started: jobs recovered on it are lost after SlurmdTimeout.
      if (now - start_time_ > settings_.slurmd_timeout_s) node_lost(i, "did not register", now, fx);
      continue;
    }
    if (now - n.last_heard <= settings_.slurmd_timeout_s) continue;
    // Registered once, silent since: DOWN with Slurm's reason; its jobs are requeued or NODE_FAIL.
    n.responding = false;
    n.registered = false;
    if (!n.down) {
      n.down = true;
      n.reason = "Not responding";
      n.reason_time = now;
      n.reason_uid = settings_.slurm_user_uid;
      n.reason_user = cfg_.slurm_user;
      put_node(i, now, fx);
    }
    node_lost(i, "not responding", now, fx);
  }
  settle_steps_after_end(now, fx);
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const Job& j = it->second;
    bool old = is_final(j.rec.state()) && !j.rec.completing() && j.rec.end_time() + settings_.min_job_age_s < now;
    if (!old) {
      ++it;
      continue;
    }
    if (steps_after_end_.erase(j.rec.job_id())) {
      close_open_steps(j.rec.job_id(), "no report of the step's end from the node before the job left memory", now, fx);
    }
    steps_.erase(j.rec.job_id());
    forget_submit_request(j);
    if (j.rec.array_job_id()) {
      auto& ids = arrays_[j.rec.array_job_id()];
      ids.erase(std::remove(ids.begin(), ids.end(), j.rec.job_id()), ids.end());
      if (ids.empty()) arrays_.erase(j.rec.array_job_id());
    }
    it = jobs_.erase(it);
  }
}

}  // namespace drover::ctld
