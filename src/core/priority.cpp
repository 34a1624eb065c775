#include "core/priority.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/demand.hpp"

namespace drover::core {

namespace {

// priority/basic: first come, first served (older jobs higher), as Slurm's
// basic plugin numbers them down from a large base.
constexpr int64_t kBasicBase = 4294901760LL;

double max_job_factor(const Cluster& c) {
  uint32_t m = 0;
  for (const PartitionSpec& p : c.partitions) m = std::max(m, p.priority_job_factor);
  return m;
}

double max_qos_priority(const Cluster& c) {
  int64_t m = 0;
  for (const QosSpec& q : c.qos) m = std::max(m, q.priority);
  return static_cast<double>(m);
}

double ratio(int64_t part, int64_t whole) { return whole > 0 ? static_cast<double>(part) / whole : 0.0; }

int64_t cluster_total(const Cluster& c, const char* tres) {
  auto it = c.total_tres.find(tres);
  return it == c.total_tres.end() ? int64_t{0} : it->second;
}

// PriorityFlags=SMALL_RELATIVE_TO_TIME's job size: the CPUs the job asks
// for (at least its nodes times the cluster's average CPUs per node), as a
// share of the cluster's CPUs, per minute of its time limit (rounded up; no
// limit: 0), at most 1. Fitted to Slurm 22.05's priorities on the anchor
// cluster (832 CPUs on 9 nodes): one CPU for 10 minutes 11.1 of 1000, for
// 100 minutes 1.1; -N2 -n64 for 10 minutes 22.2; -N4 --exclusive for one
// minute 444.4; -n200 for one minute 240.4; an unlimited job 0.
double size_per_minute(const Cluster& c, int32_t min_nodes, int64_t cpus, Seconds limit) {
  const int64_t all_cpus = cluster_total(c, "cpu"), all_nodes = cluster_total(c, "node");
  if (limit == kInfinite || all_cpus <= 0 || all_nodes <= 0) return 0.0;
  const double per_node = static_cast<double>(all_cpus) / static_cast<double>(all_nodes);
  const double job = std::max(min_nodes * per_node, static_cast<double>(std::max<int64_t>(cpus, 1)));
  const double minutes = static_cast<double>(std::max<Seconds>(1, (limit + 59) / 60));
  return std::min(1.0, job / static_cast<double>(all_cpus) / minutes);
}

}  // namespace

PriorityBreakdown job_priority(const Cluster& c, const JobSpec& job, int32_t partition, const FairShareFactors* fs,
                               Time now, Time eligible) {
  auto d = resolve_demand(c, job, partition);
  struct FromMap : TresLookup {
    TresMap m;
    int64_t get(std::string_view name) const override {
      auto it = m.find(std::string(name));
      return it == m.end() ? 0 : it->second;
    }
  } tres;
  tres.m = d ? demand_tres(c, *d) : TresMap{{"cpu", 1}, {"node", 1}};
  return priority_for(c, job, partition, d ? &*d : nullptr, tres, fs, now, eligible);
}

PriorityTerms priority_terms(const Cluster& c, int32_t partition, const Demand* d, const TresLookup& tres) {
  PriorityTerms t;
  if (c.priority.kind == PriorityKind::kBasic) return t;
  const PriorityParams& w = c.priority;
  const PartitionSpec& part = c.partitions[partition];
  auto total = [&](const char* k) { return cluster_total(c, k); };
  int64_t cpus = d ? requested_cpus(*d) : tres.get("cpu");
  const int32_t min_nodes = d ? d->min_nodes : 1;
  double size = w.size_relative_to_time ? size_per_minute(c, min_nodes, cpus, d ? d->time_limit : kInfinite)
                                        : (ratio(min_nodes, total("node")) + ratio(cpus > 0 ? cpus : 1, total("cpu"))) / 2.0;
  t.job_size_factor = w.favor_small ? 1.0 - size : size;
  double jf = max_job_factor(c);
  t.partition_factor = w.raw_partition ? part.priority_job_factor : jf > 0 ? part.priority_job_factor / jf : 0;
  double qmax = max_qos_priority(c);
  int32_t q = d ? d->qos : -1;
  t.qos_factor = q < 0 ? 0 : w.raw_qos ? static_cast<double>(c.qos[q].priority) : qmax > 0 ? c.qos[q].priority / qmax : 0;
  t.job_size = w.weight_job_size * t.job_size_factor;
  t.partition = w.weight_partition * t.partition_factor;
  t.qos = w.weight_qos * t.qos_factor;
  // An --exclusive job is weighed by what it asked for, not by the whole
  // nodes it will hold (Slurm 22.05's sprio on the anchor cluster: cpu=16 of
  // 1000 for one CPU of 64): its CPUs and memory as requested.
  std::optional<TresMap> requested;
  if (d && d->whole_node && !w.weight_tres.empty()) requested = demand_tres(c, *d, true);
  for (const auto& [name, weight] : w.weight_tres) {
    auto all = part.total_tres.find(name);
    int64_t asked = tres.get(name);
    if (requested && (name == "cpu" || name == "mem")) {
      auto it = requested->find(name);
      asked = it == requested->end() ? 0 : it->second;
    }
    if (asked <= 0) continue;
    if (w.raw_tres) {
      t.tres.emplace_back(&name, weight * static_cast<double>(asked));
      continue;
    }
    if (all == part.total_tres.end() || all->second <= 0) continue;
    t.tres.emplace_back(&name, weight * static_cast<double>(asked) / all->second);
  }
  t.fixed = t.job_size + t.partition + t.qos;
  for (const auto& tv : t.tres) t.fixed += tv.second;
  return t;
}

namespace {

// Age and fair share at `now`, added to the fixed terms in one order (so
// sprio's breakdown and the cycle's queue order agree to the last bit).
int64_t sum_priority(const Cluster& c, const JobSpec& job, double fixed, const FairShareFactors* fs, Time now,
                     Time eligible, PriorityBreakdown* b) {
  // priority/basic: first come, first served, moved by the job's nice value as Slurm's --nice moves it.
  if (c.priority.kind == PriorityKind::kBasic) return std::clamp<int64_t>(kBasicBase - job.id - job.nice, 1, INT64_MAX);
  const PriorityParams& w = c.priority;
  // PriorityFlags=ACCRUE_ALWAYS: age counts from submission, also while the
  // job waits on its dependency or --begin time.
  const Time since = w.accrue_always && job.submit_time > 0 ? job.submit_time : eligible;
  Seconds waited = since > 0 && now > since ? now - since : 0;
  double age_factor = w.max_age > 0 ? std::min(1.0, static_cast<double>(waited) / w.max_age) : 1.0;
  double fs_factor = fs ? fs->factor(job.account, job.user) : 1.0;
  double age = w.weight_age * age_factor;
  double fairshare = w.weight_fairshare * fs_factor;
  double sum = fixed + age + fairshare - static_cast<double>(job.nice);
  if (b) {
    b->age_factor = age_factor;
    b->fairshare_factor = fs_factor;
    b->age = age;
    b->fairshare = fairshare;
  }
  return std::max<int64_t>(1, static_cast<int64_t>(std::floor(std::max(sum, 0.0))));
}

int64_t adjusted(const Cluster& c, const JobSpec& job, int64_t total) {
  if (job.admin_priority) {
    total = *job.admin_priority;
  } else if (c.priority.incr_only) {
    total = std::max(total, job.priority_floor);
  }
  if (job.hold != Hold::kNone) total = 0;  // a held job's priority is 0, as Slurm shows it
  return total;
}

}  // namespace

int64_t priority_total(const Cluster& c, const JobSpec& job, double fixed, const FairShareFactors* fs, Time now,
                       Time eligible) {
  return adjusted(c, job, sum_priority(c, job, fixed, fs, now, eligible, nullptr));
}

PriorityBreakdown priority_for(const Cluster& c, const JobSpec& job, int32_t partition, const Demand* d,
                               const TresLookup& tres, const FairShareFactors* fs, Time now, Time eligible) {
  PriorityBreakdown b;
  b.nice = job.nice;
  PriorityTerms t = priority_terms(c, partition, d, tres);
  b.job_size_factor = t.job_size_factor;
  b.partition_factor = t.partition_factor;
  b.qos_factor = t.qos_factor;
  b.job_size = t.job_size;
  b.partition = t.partition;
  b.qos = t.qos;
  for (const auto& [name, v] : t.tres) b.tres[*name] = v;
  b.total = adjusted(c, job, sum_priority(c, job, t.fixed, fs, now, eligible, &b));
  return b;
}

}  // namespace drover::core
