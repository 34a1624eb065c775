#include "core/request.hpp"

#include <algorithm>

#include "core/demand.hpp"

namespace drover::core {

namespace {

constexpr const char* kPolicyViolation =
    "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)";

std::vector<int32_t> job_partitions(const Cluster& c, const JobSpec& job, SubmitVerdict& v) {
  std::vector<int32_t> out;
  if (job.partitions.empty() || (job.partitions.size() == 1 && job.partitions[0].empty())) {
    int32_t p = c.default_partition();
    if (p < 0) {
      v.accepted = false;
      v.error = "No partition specified or system default partition";
      v.drover_line = "drover: no partition has Default=YES; name one with -p";
    } else {
      out.push_back(p);
    }
    return out;
  }
  for (const std::string& name : job.partitions) {
    int32_t p = c.find_partition(name);
    if (p < 0) {
      v.accepted = false;
      v.details = {"invalid partition specified: " + name};
      v.error = "Invalid partition name specified";
      std::string known;
      for (const PartitionSpec& part : c.partitions) known += (known.empty() ? "" : ", ") + part.name;
      v.drover_line = "drover: no partition named \"" + name + "\" (partitions: " + known + ")";
      out.clear();
      return out;
    }
    out.push_back(p);
  }
  return out;
}

void refuse(SubmitVerdict& v, const Refusal& r) {
  v.accepted = false;
  v.details = r.details;
  v.error = r.error;
  v.drover_line = r.drover_line;
}

bool is_partition_limit(Reason r) {
  return r == Reason::kPartitionTimeLimit || r == Reason::kPartitionNodeLimit;
}

// An association's MaxSubmitJobs (the user's own or the nearest above) and
// each GrpSubmitJobs from the user's association up, over the jobs already
// submitted under it.
bool over_assoc_submit_limits(const Cluster& c, int32_t assoc, const SubmitContext& ctx, SubmitVerdict& v) {
  if (assoc < 0 || assoc >= static_cast<int32_t>(c.assocs.size())) return false;
  auto refuse_with = [&](const char* reason, const std::string& line) {
    v.accepted = false;
    v.details = {reason};  // Slurm's sbatch says which limit first
    v.error = kPolicyViolation;
    v.drover_line = line;
    return true;
  };
  const AssocLimitSpec& own = c.assocs[assoc];
  auto mine_it = ctx.jobs_per_assoc.find({own.account, own.user});
  const int64_t mine = mine_it == ctx.jobs_per_assoc.end() ? 0 : mine_it->second;
  const int64_t max_submit = own.in_force.max_submit_jobs;
  if (max_submit != kNoLimit && mine + ctx.new_jobs > max_submit) {
    return refuse_with("AssocMaxSubmitJobLimit", "drover: the association of user " + own.user + " in account " +
                                                     own.account + " allows " + std::to_string(max_submit) +
                                                     " submitted jobs (MaxSubmitJobs); it has " + std::to_string(mine));
  }
  // Is row `a` at or above row `below`?
  auto above = [&](int32_t a, int32_t below) {
    for (int32_t x = below; x >= 0; x = c.assocs[x].parent) {
      if (x == a) return true;
    }
    return false;
  };
  for (int32_t a = assoc; a >= 0; a = c.assocs[a].parent) {
    const AssocLimitSpec& s = c.assocs[a];
    if (s.grp_submit_jobs == kNoLimit) continue;
    int64_t all = 0;
    for (const auto& [key, n] : ctx.jobs_per_assoc) {
      int32_t at = c.find_assoc(key.first, key.second);
      if (at >= 0 && above(a, at)) all += n;
    }
    if (all + ctx.new_jobs > s.grp_submit_jobs) {
      return refuse_with("AssocGrpSubmitJobsLimit", "drover: " + (s.user.empty() ? "account " + s.account : "the association of user " + s.user +
                                                                                      " in account " + s.account) +
                         " allows " + std::to_string(s.grp_submit_jobs) +
                         " submitted jobs in all (GrpSubmitJobs); there are " + std::to_string(all));
    }
  }
  return false;
}

// MaxSubmitJobsPerUser and GrpSubmitJobs count jobs already submitted.
bool over_submit_limits(const Cluster& c, int32_t qos, const SubmitContext& ctx, SubmitVerdict& v) {
  if (qos < 0) return false;
  const QosSpec& q = c.qos[qos];
  auto count = [](const std::map<std::string, int64_t>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? int64_t{0} : it->second;
  };
  int64_t mine = count(ctx.user_jobs_per_qos, q.name);
  int64_t all = count(ctx.jobs_per_qos, q.name);
  if (q.max_submit_jobs_per_user != kNoLimit && mine + ctx.new_jobs > q.max_submit_jobs_per_user) {
    v.accepted = false;
    v.error = kPolicyViolation;
    v.drover_line = "drover: QOS " + q.name + " allows " + std::to_string(q.max_submit_jobs_per_user) +
                    " submitted jobs per user (MaxSubmitJobsPerUser); you have " + std::to_string(mine);
    return true;
  }
  if (q.grp_submit_jobs != kNoLimit && all + ctx.new_jobs > q.grp_submit_jobs) {
    v.accepted = false;
    v.error = kPolicyViolation;
    v.drover_line = "drover: QOS " + q.name + " allows " + std::to_string(q.grp_submit_jobs) +
                    " submitted jobs in all (GrpSubmitJobs); there are " + std::to_string(all);
    return true;
  }
  return false;
}

bool resolve_account(const JobSpec& job, const SubmitContext& ctx, SubmitVerdict& v) {
  v.account = job.account;
  if (!ctx.enforce_accounts) return true;
  if (ctx.user_accounts.empty()) {
    v.accepted = false;
    v.error = "Invalid account or account/partition combination specified";
    v.drover_line = "drover: user " + job.user + " has no association (add one with sacctmgr add user)";
    return false;
  }
  if (job.account.empty()) {
    v.account = ctx.user_accounts.front();
    return true;
  }
  if (std::find(ctx.user_accounts.begin(), ctx.user_accounts.end(), job.account) == ctx.user_accounts.end()) {
    v.accepted = false;
    v.error = "Invalid account or account/partition combination specified";
    std::string mine;
    for (const std::string& a : ctx.user_accounts) mine += (mine.empty() ? "" : ", ") + a;
    v.drover_line = "drover: user " + job.user + " may not use account " + job.account + " (accounts: " + mine + ")";
    return false;
  }
  return true;
}

bool check_licenses(const Cluster& c, const JobSpec& job, SubmitVerdict& v) {
  for (const auto& [name, count] : job.licenses) {
    auto it = c.licenses.find(name);
    if (it == c.licenses.end() || count > it->second || count <= 0) {
      const std::string shown = name.substr(name.find('/') + 1);  // "fsbw" of "license/fsbw"
      v.accepted = false;
      v.error = "Invalid license specification";
      v.drover_line = count <= 0 ? "drover: -L " + shown + " takes a whole number of 1 or more after the colon"
                      : it == c.licenses.end()
                          ? "drover: no license \"" + shown + "\" is configured (Licenses=)"
                          : "drover: the cluster has " + std::to_string(it->second) + " " + name +
                                "; the job asks for " + std::to_string(count);
      return false;
    }
  }
  return true;
}

// Slurm's refusal for a limit when EnforcePartLimits or DenyOnLimit says
// the job must not wait on it.
bool refuse_on_limit(const Cluster& c, const Demand& d, Reason r, SubmitVerdict& v) {
  bool part_limit = is_partition_limit(r);
  if (part_limit && c.sched.enforce_part_limits) {
    v.accepted = false;
    v.error = r == Reason::kPartitionTimeLimit ? "Requested time limit is invalid (missing or exceeds some limit)"
                                               : "Node count specification invalid";
    v.drover_line = "drover: the job exceeds partition " + c.partitions[d.partition].name +
                    "'s limit and EnforcePartLimits is set";
    return true;
  }
  if (!part_limit && d.qos >= 0 && c.qos[d.qos].deny_on_limit && r != Reason::kPartitionDown &&
      r != Reason::kPartitionInactive && !is_association_limit(r)) {
    v.accepted = false;
    v.error = kPolicyViolation;
    v.drover_line = "drover: the job exceeds QOS " + c.qos[d.qos].name + "'s " + std::string(reason_name(r)) +
                    " and the QOS has Flags=DenyOnLimit";
    return true;
  }
  return false;
}

}  // namespace

SubmitVerdict check_submit(const Cluster& c, const JobSpec& job, const SubmitContext& ctx) {
  SubmitVerdict v;
  // In the order Slurm 22.05 checks them (seen on the anchor with two mistakes at once): -w's node names,
  // partition, account, the QOS (the association's, then whether it exists), licenses, then for each
  // partition: its QOS rules, -x's names, features, capacity, ...
  if (auto named = resolve_nodes(c, job.nodelist, "--nodelist"); !named) {
    refuse(v, named.error());
    return v;
  }
  std::vector<int32_t> parts = job_partitions(c, job, v);
  if (!v.accepted) return v;
  if (!resolve_account(job, ctx, v)) return v;
  if (ctx.assoc_qos_refusal) {
    refuse(v, *ctx.assoc_qos_refusal);
    return v;
  }
  if (auto unknown = unknown_qos(c, job)) {
    refuse(v, *unknown);
    return v;
  }
  if (!check_licenses(c, job, v)) return v;
  std::optional<Refusal> first_refusal;
  bool first_is_capacity = false;  // whether first_refusal is that no node can ever hold the job
  // Slurm 22.05 takes a held job that no node of its partition can ever hold (seen on the anchor:
  // --hold with --mem=500G on 250G nodes, or a GPU type no node has); released, it pends with
  // BadConstraints. Its first such partition, kept in case no partition can run it.
  std::optional<std::pair<int32_t, int32_t>> held_beyond_capacity;  // partition, QOS
  for (int32_t p : parts) {
    const PartitionSpec& part = c.partitions[p];
    if (part.state == PartitionState::kDrain || part.state == PartitionState::kInactive) {
      if (!first_refusal) {
        first_refusal = Refusal{{}, "Required partition not available (inactive or drain)",
                                "drover: partition " + part.name + " is " +
                                    (part.state == PartitionState::kDrain ? "DRAIN" : "INACTIVE") +
                                    ": it takes no new jobs (scontrol update PartitionName=" + part.name +
                                    " State=UP opens it)"};
      }
      continue;
    }
    auto d = resolve_demand(c, job, p);
    if (!d) {
      if (!first_refusal) first_refusal = d.error();
      continue;
    }
    if (auto r = check_capacity(c, *d)) {
      if (!first_refusal) {
        first_refusal = *r;
        first_is_capacity = true;
      }
      if (job.hold != Hold::kNone && !held_beyond_capacity) held_beyond_capacity = {p, d->qos};
      continue;
    }
    Reason limit = static_limit_reason(c, *d);
    if (limit != Reason::kNone && refuse_on_limit(c, *d, limit, v)) return v;
    if (over_submit_limits(c, d->qos, ctx, v)) return v;
    // The association of the account the job gets (its default one when it names none).
    if (over_assoc_submit_limits(c, c.find_assoc(v.account, job.user), ctx, v)) return v;
    v.partition = p;
    v.qos = d->qos >= 0 ? c.qos[d->qos].name : "";
    v.pending_reason = limit;
    return v;
  }
  if (held_beyond_capacity) {
    v.partition = held_beyond_capacity->first;
    v.qos = held_beyond_capacity->second >= 0 ? c.qos[held_beyond_capacity->second].name : "";
    return v;
  }
  refuse(v, *first_refusal);
  v.capacity_refusal = first_is_capacity;
  return v;
}

Result<RequestSummary> summarize(const Cluster& c, const JobSpec& job, int32_t partition) {
  if (partition < 0 || partition >= static_cast<int32_t>(c.partitions.size())) {
    return make_error("no such partition index " + std::to_string(partition));
  }
  auto d = resolve_demand(c, job, partition);
  if (!d) return make_error(d.error().error + (d.error().drover_line.empty() ? "" : "; " + d.error().drover_line));
  RequestSummary s;
  s.partition = partition;
  s.qos = d->qos;
  s.time_limit = d->time_limit;
  s.min_nodes = d->min_nodes;
  s.max_nodes = d->max_nodes == d->min_nodes ? 0 : d->max_nodes;
  s.ntasks = d->tasks;
  s.cpus_per_task = d->cpus_per_task;
  s.tres = demand_tres(c, *d, true);
  s.min_cpus = s.tres["cpu"];
  if (d->mem_mode == MemMode::kPerCpu) {
    s.mem_per_cpu_mb = d->mem_mb;
  } else {
    s.mem_per_node_mb = d->min_nodes > 0 ? s.tres["mem"] / d->min_nodes : 0;
  }
  std::string per_node;
  for (const GresNeed& g : d->gres) {
    if (!per_node.empty()) per_node += ",";
    per_node += "gres:" + g.name + (g.type.empty() ? "" : ":" + g.type) + ":" + std::to_string(g.count);
  }
  s.tres_per_node = per_node;
  return s;
}

}  // namespace drover::core
