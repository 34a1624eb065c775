// Job steps: creation and layout over the allocation, their ends as the
// agents report them, the batch step, and the steps' durable records.
#include <algorithm>
#include <csignal>
#include <set>

#include "common/hostlist.hpp"
#include "config/debug_levels.hpp"
#include "ctld/job_model.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

// Severity of a step's end state: the step takes its most severe node's.
int severity(const std::string& st) {
  if (st == "NODE_FAIL") return 6;
  if (st == "CANCELLED") return 5;
  if (st == "TIMEOUT") return 4;
  if (st == "OUT_OF_MEMORY") return 3;
  if (st == "FAILED") return 2;
  return st == "COMPLETED" ? 1 : 0;
}

}  // namespace

TresMap step_tres(const v1::StepInfo& s, const core::Cluster& c) {
  TresMap t;
  t["cpu"] = s.cpus();
  t["node"] = s.nodes_size();
  int64_t mem = 0;
  for (const auto& n : s.nodes()) {
    mem += n.mem_mb();
    const core::NodeIndex at = c.find_node(n.node());
    for (int32_t g : n.gpus()) {
      t["gres/gpu"] += 1;
      const std::string type = at < 0 ? std::string() : gpu_type(c.nodes[at], g);
      if (!type.empty()) t[core::gres_tres_name("gpu", type)] += 1;
    }
  }
  if (mem > 0) t["mem"] = mem;
  return t;
}

std::string step_name(int64_t job_id, int64_t step_id) {
  return std::to_string(job_id) + "." + (step_id == kBatchStepId ? std::string("batch") : std::to_string(step_id));
}

bool step_final(const v1::StepInfo& s) { return !s.state().empty() && s.state() != "RUNNING"; }

// The step's state and exit from its nodes', as Slurm 22.05's controller
// settled them on the anchor cluster: the highest wait status (an exit code
// above any signal: 3:0 from 3:0 and 0:15, 0:15 from 0:15 and 0:9). The
// nodes that --kill-on-bad-exit ended count as failed, not cancelled (the
// step is then FAILED, or CANCELLED in sacct when a signal gave its status).
bool all_nodes_ended(const v1::StepInfo& s) {
  return std::all_of(s.nodes().begin(), s.nodes().end(), [](const v1::StepNode& n) { return n.ended(); });
}

void record_node_end(v1::StepNode& n, const v1::StepReport& r) {
  n.set_ended(true);
  n.set_state(r.state());
  n.set_exit_code(r.exit_code());
  n.set_exit_signal(r.exit_signal());
  n.set_reason(r.reason());
  *n.mutable_tasks_ended() = r.tasks();
  *n.mutable_usage() = r.usage();
}

void set_worst_exit(v1::StepInfo& s) {
  int code = 0, sig = 0;
  auto status = [](int c, int g) { return c != 0 ? c << 8 : g; };
  for (const auto& n : s.nodes()) {
    if (status(n.exit_code(), n.exit_signal()) > status(code, sig)) {
      code = n.exit_code();
      sig = n.exit_signal();
    }
  }
  s.set_exit_code(code);
  s.set_exit_signal(sig);
}

void settle_step(v1::StepInfo& s, int64_t now) {
  std::string worst = "COMPLETED";
  const bool killed_by_bad_exit = s.kill_on_bad_exit() && s.kill_requested() && !s.cancelled();
  for (const auto& n : s.nodes()) {
    const std::string st = killed_by_bad_exit && n.state() == "CANCELLED" ? "FAILED" : n.state();
    if (severity(st) > severity(worst)) worst = st;
    if (s.reason().empty() && !n.reason().empty()) s.set_reason(n.node() + ": " + n.reason());
  }
  if (s.cancelled()) worst = "CANCELLED";
  s.set_state(worst);
  set_worst_exit(s);
  s.set_end_time(now);
}

void ControllerState::put_step(const v1::StepInfo& s, Effects& fx) const {
  std::vector<std::string> names;
  for (const auto& n : s.nodes()) names.push_back(n.node());
  std::string payload;
  s.SerializeToString(&payload);
  fx.batch.put(store::Put{kStepsTable,
                          step_name(s.job_id(), s.step_id()),
                          std::move(payload),
                          {{"job_id", s.job_id()},
                           {"step_id", s.step_id()},
                           {"name", s.name()},
                           {"nodes", hostlist_compress(names)},
                           {"ntasks", static_cast<int64_t>(s.ntasks())},
                           {"cpus", static_cast<int64_t>(s.cpus())},
                           {"tres", s.tres()},
                           {"start_time", s.start_time()},
                           {"end_time", s.end_time()},
                           {"state", s.state()},
                           {"exit_code", static_cast<int64_t>(s.exit_code())},
                           {"exit_signal", static_cast<int64_t>(s.exit_signal())}}});
}

Status ControllerState::recover_step(const std::string& key, const std::string& payload) {
  v1::StepInfo s;
  if (!s.ParseFromString(payload)) return make_error("state store: step record " + key + " is unreadable");
  if (!jobs_.count(s.job_id())) return {};  // the job left memory (MinJobAge): its steps stay in the store
  if (s.step_id() >= 0 && !step_final(s) && is_final(jobs_.at(s.job_id()).rec.state())) {
    s.set_kill_requested(true);            // as end_job_steps left it: a part still running is told to end
    steps_after_end_.insert(s.job_id());  // its nodes' reports (or the grace) settle it
  }
  JobSteps& js = steps_[s.job_id()];
  if (s.step_id() >= 0) js.next_id = std::max(js.next_id, s.step_id() + 1);
  js.steps[s.step_id()] = std::move(s);
  return {};
}

void ControllerState::start_batch_step(const Job& j, int64_t now, Effects& fx) {
  v1::StepInfo s;
  s.set_job_id(j.rec.job_id());
  s.set_step_id(kBatchStepId);
  s.set_name("batch");
  s.set_uid(j.rec.uid());
  s.set_ntasks(1);
  s.set_start_time(now);
  s.set_state("RUNNING");
  s.set_restart_count(j.rec.restart_count());
  if (!j.alloc.nodes.empty()) {
    const core::NodeTake& t = j.alloc.nodes.front();
    v1::StepNode* n = s.add_nodes();
    n->set_node(bridge_->cluster().nodes[t.node].name);
    n->set_tasks(1);
    n->set_cpus(t.cpus);
    n->set_mem_mb(t.mem_mb);
    for (int32_t g : gpu_indexes(bridge_->cluster().nodes[t.node], t)) n->add_gpus(g);
    s.set_cpus(t.cpus);
  }
  s.set_tres(format_tres(step_tres(s, bridge_->cluster())));
  put_step(s, fx);
  steps_[j.rec.job_id()].steps[kBatchStepId] = std::move(s);
}

// The job has ended: its batch step ends with it (state and exit code of the
// script), steps still running are ended on their nodes. When the job was
// cancelled, timed out or lost a node, they are recorded with the job's end
// state. When the script ended on its own, a step's part on a node may have
// ended before it with the agent's report still on its way (agents report
// on their own, so another node's report of the script's end can come
// first): the nodes' reports settle such a step, COMPLETED if every part
// was, CANCELLED for a part the Terminate below ended.
void ControllerState::end_job_steps(const Job& j, int64_t now, Effects& fx) {
  auto it = steps_.find(j.rec.job_id());
  if (it == steps_.end()) return;
  std::set<std::string> to_clean;
  const v1::JobState js = j.rec.state();
  const bool decided = js == v1::TIMEOUT || js == v1::NODE_FAIL || js == v1::CANCELLED;
  for (auto& [id, s] : it->second.steps) {
    if (step_final(s)) continue;
    if (id == kBatchStepId) {
      // A script that never started: CANCELLED, as Slurm's batch step.
      s.set_state(j.rec.reason() == "JobLaunchFailure" ? std::string("CANCELLED") : state_name(js));
      s.set_exit_code(j.rec.exit_code());
      s.set_exit_signal(j.rec.exit_signal());
      s.set_end_time(now);
    } else {
      for (const auto& n : s.nodes()) {
        if (!n.ended()) to_clean.insert(n.node());
      }
      if (!decided) {
        s.set_kill_requested(true);  // a part still reported running is told to end
        steps_after_end_.insert(j.rec.job_id());
        continue;
      }
      // Slurm 22.05 records a step that a cancel or the time limit ended as
      // CANCELLED (anchor: `srun sleep 200` in a -t 1 job, TIMEOUT and its
      // step CANCELLED 0:15); one on a node that failed keeps NODE_FAIL.
      s.set_state(js == v1::NODE_FAIL ? state_name(js) : std::string("CANCELLED"));
      s.set_end_time(now);
      if (s.reason().empty()) s.set_reason("the job ended while the step ran");
    }
    put_step(s, fx);
  }
  for (const auto& node : to_clean) {
    fx.commands.push_back(
        terminate_command(j.rec.job_id(), node, "CANCELLED", "job " + std::to_string(j.rec.job_id()) + " ended"));
  }
}

void ControllerState::close_open_steps(int64_t job_id, const std::string& why, int64_t now, Effects& fx) {
  auto it = steps_.find(job_id);
  if (it == steps_.end()) return;
  for (auto& [id, s] : it->second.steps) {
    if (id == kBatchStepId || step_final(s)) continue;
    for (auto& n : *s.mutable_nodes()) {
      if (n.ended()) continue;
      n.set_ended(true);
      n.set_state("CANCELLED");
      n.set_reason(why);
    }
    settle_step(s, now);
    put_step(s, fx);
  }
}

void ControllerState::settle_steps_after_end(int64_t now, Effects& fx) {
  for (auto it = steps_after_end_.begin(); it != steps_after_end_.end();) {
    const Job* j = find_job(*it);
    auto js = steps_.find(*it);
    bool open = false;
    if (j && js != steps_.end()) {
      for (const auto& [id, s] : js->second.steps) open = open || (id != kBatchStepId && !step_final(s));
    }
    if (open && now >= j->rec.end_time() + settings_.kill_wait_s + settings_.slurmd_timeout_s) {
      close_open_steps(*it, "no report of the step's end from the node after the job ended", now, fx);
      open = false;
    }
    it = open ? std::next(it) : steps_after_end_.erase(it);
  }
  // A requeued run's steps keep what they were recorded with once their
  // nodes have had as long to report as a finished job's.
  std::erase_if(requeued_runs_, [&](const auto& kv) {
    return now >= kv.second.ended + settings_.kill_wait_s + settings_.slurmd_timeout_s;
  });
}

// A step of the run a requeue (or preemption) ended a moment ago, not yet
// reported ended from this node: its Terminate is on the way, as above.
bool ControllerState::just_requeued(const std::string& node, const v1::StepRef& step, int64_t now) const {
  auto run = requeued_runs_.find(step.job_id());
  if (run == requeued_runs_.end() || now - run->second.ended >= kTerminateInFlightS) return false;
  return std::any_of(run->second.steps.begin(), run->second.steps.end(), [&](const v1::StepInfo& s) {
    return s.step_id() == step.step_id() && std::any_of(s.nodes().begin(), s.nodes().end(), [&](const auto& n) {
             return n.node() == node && !n.ended();
           });
  });
}

bool ControllerState::apply_requeued_step_report(const std::string& node, const v1::StepReport& r, int64_t now,
                                                 Effects& fx) {
  auto run = requeued_runs_.find(r.step().job_id());
  if (run == requeued_runs_.end()) return false;
  for (auto& s : run->second.steps) {
    if (s.step_id() != r.step().step_id()) continue;
    v1::StepNode* here = nullptr;
    for (auto& n : *s.mutable_nodes()) {
      if (n.node() == node && !n.ended()) here = &n;
    }
    if (!here) return false;
    record_node_end(*here, r);
    if (all_nodes_ended(s)) {
      const int64_t ended = s.end_time();
      settle_step(s, now);  // the exit code of the worst end of its nodes
      s.set_state("CANCELLED");
      s.set_end_time(ended);
    }
    // Kept (settle_steps_after_end drops it) for the step's srun to read.
    put_run_record(run->second.run, run->second.steps, now, fx);
    return true;
  }
  return false;
}

void ControllerState::apply_srun_step_report(core::NodeIndex ni, const v1::StepReport& r, int64_t now, Effects& fx,
                                             v1::NodeReportReply& reply) {
  const std::string& node = bridge_->cluster().nodes[ni].name;
  Job* j = find_job(r.step().job_id());
  v1::StepInfo* s = nullptr;
  if (j) {
    auto js = steps_.find(j->rec.job_id());
    if (js != steps_.end()) {
      auto it = js->second.steps.find(r.step().step_id());
      if (it != js->second.steps.end()) s = &it->second;
    }
  }
  v1::StepNode* here = nullptr;
  if (s) {
    for (auto& n : *s->mutable_nodes()) {
      if (n.node() == node) here = &n;
    }
  }
  if (r.ended() && apply_requeued_step_report(node, r, now, fx)) {
    *reply.add_acknowledged() = r.step();
    return;
  }
  if (!r.ended()) {
    // Running where the controller knows it should: adopted. Otherwise it must not run.
    bool ending = s && (s->cancelled() || s->kill_requested());  // in case the signal missed the launch
    // A step the job's end decided a moment ago has its Terminate on the way
    // (with the reason its step daemon says: "*** STEP 1.0 ... CANCELLED AT
    // ... ***"); a report sent before it arrived must not end the step
    // quietly first. Later, the report ends it in case the Terminate was lost.
    const bool just_decided = here && !here->ended() && step_final(*s) && now - s->end_time() < kTerminateInFlightS;
    if (just_decided || just_requeued(node, r.step(), now)) return;
    if (!here || step_final(*s) || here->ended() || ending) *reply.add_terminate() = r.step();
    return;
  }
  *reply.add_acknowledged() = r.step();
  if (!here || here->ended()) return;  // already recorded
  record_node_end(*here, r);
  if (step_final(*s)) {
    // The job's end decided the step already (a cancelled allocation): its
    // tasks' ends and usage are kept all the same, for srun's lines
    // ("task 0: Terminated") and sacct, and once every node has reported,
    // its exit (Slurm 22.05's sacct: `CANCELLED 0:15` for the step of a
    // cancelled srun or salloc, anchor cluster).
    if (all_nodes_ended(*s)) set_worst_exit(*s);
    put_step(*s, fx);
    return;
  }
  step_node_ended(*j, *s, *here, now, fx);
}

// A node of a --no-kill job failed: each running step's part there ends
// NODE_FAIL. A step launched without srun -k is then ended on its other
// nodes too (srun(1): the step is not kept without -k); one with -k goes on.
void ControllerState::fail_steps_on(Job& j, const std::string& node, const std::string& why, int64_t now,
                                    Effects& fx) {
  auto it = steps_.find(j.rec.job_id());
  if (it == steps_.end()) return;
  for (auto& [id, s] : it->second.steps) {
    if (id < 0 || step_final(s)) continue;
    for (auto& n : *s.mutable_nodes()) {
      if (n.node() != node || n.ended()) continue;
      n.set_ended(true);
      n.set_state("NODE_FAIL");
      n.set_exit_code(1);
      n.set_reason(why);
      step_node_ended(j, s, n, now, fx);
    }
  }
}

// One node of a step is done: with --kill-on-bad-exit a failure there ends
// the step's tasks everywhere (so does a lost node, unless the step has -k);
// the step ends with its last node.
void ControllerState::step_node_ended(Job& j, v1::StepInfo& s, v1::StepNode& n, int64_t now, Effects& fx) {
  bool bad = n.exit_code() != 0 || n.exit_signal() != 0 || n.state() != "COMPLETED";
  bool lost = n.state() == "NODE_FAIL" && !s.no_kill();
  if (bad && (s.kill_on_bad_exit() || lost) && !s.kill_requested()) {
    s.set_kill_requested(true);
    if (!lost) {
      // The step's reason names the task that ended it (srun prints that
      // task's end first: kill_on_bad_exit_task in client/step_io.cpp): the
      // node's step daemon named it if it ended the task's neighbours there,
      // else it is the node's first task that did not end well.
      constexpr std::string_view kSuffix = " (--kill-on-bad-exit)";
      if (n.reason().ends_with(kSuffix)) {
        s.set_reason(n.node() + ": " + n.reason());
      } else {
        std::string what = "its part ended " + std::to_string(n.exit_code()) + ":" + std::to_string(n.exit_signal());
        for (const auto& t : n.tasks_ended()) {
          if (t.exit_code() != 0 || t.exit_signal() != 0) {
            what = "task " + std::to_string(t.rank()) + " exited " + std::to_string(t.exit_code()) + ":" +
                   std::to_string(t.exit_signal());
            break;
          }
        }
        s.set_reason(n.node() + ": " + what + std::string(kSuffix));
      }
    }
    for (const auto& other : s.nodes()) {
      if (other.ended()) continue;
      if (lost) {
        fx.commands.push_back(signal_command(j.rec.job_id(), other.node(), SIGKILL, s.step_id()));
        continue;
      }
      // --kill-on-bad-exit: the other nodes' tasks end as Slurm's srun ends
      // them: cancelled, their step daemons say so on the step's stderr
      // (SIGTERM, SIGKILL after KillWait); settle_step counts them failed.
      fx.commands.push_back(terminate_command(j.rec.job_id(), other.node(), "CANCELLED", s.reason(), s.step_id()));
    }
  }
  if (all_nodes_ended(s)) {
    settle_step(s, now);
    // A step without a -t of its own that timed out reached the job's end
    // (its nodes end it then, before the batch script's end is reported):
    // Slurm 22.05 records it CANCELLED and leaves the job's derived code
    // alone, as for any step the job's end ended (anchor cluster).
    if (s.state() == "TIMEOUT" && s.time_limit_s() <= 0) {
      s.set_state("CANCELLED");
    } else {
      derive_exit(j, s, fx);
    }
  }
  put_step(s, fx);
}

// An srun step's end raises the job's DerivedExitCode when it is worse: the
// highest wait status (exit code << 8 | signal) of its steps, as Slurm's
// (`srun false` in a script that exits 0: the job COMPLETED 0:0, derived 1:0).
void ControllerState::derive_exit(Job& j, const v1::StepInfo& s, Effects& fx) {
  // Steps that the job's end ended leave it alone, as Slurm's (anchor
  // cluster): a cancelled job's derived code stays 0:0 though its steps end
  // 0:15, and so does that of a script that exited with `srun sleep` still
  // running (the step CANCELLED 0:15). A step that ended on its own just
  // before the script, its report arriving after the script's, still counts.
  const v1::JobState js = j.rec.state();
  const bool ended_by_controller = js == v1::CANCELLED || js == v1::TIMEOUT || js == v1::DEADLINE ||
                                   js == v1::PREEMPTED || js == v1::NODE_FAIL;
  const bool ended_with_job = !is_started(j.rec) && s.state() == "CANCELLED";
  if (s.step_id() < 0 || ended_by_controller || ended_with_job) return;
  auto status = [](int code, int sig) { return (code << 8) | (sig & 0x7f); };
  if (status(s.exit_code(), s.exit_signal()) <= status(j.rec.derived_exit_code(), j.rec.derived_exit_signal())) {
    return;
  }
  j.rec.set_derived_exit_code(s.exit_code());
  j.rec.set_derived_exit_signal(s.exit_signal());
  put_job(j, fx);
}

void ControllerState::step_launch_result(int64_t job_id, int64_t step_id, const std::string& node,
                                         const std::optional<v1::LaunchReply>& reply, const std::string& error,
                                         int64_t now, Effects& fx) {
  if (reply && (reply->started() || reply->already_known())) return;
  Job* j = find_job(job_id);
  auto js = steps_.find(job_id);
  if (!j || js == steps_.end()) return;
  auto it = js->second.steps.find(step_id);
  if (it == js->second.steps.end() || step_final(it->second)) return;
  for (auto& n : *it->second.mutable_nodes()) {
    if (n.node() != node || n.ended()) continue;
    n.set_ended(true);
    n.set_state(reply ? "FAILED" : "NODE_FAIL");
    n.set_exit_code(1);
    const bool prolog = reply && reply->prolog_failed();
    n.set_reason(prolog ? "Job prolog failed" : reply ? reply->failure() : "the agent could not be reached: " + error);
    if (reply && reply->has_status()) *n.mutable_tasks_ended() = reply->status().tasks();
    step_node_ended(*j, it->second, n, now, fx);
    if (prolog) prolog_failed(*j, node, reply->failure(), now, fx);
    return;
  }
}

void ControllerState::allocator_heard(const Caller& who, int64_t job_id, int64_t now) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return;
  const Job& j = it->second;
  if (j.rec.desc().batch() || !may_act_on(who, j)) return;
  if (j.rec.state() != v1::PENDING && j.rec.state() != v1::RUNNING && j.rec.state() != v1::SUSPENDED) return;
  allocators_[job_id] = now;
}

void ControllerState::inactive_allocations(int64_t now, Effects& fx) {
  // Slurm 22.05 gave up on telling a gone salloc of its grant after 11 s
  // (anchor cluster); a live one asks within a second of it.
  constexpr int64_t kAllocatorGoneS = 10;
  for (auto it = allocators_.begin(); it != allocators_.end();) {
    auto jt = jobs_.find(it->first);
    if (jt == jobs_.end() || is_final(jt->second.rec.state())) {
      it = allocators_.erase(it);
      continue;
    }
    Job& j = jt->second;
    const int64_t heard = it->second;
    const v1::JobRecord& r = j.rec;
    if (r.state() != v1::RUNNING || r.completing() || r.configuring()) {
      ++it;
      continue;
    }
    // Not heard from since the grant: gone, or about to ask.
    const bool since_grant = heard >= r.start_time();
    const bool gone = !since_grant && now - r.start_time() >= kAllocatorGoneS;
    const int64_t limit = settings_.inactive_limit_s;
    auto root_only = [&] {
      const int32_t part = bridge_->find_partition(r.partition());
      return part >= 0 && bridge_->cluster().partitions[static_cast<size_t>(part)].root_only;
    };
    const bool inactive = since_grant && limit > 0 && now - heard > limit && !root_only();
    if (!gone && !inactive) {
      ++it;
      continue;
    }
    it = allocators_.erase(it);
    const std::string cmd = "salloc or srun";
    if (gone) {
      fx.log.emplace_back(config::kLogInfo, "job " + std::to_string(r.job_id()) + ": its " + cmd +
                                                " was gone when the allocation was granted; ending it");
      finish_job(j, v1::FAILED, 1, 0, "the " + cmd + " that asked for the allocation was gone when it was granted",
                 now, fx);
    } else {
      fx.log.emplace_back(config::kLogInfo, "job " + std::to_string(r.job_id()) + ": InactiveLimit (" +
                                                std::to_string(limit) + " s) reached: its " + cmd + " was last heard " +
                                                std::to_string(now - heard) + " s ago");
      finish_job(j, v1::TIMEOUT, 0, 0, "its " + cmd + " was not heard from for InactiveLimit (" +
                                           std::to_string(limit) + " s)", now, fx, "InactiveLimit");
    }
  }
}

void ControllerState::allocation_timeouts(int64_t now, Effects& fx) {
  std::vector<core::JobId> ids(active_.begin(), active_.end());
  for (core::JobId id : ids) {
    Job& j = jobs_.at(id);
    if (j.rec.desc().batch() || j.rec.state() != v1::RUNNING || j.rec.end_time() == 0) continue;
    const int64_t over = over_time_s(j.rec);  // OverTimeLimit; -1: UNLIMITED
    if (over < 0 || now < j.rec.end_time() + over) continue;
    end_running(j, v1::TIMEOUT, "allocation reached its time limit", 0, now, fx);
  }
}

}  // namespace drover::ctld
