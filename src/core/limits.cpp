#include <algorithm>

#include "core/cycle.hpp"

namespace drover::core {

// ---------------------------------------------------------------- TresIds

void TresIds::build(const Cluster& c) {
  std::set<std::string> used = {"cpu", "gres/gpu"};
  for (const QosSpec& q : c.qos) {
    for (const TresMap* m : {&q.grp_tres, &q.max_tres_per_job, &q.max_tres_per_node, &q.max_tres_per_user}) {
      for (const auto& [name, v] : *m) used.insert(name);
    }
  }
  for (const AssocLimitSpec& a : c.assocs) {
    for (const auto& [name, v] : a.grp_tres) used.insert(name);
  }
  for (const auto& [name, w] : c.priority.weight_tres) used.insert(name);
  for (const auto& [name, n] : c.licenses) used.insert(name);
  names_.assign(used.begin(), used.end());
  ids_.clear();
  for (size_t i = 0; i < names_.size(); ++i) ids_.emplace(names_[i], static_cast<int32_t>(i));
  cpu_ = id("cpu");
  mem_ = id("mem");
  node_ = id("node");
  pool_ids_.assign(c.groups.size(), {});
  for (size_t g = 0; g < c.groups.size(); ++g) {
    const NodeSpec& n = c.nodes[c.groups[g].members.front()];
    for (const GresPool& p : n.gres) {
      std::vector<int32_t> ids;
      if (int32_t i = id(gres_tres_name(p.name, "")); i >= 0) ids.push_back(i);
      if (!p.type.empty()) {
        if (int32_t i = id(gres_tres_name(p.name, p.type)); i >= 0) ids.push_back(i);
      }
      pool_ids_[g].push_back(std::move(ids));
    }
  }
}

int32_t TresIds::id(std::string_view name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

std::vector<int64_t> TresIds::dense(const TresMap& m) const {
  std::vector<int64_t> out(names_.size(), 0);
  for (const auto& [name, v] : m) {
    if (int32_t i = id(name); i >= 0) out[static_cast<size_t>(i)] += v;
  }
  return out;
}

void TresIds::held(const Cluster& c, const Allocation& a, const TresMap& licenses, std::vector<int64_t>& out) const {
  out.assign(names_.size(), 0);
  for (const NodeTake& t : a.nodes) {
    out[static_cast<size_t>(cpu_)] += t.cpus;
    if (mem_ >= 0) out[static_cast<size_t>(mem_)] += t.mem_mb;
    const auto& pools = pool_ids_[static_cast<size_t>(c.group_of[static_cast<size_t>(t.node)])];
    for (const GresTake& g : t.gres) {
      if (g.pool < 0 || static_cast<size_t>(g.pool) >= pools.size()) continue;
      for (int32_t i : pools[static_cast<size_t>(g.pool)]) out[static_cast<size_t>(i)] += g.count;
    }
  }
  if (node_ >= 0) out[static_cast<size_t>(node_)] += static_cast<int64_t>(a.nodes.size());
  for (const auto& [name, v] : licenses) {
    if (int32_t i = id(name); i >= 0) out[static_cast<size_t>(i)] += v;
  }
}

// ---------------------------------------------------------------- LimitUsage

namespace {

Reason group_reason(const std::string& tres) {
  if (tres == "cpu") return Reason::kQosGrpCpuLimit;
  if (tres == "mem") return Reason::kQosGrpMemLimit;
  if (tres == "node") return Reason::kQosGrpNodeLimit;
  if (tres.rfind("license/", 0) == 0) return Reason::kQosGrpLicense;
  return Reason::kQosGrpGres;
}

Reason assoc_group_reason(const std::string& tres) {
  if (tres == "cpu") return Reason::kAssocGrpCpuLimit;
  if (tres == "mem") return Reason::kAssocGrpMemLimit;
  if (tres == "node") return Reason::kAssocGrpNodeLimit;
  return Reason::kAssocGrpGres;
}

Reason user_reason(const std::string& tres) {
  if (tres == "cpu") return Reason::kQosMaxCpuPerUserLimit;
  if (tres == "mem") return Reason::kQosMaxMemoryPerUser;
  if (tres == "node") return Reason::kQosMaxNodePerUserLimit;
  return Reason::kQosMaxGresPerUser;
}

}  // namespace

void LimitUsage::reset(const Cluster& c, const TresIds& ids) {
  ids_ = &ids;
  size_t n = ids.size();
  limits_.assign(c.qos.size(), Limits{});
  active_ = !c.licenses.empty();
  for (size_t q = 0; q < c.qos.size(); ++q) {
    const QosSpec& spec = c.qos[q];
    Limits& l = limits_[q];
    l.grp.assign(n, -1);
    l.per_user.assign(n, -1);
    for (const auto& [name, v] : spec.grp_tres) {
      if (int32_t i = ids.id(name); i >= 0) l.grp[static_cast<size_t>(i)] = v;
    }
    for (const auto& [name, v] : spec.max_tres_per_user) {
      if (int32_t i = ids.id(name); i >= 0) l.per_user[static_cast<size_t>(i)] = v;
    }
    l.grp_jobs = spec.grp_jobs;
    l.jobs_per_user = spec.max_jobs_per_user;
    l.per_user_any = l.jobs_per_user != kNoLimit ||
                     std::any_of(l.per_user.begin(), l.per_user.end(), [](int64_t v) { return v >= 0; });
    active_ = active_ || !spec.grp_tres.empty() || !spec.max_tres_per_user.empty() || spec.grp_jobs != kNoLimit ||
              spec.max_jobs_per_user != kNoLimit;
  }
  assoc_limits_.assign(c.assocs.size(), AssocLimits{});
  for (size_t a = 0; a < c.assocs.size(); ++a) {
    const AssocLimitSpec& spec = c.assocs[a];
    AssocLimits& l = assoc_limits_[a];
    l.parent = spec.parent;
    l.grp.assign(n, -1);
    for (const auto& [name, v] : spec.grp_tres) {
      if (int32_t i = ids.id(name); i >= 0) l.grp[static_cast<size_t>(i)] = v;
    }
    l.grp_jobs = spec.grp_jobs;
    l.max_jobs = spec.in_force.max_jobs;  // the user's own, else the nearest account's above it
    active_ = active_ || !spec.grp_tres.empty() || spec.grp_jobs != kNoLimit || spec.max_jobs != kNoLimit;
  }
  assoc_use_.assign(c.assocs.size(), Use{});
  assoc_grp_reason_.resize(n);
  grp_reason_.resize(n);
  user_reason_.resize(n);
  license_total_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    grp_reason_[i] = group_reason(ids.name(i));
    assoc_grp_reason_[i] = assoc_group_reason(ids.name(i));
    user_reason_[i] = user_reason(ids.name(i));
    auto it = c.licenses.find(ids.name(i));
    if (it != c.licenses.end()) license_total_[i] = it->second;
  }
  qos_.assign(c.qos.size(), Use{});
  user_.clear();
  licenses_.assign(n, 0);
  arrays_.clear();
}

LimitUsage::Use& LimitUsage::use_of(std::vector<Use>& v, size_t i) {
  Use& u = v[i];
  if (u.tres.empty()) u.tres.assign(ids_->size(), 0);
  return u;
}

void LimitUsage::add(int32_t qos, int32_t partition_qos, const std::string& user, int32_t assoc,
                     const std::vector<int64_t>& tres, JobId array_job, int sign) {
  // A job counts against its association and every account above it.
  for (int32_t a = assoc; a >= 0 && a < static_cast<int32_t>(assoc_use_.size()); a = assoc_limits_[a].parent) {
    Use& use = use_of(assoc_use_, static_cast<size_t>(a));
    for (size_t i = 0; i < tres.size(); ++i) use.tres[i] += sign * tres[i];
    use.jobs += sign;
  }
  // A job counts against its own QOS and, when different, its partition's QOS.
  for (int32_t q : {qos, partition_qos == qos ? -1 : partition_qos}) {
    if (q < 0 || q >= static_cast<int32_t>(qos_.size())) continue;
    Use& use = use_of(qos_, static_cast<size_t>(q));
    for (size_t i = 0; i < tres.size(); ++i) use.tres[i] += sign * tres[i];
    use.jobs += sign;
    if (!limits_[static_cast<size_t>(q)].per_user_any) continue;
    Use& mine = user_[{q, user}];
    if (mine.tres.empty()) mine.tres.assign(ids_->size(), 0);
    for (size_t i = 0; i < tres.size(); ++i) mine.tres[i] += sign * tres[i];
    mine.jobs += sign;
  }
  for (size_t i = 0; i < tres.size(); ++i) {
    if (license_total_[i] >= 0) licenses_[i] += sign * tres[i];
  }
  add_array_element(array_job, sign);
}

void LimitUsage::add_array_element(JobId array_job, int sign) {
  if (array_job <= 0) return;
  auto it = arrays_.try_emplace(array_job, 0).first;
  it->second += sign;
  if (it->second == 0) arrays_.erase(it);
}

int64_t LimitUsage::array_running(JobId array_job) const {
  auto it = arrays_.find(array_job);
  return it == arrays_.end() ? 0 : it->second;
}

Reason LimitUsage::check_one(int32_t qos, const std::string& user, const std::vector<int64_t>& tres) const {
  const Limits& l = limits_[static_cast<size_t>(qos)];
  const Use& use = qos_[static_cast<size_t>(qos)];
  for (size_t i = 0; i < tres.size(); ++i) {
    if (l.grp[i] < 0 || tres[i] <= 0) continue;
    int64_t used = use.tres.empty() ? 0 : use.tres[i];
    if (used + tres[i] > l.grp[i]) return grp_reason_[i];
  }
  if (l.grp_jobs != kNoLimit && use.jobs + 1 > l.grp_jobs) return Reason::kQosGrpJobsLimit;
  if (!l.per_user_any) return Reason::kNone;
  auto it = user_.find(std::make_pair(qos, user));
  const Use* mine = it == user_.end() ? nullptr : &it->second;
  for (size_t i = 0; i < tres.size(); ++i) {
    if (l.per_user[i] < 0 || tres[i] <= 0) continue;
    int64_t used = mine ? mine->tres[i] : 0;
    if (used + tres[i] > l.per_user[i]) return user_reason_[i];
  }
  if (l.jobs_per_user != kNoLimit && (mine ? mine->jobs : 0) + 1 > l.jobs_per_user) {
    return Reason::kQosMaxJobsPerUserLimit;
  }
  return Reason::kNone;
}

// The user's MaxJobs, then each Grp* limit from the user's association up.
Reason LimitUsage::check_assoc(int32_t assoc, const std::vector<int64_t>& tres) const {
  if (assoc < 0 || assoc >= static_cast<int32_t>(assoc_limits_.size())) return Reason::kNone;
  const AssocLimits& own = assoc_limits_[static_cast<size_t>(assoc)];
  if (own.max_jobs != kNoLimit && assoc_use_[static_cast<size_t>(assoc)].jobs + 1 > own.max_jobs) {
    return Reason::kAssocMaxJobsLimit;
  }
  for (int32_t a = assoc; a >= 0; a = assoc_limits_[static_cast<size_t>(a)].parent) {
    const AssocLimits& l = assoc_limits_[static_cast<size_t>(a)];
    const Use& use = assoc_use_[static_cast<size_t>(a)];
    for (size_t i = 0; i < tres.size() && i < l.grp.size(); ++i) {
      if (l.grp[i] < 0 || tres[i] <= 0) continue;
      int64_t used = use.tres.empty() ? 0 : use.tres[i];
      if (used + tres[i] > l.grp[i]) return assoc_grp_reason_[i];
    }
    if (l.grp_jobs != kNoLimit && use.jobs + 1 > l.grp_jobs) return Reason::kAssocGrpJobsLimit;
  }
  return Reason::kNone;
}

Reason LimitUsage::check(int32_t qos, int32_t partition_qos, const std::string& user, int32_t assoc,
                         const std::vector<int64_t>& tres) const {
  // The partition's QOS is applied first, then the job's (Slurm's order).
  if (partition_qos >= 0 && partition_qos != qos) {
    Reason r = check_one(partition_qos, user, tres);
    if (r != Reason::kNone) return r;
  }
  if (qos >= 0) {
    Reason r = check_one(qos, user, tres);
    if (r != Reason::kNone) return r;
  }
  if (Reason r = check_assoc(assoc, tres); r != Reason::kNone) return r;
  for (size_t i = 0; i < tres.size(); ++i) {
    if (license_total_[i] >= 0 && tres[i] > 0 && licenses_[i] + tres[i] > license_total_[i]) return Reason::kLicenses;
  }
  return Reason::kNone;
}

}  // namespace drover::core
