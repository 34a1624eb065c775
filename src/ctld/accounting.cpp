#include "ctld/accounting.hpp"

#include <algorithm>

#include <cmath>
#include <csignal>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "common/tres.hpp"
#include "core/demand.hpp"
#include "core/priority.hpp"
#include "ctld/job_model.hpp"
#include "ctld/persist.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {

std::map<std::string, int64_t> allocation_tres(const v1::JobAllocation& a) {
  std::map<std::string, int64_t> tres;
  int64_t cpus = 0, mem = 0;
  for (const auto& t : a.nodes()) {
    cpus += t.cpus();
    mem += t.mem_mb();
    for (const auto& g : t.gres()) {
      tres["gres/" + g.name()] += g.count();
      if (!g.type().empty()) tres["gres/" + g.name() + ":" + g.type()] += g.count();
    }
  }
  tres["cpu"] = cpus;
  tres["mem"] = mem;
  tres["node"] = a.nodes_size();
  tres["billing"] = cpus;
  return tres;
}

namespace {

// The job's partition when it has TRESBillingWeights, else nullptr (the job bills its CPUs).
const core::PartitionSpec* weighted_partition(const CoreBridge& bridge, const v1::JobRecord& rec) {
  const int32_t part = bridge.find_partition(rec.partition());
  if (part < 0) return nullptr;
  const core::PartitionSpec& p = bridge.cluster().partitions[static_cast<size_t>(part)];
  return p.billing_weights.empty() ? nullptr : &p;
}

}  // namespace

std::map<std::string, int64_t> job_alloc_tres(const CoreBridge& bridge, const v1::JobRecord& rec) {
  auto tres = allocation_tres(rec.alloc());
  const core::PartitionSpec* part = weighted_partition(bridge, rec);
  if (!part) return tres;  // billing: its CPUs
  const int64_t billing = core::billing_count(core::billing_units(bridge.cluster(), *part, tres));
  if (billing > 0) tres["billing"] = billing;
  else tres.erase("billing");  // left out, as Slurm 22.05's TRES= and sacct left a billing of 0
  return tres;
}

double job_billing_units(const CoreBridge& bridge, const v1::JobRecord& rec) {
  const core::PartitionSpec* part = weighted_partition(bridge, rec);
  if (part) return core::billing_units(bridge.cluster(), *part, allocation_tres(rec.alloc()));
  int64_t cpus = 0;  // no weights: its CPUs, without building its TRES (every pass charges every job)
  for (const auto& t : rec.alloc().nodes()) cpus += t.cpus();
  return static_cast<double>(cpus);
}

namespace {

// The batch step's state: the job's, except that a script the controller
// ended (time limit, cancel) or a signal killed shows CANCELLED, as Slurm's
// batch step does (a script that ran `kill -9 $$`: the job FAILED 0:9, its
// batch step CANCELLED 0:9, on the anchor cluster).
v1::JobState batch_state(const v1::JobRecord& rec) {
  switch (rec.state()) {
    case v1::TIMEOUT: case v1::DEADLINE: case v1::PREEMPTED: return v1::CANCELLED;
    // Requeued by its script's exit code (RequeueExit): FAILED with it, as Slurm's.
    case v1::REQUEUED: return rec.exit_code() != 0 && rec.exit_signal() == 0 ? v1::FAILED : v1::CANCELLED;
    case v1::FAILED: return rec.exit_signal() != 0 ? v1::CANCELLED : v1::FAILED;
    default: return rec.state();
  }
}

v1::AccountingStep batch_step(const v1::JobRecord& rec) {
  v1::AccountingStep s;
  s.set_step("batch");
  s.set_name("batch");
  s.set_layout("Unknown");  // Slurm 22.05's sacct for a batch step
  // Completing: the script still runs (a cancel), unless only Epilogs do.
  bool running = is_started(rec) || (rec.completing() && rec.epilog_nodes_size() == 0);
  s.set_running(running);
  s.set_state(running ? (rec.state() == v1::SUSPENDED ? v1::SUSPENDED : v1::RUNNING) : batch_state(rec));
  s.set_exit_code(rec.exit_code());
  s.set_exit_signal(rec.exit_signal());
  if (!running && s.state() == v1::CANCELLED && rec.exit_signal() == 0 && rec.state() != v1::CANCELLED) {
    s.set_exit_signal(SIGTERM);  // ended by the controller: the script got SIGTERM
  }
  s.set_start_time(rec.start_time());
  s.set_end_time(running ? 0 : rec.end_time());
  // The script runs on the first node of the allocation (the batch host).
  v1::JobAllocation host;
  for (const auto& t : rec.alloc().nodes()) {
    if (t.node() == rec.batch_host() || rec.batch_host().empty()) {
      *host.add_nodes() = t;
      break;
    }
  }
  if (host.nodes_size() == 0 && rec.alloc().nodes_size() > 0) *host.add_nodes() = rec.alloc().nodes(0);
  auto tres = allocation_tres(host);
  tres.erase("billing");
  for (const auto& [k, v] : tres) (*s.mutable_alloc_tres())[k] = v;
  s.set_nodes(host.nodes_size() ? host.nodes(0).node() : rec.batch_host());
  s.set_num_nodes(1);
  s.set_num_cpus(tres["cpu"]);
  s.set_num_tasks(1);
  return s;
}

// What each task of the step used, with its node.
void add_usage(v1::AccountingStep& a, const v1::StepInfo& si) {
  for (const auto& n : si.nodes()) {
    for (const auto& u : n.usage()) {
      v1::TaskUsage* t = a.add_usage();
      *t = u;
      t->set_node(n.node());
    }
  }
}

// An srun step as sacct shows it ("123.0"): its own nodes, tasks, CPUs and
// GPUs, its start and end, the worst end of its nodes.
v1::AccountingStep srun_step(const v1::StepInfo& si) {
  v1::AccountingStep s;
  s.set_step(std::to_string(si.step_id()));
  s.set_name(si.name());
  const bool running = si.state().empty() || si.state() == "RUNNING";
  s.set_running(running);
  v1::JobState state = v1::RUNNING;
  if (!running && !v1::JobState_Parse(si.state(), &state)) state = v1::FAILED;
  // A step whose task a signal killed shows CANCELLED, as Slurm's (`srun bash
  // -c 'kill -9 $$'`: the step CANCELLED 0:9, on the anchor cluster).
  if (state == v1::FAILED && si.exit_signal() != 0) state = v1::CANCELLED;
  s.set_state(state);
  if (state == v1::CANCELLED && si.has_cancelled_by()) s.set_cancelled_by(si.cancelled_by());
  s.set_exit_code(si.exit_code());
  s.set_exit_signal(si.exit_signal());
  s.set_start_time(si.start_time());
  s.set_end_time(running ? 0 : si.end_time());
  std::vector<std::string> names;
  for (const auto& n : si.nodes()) names.push_back(n.node());
  s.set_nodes(hostlist_compress(names));
  s.set_num_nodes(si.nodes_size());
  s.set_num_cpus(si.cpus());
  s.set_num_tasks(si.ntasks());
  s.set_submit_line(si.submit_line());
  // Its distribution as scontrol show step's Dist= names it ("Block,Pack"),
  // but for -m arbitrary, whose layout Slurm 22.05's sacct spells out.
  const std::string& dist = si.distribution();
  s.set_layout(dist.empty()                   ? std::string("Unknown")
               : dist.starts_with("Arbitrary") ? std::string("arbitrary task distribution")
                                               : dist);
  // The TRES the step was given when it started (step_tres, with its GPUs' types).
  if (auto tres = parse_tres(si.tres()); tres.ok()) {
    for (const auto& [k, v] : *tres) (*s.mutable_alloc_tres())[k] = v;
  }
  add_usage(s, si);
  return s;
}

}  // namespace

std::vector<v1::AccountingStep> step_rows(const v1::JobRecord& rec, const std::vector<v1::StepInfo>& steps) {
  std::vector<v1::AccountingStep> rows;
  bool started = rec.start_time() > 0 && rec.state() != v1::PENDING;
  if (rec.desc().batch() && started) rows.push_back(batch_step(rec));
  std::vector<const v1::StepInfo*> sruns;
  for (const auto& s : steps) {
    if (s.step_id() >= 0) sruns.push_back(&s);
    if (s.step_id() == kBatchStepId && !rows.empty()) add_usage(rows.front(), s);
  }
  std::sort(sruns.begin(), sruns.end(), [](const v1::StepInfo* a, const v1::StepInfo* b) { return a->step_id() < b->step_id(); });
  for (const v1::StepInfo* s : sruns) rows.push_back(srun_step(*s));
  return rows;
}

v1::AccountingJob accounting_job(const CoreBridge& bridge, const v1::JobRecord& rec,
                                 const std::vector<v1::StepInfo>& steps, int64_t now) {
  v1::AccountingJob a;
  *a.mutable_job() = rec;
  // sacct's Suspended counts the pause still going on (and Elapsed leaves it out).
  if (rec.state() == v1::SUSPENDED) close_suspension(*a.mutable_job(), now);
  // A job requeued by its exit code (RequeueExit) keeps it for scontrol; its
  // new run has none yet, as Slurm's sacct shows it (0:0).
  if (rec.state() == v1::PENDING) {
    a.mutable_job()->set_exit_code(0);
    a.mutable_job()->set_exit_signal(0);
  }
  a.mutable_job()->mutable_desc()->clear_script();
  a.mutable_job()->mutable_desc()->clear_environment();
  a.mutable_job()->clear_display();
  core::JobSpec spec = spec_from_record(rec, Identity::kWithout);
  int32_t part = bridge.find_partition(rec.partition());
  if (auto sum = bridge.summarize(spec, part >= 0 ? part : std::max(0, bridge.default_partition()))) {
    for (const auto& [k, v] : sum->tres) (*a.mutable_req_tres())[k] = v;
    a.set_req_cpus(sum->min_cpus);
    a.set_req_nodes(sum->min_nodes);
    auto mem = sum->tres.find("mem");
    a.set_req_mem_mb(mem != sum->tres.end() ? mem->second : 0);
  }
  if (rec.alloc().nodes_size() > 0 && rec.state() != v1::PENDING) {
    for (const auto& [k, v] : job_alloc_tres(bridge, rec)) (*a.mutable_alloc_tres())[k] = v;
    std::vector<std::string> names;
    for (const auto& t : rec.alloc().nodes()) names.push_back(t.node());
    a.set_nodes(hostlist_compress(names));
  }
  for (auto& s : step_rows(rec, steps)) *a.add_steps() = std::move(s);
  return a;
}

void ControllerState::set_accounting(AccountingDb db) {
  acct_ = std::move(db);
  acct_.set_cluster(settings_.cluster_name);
  bridge_->set_qos(acct_.qos_specs());
  bridge_->set_assocs(settings_.enforce_limits ? acct_.assoc_limits() : std::vector<core::AssocLimitSpec>{});
  for (auto& [_, j] : jobs_) refresh_spec(j);  // the core's caches hold the old cluster
  fairshare_dirty_ = true;
}

Result<AssocChange> ControllerState::modify_associations(const Caller& who, const v1::ModifyAssociationsRequest& req,
                                                        int64_t now, Effects& fx) {
  // A user may set their own default account (Slurm 22.05 on the anchor cluster: alice's
  // `modify user where name=alice set defaultaccount=research` was done); nothing else.
  const bool own_default = req.verb() == "modify" && req.entity() == "user" && req.names_size() > 0 &&
                           req.where().empty() && !req.set().empty() &&
                           std::all_of(req.names().begin(), req.names().end(),
                                       [&](const std::string& n) { return !who.user.empty() && n == who.user; }) &&
                           std::all_of(req.set().begin(), req.set().end(),
                                       [](const auto& kv) { return iequals(kv.first, "DefaultAccount"); });
  const bool denied = !who.privileged && !own_default;
  const std::string why = "only root, SlurmUser or an operator may change accounts, users and QOS; you are " +
                          who.describe();
  if (denied && !req.dry_run()) return make_error("Access/permission denied: " + why);
  auto change = acct_.apply(req, fx.batch);
  if (change && denied) change->denied = why;
  if (!change || req.dry_run() || change->unchanged) return change;
  if (req.entity() == "qos") bridge_->set_qos(acct_.qos_specs());
  if (settings_.enforce_limits) bridge_->set_assocs(acct_.assoc_limits());
  if (req.entity() == "qos" || settings_.enforce_limits) {
    for (auto& [_, j] : jobs_) refresh_spec(j);  // the core's caches hold the old cluster
  }
  fairshare_dirty_ = true;
  fx.reschedule = true;
  (void)now;
  return change;
}

core::UsageLedger& ControllerState::ledger() {
  if (!ledger_) ledger_.emplace(bridge_->cluster().priority.decay_half_life);
  return *ledger_;
}

const std::map<std::pair<std::string, std::string>, double>& ControllerState::usage() const {
  static const std::map<std::pair<std::string, std::string>, double> none;
  return ledger_ ? ledger_->all() : none;
}

void ControllerState::recover_usage(std::map<std::pair<std::string, std::string>, double> usage,
                                    int64_t last_decay, int64_t charged_until) {
  ledger().restore(std::move(usage), last_decay);
  usage_charged_until_ = charged_until;
  fairshare_dirty_ = true;
}

// Charges every job that held CPUs since the last charge (a job that
// started and ended in between included), decays the ledger to now, and
// stores it with this pass.
void ControllerState::refresh_fairshare(int64_t now, Effects& fx) {
  core::UsageLedger& l = ledger();
  const core::Cluster& c = bridge_->cluster();
  const int64_t from = usage_charged_until_;  // 0: nothing charged yet, every job from its start
  if (now > from) {
    l.decay_to(now);
    for (const auto& [_, j] : jobs_) {
      const v1::JobRecord& r = j.rec;
      if (r.start_time() == 0) continue;
      int64_t begin = std::max(r.start_time(), from);
      int64_t until = r.end_time() > 0 && r.state() != v1::RUNNING ? std::min(r.end_time(), now) : now;
      if (until <= begin) continue;
      // Billed TRES (the job's CPUs unless its partition has TRESBillingWeights) times seconds.
      const double billing = job_billing_units(*bridge_, r);
      int32_t q = bridge_->find_qos(r.qos());
      double factor = q >= 0 ? c.qos[static_cast<size_t>(q)].usage_factor : 1.0;
      l.add(r.account(), r.user(), billing * static_cast<double>(until - begin) * factor, now);
    }
    usage_charged_until_ = now;
    for (const auto& [key, v] : l.all()) {
      fx.batch.put(store::Put{kUsageTable, key.first + '\t' + key.second, fmt::format("{:.17g}", v), {}});
    }
    fx.batch.set_meta(kUsageChargedMeta, usage_charged_until_);
    fx.batch.set_meta(kUsageDecayMeta, l.last_decay());
  }
  fairshare_ = core::FairShareFactors::compute(acct_.associations(l.all()));
  fairshare_dirty_ = false;
}

namespace {

// Slurm's sprio lists the pending jobs that compete for resources: not a
// held one, nor one that waits for another job, for its begin time or for
// its array's throttle (golden sprio.txt leaves those out).
bool competes(const Job& j) {
  if (j.spec.hold != core::Hold::kNone) return false;
  const std::string& r = j.rec.reason();
  return r != "Dependency" && r != "DependencyNeverSatisfied" && r != "BeginTime" && r != "JobHeldUser" &&
         r != "JobHeldAdmin" && r != "JobArrayTaskLimit";
}

}  // namespace

core::PriorityBreakdown ControllerState::priority_now(const Job& j, int64_t now, const std::string& partition) const {
  int32_t part = std::max(0, bridge_->find_partition(partition.empty() ? j.rec.partition() : partition));
  return core::job_priority(bridge_->cluster(), j.spec, part, &fairshare_, now,
                            j.rec.eligible_time() ? j.rec.eligible_time() : now);
}

v1::GetPrioritiesReply ControllerState::priorities(int64_t now) const {
  v1::GetPrioritiesReply rep;
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    if (!is_pending(j) || !competes(j)) continue;
    // A job of several partitions has a row for each, in the order it names
    // them, with its priority there (Slurm 22.05's sprio on the anchor cluster).
    std::vector<std::string> parts = j.spec.partitions;
    if (parts.size() < 2) parts = {j.rec.partition()};
    for (const std::string& part : parts) {
      core::PriorityBreakdown b = priority_now(j, now, part);
      v1::PriorityFactors* f = rep.add_jobs();
      f->set_job_id(id);
      f->set_partition(part);
      f->set_user(j.rec.user());
      f->set_account(j.rec.account());
      f->set_qos(j.rec.qos());
      f->set_priority(b.total);  // what the core orders by now
      f->set_age(b.age);
      f->set_fairshare(b.fairshare);
      f->set_job_size(b.job_size);
      f->set_partition_factor(b.partition);
      f->set_qos_factor(b.qos);
      for (const auto& [k, v] : b.tres) (*f->mutable_tres())[k] = v;
      f->set_nice(b.nice);
      f->set_norm_age(b.age_factor);
      f->set_norm_fairshare(b.fairshare_factor);
      f->set_norm_job_size(b.job_size_factor);
      f->set_norm_partition(b.partition_factor);
      f->set_norm_qos(b.qos_factor);
    }
  }
  const core::PriorityParams& p = bridge_->cluster().priority;
  rep.set_weight_age(p.weight_age);
  rep.set_weight_fairshare(p.weight_fairshare);
  rep.set_weight_job_size(p.weight_job_size);
  rep.set_weight_partition(p.weight_partition);
  rep.set_weight_qos(p.weight_qos);
  std::vector<std::string> tres;
  for (const auto& [k, w] : p.weight_tres) {
    std::string name = k == "cpu" ? "CPU" : k == "mem" ? "Mem" : k.rfind("gres/", 0) == 0 ? "GRES/" + k.substr(5) : k;
    tres.push_back(name + "=" + std::to_string(static_cast<int64_t>(w)));
  }
  rep.set_weight_tres(join(tres, ","));
  return rep;
}

v1::GetSharesReply ControllerState::shares(int64_t now) const {
  v1::GetSharesReply rep;
  rep.set_cluster(settings_.cluster_name);
  v1::GetAssociationsReply a = acct_.snapshot();
  std::map<std::string, const v1::AccountRecord*> acc;
  std::map<std::string, std::vector<std::string>> kids;
  for (const auto& r : a.accounts()) {
    acc[r.name()] = &r;
    if (r.name() != "root") kids[r.parent().empty() ? "root" : r.parent()].push_back(r.name());
  }
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> users;  // account -> (user, shares)
  for (const auto& u : a.users()) {
    for (const auto& ua : u.assocs()) users[ua.account()].emplace_back(u.name(), ua.shares());
  }
  const auto& used = usage();
  // TRESRunMins: each running job's TRES times the minutes left of its time
  // limit, begun minutes counted (none for an unlimited job), by
  // association, in the TRES Slurm 22.05 listed on the anchor cluster: the
  // plain ones, then the nodes' gres by name (gres/gpu, gres/gpu:a100, gres/gpu:h100).
  std::map<std::pair<std::string, std::string>, TresMap> run_mins;
  for (const auto& [id, j] : jobs_) {
    const v1::JobRecord& r = j.rec;
    if ((r.state() != v1::RUNNING && r.state() != v1::SUSPENDED) || r.time_limit_s() == INT64_MAX) continue;
    const int64_t left = (std::max<int64_t>(0, r.time_limit_s() - run_seconds(r, now)) + 59) / 60;
    TresMap& m = run_mins[{r.account(), r.user()}];
    for (const auto& [k, v] : job_alloc_tres(*bridge_, r)) m[k] += v * left;
  }
  std::set<std::string> gres_names;
  for (const core::NodeSpec& n : bridge_->cluster().nodes) {
    for (const core::GresPool& g : n.gres) {
      gres_names.insert(core::gres_tres_name(g.name, ""));
      gres_names.insert(core::gres_tres_name(g.name, g.type));
    }
  }
  std::vector<std::string> tres_names = plain_tres_names();
  tres_names.insert(tres_names.end(), gres_names.begin(), gres_names.end());
  // Usage and run minutes of each account: its users' and its child
  // accounts', summed, in one pass over the tree.
  struct Sums {
    double usage = 0;
    TresMap run_mins;
  };
  std::map<std::string, Sums> sums;
  std::function<const Sums&(const std::string&)> sum_up = [&](const std::string& name) -> const Sums& {
    Sums sum;
    auto add = [&](const TresMap& m) {
      for (const auto& [k, v] : m) sum.run_mins[k] += v;
    };
    for (const auto& [user, _] : users[name]) {
      if (auto it = used.find({name, user}); it != used.end()) sum.usage += it->second;
      if (auto it = run_mins.find({name, user}); it != run_mins.end()) add(it->second);
    }
    for (const auto& k : kids[name]) {
      const Sums& below = sum_up(k);
      sum.usage += below.usage;
      add(below.run_mins);
    }
    return sums[name] = std::move(sum);
  };
  const double total = acc.count("root") ? sum_up("root").usage : 0;
  auto norm = [&](double u) { return total > 0 ? u / total : 0.0; };
  std::function<void(const std::string&, int, double, double, double)> walk =
      [&](const std::string& name, int depth, double shares_sum, double parent_usage, double own_shares) {
        const Sums& here = sums[name];
        const double usage = here.usage;
        v1::ShareRow* row = rep.add_rows();
        row->set_depth(depth);
        row->set_account(name);
        if (depth > 0) row->set_raw_shares(static_cast<int64_t>(own_shares));
        row->set_norm_shares(depth == 0 ? 0 : own_shares / std::max(1.0, shares_sum));
        row->set_raw_usage(std::llround(usage));
        row->set_effective_usage(depth == 0 ? 1.0 : parent_usage > 0 ? usage / parent_usage : 0);
        row->set_tres_run_mins(format_tres_counts(tres_names, here.run_mins));
        if (depth > 0) {
          // Slurm 22.05's sshare gives an account its NormUsage and its Level FS
          // (NormShares over EffectvUsage, inf without usage); root neither.
          row->set_norm_usage(norm(usage));
          row->set_level_fs(row->effective_usage() > 0 ? row->norm_shares() / row->effective_usage() : INFINITY);
        }
        double siblings = 0;
        for (const auto& [_, s] : users[name]) siblings += static_cast<double>(s);
        for (const auto& k : kids[name]) siblings += static_cast<double>(acc.at(k)->shares());
        for (const auto& [user, s] : users[name]) {
          auto it = used.find({name, user});
          double u = it == used.end() ? 0 : it->second;
          v1::ShareRow* ur = rep.add_rows();
          ur->set_depth(depth + 1);
          ur->set_account(name);
          ur->set_user(user);
          ur->set_raw_shares(s);
          ur->set_norm_shares(static_cast<double>(s) / std::max(1.0, siblings));
          ur->set_raw_usage(std::llround(u));
          ur->set_norm_usage(norm(u));
          ur->set_effective_usage(usage > 0 ? u / usage : 0);
          ur->set_fairshare(fairshare_.factor(name, user));
          if (u > 0 && usage > 0) ur->set_level_fs(ur->norm_shares() / ur->effective_usage());
          auto mins = run_mins.find({name, user});
          ur->set_tres_run_mins(format_tres_counts(tres_names, mins == run_mins.end() ? TresMap{} : mins->second));
        }
        for (const auto& k : kids[name]) walk(k, depth + 1, siblings, usage, static_cast<double>(acc.at(k)->shares()));
      };
  if (acc.count("root")) walk("root", 0, 1, 0, 1);
  return rep;
}

}  // namespace drover::ctld
