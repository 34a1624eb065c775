#include "core/preempt.hpp"

#include <algorithm>

namespace drover::core {
namespace {

// Where `job` would start now if the running jobs marked in `gone` had ended.
std::optional<StartDecision> starts_now(Scheduler& trial, const CycleInput& base, const JobSpec& job,
                                        const std::vector<uint8_t>& gone) {
  std::vector<RunningJob> running;
  running.reserve(base.running.size());
  for (size_t i = 0; i < base.running.size(); ++i) {
    if (!gone[i]) running.push_back(base.running[i]);
  }
  const JobSpec* one[] = {&job};
  CycleInput in;
  in.now = base.now;
  in.node_avail = base.node_avail;
  in.running = running;
  in.pending = one;
  in.fairshare = base.fairshare;
  in.history = base.history;
  in.blocks = base.blocks;
  CycleOptions opts;
  opts.pass = PassKind::kFull;
  opts.estimate_unreserved = false;
  CycleResult r = trial.run_cycle(in, opts);
  if (r.starts.empty()) return std::nullopt;
  return std::move(r.starts.front());
}

bool shares_a_node(const Allocation& a, const Allocation& b) {
  for (const auto& x : a.nodes) {
    for (const auto& y : b.nodes) {
      if (x.node == y.node) return true;
    }
  }
  return false;
}

// A preemption setting of a job's QOS under preempt/qos, of its partition
// under partition_prio (nullopt: neither governs, or the index is unknown).
template <class T>
std::optional<T> governing(const Cluster& c, int32_t qos, int32_t partition, T QosSpec::*of_qos,
                           T PartitionSpec::*of_partition) {
  if (c.preempt.type == PreemptType::kQos && qos >= 0 && static_cast<size_t>(qos) < c.qos.size()) {
    return c.qos[static_cast<size_t>(qos)].*of_qos;
  }
  if (c.preempt.type == PreemptType::kPartitionPrio && partition >= 0 &&
      static_cast<size_t>(partition) < c.partitions.size()) {
    return c.partitions[static_cast<size_t>(partition)].*of_partition;
  }
  return std::nullopt;
}

}  // namespace

PreemptMode preempt_mode_of(const Cluster& c, int32_t qos, int32_t partition) {
  if (c.preempt.type == PreemptType::kNone) return PreemptMode::kOff;
  const PreemptMode own =
      governing(c, qos, partition, &QosSpec::preempt_mode, &PartitionSpec::preempt_mode).value_or(PreemptMode::kCluster);
  return own == PreemptMode::kCluster ? c.preempt.mode : own;
}

Seconds preempt_grace_of(const Cluster& c, int32_t qos, int32_t partition) {
  return governing(c, qos, partition, &QosSpec::grace_time, &PartitionSpec::grace_time).value_or(0);
}

bool may_preempt(const Cluster& c, int32_t by_qos, uint32_t by_tier, const RunningJob& r, Time now) {
  const bool qos_known = r.qos >= 0 && static_cast<size_t>(r.qos) < c.qos.size();
  switch (c.preempt.type) {
    case PreemptType::kNone:
      return false;
    case PreemptType::kQos: {
      if (by_qos < 0 || static_cast<size_t>(by_qos) >= c.qos.size() || !qos_known) return false;
      const auto& list = c.qos[static_cast<size_t>(by_qos)].preempt;
      if (std::find(list.begin(), list.end(), c.qos[static_cast<size_t>(r.qos)].name) == list.end()) return false;
      break;
    }
    case PreemptType::kPartitionPrio:
      if (r.partition < 0 || static_cast<size_t>(r.partition) >= c.partitions.size() ||
          c.partitions[static_cast<size_t>(r.partition)].priority_tier >= by_tier) {
        return false;
      }
      break;
  }
  const PreemptMode mode = preempt_mode_of(c, r.qos, r.partition);
  if (mode != PreemptMode::kCancel && mode != PreemptMode::kRequeue) return false;
  Seconds exempt = c.preempt.exempt_time;
  if (qos_known && c.qos[static_cast<size_t>(r.qos)].preempt_exempt_time) {
    exempt = *c.qos[static_cast<size_t>(r.qos)].preempt_exempt_time;
  }
  return now - r.start >= exempt;
}

bool may_preempt_any(const Cluster& c, int32_t by_qos, uint32_t by_tier) {
  auto ends_jobs = [](PreemptMode m) { return m == PreemptMode::kCancel || m == PreemptMode::kRequeue; };
  switch (c.preempt.type) {
    case PreemptType::kNone:
      return false;
    case PreemptType::kQos:
      if (by_qos < 0 || static_cast<size_t>(by_qos) >= c.qos.size()) return false;
      for (const auto& name : c.qos[static_cast<size_t>(by_qos)].preempt) {
        if (const int32_t q = c.find_qos(name); q >= 0 && ends_jobs(preempt_mode_of(c, q, -1))) return true;
      }
      return false;
    case PreemptType::kPartitionPrio:
      for (size_t p = 0; p < c.partitions.size(); ++p) {
        if (c.partitions[p].priority_tier < by_tier && ends_jobs(preempt_mode_of(c, -1, static_cast<int32_t>(p)))) {
          return true;
        }
      }
      return false;
  }
  return false;
}

std::optional<PreemptPlan> plan_preemption(Scheduler& trial, const CycleInput& in, const JobSpec& job,
                                           const std::vector<size_t>& candidates) {
  std::vector<uint8_t> gone(in.running.size(), 0);
  // The start with the first k candidates gone. Removing more only frees
  // more, so the fewest that let it start are found by bisection.
  auto with_first = [&](size_t k) {
    std::fill(gone.begin(), gone.end(), 0);
    for (size_t i = 0; i < k; ++i) gone[candidates[i]] = 1;
    return starts_now(trial, in, job, gone);
  };
  const size_t n = candidates.size();
  if (n == 0 || !with_first(n)) return std::nullopt;
  // It could start with none gone: it waits for other jobs' reservations, not for these.
  if (with_first(0)) return std::nullopt;
  size_t fail = 0, fit = 1;
  while (fit < n && !with_first(fit)) {
    fail = fit;
    fit = std::min(n, fit * 2);
  }
  while (fit - fail > 1) {
    const size_t mid = fail + (fit - fail) / 2;
    (with_first(mid) ? fit : fail) = mid;
  }
  auto start = with_first(fit);
  if (!start) return std::nullopt;  // not monotone after all (never seen): no preemption rather than a guess
  // Of those, only the ones on the nodes it would take need to go.
  std::vector<size_t> victims;
  std::fill(gone.begin(), gone.end(), 0);
  for (size_t i = 0; i < fit; ++i) {
    if (shares_a_node(in.running[candidates[i]].alloc, start->alloc)) {
      victims.push_back(candidates[i]);
      gone[candidates[i]] = 1;
    }
  }
  if (auto there = starts_now(trial, in, job, gone)) {
    start = std::move(there);
  } else {
    victims.assign(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(fit));
    for (size_t i : victims) gone[i] = 1;
  }
  // Keep running each one it can start without, the least preemptable first.
  for (auto it = victims.rbegin(); it != victims.rend(); ++it) {
    gone[*it] = 0;
    if (auto without = starts_now(trial, in, job, gone)) {
      start = std::move(without);
    } else {
      gone[*it] = 1;
    }
  }
  PreemptPlan plan;
  for (size_t i : victims) {
    if (gone[i]) plan.victims.push_back(i);
  }
  if (plan.victims.empty()) return std::nullopt;
  plan.start = std::move(*start);
  return plan;
}

}  // namespace drover::core
