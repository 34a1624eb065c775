// sbatch: checks a submission (Slurm's refusals, from the core's submit
// check), assigns job ids (an array takes one id per element, the first is
// the array's id) and records the jobs.
#include <unistd.h>

#include <algorithm>

#include "common/duration.hpp"
#include "common/strings.hpp"
#include "ctld/persist.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

Error refusal(const std::string& slurm_error, const std::string& drover_line = "") {
  std::string text = "Batch job submission failed: " + slurm_error;
  if (!drover_line.empty()) text += "\n" + drover_line;
  return make_error(text);
}

Status check_limits(const v1::JobDescriptor& d, const Settings& s, std::size_t jobs_now, const Caller& who,
                    int64_t now) {
  if (d.script().empty() && d.batch()) return refusal("Batch script is empty", "the submission carried no script");
  // Slurm 22.05's words for a script over max_script_size (anchor: 6.9 MB refused, 4.1 MB taken).
  if (d.batch() && static_cast<int64_t>(d.script().size()) > s.max_script_size) {
    return refusal("Pathname of a file, directory or other parameter too long",
                   "the batch script is " + std::to_string(d.script().size()) +
                       " bytes; SchedulerParameters=max_script_size=" + std::to_string(s.max_script_size) +
                       " (slurm.conf) bounds it");
  }
  // A deadline already past: Slurm 22.05's refusal on the anchor cluster.
  if (d.deadline() > 0 && d.deadline() < now) {
    return refusal("Requested time limit is invalid (missing or exceeds some limit)",
                   "--deadline=" + format_timestamp(d.deadline()) + " has passed");
  }
  if (d.nice() < 0 && !who.privileged) {
    return refusal("Invalid --nice value", "a negative --nice (a higher priority) is for root, SlurmUser and operators");
  }
  const auto& ids = d.array().task_ids();
  if (!ids.empty() && ids[ids.size() - 1] >= s.max_array_size) {
    return refusal("Invalid job array specification",
                   "array index " + std::to_string(ids[ids.size() - 1]) + " is above MaxArraySize-1 = " +
                       std::to_string(s.max_array_size - 1) + " (slurm.conf MaxArraySize)");
  }
  std::size_t elements = ids.empty() ? 1 : static_cast<std::size_t>(ids.size());
  if (jobs_now + elements > static_cast<std::size_t>(s.max_job_count)) {
    return refusal("Slurm job queue full", "the controller holds " + std::to_string(jobs_now) +
                                               " jobs; MaxJobCount=" + std::to_string(s.max_job_count) +
                                               " (slurm.conf) bounds it; retry when jobs have finished");
  }
  return {};
}

// SLURM_ARRAY_TASK_STEP as Slurm 22.05 set it: the step of an --array
// written as one range with ":step" (0-10:2 is 2, 0-6:3%2 is 3), else 1 (a
// list such as 1,3,5 is 1 however evenly spaced).
int64_t array_step(const std::string& text) {
  std::string spec = text.substr(0, text.find('%'));
  if (spec.find(',') != std::string::npos) return 1;
  auto colon = spec.find(':');
  if (colon == std::string::npos) return 1;
  return std::max<int64_t>(1, parse_int(spec.substr(colon + 1)).value_or(1));
}

v1::JobRecord base_record(const Caller& who, const v1::JobDescriptor& d, int64_t now, const Settings& s) {
  v1::JobRecord rec;
  *rec.mutable_desc() = d;
  rec.set_uid(who.uid);
  rec.set_gid(who.gid);
  rec.set_user(who.user.empty() ? std::to_string(who.uid) : who.user);
  rec.set_submit_time(now);
  rec.set_state(v1::PENDING);
  // Held or waiting for --begin: the reason shows at once (no cycle is run for them).
  rec.set_reason(d.hold() ? "JobHeldUser" : d.begin_time() > now ? "BeginTime" : "None");
  rec.set_hold(d.hold() ? v1::HOLD_USER : v1::HOLD_NONE);
  // Slurm looks at every job as it is submitted (LastSchedEval is the submit time); Drover's quick
  // pass sets it for the others.
  if (d.hold() || d.begin_time() > now) rec.set_last_sched_eval(now);
  rec.set_nice(d.nice());
  if (d.has_priority()) rec.set_admin_priority(d.priority());
  rec.set_array_task_id(-1);
  rec.set_requeue(d.has_requeue() ? d.requeue() : s.job_requeue);
  rec.set_cluster(s.cluster_name);
  bool deps = !d.dependency().items().empty();
  if (!deps && d.begin_time() <= now && !d.hold()) rec.set_eligible_time(now);
  return rec;
}

void set_array_facts(v1::JobRecord& rec, const v1::ArrayRequest& a) {
  const auto& ids = a.task_ids();
  rec.set_array_max_running(a.max_running());
  rec.set_array_text(a.text());
  rec.set_array_task_count(ids.size());
  rec.set_array_task_min(ids[0]);
  rec.set_array_task_max(ids[ids.size() - 1]);
  rec.set_array_task_step(array_step(a.text()));
}

std::string submit_request_key(uint32_t uid, const std::string& request_id) {
  return std::to_string(uid) + "/" + request_id;
}

bool has_assoc_submit_limits(const core::Cluster& c) {
  return std::any_of(c.assocs.begin(), c.assocs.end(), [](const core::AssocLimitSpec& a) {
    return a.grp_submit_jobs != core::kNoLimit || a.max_submit_jobs != core::kNoLimit;
  });
}

bool has_qos_submit_limits(const core::Cluster& c) {
  return std::any_of(c.qos.begin(), c.qos.end(), [](const core::QosSpec& q) {
    return q.grp_submit_jobs != core::kNoLimit || q.max_submit_jobs_per_user != core::kNoLimit;
  });
}

}  // namespace

// The caller's accounts when associations are enforced (the default one
// first), and the jobs per QOS (all, and the caller's) for GrpSubmitJobs /
// MaxSubmitJobsPerUser, counted only when some QOS has such a limit.
core::SubmitContext ControllerState::submit_context(const Caller& who) const {
  core::SubmitContext ctx;
  if (settings_.enforce_associations) {
    ctx.enforce_accounts = true;
    if (const auto* u = acct_.user(who.user)) {
      if (!u->default_account().empty()) ctx.user_accounts.push_back(u->default_account());
      for (const auto& a : u->assocs()) {
        if (a.account() != u->default_account()) ctx.user_accounts.push_back(a.account());
      }
    }
  }
  const bool per_assoc = has_assoc_submit_limits(bridge_->cluster());
  if (!per_assoc && !has_qos_submit_limits(bridge_->cluster())) return ctx;
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    ctx.jobs_per_qos[j.rec.qos()] += 1;
    if (j.rec.uid() == who.uid) ctx.user_jobs_per_qos[j.rec.qos()] += 1;
    if (per_assoc) ctx.jobs_per_assoc[{j.rec.account(), j.rec.user()}] += 1;
  }
  return ctx;
}

std::optional<core::Refusal> ControllerState::association_qos(const Caller& who, v1::JobRecord& rec) const {
  const v1::UserRecord* u = acct_.user(who.user);
  if (!u) return std::nullopt;  // no association: resolve_account refuses the job when associations are enforced
  const std::string& account = rec.desc().account().empty() ? u->default_account() : rec.desc().account();
  const v1::UserAssoc* a = user_assoc(*u, account);
  if (!a) return std::nullopt;
  if (rec.desc().qos().empty() && !a->default_qos().empty()) rec.set_qos(a->default_qos());
  if (!settings_.enforce_qos || a->qos().empty()) return std::nullopt;
  std::string qos = !rec.qos().empty() ? rec.qos() : !rec.desc().qos().empty() ? rec.desc().qos() : "normal";
  if (std::find(a->qos().begin(), a->qos().end(), qos) != a->qos().end()) return std::nullopt;
  return core::Refusal{{},
                       "Invalid qos specification",
                       "drover: user " + who.user + "'s association with account " + account + " allows QOS " +
                           join(std::vector<std::string>(a->qos().begin(), a->qos().end()), ",") + ", not " + qos +
                           " (sacctmgr modify user ... set QOS=)"};
}

void ControllerState::index_submit_request(const Job& j) {
  if (!j.rec.submit_request_id().empty()) {
    submit_requests_[submit_request_key(j.rec.uid(), j.rec.submit_request_id())] = j.rec.job_id();
  }
}

void ControllerState::forget_submit_request(const Job& j) {
  if (!j.rec.submit_request_id().empty()) {
    submit_requests_.erase(submit_request_key(j.rec.uid(), j.rec.submit_request_id()));
  }
}

Result<v1::SubmitReply> ControllerState::submit(const Caller& who, const v1::JobDescriptor& desc, bool test_only,
                                                int64_t now, Effects& fx, const std::string& request_id) {
  if (!request_id.empty() && !test_only) {
    auto seen = submit_requests_.find(submit_request_key(who.uid, request_id));
    if (seen != submit_requests_.end()) {
      v1::SubmitReply reply;
      reply.set_cluster(settings_.cluster_name);
      reply.set_job_id(seen->second);
      // A write of its own, so that the answer goes out only after the
      // commit that made the job durable (commits complete in order).
      fx.batch.set_meta(kNextJobIdMeta, next_job_id_);
      return reply;
    }
  }
  if (auto st = check_limits(desc, settings_, jobs_.size(), who, now); !st) return st.error();
  v1::JobRecord rec = base_record(who, desc, now, settings_);
  // A plain user's --priority: Slurm 22.05 took the job and gave it the
  // priority it would have had (anchor cluster, as alice); so does Drover, saying so.
  const bool priority_ignored = rec.desc().has_priority() && !who.privileged;
  if (priority_ignored) rec.mutable_desc()->clear_priority();
  drop_unknown_dependencies(*rec.mutable_desc()->mutable_dependency());
  rec.set_job_id(next_job_id_);
  auto qos_refusal = association_qos(who, rec);
  core::JobSpec spec = spec_from_record(rec);
  // --test-only plans the job as if released: a hold does not let it past what no node can hold.
  if (test_only) spec.hold = core::Hold::kNone;
  core::SubmitContext ctx = submit_context(who);
  ctx.assoc_qos_refusal = std::move(qos_refusal);
  ctx.new_jobs = desc.array().task_ids().empty() ? 1 : desc.array().task_ids_size();
  core::SubmitVerdict v = bridge_->check_submit(spec, ctx);
  if (!v.accepted) {
    std::string text;
    if (!(test_only && v.capacity_refusal)) {
      for (const auto& d : v.details) text += d + "\n";
    }
    text += "Batch job submission failed: " + v.error;
    if (!v.drover_line.empty()) text += "\n" + v.drover_line;
    return make_error(text);
  }
  const auto& part = bridge_->cluster().partitions[v.partition];
  rec.set_partition(part.name);
  rec.set_qos(v.qos);
  rec.set_account(v.account);
  if (rec.account().empty()) {
    if (const auto* u = acct_.user(who.user)) rec.set_account(u->default_account());  // sacctmgr's DefaultAccount
  }
  if (auto st = check_job_reservation(rec); !st) return st.error();
  spec = spec_from_record(rec);
  int64_t asked_cpus = 0;
  if (auto sum = bridge_->summarize(spec, v.partition)) {
    rec.set_time_limit_s(sum->time_limit);
    asked_cpus = sum->min_cpus;
  }
  // --time-min longer than the time limit, or (counted in whole minutes, as
  // Slurm's) than the time left before --deadline: Slurm 22.05's refusal.
  if (desc.time_min_s() > 0 && rec.time_limit_s() != kInfinite && desc.time_min_s() > rec.time_limit_s()) {
    return refusal("Invalid time-min specification (exceeds job's time or other limits)",
                   "--time-min " + format_duration(desc.time_min_s()) + " is longer than the job's time limit " +
                       format_duration(rec.time_limit_s()));
  }
  if (desc.time_min_s() > 0 && desc.deadline() > 0 && now + (desc.time_min_s() + 59) / 60 * 60 > desc.deadline()) {
    return refusal("Invalid time-min specification (exceeds job's time or other limits)",
                   "--time-min " + format_duration(desc.time_min_s()) + " does not fit before --deadline " +
                       format_timestamp(desc.deadline()));
  }
  v1::SubmitReply reply;
  reply.set_cluster(settings_.cluster_name);
  reply.set_job_id(next_job_id_);
  if (priority_ignored) {
    reply.add_warnings("warning: --priority ignored: only root, SlurmUser or an operator may set a job's priority");
  }
  if (test_only) {
    // The core caches a job's demand by the spec's address, id and revision.
    // Every --test-only spec lives at the same address with the next job's
    // id, so each gets a revision no other plan had: without it, a second
    // --test-only was answered with the first one's partition and nodes.
    spec.revision = kTestOnlyRevisions + ++test_only_plans_;
    reply.set_planned_cpus(asked_cpus);  // a job that would wait: the CPUs it asks for (a start sets what it gets)
    plan_test_only(spec, rec.desc().reservation(), now, reply);
    // More nodes than its partition has: Slurm 22.05's --test-only is an
    // allocation failure (the submission itself waits, PartitionNodeLimit).
    for (const auto& w : reply.warnings()) {
      if (w == "job would wait: PartitionNodeLimit") {
        return refusal("Requested node configuration is not available",
                       "the job asks for more nodes than partition " + part.name + " allows (PartitionNodeLimit)");
      }
    }
    return reply;
  }
  const auto& ids = desc.array().task_ids();
  int64_t count = ids.empty() ? 1 : ids.size();
  for (int64_t k = 0; k < count; ++k) {
    Job j;
    j.rec = rec;
    j.rec.set_job_id(next_job_id_ + k);
    if (k == 0 && !request_id.empty()) j.rec.set_submit_request_id(request_id);
    if (!ids.empty()) {
      j.rec.set_array_job_id(next_job_id_);
      j.rec.set_array_task_id(static_cast<int32_t>(ids[k]));
      set_array_facts(j.rec, desc.array());
      // Beyond the throttle (%N) a task waits for the array, not for
      // resources: not eligible yet (EligibleTime=Unknown, as Slurm 22.05
      // showed the array's pending record), until a pass finds it free to run.
      if (desc.array().max_running() > 0 && k >= desc.array().max_running()) j.rec.set_eligible_time(0);
    }
    refresh_spec(j);
    // One waiting for its --begin runs no pass now (below): it is priced
    // here, as Slurm prices every job it is given (squeue %Q, Priority=).
    if (!desc.hold() && desc.begin_time() > now) j.rec.set_priority(priority_now(j, now).total);
    put_job(j, fx, true);
    auto [it, _] = jobs_.emplace(j.rec.job_id(), std::move(j));
    index_array(it->second);
    index_submit_request(it->second);
  }
  next_job_id_ += count;
  fx.batch.set_meta(kNextJobIdMeta, next_job_id_);
  // A held job, or one that waits for --begin, changes nothing another job could do now.
  fx.reschedule = !desc.hold() && desc.begin_time() <= now;
  counters_.submitted += count;
  return reply;
}

}  // namespace drover::ctld
