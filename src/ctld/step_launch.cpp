// CreateStep: a step's layout over the job's allocation (nodes, tasks, CPUs,
// GPUs) and its Launch on each node; GetStep, SignalStep and CompleteJob.
#include <algorithm>
#include <csignal>

#include "common/hostlist.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

constexpr const char* kNodeConfigUnavailable = "Requested node configuration is not available";
constexpr const char* kTooManyCpus = "More processors requested than permitted";
constexpr const char* kNodesBusy = "Requested nodes are busy";

Error refusal(const std::string& slurm, const std::string& detail) {
  return Error{slurm + (detail.empty() ? "" : "\n" + detail)};
}

// What running --exclusive (CPUs) and GPU-requesting steps hold on a node.
struct Held {
  int cpus = 0;
  std::set<int32_t> gpus;
};

Held held_on(const JobSteps* js, const std::string& node) {
  Held h;
  if (!js) return h;
  for (const auto& [id, s] : js->steps) {
    if (id < 0 || step_final(s)) continue;
    for (const auto& n : s.nodes()) {
      if (n.node() != node || n.ended()) continue;
      if (s.exclusive()) h.cpus += n.cpus();
      if (s.exclusive() || s.gpus_requested()) h.gpus.insert(n.gpus().begin(), n.gpus().end());
    }
  }
  return h;
}

}  // namespace

Result<v1::CreateStepReply> ControllerState::create_step(const Caller& who, const v1::CreateStepRequest& req,
                                                         int64_t now, Effects& fx) {
  Job* j = find_job(req.job_id());
  if (!j) return make_error(std::string(kInvalidJobId) + "\nno job " + std::to_string(req.job_id()) + " is known");
  if (!may_act_on(who, *j)) return make_error(kAccessDenied);
  if (is_pending(*j)) return make_error(kJobPending);
  if (j->rec.state() != v1::RUNNING || j->rec.completing()) return make_error(kAlreadyDone);
  const core::Cluster& c = bridge_->cluster();
  // Candidate nodes: the allocation, or the -w subset of it (in allocation order).
  std::vector<const core::NodeTake*> cand;
  std::set<std::string> wanted;
  if (!req.nodelist().empty()) {
    auto names = hostlist_expand(req.nodelist());
    if (!names) return refusal(kNodeConfigUnavailable, "-w " + req.nodelist() + ": " + names.error().message);
    wanted.insert(names->begin(), names->end());
  }
  std::vector<std::string> alloc_names;
  for (const auto& t : j->alloc.nodes) {
    alloc_names.push_back(c.nodes[t.node].name);
    if (wanted.empty() || wanted.count(c.nodes[t.node].name)) cand.push_back(&t);
  }
  for (const auto& w : wanted) {
    if (std::find(alloc_names.begin(), alloc_names.end(), w) == alloc_names.end()) {
      return refusal(kNodeConfigUnavailable, "node " + w + " (from -w) is not in job " + std::to_string(j->rec.job_id()) +
                                                 "'s allocation " + hostlist_compress(alloc_names));
    }
  }
  const int avail = static_cast<int>(cand.size());
  int per_node = req.ntasks_per_node();
  int nnodes = req.nodes() > 0 ? req.nodes() : !wanted.empty() ? avail : 0;
  if (nnodes == 0) {
    if (req.ntasks() > 0 && per_node > 0) nnodes = std::min(avail, (req.ntasks() + per_node - 1) / per_node);
    else if (req.ntasks() > 0) nnodes = std::min(avail, req.ntasks());
    else nnodes = avail;
  }
  if (nnodes > avail) {
    return refusal(kNodeConfigUnavailable, "the step asks for " + std::to_string(nnodes) + " nodes; job " +
                                               std::to_string(j->rec.job_id()) + " has " + std::to_string(avail) +
                                               (wanted.empty() ? "" : " of those named by -w"));
  }
  int ntasks = req.ntasks() > 0 ? req.ntasks() : per_node > 0 ? per_node * nnodes : nnodes;
  nnodes = std::min(nnodes, ntasks);
  if (per_node > 0 && per_node * nnodes < ntasks) {
    return refusal(kNodeConfigUnavailable, std::to_string(ntasks) + " tasks do not fit " + std::to_string(nnodes) +
                                               " nodes at --ntasks-per-node=" + std::to_string(per_node));
  }
  const int cpt = std::max(1, req.cpus_per_task());
  std::vector<int> layout = per_node > 0 ? std::vector<int>(static_cast<std::size_t>(nnodes), 0) : std::vector<int>{};
  if (per_node > 0) {
    int left = ntasks;
    for (auto& n : layout) left -= (n = std::min(per_node, left));
  } else {
    for (int i = 0; i < nnodes; ++i) layout.push_back(ntasks / nnodes + (i < ntasks % nnodes ? 1 : 0));
  }
  auto js_it = steps_.find(j->rec.job_id());
  const JobSteps* js = js_it == steps_.end() ? nullptr : &js_it->second;
  v1::StepInfo s;
  s.set_job_id(j->rec.job_id());
  s.set_uid(who.uid);
  s.set_name(req.name());
  s.set_ntasks(ntasks);
  s.set_start_time(now);
  s.set_state("RUNNING");
  s.set_kill_on_bad_exit(req.kill_on_bad_exit());
  s.set_exclusive(req.exclusive());
  s.set_cpus_per_task(req.cpus_per_task());
  s.set_restart_count(j->rec.restart_count());
  *s.mutable_argv() = req.argv();
  bool wants_gpus = req.gpus() > 0 || req.gpus_per_node() > 0;
  s.set_gpus_requested(wants_gpus);
  int cpus_total = 0;
  for (int i = 0; i < nnodes; ++i) {
    const core::NodeTake& t = *cand[static_cast<std::size_t>(i)];
    const core::NodeSpec& spec = c.nodes[t.node];
    int tasks = layout[static_cast<std::size_t>(i)];
    int cpus = tasks * cpt;
    if (cpus > t.cpus) {
      return refusal(kTooManyCpus, spec.name + ": " + std::to_string(tasks) + " tasks x " + std::to_string(cpt) +
                                       " CPUs, and job " + std::to_string(j->rec.job_id()) + " has " +
                                       std::to_string(t.cpus) + " CPUs there");
    }
    Held h = held_on(js, spec.name);
    if (req.exclusive() && h.cpus + cpus > t.cpus) {
      v1::CreateStepReply busy;
      busy.set_busy(kNodesBusy);
      return busy;
    }
    std::vector<int32_t> gpus = gpu_indexes(spec, t);
    if (wants_gpus) {
      int want = req.gpus_per_node() > 0 ? req.gpus_per_node() : req.gpus() / nnodes + (i < req.gpus() % nnodes);
      if (want > static_cast<int>(gpus.size())) {
        return refusal(kNodeConfigUnavailable, spec.name + ": the step asks for " + std::to_string(want) +
                                                   " GPUs; job " + std::to_string(j->rec.job_id()) + " has " +
                                                   std::to_string(gpus.size()) + " there");
      }
      std::vector<int32_t> free;
      for (int32_t g : gpus) {
        if (!h.gpus.count(g)) free.push_back(g);
      }
      if (static_cast<int>(free.size()) < want) {
        v1::CreateStepReply busy;
        busy.set_busy(kNodesBusy);
        return busy;
      }
      gpus.assign(free.begin(), free.begin() + want);
    }
    v1::StepNode* n = s.add_nodes();
    n->set_node(spec.name);
    n->set_tasks(tasks);
    n->set_cpus(cpus);
    for (int32_t g : gpus) n->add_gpus(g);
    cpus_total += cpus;
  }
  s.set_cpus(cpus_total);
  JobSteps& mine = steps_[j->rec.job_id()];
  s.set_step_id(mine.next_id++);
  int64_t gpus_n = 0;
  for (const auto& n : s.nodes()) gpus_n += n.gpus_size();
  s.set_tres("cpu=" + std::to_string(cpus_total) + (gpus_n ? ",gres/gpu=" + std::to_string(gpus_n) : "") +
             ",node=" + std::to_string(s.nodes_size()));
  int rank = 0;
  for (int i = 0; i < s.nodes_size(); ++i) {
    AgentCommand cmd;
    cmd.kind = AgentCommand::kLaunch;
    cmd.node = s.nodes(i).node();
    cmd.job_id = j->rec.job_id();
    cmd.launch = build_step_launch(*j, *cand[static_cast<std::size_t>(i)], s, req, i, rank);
    rank += s.nodes(i).tasks();
    fx.commands.push_back(std::move(cmd));
  }
  put_step(s, fx);
  v1::CreateStepReply reply;
  *reply.mutable_step() = s;
  mine.steps[s.step_id()] = std::move(s);
  return reply;
}

v1::LaunchRequest ControllerState::build_step_launch(const Job& j, const core::NodeTake& take,
                                                     const v1::StepInfo& s, const v1::CreateStepRequest& req,
                                                     int node_index, int first_rank) const {
  v1::LaunchRequest l = build_launch(j, take);
  const v1::StepNode& here = s.nodes(node_index);
  l.mutable_step()->set_step_id(s.step_id());
  l.clear_script();
  *l.mutable_argv() = req.argv();
  // srun's environment is the tasks' (Slurm propagates srun's, not the batch submitter's).
  *l.mutable_environment() = req.environment();
  l.set_export_spec(req.export_spec().empty() ? "ALL" : req.export_spec());
  l.set_work_dir(req.work_dir());
  l.set_cpus(here.cpus());
  l.clear_gpus();
  const core::NodeSpec& spec = bridge_->cluster().nodes[take.node];
  for (int32_t g : here.gpus()) {
    v1::GpuDevice* d = l.add_gpus();
    d->set_index(g);
    for (const auto& t : take.gres) {
      if (spec.gres[t.pool].name == "gpu") d->set_type(spec.gres[t.pool].type);
    }
  }
  l.set_stdout_pattern(req.stdout_pattern());
  l.set_stderr_pattern(req.stderr_pattern());
  l.set_stdin_path(req.stdin_pattern());
  l.set_append(false);
  l.clear_warn_signal();
  l.clear_warn_seconds();
  if (req.time_limit_s() > 0) {
    int64_t job_left = j.rec.time_limit_s() == kInfinite ? 0 : j.rec.start_time() + j.rec.time_limit_s();
    int64_t step_end = s.start_time() + req.time_limit_s();
    int64_t end = job_left > 0 ? std::min(job_left, step_end) : step_end;
    l.set_start_time(s.start_time());
    l.set_time_limit_s(std::max<int64_t>(1, end - s.start_time()));
  }
  v1::StepLayout* L = l.mutable_layout();
  for (const auto& n : s.nodes()) {
    L->add_nodes(n.node());
    L->add_tasks_per_node(n.tasks());
  }
  L->set_node_index(node_index);
  for (int r = 0; r < here.tasks(); ++r) L->add_global_task_ids(first_rank + r);
  L->set_cpus_per_task(req.cpus_per_task());
  L->set_gpus_opt(req.gpus_opt());
  L->set_launcher_host(req.launcher_host());
  L->set_launcher_port(req.launcher_port());
  L->set_io_key(req.io_key());
  L->set_umask(req.umask());
  L->set_kill_on_bad_exit(req.kill_on_bad_exit());
  L->set_stdin_all(req.stdin_all());
  L->set_mpi(req.mpi());
  return l;
}

Result<v1::GetStepReply> ControllerState::get_step(const Caller&, const v1::GetStepRequest& req) const {
  auto js = steps_.find(req.job_id());
  auto j = jobs_.find(req.job_id());
  if (js == steps_.end() || j == jobs_.end()) return make_error(kInvalidJobId);
  auto it = js->second.steps.find(req.step_id());
  if (it == js->second.steps.end()) return make_error("Invalid job id specified\nno step " + step_name(req.job_id(), req.step_id()));
  v1::GetStepReply rep;
  *rep.mutable_step() = it->second;
  rep.set_job_state(state_name(j->second.rec.state()));
  return rep;
}

Status ControllerState::signal_step(const Caller& who, const v1::SignalStepRequest& req, int64_t now, Effects& fx) {
  Job* j = find_job(req.job_id());
  auto js = steps_.find(req.job_id());
  if (!j || js == steps_.end()) return make_error(kInvalidJobId);
  if (!may_act_on(who, *j)) return make_error(kAccessDenied);
  auto it = js->second.steps.find(req.step_id());
  if (it == js->second.steps.end() || step_final(it->second)) return make_error(kAlreadyDone);
  v1::StepInfo& s = it->second;
  if (req.cancel()) {
    s.set_cancelled(true);
    put_step(s, fx);
  }
  for (const auto& n : s.nodes()) {
    if (n.ended()) continue;
    AgentCommand cmd;
    cmd.kind = AgentCommand::kSignal;
    cmd.node = n.node();
    cmd.job_id = j->rec.job_id();
    cmd.step_id = s.step_id();
    cmd.signal = req.cancel() ? SIGKILL : req.signal();
    fx.commands.push_back(std::move(cmd));
  }
  (void)now;
  return {};
}

Status ControllerState::complete_job(const Caller& who, const v1::CompleteJobRequest& req, int64_t now, Effects& fx) {
  Job* j = find_job(req.job_id());
  if (!j) return make_error(kInvalidJobId);
  if (!may_act_on(who, *j)) return make_error(kAccessDenied);
  if (j->rec.desc().batch()) {
    return make_error("Job/step already completing or completed\njob " + std::to_string(req.job_id()) +
                      " is a batch job: it ends with its script");
  }
  if (is_pending(*j)) {  // salloc gave up waiting: Slurm cancels the request
    v1::CancelRequest c;
    c.add_targets()->set_job_id(req.job_id());
    cancel(who, c, now, fx);
    return {};
  }
  if (j->rec.state() != v1::RUNNING) return {};  // ended already (time limit, scancel): nothing to do
  bool ok = req.exit_code() == 0 && req.exit_signal() == 0;
  finish_job(*j, ok ? v1::COMPLETED : v1::FAILED, req.exit_code(), req.exit_signal(), "", now, fx);
  return {};
}

}  // namespace drover::ctld
