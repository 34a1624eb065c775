// How jobs leave RUNNING: their processes ended (finish_job), the controller
// ends them (end_running: cancel, node down), or they go back to the queue
// (requeue_job).
#include <csignal>

#include "ctld/state.hpp"

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
                                 int64_t now, Effects& fx) {
  v1::JobRecord& r = j.rec;
  bool was_running = r.state() == v1::RUNNING;
  if (was_running) {
    r.set_state(st);
    r.set_end_time(now);
  }
  // Also for a job end_running already moved to its final state (an
  // allocation past its time limit: Reason=TimeLimit, as Slurm's).
  r.set_reason(end_reason(r.state()));
  r.set_completing(false);
  r.set_exit_code(exit_code);
  r.set_exit_signal(exit_signal);
  if (!why.empty()) r.set_state_desc(why);
  end_job_steps(j, now, fx);
  for (const auto& t : j.alloc.nodes) nodes_[t.node].last_busy = now;
  j.alloc = core::Allocation{};
  j.terminate_sent = false;
  j.awaiting_node = false;
  put_job(j, fx);
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

void ControllerState::end_running(Job& j, v1::JobState st, const std::string& reason, uint32_t by_uid, int64_t now,
                                  Effects& fx) {
  v1::JobRecord& r = j.rec;
  r.set_state(st);
  r.set_end_time(now);
  if (st == v1::CANCELLED) r.set_cancelled_by(by_uid);
  r.set_state_desc(reason);
  core::NodeIndex host = bridge_->find_node(r.batch_host());
  bool reachable = host >= 0 && nodes_[host].responding;
  if (!reachable || !r.desc().batch()) {
    // Nobody can clean up on a node that does not answer: the job is over.
    // An allocation (salloc, srun) has no script to wait for: it is over
    // too, and its steps are ended on their nodes (end_job_steps).
    finish_job(j, st, 0, st == v1::CANCELLED ? SIGKILL : 0, reason, now, fx);
    return;
  }
  r.set_completing(true);
  j.terminate_sent = true;
  put_job(j, fx);
  for (const auto& t : r.alloc().nodes()) {
    AgentCommand cmd;
    cmd.kind = AgentCommand::kTerminate;
    cmd.node = t.node();
    cmd.job_id = r.job_id();
    cmd.state = state_name(st);
    cmd.reason = reason;
    fx.commands.push_back(std::move(cmd));
  }
}

void ControllerState::requeue_job(Job& j, int64_t now, Effects& fx) {
  v1::JobRecord& r = j.rec;
  r.set_state(v1::PENDING);
  r.set_reason("None");
  r.set_completing(false);
  r.set_restart_count(r.restart_count() + 1);
  r.set_start_time(0);
  r.set_end_time(0);
  r.set_batch_host("");
  r.set_launched(false);
  r.clear_alloc();
  r.clear_cancelled_by();
  j.alloc = core::Allocation{};
  j.launch_sent = false;
  j.terminate_sent = false;
  j.awaiting_node = false;
  refresh_spec(j);
  put_job(j, fx);
  fx.reschedule = true;
  (void)now;
}

}  // namespace drover::ctld
