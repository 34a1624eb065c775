#include <algorithm>

#include "core/demand.hpp"

#include "core/cycle.hpp"

namespace drover::core {

namespace {

int64_t get(const TresMap& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

Reason group_reason(const std::string& tres) {
  if (tres == "cpu") return Reason::kQosGrpCpuLimit;
  if (tres == "mem") return Reason::kQosGrpMemLimit;
  if (tres == "node") return Reason::kQosGrpNodeLimit;
  if (tres.rfind("license/", 0) == 0) return Reason::kQosGrpLicense;
  return Reason::kQosGrpGres;
}

Reason user_reason(const std::string& tres) {
  if (tres == "cpu") return Reason::kQosMaxCpuPerUserLimit;
  if (tres == "mem") return Reason::kQosMaxMemoryPerUser;
  if (tres == "node") return Reason::kQosMaxNodePerUserLimit;
  return Reason::kQosMaxGresPerUser;
}

}  // namespace

void LimitUsage::reset(const Cluster& c) {
  qos_.assign(c.qos.size(), Use{});
  user_.clear();
  licenses_.clear();
  arrays_.clear();
}

void LimitUsage::add(const Cluster& c, int32_t qos, int32_t partition_qos, const std::string& user,
                     const TresList& tres, JobId array_job) {
  // A job counts against its own QOS and, when different, its partition's QOS.
  for (int32_t q : {qos, partition_qos == qos ? -1 : partition_qos}) {
    if (q < 0 || q >= static_cast<int32_t>(qos_.size())) continue;
    Use& use = qos_[q];
    Use& mine = user_[{q, user}];
    for (const auto& [name, v] : tres) {
      use.tres[name] += v;
      mine.tres[name] += v;
    }
    ++use.jobs;
    ++mine.jobs;
  }
  for (const auto& [name, v] : tres) {
    if (name.rfind("license/", 0) == 0) licenses_[name] += v;
  }
  if (array_job > 0) ++arrays_[array_job];
  (void)c;
}

int64_t LimitUsage::array_running(JobId array_job) const {
  auto it = arrays_.find(array_job);
  return it == arrays_.end() ? 0 : it->second;
}

Reason LimitUsage::check_one(const QosSpec& q, int32_t qos, const std::string& user, const TresList& tres) const {
  const Use& use = qos_[qos];
  for (const auto& [name, limit] : q.grp_tres) {
    if (get(use.tres, name) + tres.get(name) > limit && tres.get(name) > 0) return group_reason(name);
  }
  if (q.grp_jobs != kNoLimit && use.jobs + 1 > q.grp_jobs) return Reason::kQosGrpJobsLimit;
  auto it = user_.find({qos, user});
  static const Use kEmpty;
  const Use& mine = it == user_.end() ? kEmpty : it->second;
  for (const auto& [name, limit] : q.max_tres_per_user) {
    if (get(mine.tres, name) + tres.get(name) > limit && tres.get(name) > 0) return user_reason(name);
  }
  if (q.max_jobs_per_user != kNoLimit && mine.jobs + 1 > q.max_jobs_per_user) return Reason::kQosMaxJobsPerUserLimit;
  return Reason::kNone;
}

Reason LimitUsage::check(const Cluster& c, int32_t qos, int32_t partition_qos, const std::string& user,
                         const TresList& tres, const TresMap& licenses) const {
  // The partition's QOS is applied first, then the job's (Slurm's order).
  if (partition_qos >= 0 && partition_qos != qos) {
    Reason r = check_one(c.qos[partition_qos], partition_qos, user, tres);
    if (r != Reason::kNone) return r;
  }
  if (qos >= 0) {
    Reason r = check_one(c.qos[qos], qos, user, tres);
    if (r != Reason::kNone) return r;
  }
  for (const auto& [name, want] : licenses) {
    if (get(licenses_, name) + want > get(c.licenses, name)) return Reason::kLicenses;
  }
  return Reason::kNone;
}

}  // namespace drover::core
