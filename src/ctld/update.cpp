// scontrol update JobId=... Key=Value: the fields a user may change on
// their own jobs (and operators on all). A pending job's changed request is
// checked again as at submit; a refused change leaves the job as it was.
#include <algorithm>
#include <limits>
#include <optional>

#include "common/duration.hpp"
#include "common/gres.hpp"
#include "common/mail_type.hpp"
#include "common/strings.hpp"
#include "common/units.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

struct Ctx {
  const Caller& who;
  Job& job;
  v1::JobRecord& rec;  // the copy being changed
  int64_t now;
  const v1::UpdateJobRequest& req;
  bool set_time_limit = false;
  // A user's longer time limit: allowed for a pending job up to its
  // partition's MaxTime (checked by update(), which knows the partitions).
  bool user_longer_limit = false;
};

using Setter = const char* (*)(Ctx&, const std::string& value);

const char* need_pending(const Ctx& c) { return c.job.rec.state() == v1::PENDING ? nullptr : kNotPending; }

// The job's partition, or, once Partition= cleared it in this update, the first it now asks for.
const std::string& partition_of(const v1::JobRecord& r) {
  return r.partition().empty() && r.desc().partitions_size() > 0 ? r.desc().partitions(0) : r.partition();
}

const char* set_time_limit(Ctx& c, const std::string& v) {
  // "+30" / "-1:00:00": the current limit, longer or shorter (scontrol(1)).
  auto change = parse_limit_change(v);
  if (!change) return "Invalid time limit specification";
  Seconds d = change->amount;
  if (change->sign != 0) {
    const int64_t now_limit = c.rec.time_limit_s();
    if (now_limit == kInfinite || change->amount == kInfinite) return "Invalid time limit specification";
    d = now_limit + change->sign * change->amount;
    if (d <= 0) return "Invalid time limit specification";
  }
  bool longer = c.rec.time_limit_s() != kInfinite && (d == kInfinite || d > c.rec.time_limit_s());
  if (longer && !c.who.privileged) {
    if (c.rec.state() != v1::PENDING) return kAccessDenied;
    c.user_longer_limit = true;
  }
  c.rec.mutable_desc()->set_time_limit_s(d);
  c.rec.set_time_limit_s(d);
  if (is_started(c.rec)) {
    // Time spent suspended does not count; a suspended job's batch host
    // hears of the new limit when it resumes.
    c.rec.set_end_time(d == kInfinite ? 0 : c.rec.start_time() + agent_time_limit(c.rec));
    c.set_time_limit = c.rec.state() == v1::RUNNING;
  }
  return nullptr;
}

const char* set_name(Ctx& c, const std::string& v) {
  c.rec.mutable_desc()->set_name(v);
  return nullptr;
}

const char* set_comment(Ctx& c, const std::string& v) {
  c.rec.mutable_desc()->set_comment(v);
  return nullptr;
}

const char* set_partition(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  c.rec.mutable_desc()->clear_partitions();
  for (const auto& p : split(v, ',')) c.rec.mutable_desc()->add_partitions(p);
  c.rec.set_partition("");
  return nullptr;
}

const char* set_qos(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  c.rec.mutable_desc()->set_qos(v);
  c.rec.set_qos(v);
  return nullptr;
}

const char* set_account(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  c.rec.mutable_desc()->set_account(v);
  c.rec.set_account(v);
  return nullptr;
}

const char* set_nice(Ctx& c, const std::string& v) {
  auto n = parse_int(v, true);
  if (!n || *n < -2147483645 || *n > 2147483645) return "Invalid nice value";
  if (*n < 0 && !c.who.privileged) return kAccessDenied;
  c.rec.set_nice(static_cast<int32_t>(*n));
  return nullptr;
}

const char* set_priority(Ctx& c, const std::string& v) {
  // A held job's priority is its hold: Slurm 22.05 refused Priority= for
  // one, user or admin hold, and said so to a user before the permission.
  if (c.rec.hold() != v1::HOLD_NONE) return kJobHeld;
  if (!c.who.privileged) return kAccessDenied;
  auto n = parse_int(v);
  if (!n) return "Invalid priority value";
  c.rec.set_admin_priority(*n);
  // A running job's shown priority is the one it started with; the new one shows at once (squeue %Q:
  // Slurm 22.05 showed 77 after Priority=77 of a running job). A pending job's comes from the next pass.
  if (c.rec.state() != v1::PENDING) c.rec.set_priority(*n);
  return nullptr;
}

// MailType=END,FAIL (NONE: no mail) and MailUser=, as --mail-type/--mail-user set them; scontrol
// checked the list before asking.
const char* set_mail_type(Ctx& c, const std::string& v) {
  auto bits = parse_mail_type(v);
  if (!bits) return "Invalid MailType";
  c.rec.mutable_desc()->set_mail_type(mail_type_text(*bits));  // "" for NONE
  return nullptr;
}

const char* set_mail_user(Ctx& c, const std::string& v) {
  c.rec.mutable_desc()->set_mail_user(v);
  return nullptr;
}

// Gres=gpu:h100:1 (or "" / "(null)": none) of a pending job, as Slurm 22.05's scontrol took it on the
// anchor cluster; squeue's %b and TresPerNode show the new list.
const char* set_gres(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  auto list = parse_gres_list(v);
  if (!list) return "Invalid generic resource (gres) specification";
  auto* d = c.rec.mutable_desc();
  d->clear_gres();
  for (const auto& g : *list) d->add_gres(g.str());
  return nullptr;
}

const char* set_features(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  c.rec.mutable_desc()->set_constraint(v);
  return nullptr;
}

const char* set_nodelist(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  c.rec.mutable_desc()->set_nodelist(v);
  return nullptr;
}

const char* set_exclude(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  c.rec.mutable_desc()->set_exclude(v);
  return nullptr;
}

const char* set_count(Ctx& c, const std::string& v, void (v1::JobDescriptor::*set)(int32_t)) {
  if (auto e = need_pending(c)) return e;
  auto n = parse_int(v);
  if (!n || *n < 1) return "Invalid numeric value";
  (c.rec.mutable_desc()->*set)(static_cast<int32_t>(*n));
  return nullptr;
}

// A pending job's text field, as given (Reservation=, WorkDir=, StdOut=, ...).
const char* set_pending_text(Ctx& c, const std::string& v, std::string* (v1::JobDescriptor::*field)()) {
  if (auto e = need_pending(c)) return e;
  *(c.rec.mutable_desc()->*field)() = v;
  return nullptr;
}

// A pending job's point in time (StartTime=, Deadline=): "now+1hour", "2030-01-01T10:00", ...
const char* set_pending_time(Ctx& c, const std::string& v, void (v1::JobDescriptor::*set)(int64_t)) {
  if (auto e = need_pending(c)) return e;
  auto t = parse_timestamp(v, c.now);
  if (!t) return "Invalid time specification";
  (c.rec.mutable_desc()->*set)(*t);
  return nullptr;
}

// NumNodes=min[-max]: a count alone moves the minimum and keeps the job's
// maximum; a minimum below 1 or above the maximum is refused with Slurm
// 22.05's words (anchor cluster: a -N 1 job's NumNodes=2, 3-2 and 0).
const char* set_num_nodes(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  constexpr const char* kInvalid = "Node count specification invalid";
  auto count = [](const std::string& text) -> std::optional<int64_t> {
    auto n = parse_int(text);
    if (!n || *n < 1 || *n > std::numeric_limits<int32_t>::max()) return std::nullopt;
    return *n;
  };
  auto dash = v.find('-');
  auto lo = count(v.substr(0, dash));
  if (!lo) return kInvalid;
  auto* d = c.rec.mutable_desc();
  int64_t hi = d->max_nodes();
  if (dash != std::string::npos) {
    auto top = count(v.substr(dash + 1));
    if (!top) return kInvalid;
    hi = *top;
  }
  if (hi > 0 && *lo > hi) return kInvalid;
  d->set_min_nodes(static_cast<int32_t>(*lo));
  d->set_max_nodes(static_cast<int32_t>(hi));
  return nullptr;
}

const char* set_num_tasks(Ctx& c, const std::string& v) { return set_count(c, v, &v1::JobDescriptor::set_ntasks); }
const char* set_cpus_per_task(Ctx& c, const std::string& v) {
  return set_count(c, v, &v1::JobDescriptor::set_cpus_per_task);
}
const char* set_min_cpus_node(Ctx& c, const std::string& v) {
  return set_count(c, v, &v1::JobDescriptor::set_min_cpus_per_node);
}

const char* set_memory(Ctx& c, const std::string& v, bool per_cpu) {
  if (auto e = need_pending(c)) return e;
  auto mb = parse_memory_mb(v);
  if (!mb) return "Invalid memory specification";
  auto* d = c.rec.mutable_desc();
  d->clear_mem_per_node_mb();
  d->clear_mem_per_cpu_mb();
  d->clear_mem_per_gpu_mb();
  per_cpu ? d->set_mem_per_cpu_mb(*mb) : d->set_mem_per_node_mb(*mb);
  return nullptr;
}
const char* set_mem_node(Ctx& c, const std::string& v) { return set_memory(c, v, false); }
const char* set_mem_cpu(Ctx& c, const std::string& v) { return set_memory(c, v, true); }
const char* set_tmp_disk(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  auto mb = parse_memory_mb(v);
  if (!mb) return "Invalid numeric value";  // scontrol checks it before asking
  c.rec.mutable_desc()->set_tmp_disk_mb(*mb);
  return nullptr;
}
const char* set_req_sockets(Ctx& c, const std::string& v) {
  return set_count(c, v, &v1::JobDescriptor::set_sockets_per_node);
}
const char* set_req_cores(Ctx& c, const std::string& v) {
  return set_count(c, v, &v1::JobDescriptor::set_cores_per_socket);
}
const char* set_req_threads(Ctx& c, const std::string& v) {
  return set_count(c, v, &v1::JobDescriptor::set_threads_per_core);
}

const char* set_begin(Ctx& c, const std::string& v) {
  return set_pending_time(c, v, &v1::JobDescriptor::set_begin_time);
}

const char* set_requeue(Ctx& c, const std::string& v) {
  if (v != "0" && v != "1") return "Invalid requeue value";
  c.rec.set_requeue(v == "1");
  c.rec.mutable_desc()->set_requeue(v == "1");
  return nullptr;
}

// OverSubscribe=NO (Shared=0) is --exclusive's whole nodes; YES is -s's (shown, no CPU sharing in Drover).
const char* set_oversubscribe(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  const bool yes = iequals(v, "yes") || v == "1";
  if (!yes && !iequals(v, "no") && v != "0") return "Invalid OverSubscribe value";
  auto* d = c.rec.mutable_desc();
  d->set_exclusive(!yes);
  d->set_exclusive_user(false);
  d->set_exclusive_mcs(false);
  d->set_oversubscribe(yes);
  return nullptr;
}

const char* set_throttle(Ctx& c, const std::string& v) {
  if (c.rec.array_job_id() == 0) return nullptr;  // not an array: nothing to do (Slurm 22.05 said nothing either)
  auto n = parse_int(v);
  if (!n) return "Invalid ArrayTaskThrottle specification";
  c.rec.set_array_max_running(static_cast<int32_t>(*n));
  return nullptr;
}

// The client parsed the value into req.dependency ("" clears it).
const char* set_dependency(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  if (v.empty()) {
    c.rec.mutable_desc()->clear_dependency();
  } else {
    *c.rec.mutable_desc()->mutable_dependency() = c.req.dependency();
  }
  c.rec.set_eligible_time(0);
  return nullptr;
}

const char* set_work_dir(Ctx& c, const std::string& v) {
  return set_pending_text(c, v, &v1::JobDescriptor::mutable_work_dir);
}

// TimeMin=, Deadline= and Licenses= of a pending job, as sbatch's
// --time-min, --deadline and -L set them (the licenses are checked with the
// rest of the job after the update).
const char* set_time_min(Ctx& c, const std::string& v) {
  if (auto e = need_pending(c)) return e;
  auto t = parse_duration(v);
  if (!t || *t == kInfinite || (c.rec.time_limit_s() != kInfinite && *t > c.rec.time_limit_s())) {
    return "Invalid time-min specification (exceeds job's time or other limits)";
  }
  c.rec.mutable_desc()->set_time_min_s(*t);
  return nullptr;
}

const char* set_deadline(Ctx& c, const std::string& v) {
  return set_pending_time(c, v, &v1::JobDescriptor::set_deadline);
}

const char* set_licenses(Ctx& c, const std::string& v) {
  return set_pending_text(c, v, &v1::JobDescriptor::mutable_licenses);
}

const char* set_stdout(Ctx& c, const std::string& v) {
  return set_pending_text(c, v, &v1::JobDescriptor::mutable_std_out);
}

const char* set_stderr(Ctx& c, const std::string& v) {
  return set_pending_text(c, v, &v1::JobDescriptor::mutable_std_err);
}

// Reservation=NAME moves a pending job into a reservation (checked by the
// caller, as at submit); Reservation= takes it out.
const char* set_reservation(Ctx& c, const std::string& v) {
  return set_pending_text(c, v, &v1::JobDescriptor::mutable_reservation);
}

// Keys as scontrol spells them (any case), with their aliases.
struct Field {
  const char* name;
  Setter set;
};

const Field kFields[] = {
    {"TimeLimit", set_time_limit},     {"JobName", set_name},          {"Name", set_name},
    {"Comment", set_comment},          {"Partition", set_partition},   {"QOS", set_qos},
    {"Account", set_account},          {"Nice", set_nice},             {"Priority", set_priority},
    {"Features", set_features},        {"Constraint", set_features},   {"ReqNodeList", set_nodelist},
    {"Gres", set_gres},                {"MailType", set_mail_type},    {"MailUser", set_mail_user},
    {"NodeList", set_nodelist},        {"ExcNodeList", set_exclude},   {"NumNodes", set_num_nodes},
    {"ReqNodes", set_num_nodes},       {"NumTasks", set_num_tasks},    {"ReqProcs", set_num_tasks},
    {"CPUsPerTask", set_cpus_per_task}, {"MinCPUsNode", set_min_cpus_node}, {"MinMemoryNode", set_mem_node},
    {"MinMemoryCPU", set_mem_cpu},     {"MinTmpDiskNode", set_tmp_disk}, {"ReqSockets", set_req_sockets},
    {"ReqCores", set_req_cores},       {"ReqThreads", set_req_threads}, {"StartTime", set_begin},
    {"BeginTime", set_begin},
    {"Requeue", set_requeue},          {"ArrayTaskThrottle", set_throttle}, {"WorkDir", set_work_dir},
    {"StdOut", set_stdout},            {"StdErr", set_stderr},         {"Dependency", set_dependency},
    {"Reservation", set_reservation},  {"ReservationName", set_reservation},
    {"TimeMin", set_time_min},         {"Deadline", set_deadline},      {"Licenses", set_licenses},
    {"OverSubscribe", set_oversubscribe}, {"Shared", set_oversubscribe},
};

const Field* find_field(const std::string& key) {
  for (const auto& f : kFields) {
    if (iequals(key, f.name)) return &f;
  }
  return nullptr;
}

}  // namespace

std::vector<v1::JobResult> ControllerState::update(const Caller& who, const v1::UpdateJobRequest& req, int64_t now,
                                                   Effects& fx) {
  std::vector<v1::JobResult> out;
  auto refuse = [&](const std::string& target, const std::string& why) {
    v1::JobResult r;
    r.set_target(target);
    r.set_error(why);
    out.push_back(std::move(r));
  };
  std::vector<std::string> keys(req.field_order().begin(), req.field_order().end());
  if (keys.empty()) {
    for (const auto& [k, v] : req.fields()) keys.push_back(k);
  }
  for (const auto& t : req.targets()) {
    auto jobs = resolve_target(t);
    const auto missing = missing_tasks(t, jobs);
    const std::size_t first_result = out.size();
    if (jobs.empty() && missing.empty()) refuse(t.text(), kInvalidJobId);
    for (Job* j : jobs) {
      std::string label = jobs.size() == 1 && missing.empty() ? t.text() : job_label(j->rec);
      if (!may_act_on(who, *j)) {
        refuse(label, kInvalidUserId);  // Slurm 22.05's words for another user's job (anchor cluster)
        continue;
      }
      if (is_final(j->rec.state())) {
        refuse(label, kFinished);  // Slurm 22.05's words for an update of an ended job
        continue;
      }
      v1::JobRecord copy = j->rec;
      Ctx c{who, *j, copy, now, req};
      std::string error;
      for (const auto& k : keys) {
        const Field* f = find_field(k);
        if (!f) {
          error = "Update of " + k + " is not built in Drover";
          break;
        }
        if (const char* e = f->set(c, req.fields().at(k))) {
          error = e;
          break;
        }
      }
      // Slurm 22.05 let a user lengthen a pending job's limit up to its
      // partition's MaxTime (anchor cluster), a running one's not at all.
      if (error.empty() && c.user_longer_limit) {
        const int32_t p = bridge_->cluster().find_partition(partition_of(c.rec));
        const int64_t max = p < 0 ? kInfinite : bridge_->cluster().partitions[p].max_time;
        const int64_t want = c.rec.time_limit_s();
        if (max != kInfinite && (want == kInfinite || want > max)) error = kAccessDenied;
      }
      // A new account must be one of the owner's associations where they
      // are enforced (Slurm 22.05 refused Account=nosuch on the anchor cluster).
      const std::string& account = c.rec.desc().account();
      if (error.empty() && settings_.enforce_associations && account != j->rec.desc().account()) {
        const v1::UserRecord* u = acct_.user(c.rec.user());
        if (!u || !user_assoc(*u, account)) error = "Invalid account or account/partition combination specified";
      }
      if (error.empty() && req.fields().count("Dependency")) {
        if (auto st = check_dependencies(c.rec.desc().dependency()); !st) error = "Job dependency problem";
      }
      if (error.empty() && c.rec.desc().reservation() != j->rec.desc().reservation()) {
        if (auto st = check_job_reservation(c.rec); !st) {
          // Slurm's words only: the submit form's lead and Drover's line are not shown here.
          const std::string& m = st.error().message;
          constexpr std::string_view kLead = "Batch job submission failed: ";
          std::string first = m.substr(0, m.find('\n'));
          error = first.rfind(kLead, 0) == 0 ? first.substr(kLead.size()) : first;
        }
      }
      if (error.empty() && c.rec.state() == v1::PENDING) {
        core::JobSpec spec = spec_from_record(c.rec);
        core::SubmitVerdict v = bridge_->check_submit(spec, {});
        // A job no node can hold already (released after a hold, BadConstraints) may still be
        // renamed, commented or reshaped, as Slurm 22.05 allowed on the anchor cluster; only a
        // change that makes a job that could run impossible is refused.
        const bool was_impossible = !v.accepted && v.capacity_refusal && [&] {
          core::SubmitVerdict before = bridge_->check_submit(spec_from_record(j->rec), {});
          return !before.accepted && before.capacity_refusal;
        }();
        if (was_impossible) {
          const std::string part = partition_of(c.rec);  // a copy: it may be the field being set
          c.rec.set_partition(part);
        } else if (!v.accepted) {
          error = v.error;
        } else {
          c.rec.set_partition(bridge_->cluster().partitions[v.partition].name);
          if (!v.qos.empty()) c.rec.set_qos(v.qos);
          if (auto sum = bridge_->summarize(spec_from_record(c.rec), v.partition)) {
            c.rec.set_time_limit_s(sum->time_limit);
          }
        }
      }
      if (!error.empty()) {
        refuse(label, error);
        continue;
      }
      j->rec = c.rec;
      if (!t.array_tasks().empty() && is_pending(*j)) split_array_element(*j, fx);
      refresh_spec(*j);
      put_job(*j, fx);
      if (c.set_time_limit) {
        if (j->rec.desc().batch()) fx.commands.push_back(time_limit_command(j->rec, enforced_time_limit(j->rec)));
        step_time_limits(*j, false, fx);  // srun steps whose own -t was capped at the old end
      }
      fx.reschedule = true;
      v1::JobResult ok;
      ok.set_target(label);
      ok.set_ok(true);
      out.push_back(std::move(ok));
    }
    add_missing_tasks(out, first_result, t.job_id(), missing);
  }
  return out;
}

}  // namespace drover::ctld
