// Preemption (PreemptType=preempt/qos or preempt/partition_prio): after a
// scheduling pass, a pending job that waits on resources and may preempt
// running jobs has the core choose the fewest of them whose end lets it
// start now (core/preempt.hpp); they are requeued (PreemptMode=REQUEUE, a
// job that may be requeued) or end PREEMPTED (CANCEL), their steps told
// "... DUE TO PREEMPTION ***" as Slurm 22.05's were on the anchor cluster.
// The job starts in a later pass, once their processes are gone.
#include <algorithm>
#include <csignal>

#include "core/preempt.hpp"
#include "ctld/log.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

// Jobs a pass may try to preempt for: each try runs trial cycles.
constexpr size_t kPreemptorsPerPass = 8;
// A job for which no preemption would do is tried again once a job has
// started or ended since, or after this long (exempt times run out).
constexpr int64_t kRetryAfterS = 10;

}  // namespace

bool ControllerState::waits_for_preempted(core::JobId id) {
  auto it = preempting_.find(id);
  if (it == preempting_.end()) return false;
  for (core::JobId v : it->second) {
    const Job* j = find_job(v);
    if (j && holds_resources(*j) && (j->rec.completing() || j->rec.preempt_at() > 0)) return true;
  }
  preempting_.erase(it);
  return false;
}

// A job's QOS (preempt/qos) and the highest PriorityTier of the partitions
// it may run in (preempt/partition_prio).
std::pair<int32_t, uint32_t> ControllerState::preempt_rights(const Job& j) const {
  const core::Cluster& c = bridge_->cluster();
  const std::string& qos_name = !j.spec.qos.empty() ? j.spec.qos : j.rec.qos();
  const int32_t qos = bridge_->find_qos(qos_name.empty() ? std::string_view("normal") : std::string_view(qos_name));
  uint32_t tier = 0;
  std::vector<int32_t> parts;
  for (const auto& name : j.spec.partitions) {
    parts.push_back(name.empty() ? bridge_->default_partition() : bridge_->find_partition(name));
  }
  if (parts.empty()) parts.push_back(bridge_->default_partition());
  for (int32_t p : parts) {
    if (p >= 0) tier = std::max(tier, c.partitions[static_cast<size_t>(p)].priority_tier);
  }
  return {qos, tier};
}

int64_t ControllerState::preempt_generation() const { return counters_.started + counters_.completed; }

std::vector<core::JobId> ControllerState::preemptors(const core::CycleResult& result, int64_t now) {
  std::vector<core::JobId> out;
  const core::Cluster& c = bridge_->cluster();
  if (c.preempt.type == core::PreemptType::kNone) return out;
  // Forget jobs that no longer wait.
  auto gone = [&](const auto& kv) {
    const Job* j = find_job(kv.first);
    return !j || !is_pending(*j);
  };
  std::erase_if(preempt_failed_, gone);
  std::erase_if(preempting_, gone);
  for (const auto& p : result.pending) {
    if (!p.tested || p.never || (p.reason != core::Reason::kResources && p.reason != core::Reason::kPriority)) continue;
    Job* j = find_job(p.job->id);
    if (!j || !is_pending(*j) || j->rec.completing() || waits_for_preempted(j->rec.job_id())) continue;
    const auto [qos, tier] = preempt_rights(*j);
    if (!core::may_preempt_any(c, qos, tier)) continue;
    if (auto f = preempt_failed_.find(j->rec.job_id()); f != preempt_failed_.end()) {
      if (f->second.first == preempt_generation() && now - f->second.second < kRetryAfterS) continue;
      preempt_failed_.erase(f);
    }
    out.push_back(j->rec.job_id());
    if (out.size() >= kPreemptorsPerPass) break;
  }
  return out;
}

void ControllerState::preempt_for(const std::vector<core::JobId>& preemptors, const core::CycleInput& in,
                                  Effects& fx) {
  const core::Cluster& c = bridge_->cluster();
  const int64_t now = in.now;
  std::set<core::JobId> taken;  // chosen in this pass
  for (core::JobId id : preemptors) {
    Job* j = find_job(id);
    if (!j) continue;
    const auto [qos, tier] = preempt_rights(*j);
    std::vector<size_t> candidates;
    for (size_t i = 0; i < in.running.size(); ++i) {
      const core::RunningJob& r = in.running[i];
      const Job* v = find_job(r.spec->id);
      if (!v || v->rec.state() != v1::RUNNING || v->rec.completing() || v->rec.preempt_at() > 0 ||
          taken.count(r.spec->id)) {
        continue;
      }
      if (core::may_preempt(c, qos, tier, r, now)) candidates.push_back(i);
    }
    if (candidates.empty()) continue;
    // The most preemptable first: the lowest QOS priority (or tier), then
    // the lowest job priority, then the latest started (the least work lost).
    auto rank = [&](size_t i) {
      const core::RunningJob& r = in.running[i];
      const int64_t level = c.preempt.type == core::PreemptType::kQos
                                ? (r.qos >= 0 ? c.qos[static_cast<size_t>(r.qos)].priority : 0)
                                : c.partitions[static_cast<size_t>(r.partition)].priority_tier;
      return std::make_tuple(level, find_job(r.spec->id)->rec.priority(), -r.start, -r.spec->id);
    };
    std::sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
    auto plan = core::plan_preemption(bridge_->trial_scheduler(), in, j->spec, candidates);
    if (!plan) {
      preempt_failed_[id] = {preempt_generation(), now};
      continue;
    }
    if (c.preempt.type == core::PreemptType::kPartitionPrio) {
      // Placed in one of its partitions that is no higher than a victim's: not a preemption.
      const uint32_t at = c.partitions[static_cast<size_t>(plan->start.partition)].priority_tier;
      const bool higher = std::all_of(plan->victims.begin(), plan->victims.end(), [&](size_t i) {
        return c.partitions[static_cast<size_t>(in.running[i].partition)].priority_tier < at;
      });
      if (!higher) continue;
    }
    std::vector<core::JobId>& victims = preempting_[j->rec.job_id()];
    victims.clear();
    for (size_t i : plan->victims) {
      const core::RunningJob& r = in.running[i];
      Job* v = find_job(r.spec->id);
      taken.insert(r.spec->id);
      victims.push_back(r.spec->id);
      preempt_job(*v, core::preempt_mode_of(c, r.qos, r.partition), core::preempt_grace_of(c, r.qos, r.partition), *j,
                  now, fx);
    }
  }
}

// As Slurm 22.05 on the anchor cluster: a job that may be requeued goes
// back to the queue under REQUEUE (sacct -D records the run PREEMPTED),
// any other ends PREEMPTED 0:0; both runs' steps are told "... CANCELLED AT
// ... DUE TO PREEMPTION ***". With a GraceTime it is sent SIGTERM now and
// ended so when the grace is over (preempt_after_grace), as Slurm documents.
void ControllerState::preempt_job(Job& v, core::PreemptMode mode, Seconds grace, const Job& by, int64_t now,
                                  Effects& fx) {
  v1::JobRecord& r = v.rec;
  const bool requeue = mode == core::PreemptMode::kRequeue && r.requeue() && r.desc().batch();
  if (grace <= 0) return end_preempted(v, requeue, by.rec.job_id(), now, fx);
  r.set_preempt_at(now + grace);
  r.set_preempt_requeue(requeue);
  r.set_preempted_by(by.rec.job_id());
  put_job(v, fx);
  signal_job_everywhere(v, SIGTERM, fx);
  fx.log.emplace_back(config::kLogInfo, log_name(r) + " preempted by " + log_name(by.rec) + ": SIGTERM now, " +
                                            (requeue ? "requeued" : "ended PREEMPTED") + " in " +
                                            std::to_string(grace) + " s (GraceTime)");
  fx.reschedule = true;  // its planned end moved
}

void ControllerState::end_preempted(Job& v, bool requeue, core::JobId by, int64_t now, Effects& fx) {
  v1::JobRecord& r = v.rec;
  const std::string why = "preempted by job " + std::to_string(by);
  fx.log.emplace_back(config::kLogInfo, log_name(r) + " " + why + (requeue ? ": requeued" : ": ended PREEMPTED"));
  r.set_preempt_at(0);
  if (requeue) {
    r.set_preempted(true);
    requeue_started(v, why, 0, now, fx, EndNotice::kPreempt);
  } else {
    const std::size_t commands = fx.commands.size();
    end_running(v, v1::PREEMPTED, why, 0, now, fx);
    tell_ends_as(fx.commands, commands, EndNotice::kPreempt);
  }
  refresh_spec(v);
  fx.reschedule = true;
}

void ControllerState::preempt_after_grace(int64_t now, Effects& fx) {
  std::vector<Job*> due;
  for (core::JobId id : active_) {
    Job& j = jobs_.at(id);
    const v1::JobRecord& r = j.rec;
    if (r.preempt_at() > 0 && r.preempt_at() <= now && r.state() == v1::RUNNING && !r.completing()) due.push_back(&j);
  }
  for (Job* j : due) end_preempted(*j, j->rec.preempt_requeue(), j->rec.preempted_by(), now, fx);
}

}  // namespace drover::ctld
