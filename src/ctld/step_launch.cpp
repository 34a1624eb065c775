// CreateStep: a step's layout over the job's allocation (nodes, tasks, CPUs,
// GPUs) and its Launch on each node; GetStep, SignalStep and CompleteJob.
#include <algorithm>
#include <csignal>
#include <optional>
#include <set>

#include "common/gres.hpp"
#include "common/hostlist.hpp"
#include "common/job_errors.hpp"
#include "common/strings.hpp"
#include "common/task_layout.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

constexpr const char* kNodeConfigUnavailable = "Requested node configuration is not available";
constexpr const char* kOnlyAllocated = "Only allocated ";
constexpr const char* kTooManyCpus = "More processors requested than permitted";
constexpr const char* kTaskMemory = "Memory required by task is not available";
constexpr const char* kNodesBusy = "Requested nodes are busy";
constexpr const char* kStepLimit = "Step limit reached for this job";
constexpr const char* kBadTaskCount = "Task count specification invalid";

Error refusal(const std::string& slurm, const std::string& detail) {
  return Error{slurm + (detail.empty() ? "" : "\n" + detail)};
}

// The GPU items of a step's request text ("gres:gpu:h100:1,gres:nic:1").
std::vector<GresSpec> gpu_items(const std::string& tres_per) {
  std::vector<GresSpec> out;
  for (const std::string& item : split(tres_per, ',')) {
    const std::string_view g = std::string_view(item).substr(item.rfind("gres:", 0) == 0 ? 5 : 0);
    auto parsed = parse_gres_list(g);
    if (!parsed) continue;
    for (const GresSpec& one : *parsed) {
      if (one.name == "gpu") out.push_back(one);
    }
  }
  return out;
}

// The job's per-node GRES: --gres and --gpus-per-node.
std::vector<GresSpec> job_per_node_gres(const core::JobSpec& job) {
  std::vector<GresSpec> out = job.gres;
  if (job.gpus_per_node.count > 0) out.push_back({"gpu", job.gpus_per_node.type, job.gpus_per_node.count});
  return out;
}

// Whether a step asks for GPUs (--gpus, --gres=gpu / --gpus-per-node, --gpus-per-task).
bool asks_for_gpus(const v1::CreateStepRequest& req) {
  return req.gpus() > 0 || req.gpus_per_node() > 0 || req.gpus_per_task() > 0;
}

// A GPU step's request against its job's, as Slurm 22.05 refused them (its
// words, the anchor cluster): GPUs in a job that holds none, a GPU type the
// job did not ask for, more GPUs per node than the job asked per node.
std::optional<Error> gres_refusal(const core::JobSpec& job, bool job_has_gpus, const v1::CreateStepRequest& req) {
  if (!job_has_gpus) return Error{std::string(kInvalidGres) + "\nStep requested GRES but job doesn't have GRES"};
  std::vector<GresSpec> asked = gpu_items(req.tres_per_node());
  for (const GresSpec& g : gpu_items(req.tres_per_task())) asked.push_back(g);
  if (auto colon = req.gpus_opt().rfind(':'); colon != std::string::npos) {
    asked.push_back({"gpu", req.gpus_opt().substr(0, colon), req.gpus()});
  }
  std::vector<GresSpec> job_per_node;
  for (const GresSpec& g : job_per_node_gres(job)) {
    if (g.name == "gpu") job_per_node.push_back(g);
  }
  std::set<std::string> job_types;
  for (const GresSpec& g : job_per_node) job_types.insert(g.type);
  for (const core::GpuReq* r : {&job.gpus, &job.gpus_per_task}) {
    if (r->count > 0) job_types.insert(r->type);
  }
  for (const GresSpec& g : asked) {
    if (!g.type.empty() && !job_types.count(g.type)) {
      return Error{std::string(kInvalidGres) + "\nStep requested GRES (gpu:" + g.type + ") not found in the job"};
    }
  }
  // Counts without types there: "gpu:3 is more than the job's gpu:2" for a job of gpu:h100:2.
  if (job_per_node.size() == 1 && req.gpus_per_node() > job_per_node.front().count) {
    return Error{std::string(kInvalidGres) + "\nStep requested gres_per_node=gpu:" +
                 std::to_string(req.gpus_per_node()) + " is more than the job's gres_per_node=gpu:" +
                 std::to_string(job_per_node.front().count)};
  }
  return std::nullopt;
}

// Slurm 22.05's sharing of an allocation between steps (srun(1): --exact,
// --overlap, --exclusive): what the running steps hold on one node. A step
// with --overlap holds nothing, and the batch step overlaps every step; a
// step's GPUs are held only when it asked for GPUs (a step without a GPU
// request sees every GPU of the job and holds none of them).
struct Held {
  int cpus = 0;
  int64_t mem_mb = 0;
  std::set<int32_t> gpus;
};

Held held_on(const JobSteps* js, const std::string& node) {
  Held h;
  if (!js) return h;
  for (const auto& [id, s] : js->steps) {
    if (id < 0 || step_final(s) || s.overlap()) continue;
    for (const auto& n : s.nodes()) {
      if (n.node() != node || n.ended()) continue;
      h.cpus += n.cpus();
      h.mem_mb += n.mem_mb();
      if (s.gpus_requested()) h.gpus.insert(n.gpus().begin(), n.gpus().end());
    }
  }
  return h;
}

// A step's share of one node, or why it has none: `never` (an error: the
// allocation cannot give it) or `busy` (running steps hold what it needs).
struct NodePlan {
  int cpus = 0;
  int64_t mem_mb = 0;
  std::vector<int32_t> gpus;
  bool busy = false;
  std::optional<Error> never;
};

struct StepShape {
  int64_t job_id = 0;
  int cpt = 1;           // CPUs per task
  bool exact = false;    // --exact, -c or --exclusive: only tasks x cpt CPUs
  bool overlap = false;  // --overlap: no waiting, nothing held
  int gpus_want = -1;    // GPUs on this node; -1: no GPU request (every GPU of the job, none held)
  int64_t mem_per_node_mb = 0;  // srun --mem; 0: not given
  int64_t mem_per_cpu_mb = 0;   // srun --mem-per-cpu; 0: not given
};

NodePlan plan_node(const StepShape& sh, const core::NodeSpec& spec, const core::NodeTake& t,
                   std::vector<int32_t> job_gpus, const Held& h, int tasks) {
  NodePlan p;
  // More than the job has here takes all of it: the step's CPUs are checked
  // against its nodes together (create_step), as Slurm 22.05 did.
  const int need = std::min(tasks * sh.cpt, t.cpus);
  const std::string job = std::to_string(sh.job_id);
  if (sh.gpus_want > static_cast<int>(job_gpus.size())) {
    p.never = refusal(kNodeConfigUnavailable, spec.name + ": the step asks for " + std::to_string(sh.gpus_want) +
                                                  " GPUs; job " + job + " has " + std::to_string(job_gpus.size()) +
                                                  " there");
    return p;
  }
  // Memory, when the step asks for some and the job has a limit here: more
  // than the job's is refused, more than the other steps left waits (Slurm
  // 22.05 on the anchor cluster, which refused too much --mem-per-cpu as too
  // many processors). A step that asks for none has the job's.
  const bool asks_mem = t.mem_mb > 0 && (sh.mem_per_node_mb > 0 || sh.mem_per_cpu_mb > 0);
  const int64_t min_mem = sh.mem_per_node_mb > 0 ? sh.mem_per_node_mb : sh.mem_per_cpu_mb * need;
  if (asks_mem && min_mem > t.mem_mb) {
    p.never = refusal(sh.mem_per_node_mb > 0 ? kTaskMemory : kTooManyCpus,
                      spec.name + ": the step asks for " + std::to_string(min_mem) + " MB; job " + job + " has " +
                          std::to_string(t.mem_mb) + " MB there");
    return p;
  }
  const int free_cpus = sh.overlap ? t.cpus : t.cpus - h.cpus;
  const int64_t free_mem = sh.overlap ? t.mem_mb : std::max<int64_t>(0, t.mem_mb - h.mem_mb);
  if (need > free_cpus || (asks_mem && min_mem > free_mem)) return p.busy = true, p;
  // Without --exact a step takes every CPU of the job still free on the node.
  p.cpus = sh.exact ? need : free_cpus;
  p.mem_mb = !asks_mem ? t.mem_mb
             : sh.mem_per_node_mb > 0 ? sh.mem_per_node_mb
                                      : std::min(free_mem, sh.mem_per_cpu_mb * p.cpus);
  if (sh.gpus_want < 0) {
    p.gpus = std::move(job_gpus);
    return p;
  }
  for (int32_t g : job_gpus) {
    if (static_cast<int>(p.gpus.size()) < sh.gpus_want && (sh.overlap || !h.gpus.count(g))) p.gpus.push_back(g);
  }
  if (static_cast<int>(p.gpus.size()) < sh.gpus_want) p.busy = true;
  return p;
}

}  // namespace

Result<v1::CreateStepReply> ControllerState::create_step(const Caller& who, const v1::CreateStepRequest& req,
                                                         int64_t now, Effects& fx) {
  auto r = create_step_now(who, req, now, fx);
  note_waiting_step(who, req, r && !r->busy().empty(), now);
  return r;
}

// Slurm 22.05 listed a step waiting for its job's resources in scontrol
// show step as StepId=N.TDB, State=PENDING, StartTime=Unknown, Name=(null),
// TRES=(null), Dist=Unknown, with its tasks' CPUs and its srun (the anchor
// cluster); squeue -s did not list it.
void ControllerState::note_waiting_step(const Caller& who, const v1::CreateStepRequest& req, bool waiting,
                                        int64_t now) {
  for (auto it = waiting_steps_.begin(); it != waiting_steps_.end();) {
    std::erase_if(it->second, [&](const auto& kv) { return kv.second.gone(now); });
    it = it->second.empty() ? waiting_steps_.erase(it) : std::next(it);
  }
  const std::pair<std::string, int64_t> key{req.srun_host(), req.srun_pid()};
  if (!waiting) {
    if (auto it = waiting_steps_.find(req.job_id()); it != waiting_steps_.end()) {
      it->second.erase(key);
      if (it->second.empty()) waiting_steps_.erase(it);
    }
    return;
  }
  const Job* j = find_job(req.job_id());
  if (!j) return;
  WaitingStep& w = waiting_steps_[req.job_id()][key];
  w.seen = now;
  v1::StepInfo& s = w.info;
  const int tasks = req.ntasks() > 0 ? req.ntasks() : std::max(1, req.nodes());
  s.set_job_id(req.job_id());
  s.set_step_id(kPendingStepId);
  s.set_uid(who.uid);
  s.set_state("PENDING");
  s.set_ntasks(tasks);
  s.set_cpus(tasks * std::max(1, req.cpus_per_task()));
  s.set_srun_host(req.srun_host());
  s.set_srun_pid(req.srun_pid());
  s.set_time_limit_s(req.time_limit_s());
  s.set_distribution("Unknown");
  s.clear_nodes();
  const int nodes = req.nodes() > 0 ? req.nodes() : std::min<int>(tasks, j->alloc.nodes.size());
  for (const auto& t : j->alloc.nodes) {
    if (s.nodes_size() >= nodes) break;
    s.add_nodes()->set_node(bridge_->cluster().nodes[t.node].name);
  }
}

Result<v1::CreateStepReply> ControllerState::create_step_now(const Caller& who, const v1::CreateStepRequest& req,
                                                             int64_t now, Effects& fx) {
  Job* j = find_job(req.job_id());
  if (!j) return make_error(std::string(kInvalidJobId) + "\nno job " + std::to_string(req.job_id()) + " is known");
  if (!may_act_on(who, *j)) return make_error(kAccessDenied);
  if (is_pending(*j)) return make_error(kJobPending);
  if (j->rec.state() == v1::SUSPENDED) return make_error("Requested operation is presently disabled");
  if (j->rec.state() != v1::RUNNING || j->rec.completing()) return make_error(kAlreadyDone);
  if (j->rec.configuring()) {  // its PrologSlurmctld runs: the step waits for it
    v1::CreateStepReply wait;
    wait.set_busy("the job's PrologSlurmctld is still running");
    return wait;
  }
  if (auto it = steps_.find(j->rec.job_id()); it != steps_.end() && it->second.next_id >= cfg_.max_step_count) {
    return refusal(kStepLimit, "job " + std::to_string(j->rec.job_id()) + " has created " +
                                   std::to_string(it->second.next_id) + " steps, slurm.conf's MaxStepCount=" +
                                   std::to_string(cfg_.max_step_count));
  }
  const core::Cluster& c = bridge_->cluster();
  const bool wants_gpus = asks_for_gpus(req);
  if (wants_gpus) {
    const bool job_has_gpus = std::any_of(j->alloc.nodes.begin(), j->alloc.nodes.end(), [&](const core::NodeTake& t) {
      return !gpu_indexes(c.nodes[t.node], t).empty();
    });
    if (auto bad = gres_refusal(j->spec, job_has_gpus, req)) return std::move(*bad);
  }
  // Candidate nodes: the allocation, or the -w subset of it (in allocation order);
  // the job's other nodes join it when the step asks for more nodes than -w
  // names (-w names nodes the step must include, as Slurm 22.05 took it).
  std::vector<const core::NodeTake*> cand, others;
  std::set<std::string> wanted;
  if (!req.nodelist().empty()) {
    auto names = hostlist_expand(req.nodelist());
    if (!names) return refusal(kNodeConfigUnavailable, "-w " + req.nodelist() + ": " + names.error().message);
    wanted.insert(names->begin(), names->end());
  }
  std::vector<std::string> alloc_names;
  for (const auto& t : j->alloc.nodes) {
    const std::string& name = c.nodes[t.node].name;
    alloc_names.push_back(name);
    // A node that failed under a --no-kill job is left out of its new steps (Slurm drops it from the job).
    if (nodes_[t.node].down) {
      if (wanted.count(name)) {
        return refusal(kNodeConfigUnavailable, "node " + name + " (from -w) of job " +
                                                   std::to_string(j->rec.job_id()) + "'s allocation is DOWN");
      }
      continue;
    }
    if (wanted.empty() || wanted.count(name)) cand.push_back(&t);
    else others.push_back(&t);
  }
  for (const auto& w : wanted) {
    if (std::find(alloc_names.begin(), alloc_names.end(), w) == alloc_names.end()) {
      return refusal(kNodeConfigUnavailable, "node " + w + " (from -w) is not in job " + std::to_string(j->rec.job_id()) +
                                                 "'s allocation " + hostlist_compress(alloc_names));
    }
  }
  if (cand.empty()) {
    return refusal(kNodeConfigUnavailable, "every node of job " + std::to_string(j->rec.job_id()) + "'s allocation " +
                                               hostlist_compress(alloc_names) + " is DOWN");
  }
  if (!wanted.empty() && req.nodes() > static_cast<int>(cand.size()) && !others.empty()) {
    const auto more = std::min<std::size_t>(others.size(), static_cast<std::size_t>(req.nodes()) - cand.size());
    cand.insert(cand.end(), others.begin(), others.begin() + static_cast<std::ptrdiff_t>(more));
    std::sort(cand.begin(), cand.end());  // allocation order: they point into j->alloc.nodes
  }
  const int avail = static_cast<int>(cand.size());
  int per_node = req.ntasks_per_node();
  int nnodes = req.nodes() > 0 ? req.nodes() : !wanted.empty() ? avail : 0;
  if (nnodes == 0) {
    if (req.ntasks() > 0 && per_node > 0) nnodes = std::min(avail, (req.ntasks() + per_node - 1) / per_node);
    else if (req.ntasks() > 0) nnodes = std::min(avail, req.ntasks());
    else nnodes = avail;
  }
  if (nnodes > avail && wanted.empty() && avail == static_cast<int>(j->alloc.nodes.size())) {
    // Slurm 22.05's srun said only this, before asking (anchor cluster: -N2 in a one-node job).
    return make_error(std::string(kOnlyAllocated) + std::to_string(avail) + " nodes asked for " +
                      std::to_string(nnodes));
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
    // Every node of the step runs a task (-N2 -n2 --ntasks-per-node=2 is one
    // on each, as in Slurm); the rest fill the first nodes up to the limit.
    int left = ntasks - nnodes;
    for (auto& n : layout) {
      n = 1 + std::min(per_node - 1, left);
      left -= n - 1;
    }
  } else {
    // Slurm 22.05's block layout: the tasks dealt one to each node in turn,
    // a node left out once it holds as many as its CPUs in the job allow
    // (-n3 over a job's 2,1 CPUs: 2,1; -n2 there: 1,1; -n4 over an
    // exclusive job's 64,64: 2,2). Beyond every node's CPUs they are dealt
    // evenly, and the node's share is refused below.
    layout.assign(static_cast<std::size_t>(nnodes), 0);
    std::vector<int> cap(static_cast<std::size_t>(nnodes), 0);
    for (int i = 0; i < nnodes && i < avail; ++i) cap[static_cast<std::size_t>(i)] = cand[static_cast<std::size_t>(i)]->cpus / cpt;
    for (int left = ntasks; left > 0;) {
      bool dealt = false;
      for (int i = 0; i < nnodes && left > 0; ++i) {
        auto& n = layout[static_cast<std::size_t>(i)];
        if (n < std::max(1, cap[static_cast<std::size_t>(i)])) ++n, --left, dealt = true;
      }
      if (!dealt) {
        for (int i = 0; i < nnodes && left > 0; ++i) ++layout[static_cast<std::size_t>(i)], --left;
      }
    }
  }
  // Its tasks over its nodes, rounded up, as Slurm 22.05 weighed it (anchor
  // cluster, MaxTasksPerNode=4: -N2 -n6 ran though laid out 5 and 1; -N2 -n9 was refused).
  if (const int per = (ntasks + nnodes - 1) / std::max(1, nnodes); per > cfg_.max_tasks_per_node) {
    return refusal(kBadTaskCount, std::to_string(ntasks) + " tasks over " + std::to_string(nnodes) +
                                      (nnodes == 1 ? " node: " : " nodes: ") + std::to_string(per) +
                                      " per node, above slurm.conf's MaxTasksPerNode=" +
                                      std::to_string(cfg_.max_tasks_per_node));
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
  s.set_kill_on_bad_exit(req.has_kill_on_bad_exit() ? req.kill_on_bad_exit() : settings_.kill_on_bad_exit);
  s.set_exclusive(req.exclusive());
  s.set_cpus_per_task(req.cpus_per_task());
  s.set_restart_count(j->rec.restart_count());
  *s.mutable_argv() = req.argv();
  s.set_submit_line(req.submit_line());
  s.set_overlap(req.overlap());
  s.set_exact(req.exact() || req.exclusive());
  s.set_no_kill(req.no_kill());
  s.set_srun_host(req.srun_host());
  s.set_srun_pid(req.srun_pid());
  s.set_time_limit_s(req.time_limit_s());
  s.set_gpus_requested(wants_gpus);
  // squeue -s's request columns: a step that asks for no GPU shows the job's
  // per-node GRES, which it is given (Slurm 22.05 on the anchor cluster).
  s.set_tres_per_node(wants_gpus || !req.tres_per_node().empty() ? req.tres_per_node()
                                                                   : tres_per_text(job_per_node_gres(j->spec)));
  s.set_tres_per_task(req.tres_per_task());
  if (!req.gpu_bind().empty()) s.set_tres_bind("gpu:" + req.gpu_bind());
  // The job's CPUs on the nodes the step would run on, against the step's:
  // Slurm 22.05 ran -c2 -n3 in a job of 5,1 CPUs (2,1 tasks, its second
  // node's task given the one CPU there) and refused -c6 -n1 there.
  int job_cpus_there = 0;
  for (int i = 0; i < nnodes && i < avail; ++i) job_cpus_there += cand[static_cast<std::size_t>(i)]->cpus;
  if (ntasks * cpt > job_cpus_there) {
    return refusal(kTooManyCpus, std::to_string(ntasks) + " tasks x " + std::to_string(cpt) + " CPUs, and job " +
                                     std::to_string(j->rec.job_id()) + " has " + std::to_string(job_cpus_there) +
                                     " CPUs on the " + (nnodes == 1 ? "node" : std::to_string(nnodes) + " nodes") +
                                     " the step would run on");
  }
  // --gpus=N: the first nodes as many of the job's GPUs as they have, one
  // left for each node after them (as the job's own --gpus were laid out:
  // Slurm 22.05 ran a step's --gpus=4 over a job's 3 and 1 GPUs as 3,1).
  std::vector<int> gpu_share(static_cast<std::size_t>(nnodes), 0);
  if (req.gpus() > 0) {
    int left = req.gpus();
    for (int i = 0; i < nnodes && i < avail; ++i) {
      const auto have = static_cast<int>(gpu_indexes(c.nodes[cand[static_cast<std::size_t>(i)]->node],
                                                     *cand[static_cast<std::size_t>(i)]).size());
      const int take = std::max(1, std::min(have, left - (nnodes - 1 - i)));
      gpu_share[static_cast<std::size_t>(i)] = take;
      left -= take;
    }
    if (left > 0) gpu_share.front() += left;  // more than the job has: refused below
  }
  StepShape shape{j->rec.job_id(), cpt, s.exact(), s.overlap(), -1, req.mem_per_node_mb(), req.mem_per_cpu_mb()};
  // The first nodes (in allocation order) that can take their share now;
  // busy when too few can, refused when one never could.
  std::vector<const core::NodeTake*> used;
  int cpus_total = 0;
  for (const core::NodeTake* t : cand) {
    if (static_cast<int>(used.size()) == nnodes) break;
    const core::NodeSpec& spec = c.nodes[t->node];
    const int i = static_cast<int>(used.size());
    if (wants_gpus) {
      shape.gpus_want = req.gpus_per_task() > 0 ? req.gpus_per_task() * layout[static_cast<std::size_t>(i)]
                        : req.gpus_per_node() > 0 ? req.gpus_per_node()
                                                  : gpu_share[static_cast<std::size_t>(i)];
    }
    NodePlan p = plan_node(shape, spec, *t, gpu_indexes(spec, *t), held_on(js, spec.name),
                           layout[static_cast<std::size_t>(i)]);
    if (p.never) return std::move(*p.never);
    if (p.busy) continue;
    v1::StepNode* n = s.add_nodes();
    n->set_node(spec.name);
    n->set_tasks(layout[static_cast<std::size_t>(i)]);
    n->set_cpus(p.cpus);
    n->set_mem_mb(p.mem_mb);
    for (int32_t g : p.gpus) n->add_gpus(g);
    cpus_total += p.cpus;
    used.push_back(t);
  }
  if (static_cast<int>(used.size()) < nnodes) {
    v1::CreateStepReply wait;
    wait.set_busy(kNodesBusy);
    return wait;
  }
  s.set_cpus(cpus_total);
  JobSteps& mine = steps_[j->rec.job_id()];
  s.set_step_id(mine.next_id++);
  s.set_tres(format_tres(step_tres(s, bridge_->cluster())));
  std::vector<int> tasks_here;
  for (const auto& n : s.nodes()) tasks_here.push_back(n.tasks());
  const auto ranks = ranks_by_node(tasks_here, req.distribution());  // -m: block, cyclic or plane=N
  // Outside an allocation srun's default is block (Slurm 22.05 on the anchor cluster).
  s.set_distribution(distribution_display(
      req.distribution().empty() && !req.in_allocation() ? std::string("block") : req.distribution(), tasks_here));
  for (int i = 0; i < s.nodes_size(); ++i) {
    AgentCommand cmd;
    cmd.kind = AgentCommand::kLaunch;
    cmd.node = s.nodes(i).node();
    cmd.job_id = j->rec.job_id();
    cmd.launch = build_step_launch(*j, *used[static_cast<std::size_t>(i)], s, req, i, ranks[static_cast<std::size_t>(i)]);
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
                                                     int node_index, const std::vector<int>& ranks_here) const {
  v1::LaunchRequest l = build_launch(j, take);
  const v1::StepNode& here = s.nodes(node_index);
  l.mutable_step()->set_step_id(s.step_id());
  l.clear_script();
  *l.mutable_argv() = req.argv();
  l.set_multi_prog(req.multi_prog());
  // srun's environment is the tasks' (Slurm propagates srun's, not the batch submitter's).
  *l.mutable_environment() = req.environment();
  l.set_export_spec(req.export_spec().empty() ? "ALL" : req.export_spec());
  l.set_work_dir(req.work_dir());
  l.set_cpus(here.cpus());
  if (here.mem_mb() > 0) l.set_mem_limit_mb(here.mem_mb());  // its cgroup's limit
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
  l.set_append(req.has_open_append() ? req.open_append() : settings_.job_file_append);
  l.clear_warn_signal();
  l.clear_warn_seconds();
  if (int64_t limit = step_time_limit(j.rec, s, enforced_time_limit(j.rec))) {
    l.set_start_time(s.start_time());
    l.set_time_limit_s(limit);
  }
  v1::StepLayout* L = l.mutable_layout();
  for (const auto& n : s.nodes()) {
    L->add_nodes(n.node());
    L->add_tasks_per_node(n.tasks());
  }
  L->set_node_index(node_index);
  for (int r : ranks_here) L->add_global_task_ids(r);
  L->set_cpus_per_task(req.cpus_per_task());
  L->set_gpus_opt(req.gpus_opt());
  L->set_launcher_host(req.launcher_host());
  L->set_launcher_port(req.launcher_port());
  L->set_io_key(req.io_key());
  L->set_umask(req.umask());
  L->set_kill_on_bad_exit(s.kill_on_bad_exit());
  L->set_stdin_all(req.stdin_all());
  L->set_stdin_task(req.stdin_task());
  L->set_mpi(req.mpi());
  L->set_pty(req.pty());
  L->set_pty_rows(req.pty_rows());
  L->set_pty_cols(req.pty_cols());
  L->set_task_prolog(req.task_prolog());
  L->set_task_epilog(req.task_epilog());
  L->set_gpu_bind(req.gpu_bind());
  L->set_distribution(req.distribution());
  L->set_in_allocation(req.in_allocation());
  // Slurm 22.05's srun names the distribution when -m was given, and always inside an allocation.
  if (!req.distribution().empty()) {
    L->set_show_distribution(true);
  } else if (req.in_allocation()) {
    std::vector<int> tasks;
    for (const auto& n : s.nodes()) tasks.push_back(n.tasks());
    L->set_distribution(default_distribution(tasks));
    L->set_show_distribution(true);
  }
  return l;
}

Result<v1::GetStepReply> ControllerState::get_step(const Caller& who, const v1::GetStepRequest& req) const {
  auto js = steps_.find(req.job_id());
  auto j = jobs_.find(req.job_id());
  auto run = requeued_runs_.find(req.job_id());
  if (j == jobs_.end() || (js == steps_.end() && run == requeued_runs_.end()) || !may_see(who, j->second)) {
    return make_error(kInvalidJobId);
  }
  const v1::StepInfo* found = nullptr;
  if (js != steps_.end()) {
    if (auto it = js->second.steps.find(req.step_id()); it != js->second.steps.end()) found = &it->second;
  }
  // A step of the run a requeue ended, while its nodes' reports are awaited
  // (its srun waits for them, the job pending again).
  if (!found && run != requeued_runs_.end()) {
    for (const auto& s : run->second.steps) {
      if (s.step_id() == req.step_id()) found = &s;
    }
  }
  if (!found) return make_error("Invalid job id specified\nno step " + step_name(req.job_id(), req.step_id()));
  v1::GetStepReply rep;
  *rep.mutable_step() = *found;
  rep.set_job_state(state_name(j->second.rec.state()));
  return rep;
}

// squeue -s: every running step of the named (else every) running job, in
// job order, numeric steps first and the batch step last (Slurm's order:
// its batch step id is above every numeric one). Anyone may list them, as
// squeue lists every job.
v1::GetStepsReply ControllerState::get_steps(const v1::GetStepsRequest& req, int64_t now) const {
  v1::GetStepsReply rep;
  rep.set_now(now);
  std::set<int64_t> named(req.job_ids().begin(), req.job_ids().end());
  for (const auto& [job_id, js] : steps_) {
    if (!named.empty() && !named.count(job_id)) continue;
    auto j = jobs_.find(job_id);
    if (j == jobs_.end() || !is_started(j->second.rec)) continue;
    const v1::StepInfo* batch = nullptr;
    for (const auto& [id, s] : js.steps) {
      if (step_final(s)) continue;
      if (id == kBatchStepId) batch = &s;
      else *rep.add_steps() = s;
    }
    if (batch) *rep.add_steps() = *batch;
  }
  // Those sruns wait to create (scontrol show step lists them; squeue -s does not).
  for (const auto& [job_id, waiting] : waiting_steps_) {
    if (!named.empty() && !named.count(job_id)) continue;
    auto j = jobs_.find(job_id);
    if (j == jobs_.end() || !is_started(j->second.rec)) continue;
    for (const auto& [key, w] : waiting) {
      if (!w.gone(now)) *rep.add_steps() = w.info;
    }
  }
  return rep;
}

// sstat: the job's running steps to ask about and the nodes where each
// still runs; an error in Slurm's words when there is none. Only the job's
// owner and the privileged may ask (Slurm's step daemons answer no one else).
Result<std::vector<UsageTarget>> ControllerState::step_usage_targets(const Caller& who,
                                                                      const v1::GetStepUsageRequest& req) const {
  std::string job = std::to_string(req.job_id());
  core::JobId id = req.job_id();
  if (req.has_array_task()) {
    job += "_" + std::to_string(req.array_task());
    id = 0;
    if (auto a = arrays_.find(req.job_id()); a != arrays_.end()) {
      for (core::JobId e : a->second) {
        auto it = jobs_.find(e);
        if (it != jobs_.end() && it->second.rec.array_task_id() == req.array_task()) id = e;
      }
    }
  }
  auto j = jobs_.find(id);
  if (j == jobs_.end()) return make_error("couldn't get steps for job " + job);
  if (!may_act_on(who, j->second)) return make_error(kAccessDenied);
  auto js = steps_.find(id);
  std::vector<UsageTarget> out;
  bool any_running = false;  // the batch step too: a job running only its script lists nothing, without error
  if (js != steps_.end() && is_started(j->second.rec)) {
    for (const auto& [sid, s] : js->second.steps) {
      if (step_final(s)) continue;
      any_running = true;
      if (req.has_step_id() ? sid != req.step_id() : (sid < 0 && !(req.all_steps() && sid == kBatchStepId))) continue;
      UsageTarget t{id, sid, {}};
      for (const auto& n : s.nodes()) {
        if (!n.ended()) t.nodes.push_back(n.node());
      }
      if (!t.nodes.empty()) out.push_back(std::move(t));
    }
  }
  // By step id, as the steps' map keeps them: the batch step (-2) first (Slurm's order).
  if (out.empty() && req.has_step_id()) {
    const std::string step = req.step_id() == kBatchStepId ? std::string("batch") : std::to_string(req.step_id());
    return make_error("StepId=" + job + "." + step + " not found running.");
  }
  if (!any_running) return make_error("No steps running for job " + job);
  return out;
}

Result<BcastTarget> ControllerState::bcast_target(const Caller& who, int64_t job_id,
                                                  std::optional<int64_t> step_id) const {
  // As Slurm 22.05's sbcast was answered on the anchor cluster: an unknown
  // job (or step) is an invalid id, another user's job an invalid user id.
  auto j = jobs_.find(job_id);
  if (j == jobs_.end()) return make_error(kInvalidJobId);
  const v1::JobRecord& r = j->second.rec;
  if (!may_act_on(who, j->second)) return make_error(kInvalidUserId);
  if (is_pending(j->second)) return make_error(kJobPending);
  if (!is_started(r) || r.completing()) return make_error(kAlreadyDone);
  BcastTarget t{{}, r.user(), r.uid(), r.gid()};
  if (step_id) {
    const v1::StepInfo* s = nullptr;
    if (auto js = steps_.find(job_id); js != steps_.end()) {
      if (auto it = js->second.steps.find(*step_id); it != js->second.steps.end()) s = &it->second;
    }
    if (!s) return make_error(kInvalidJobId);
    if (step_final(*s)) return make_error(kAlreadyDone);
    for (const auto& n : s->nodes()) {
      if (!n.ended()) t.nodes.push_back(n.node());
    }
  } else {
    for (const auto& n : r.alloc().nodes()) t.nodes.push_back(n.node());
  }
  if (t.nodes.empty()) return make_error(kAlreadyDone);
  return t;
}

Status ControllerState::signal_step(const Caller& who, const v1::SignalStepRequest& req, int64_t now, Effects& fx) {
  // As Slurm 22.05 answered on the anchor cluster: a job that is unknown or
  // over is an invalid job id; a pending one has no step to signal, and
  // that is no error; a running job without that step running is
  // kNoSuchStep (scancel words both as Slurm's scancel does).
  Job* j = find_job(req.job_id());
  if (!j || is_final(j->rec.state())) return make_error(kInvalidJobId);
  if (!may_act_on(who, *j)) return make_error(kAccessDenied);
  if (is_pending(*j)) return {};
  v1::StepInfo* found = nullptr;
  if (auto js = steps_.find(req.job_id()); js != steps_.end()) {
    if (auto it = js->second.steps.find(req.step_id()); it != js->second.steps.end()) found = &it->second;
  }
  if (!found || step_final(*found)) {
    return make_error(std::string(kNoSuchStep) + "\nno step " + step_name(req.job_id(), req.step_id()) +
                      " runs in job " + std::to_string(req.job_id()));
  }
  v1::StepInfo& s = *found;
  if (req.cancel()) {
    s.set_cancelled(true);
    s.set_cancelled_by(who.uid);
    put_step(s, fx);
  }
  // A cancel (scancel N.S, srun's second Ctrl-C) kills the step's tasks at
  // once with SIGKILL, as Slurm 22.05's scancel of a step does (the step
  // `CANCELLED by UID`, exit 0:9, and "*** STEP 12.0 ON cpu1 CANCELLED AT
  // ... ***" on its stderr, on the anchor cluster); the job runs on.
  for (const auto& n : s.nodes()) {
    if (n.ended()) continue;
    if (!req.cancel()) {
      fx.commands.push_back(signal_command(j->rec.job_id(), n.node(), req.signal(), s.step_id()));
      continue;
    }
    AgentCommand cmd = terminate_command(j->rec.job_id(), n.node(), "CANCELLED",
                                         "step " + step_name(j->rec.job_id(), s.step_id()) + " cancelled by " +
                                             who.describe(),
                                         s.step_id());
    cmd.kill_now = true;
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
  if (!is_started(j->rec)) return {};  // ended already (time limit, scancel): nothing to do
  bool ok = req.exit_code() == 0 && req.exit_signal() == 0;
  finish_job(*j, ok ? v1::COMPLETED : v1::FAILED, req.exit_code(), req.exit_signal(), "", now, fx);
  return {};
}

}  // namespace drover::ctld
