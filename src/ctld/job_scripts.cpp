// slurm.conf's Prolog and Epilog, the controller's side. The agents run
// them (agentd/job_scripts.cpp); the controller gives them Slurm's
// environment, keeps a job that has ended COMPLETING on its nodes until each
// reports its Epilog's end, and drains a node whose Prolog or Epilog failed
// ("Prolog error", "Epilog error"), requeueing held the job whose Prolog
// failed, as Slurm 22.05 does.
#include <algorithm>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "ctld/log.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

bool has_node(const v1::JobRecord& r, const std::string& node) {
  return std::find(r.epilog_nodes().begin(), r.epilog_nodes().end(), node) != r.epilog_nodes().end();
}

}  // namespace

std::vector<std::string> ControllerState::script_env(const Job& j, const core::NodeTake& t, bool epilog,
                                                     ScriptSite site) const {
  const core::Cluster& c = bridge_->cluster();
  const v1::JobRecord& r = j.rec;
  const v1::JobDescriptor& d = r.desc();
  const core::NodeSpec& n = c.nodes[t.node];
  std::vector<std::string> names;
  std::vector<int> cpus;
  for (const auto& x : j.alloc.nodes) {
    names.push_back(c.nodes[x.node].name);
    cpus.push_back(x.cpus);
  }
  const std::string id = std::to_string(r.job_id());
  const bool on_node = site == ScriptSite::kNode;
  std::vector<std::string> env = {
      "SLURM_CLUSTER_NAME=" + settings_.cluster_name,
      "SLURM_CONF=" + settings_.conf_path,
      "SLURM_JOBID=" + id,
      "SLURM_JOB_ID=" + id,
      "SLURM_JOB_ACCOUNT=" + r.account(),
      "SLURM_JOB_CPUS_PER_NODE=" + compress_counts(cpus),
      "SLURM_JOB_GID=" + std::to_string(r.gid()),
      "SLURM_JOB_NUM_NODES=" + std::to_string(names.size()),
      "SLURM_JOB_PARTITION=" + r.partition(),
      "SLURM_JOB_RESTART_COUNT=" + std::to_string(r.restart_count()),
      "SLURM_JOB_UID=" + std::to_string(r.uid()),
      "SLURM_JOB_USER=" + r.user(),
      "SLURM_JOB_WORK_DIR=" + d.work_dir(),
      "SLURM_NODELIST=" + hostlist_compress(names),
      std::string("SLURM_SCRIPT_CONTEXT=") + (epilog ? "epilog_" : "prolog_") + (on_node ? "slurmd" : "slurmctld"),
      "SLURM_UID=" + std::to_string(r.uid()),
  };
  if (on_node) env.insert(env.begin(), "SLURMD_NODENAME=" + n.name);
  if (d.batch()) env.push_back("SLURM_JOB_STDIN=" + (d.std_in().empty() ? std::string("/dev/null") : d.std_in()));
  if (!d.reservation().empty()) env.push_back("SLURM_JOB_RESERVATION=" + d.reservation());
  if (!d.constraint().empty()) env.push_back("SLURM_JOB_CONSTRAINTS=" + d.constraint());
  std::vector<int32_t> gpus;
  for (const auto& g : t.gres) {
    if (n.gres[g.pool].name != "gpu") continue;
    for (int32_t dev : g.devices) gpus.push_back(global_gpu_index(n, g.pool, dev));
  }
  if (!gpus.empty()) {
    const std::string list = join_ints(gpus);
    for (const char* v : {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "SLURM_JOB_GPUS",
                          "ZE_AFFINITY_MASK"}) {
      env.push_back(std::string(v) + "=" + list);
    }
  }
  if (epilog) {
    // The job's exit as wait(2) gives it, and as sacct prints it.
    const int code = r.exit_code() & 0xff;
    const int sig = r.exit_signal() & 0x7f;
    env.push_back("SLURM_JOB_EXIT_CODE=" + std::to_string(sig ? sig : code << 8));
    env.push_back("SLURM_JOB_EXIT_CODE2=" + std::to_string(code) + ":" + std::to_string(sig));
    env.push_back("SLURM_JOB_DERIVED_EC=" + std::to_string(code));
  }
  std::sort(env.begin(), env.end());
  return env;
}

v1::EpilogOrder ControllerState::epilog_order(const Job& j, const core::NodeTake& t) const {
  v1::EpilogOrder o;
  o.set_job_id(j.rec.job_id());
  o.set_restart_count(j.rec.restart_count());
  for (auto& e : script_env(j, t, true)) o.add_env(std::move(e));
  return o;
}

bool ControllerState::begin_epilogs(Job& j, Effects& fx) {
  v1::JobRecord& r = j.rec;
  r.clear_epilog_nodes();
  if (!settings_.job_scripts()) return false;
  const core::Cluster& c = bridge_->cluster();
  for (const auto& t : j.alloc.nodes) {
    if (!nodes_[t.node].responding) continue;  // nobody there to run it
    const std::string& name = c.nodes[t.node].name;
    r.add_epilog_nodes(name);
    AgentCommand cmd;
    cmd.kind = AgentCommand::kEpilog;
    cmd.node = name;
    cmd.job_id = r.job_id();
    cmd.epilog = epilog_order(j, t);
    fx.commands.push_back(std::move(cmd));
  }
  if (r.epilog_nodes_size() == 0) return false;
  r.set_completing(true);
  return true;
}

void ControllerState::release_nodes(Job& j, Effects& fx) {
  j.rec.clear_epilog_nodes();
  j.rec.set_completing(false);
  j.alloc = core::Allocation{};
  if (j.rec.state() == v1::PENDING) {  // requeued: it starts afresh
    j.rec.clear_alloc();
    j.rec.set_batch_host("");
  }
  put_job(j, fx);
  fx.reschedule = true;
}

void ControllerState::epilogs_reported(core::NodeIndex ni, const v1::NodeReport& report, int64_t now, Effects& fx,
                                       v1::NodeReportReply& reply) {
  const std::string& node = bridge_->cluster().nodes[ni].name;
  for (const auto& done : report.epilogs()) {
    *reply.add_epilogs_acknowledged() = done;
    Job* j = find_job(done.job_id());
    if (!j || !has_node(j->rec, node)) continue;  // a repeated report
    if (done.failed()) {
      log_error("epilog of job " + std::to_string(done.job_id()) + " failed on node " + node + ": " + done.message() +
               "; draining the node");
      drain_node(ni, "Epilog error", now, fx);
    }
    epilog_over(*j, node, fx);
  }
}

void ControllerState::epilog_over(Job& j, const std::string& node, Effects& fx) {
  auto* en = j.rec.mutable_epilog_nodes();
  en->erase(std::find(en->begin(), en->end(), node));
  if (en->empty()) {
    release_nodes(j, fx);
  } else {
    put_job(j, fx);
  }
}

void ControllerState::epilogs_owed(core::NodeIndex ni, v1::NodeReportReply& reply) const {
  if (!settings_.job_scripts()) return;
  const std::string& node = bridge_->cluster().nodes[ni].name;
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    if (!has_node(j.rec, node)) continue;
    for (const auto& t : j.alloc.nodes) {
      if (t.node == ni) *reply.add_epilogs() = epilog_order(j, t);
    }
  }
}

void ControllerState::forget_epilogs_on(core::NodeIndex ni, Effects& fx) {
  const std::string& node = bridge_->cluster().nodes[ni].name;
  std::vector<core::JobId> ids(active_.begin(), active_.end());  // release_nodes changes active_
  for (core::JobId id : ids) {
    Job& j = jobs_.at(id);
    if (has_node(j.rec, node)) epilog_over(j, node, fx);
  }
}

void ControllerState::drain_node(core::NodeIndex ni, const std::string& reason, int64_t now, Effects& fx) {
  NodeRt& n = nodes_[ni];
  n.drain = true;
  n.reason = reason;
  n.reason_time = now;
  n.reason_uid = settings_.slurm_user_uid;  // resolved from this name when the controller started
  n.reason_user = cfg_.slurm_user;
  put_node(ni, now, fx);
}

void ControllerState::prolog_failed(Job& j, const std::string& node, const std::string& failure, int64_t now,
                                    Effects& fx) {
  v1::JobRecord& r = j.rec;
  log_error("prolog of job " + std::to_string(r.job_id()) + " failed on node " + node + ": " + failure +
           "; draining the node");
  if (core::NodeIndex ni = bridge_->find_node(node); ni >= 0) drain_node(ni, "Prolog error", now, fx);
  if (!is_started(r)) return;
  if (!r.requeue() || !r.desc().batch()) {
    // Nothing to requeue (sbatch --no-requeue, salloc, srun): the job is
    // cancelled (by uid 0, as sacct showed it on the anchor cluster).
    end_running(j, v1::CANCELLED, "Prolog error on node " + node, 0, now, fx);
    return;
  }
  if (r.launched() && node != r.batch_host()) {
    // The script runs on its batch host (this was an srun step's node): it
    // is ended there, and the job is back in the queue once it has.
    requeue_started(j, "Prolog error on node " + node, 0, now, fx);
    requeued_held(j, "Prolog error on node " + node, fx);
  } else {
    requeue_unlaunched(j, "Prolog error on node " + node, now, fx);  // the Prolog runs first
  }
}

void ControllerState::requeue_unlaunched(Job& j, const std::string& why, int64_t now, Effects& fx) {
  // Nothing of it ran. Its batch step ends CANCELLED, as Slurm's.
  j.rec.set_state(v1::CANCELLED);
  j.rec.set_end_time(now);
  end_job_steps(j, now, fx);
  requeue_job(j, now, fx);
  requeued_held(j, why, fx);
}

void ControllerState::requeued_held(Job& j, const std::string& why, Effects& fx) {
  v1::JobRecord& r = j.rec;
  r.set_state_desc("launch failed requeued held: " + why);
  if (!settings_.nohold_on_prolog_fail) {
    r.set_hold(v1::HOLD_USER);
    r.set_held_reason("launch failed requeued held");
    r.set_reason(r.held_reason());
  }
  refresh_spec(j);
  put_job(j, fx);
  fx.reschedule = true;
}

void ControllerState::order_prologs(Job& j, Effects& fx) {
  j.prologs_pending.clear();
  for (const auto& t : j.alloc.nodes) {
    AgentCommand cmd;
    cmd.kind = AgentCommand::kLaunch;
    cmd.node = bridge_->cluster().nodes[t.node].name;
    cmd.job_id = j.rec.job_id();
    // What the agent's Prolog needs, nothing to launch: the job's run and the environment.
    v1::LaunchRequest& l = cmd.launch;
    l.mutable_step()->set_job_id(j.rec.job_id());
    l.mutable_step()->set_step_id(kPrologOrderStep);
    l.set_restart_count(j.rec.restart_count());
    for (auto& e : script_env(j, t, false)) l.add_prolog_env(std::move(e));
    l.set_prolog_only(true);
    fx.commands.push_back(std::move(cmd));
    j.prologs_pending.insert(t.node);
  }
  j.rec.set_reason("Prolog");  // squeue's %r while they run, as Slurm's
}

void ControllerState::prolog_result(int64_t job_id, int32_t restart_count, const std::string& node,
                                    const std::optional<v1::LaunchReply>& reply, const std::string& error,
                                    int64_t now, Effects& fx) {
  Job* j = find_job(job_id);
  const core::NodeIndex ni = bridge_->find_node(node);
  const bool failed = reply && !reply->started() && reply->prolog_failed();
  if (!j || j->rec.restart_count() != restart_count || !is_started(j->rec) || ni < 0 ||
      !j->prologs_pending.count(ni)) {
    // An earlier run's answer: a failed Prolog still drains its node.
    if (failed && ni >= 0) drain_node(ni, "Prolog error", now, fx);
    return;
  }
  if (failed) {
    j->prologs_pending.clear();
    return prolog_failed(*j, node, reply->failure(), now, fx);
  }
  // Done, or not delivered: an unreachable node's Prolog runs before the
  // job's first step there instead (a node that stays silent is lost).
  if (!reply) log_error("job " + std::to_string(job_id) + ": the Prolog order to " + node + " failed (" + error +
                       "); it runs with the job's first step there");
  j->prologs_pending.erase(ni);
  if (!j->prologs_pending.empty()) return;
  if (j->rec.desc().batch() && !j->rec.launched()) return launch_batch(*j, fx);
  j->rec.set_reason("None");
}

CtldScript ControllerState::ctld_script(const Job& j, bool prolog) const {
  CtldScript s;
  s.job_id = j.rec.job_id();
  s.restart_count = j.rec.restart_count();
  s.prolog = prolog;
  s.program = prolog ? settings_.prolog_slurmctld : settings_.epilog_slurmctld;
  // The nodes' Prolog's variables (of the job's first node), in the controller's context.
  s.env = script_env(j, j.alloc.nodes.empty() ? core::NodeTake{} : j.alloc.nodes.front(), !prolog,
                     ScriptSite::kController);
  return s;
}

void ControllerState::resume_configuring(Effects& fx) {
  const std::vector<core::JobId> ids(active_.begin(), active_.end());  // put_job changes active_
  for (core::JobId id : ids) {
    Job& j = jobs_.at(id);
    if (!is_started(j.rec) || !j.rec.configuring()) continue;
    if (!settings_.prolog_slurmctld.empty()) {
      log_line("job " + std::to_string(id) + ": its PrologSlurmctld ended with the controller's last run; running it again");
      fx.scripts.push_back(ctld_script(j, true));
      continue;
    }
    j.rec.set_configuring(false);
    configured(j, fx);
    put_job(j, fx);
  }
}

void ControllerState::ctld_script_done(const CtldScript& s, const ScriptRun& run, int64_t now, Effects& fx) {
  const std::string what = s.prolog ? "PrologSlurmctld" : "EpilogSlurmctld";
  if (!run.ok()) {
    log_error(what + " " + s.program + " of job " + std::to_string(s.job_id) + " failed: " + run.describe() +
             run.output_suffix(200));
  }
  if (!s.prolog) return;  // an EpilogSlurmctld changes nothing
  Job* j = find_job(s.job_id);
  if (!j || j->rec.restart_count() != s.restart_count || !is_started(j->rec) || !j->rec.configuring()) return;
  v1::JobRecord& r = j->rec;
  if (run.ok()) {
    r.set_configuring(false);
    configured(*j, fx);
    put_job(*j, fx);
    return;
  }
  // Slurm's rule: requeued where possible (a batch job that may be), else
  // ended. The requeued job is held, as after a node's Prolog failure
  // (unless nohold_on_prolog_fail), so that a prolog that always fails does
  // not start it again and again. Nothing of it ran yet.
  const std::string why = "PrologSlurmctld failed (" + run.describe() + ")";
  // Still CONFIGURING, so end_running ends it at once: no script was sent to wait for.
  if (!r.desc().batch() || !r.requeue()) return end_running(*j, v1::CANCELLED, why, 0, now, fx);
  r.set_configuring(false);
  requeue_unlaunched(*j, why, now, fx);
}

}  // namespace drover::ctld
