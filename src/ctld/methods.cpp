#include "ctld/methods.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "common/job_errors.hpp"
#include "config/debug_levels.hpp"
#include "ctld/accounting.hpp"
#include "ctld/controller.hpp"
#include "ctld/log.hpp"
#include "ctld/persist.hpp"
#include "store/store.hpp"

namespace drover::ctld::methods {
namespace {

constexpr int kInvalidArgument = 3;
constexpr int kPermissionDenied = 7;
constexpr int kFailedPrecondition = 9;
constexpr int kInternal = 13;

template <class Req, class Rep>
void header(const Req& req, Rep* rep) {
  rep->mutable_header()->set_request_id(req.header().request_id());
  rep->mutable_header()->set_server(kServerName);
}

// Commits fx; OK once durable.
void finish_after(Controller& c, Effects fx, Done done) {
  c.commit(std::move(fx), [done = std::move(done)](const Status& st) {
    if (st) {
      done(0, "");
    } else {
      done(kInternal, st.error().message);
    }
  });
}

template <class Results>
void copy_results(Results&& from, google::protobuf::RepeatedPtrField<v1::JobResult>* to) {
  for (auto& r : from) *to->Add() = std::move(r);
}

}  // namespace

Done logged(const google::protobuf::MessageLite& req, const Caller& who, Done done) {
  if (!log_flag(config::flag_protocol()) && !log_enabled(config::kLogDebug2)) return done;
  return [what = req.GetTypeName(), who = who.describe(), t0 = std::chrono::steady_clock::now(),
          done = std::move(done)](int code, const std::string& error) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0);
    log_line("protocol: " + what + " from " + who + ": " +
             (code == 0 ? std::string("OK") : "error " + std::to_string(code) + " (" + error + ")") + ", " +
             std::to_string(us.count()) + " usec");
    done(code, error);
  };
}

void submit(Controller& c, const Caller& caller, const v1::SubmitRequest& req, v1::SubmitReply* rep, Done done) {
  Effects fx;
  // --uid/--gid: a privileged caller submits as that user and group.
  Caller who = caller;
  if (req.job().has_as_uid() || req.job().has_as_gid()) {
    if (!caller.privileged) {
      return done(kPermissionDenied, std::string(kInvalidUserId) + "\ndrover: only root, SlurmUser or an operator may "
                                                                  "submit as another user (--uid/--gid); you are " +
                                         caller.describe());
    }
    who = c.caller_for(req.job().has_as_uid() ? req.job().as_uid() : caller.uid,
                       req.job().has_as_gid() ? req.job().as_gid() : caller.gid);
  }
  // Disk space for the jobs already accepted comes first (a full store stops the controller).
  if (!req.test_only()) {
    if (std::string why = c.state_space_shortage(); !why.empty()) {
      // Slurm's words for a controller that cannot write a job's script, then why.
      return done(kFailedPrecondition,
                  "Batch job submission failed: I/O error writing script/environment to file\ndrover: " + why);
    }
  }
  auto result = c.state().submit(who, req.job(), req.test_only(), c.now(), fx, req.header().request_id());
  if (!result) return done(kInvalidArgument, result.error().message);
  *rep = std::move(*result);
  if (!req.test_only() && log_enabled(config::kLogInfo)) {
    std::string line = "job " + std::to_string(rep->job_id()) + " submitted by " + who.describe();
    if (auto it = c.state().jobs().find(rep->job_id()); it != c.state().jobs().end()) {
      const v1::JobRecord& r = it->second.rec;
      if (!r.array_text().empty()) line += ": Array=" + r.array_text();
      line += (r.array_text().empty() ? ": " : " ") + std::string("Partition=") + r.partition();
    }
    fx.log.emplace_back(config::kLogInfo, std::move(line));
  }
  header(req, rep);
  finish_after(c, std::move(fx), std::move(done));
}

void get_jobs(Controller& c, const Caller& who, const v1::GetJobsRequest& req, v1::GetJobsReply* rep, Done done) {
  int64_t now = c.now();
  if (req.allocator()) {
    for (int64_t id : req.job_ids()) c.state().allocator_heard(who, id, now);
  }
  const auto& jobs = c.state().jobs();
  // A job's script and environment (which may hold a user's secrets) go to
  // its owner and the privileged only, as Slurm's batch script does.
  auto add = [&](const Job& j) {
    if (!c.state().may_see(who, j)) return;  // PrivateData=jobs: as if there were no such job
    *rep->add_jobs() = c.state().job_for_display(j, req.detail(), req.detail() && !req.without_script() && c.state().may_act_on(who, j), now);
  };
  if (req.job_ids().empty() && req.include_finished()) {
    for (const auto& [id, j] : jobs) add(j);  // every job still in memory (MinJobAge), as Slurm's squeue sees
  } else if (req.job_ids().empty()) {
    for (int64_t id : c.state().active()) add(jobs.at(id));
  } else {
    std::set<int64_t> ids;
    for (int64_t id : req.job_ids()) {
      auto arr = c.state().arrays().find(id);
      if (arr != c.state().arrays().end()) ids.insert(arr->second.begin(), arr->second.end());
      ids.insert(id);
    }
    for (int64_t id : ids) {
      auto it = jobs.find(id);
      if (it != jobs.end()) add(it->second);
    }
  }
  rep->set_now(now);
  header(req, rep);
  done(0, "");
}

void cancel(Controller& c, const Caller& who, const v1::CancelRequest& req, v1::CancelReply* rep, Done done) {
  Effects fx;
  copy_results(c.state().cancel(who, req, c.now(), fx), rep->mutable_results());
  header(req, rep);
  finish_after(c, std::move(fx), std::move(done));
}

void control(Controller& c, const Caller& who, const v1::ControlRequest& req, v1::ControlReply* rep, Done done) {
  Effects fx;
  copy_results(c.state().control(who, req, c.now(), fx), rep->mutable_results());
  header(req, rep);
  finish_after(c, std::move(fx), std::move(done));
}

void update_job(Controller& c, const Caller& who, const v1::UpdateJobRequest& req, v1::UpdateJobReply* rep,
                Done done) {
  Effects fx;
  copy_results(c.state().update(who, req, c.now(), fx), rep->mutable_results());
  header(req, rep);
  finish_after(c, std::move(fx), std::move(done));
}

void get_nodes(Controller& c, const Caller& who, const v1::GetNodesRequest& req, v1::GetNodesReply* rep, Done done) {
  // PrivateData=nodes: a plain user sees no node (Slurm's sinfo and scontrol
  // are refused so); the GRES the nodes have (sacctmgr show tres) stay public.
  const bool hidden = c.settings().private_nodes && !who.privileged;
  if (hidden && !req.gres_only()) return done(kPermissionDenied, kAccessDenied);
  int64_t now = c.now();
  std::set<std::string> wanted(req.names().begin(), req.names().end());
  for (auto& n : c.state().node_infos(now)) {
    if (!wanted.empty() && !wanted.count(n.name())) continue;
    if (req.gres_only()) {
      v1::NodeInfo g;
      *g.mutable_gres() = std::move(*n.mutable_gres());
      n = std::move(g);
    }
    *rep->add_nodes() = std::move(n);
  }
  rep->set_now(now);
  header(req, rep);
  done(0, "");
}

void get_partitions(Controller& c, const Caller& who, const v1::GetPartitionsRequest& req, v1::GetPartitionsReply* rep,
                    Done done) {
  if (c.settings().private_partitions && !who.privileged) return done(kPermissionDenied, kAccessDenied);
  for (auto& p : c.state().partitions()) *rep->add_partitions() = std::move(p);
  header(req, rep);
  done(0, "");
}

void update_node(Controller& c, const Caller& who, const v1::UpdateNodeRequest& req, v1::UpdateNodeReply* rep,
                 Done done) {
  Effects fx;
  auto updated = c.state().update_node(who, req, c.now(), fx);
  if (!updated) return done(who.privileged ? kInvalidArgument : kPermissionDenied, updated.error().message);
  for (const auto& n : updated->updated) rep->add_updated(n);
  for (const auto& n : updated->not_resumable) rep->add_not_resumable(n);
  header(req, rep);
  finish_after(c, std::move(fx), std::move(done));
}

void update_partition(Controller& c, const Caller& who, const v1::UpdatePartitionRequest& req,
                      v1::UpdatePartitionReply* rep, Done done) {
  Effects fx;
  if (auto st = c.state().update_partition(who, req, c.now(), fx); !st) {
    return done(who.privileged ? kInvalidArgument : kPermissionDenied, st.error().message);
  }
  header(req, rep);
  finish_after(c, std::move(fx), std::move(done));
}

void get_config(Controller& c, const Caller&, const v1::GetConfigRequest& req, v1::GetConfigReply* rep, Done done) {
  for (auto& e : c.state().config_entries()) *rep->add_entries() = std::move(e);
  for (auto& l : c.state().licenses()) *rep->add_licenses() = std::move(l);
  rep->set_as_of(c.state().config_time());
  rep->set_controller_host(c.settings().shown_host);
  rep->set_slurm_conf_path(c.settings().conf_path);
  header(req, rep);
  done(0, "");
}

void reconfigure(Controller& c, const Caller& who, const v1::ReconfigureRequest& req, v1::ReconfigureReply* rep,
                 Done done) {
  if (!who.privileged) {
    return done(kPermissionDenied, "only root, SlurmUser or an operator may reconfigure; you are " + who.describe());
  }
  auto result = c.reconfigure();
  if (!result) return done(kFailedPrecondition, result.error().message);
  for (const auto& m : *result) rep->add_messages(m);
  header(req, rep);
  done(0, "");
}

void change_reservation(Controller& c, const Caller& who, const v1::ChangeReservationRequest& req,
                        v1::ChangeReservationReply* rep, Done done) {
  Effects fx;
  auto name = c.state().change_reservation(who, req, c.now(), fx);
  if (!name) return done(name.error().code, name.error().message);
  rep->set_name(*name);
  header(req, rep);
  finish_after(c, std::move(fx), std::move(done));
}

void get_reservations(Controller& c, const Caller& who, const v1::GetReservationsRequest& req,
                      v1::GetReservationsReply* rep, Done done) {
  const int64_t now = c.now();
  // PrivateData=reservations: a plain user sees those that admit them (as a
  // job of theirs would be admitted) under their name or one of their accounts.
  const bool own_only = c.settings().private_reservations && !who.privileged;
  std::vector<std::string> accounts = {""};
  if (const v1::UserRecord* u = own_only ? c.state().accounting().user(who.user) : nullptr) {
    for (const auto& a : u->assocs()) accounts.push_back(a.account());
  }
  auto usable = [&](const v1::ReservationInfo& r) {
    auto it = c.state().reservations().find(r.name());
    return it != c.state().reservations().end() &&
           std::any_of(accounts.begin(), accounts.end(),
                       [&](const std::string& a) { return it->second.admits(who.user, a); });
  };
  for (auto& r : c.state().reservation_infos(now)) {
    if (!own_only || usable(r)) *rep->add_reservations() = std::move(r);
  }
  rep->set_now(now);
  header(req, rep);
  done(0, "");
}

void shutdown(Controller& c, const Caller& who, const v1::ShutdownRequest& req, v1::ShutdownReply* rep, Done done) {
  if (!who.privileged) {
    return done(kPermissionDenied,
                "only root, SlurmUser or an operator may shut the cluster down; you are " + who.describe());
  }
  rep->set_agents_told(c.shutdown(req.controller_only(), who.describe()));
  header(req, rep);
  done(0, "");
}

// scontrol setdebug / setdebugflags: the log detail changes at once, for
// every thread that logs; it is not cluster state and is not stored (a
// restart or reconfigure goes back to slurm.conf's, as Slurm's).
void set_debug(Controller& c, const Caller& who, const v1::SetDebugRequest& req, v1::SetDebugReply* rep, Done done) {
  if (!who.privileged) {
    return done(kPermissionDenied,
                "only root, SlurmUser or an operator may change the controller's log detail; you are " +
                    who.describe());
  }
  const Settings& now = c.state().settings();
  int level = now.log_level;
  if (!req.level().empty()) {
    auto parsed = config::parse_debug_level(req.level());
    if (!parsed) return done(kInvalidArgument, "invalid debug level: " + req.level());
    level = *parsed;
  }
  auto add = config::parse_debug_flags(req.add_flags());
  if (!add) return done(kInvalidArgument, add.error().message);
  auto remove = config::parse_debug_flags(req.remove_flags());
  if (!remove) return done(kInvalidArgument, remove.error().message);
  const config::DebugFlags flags = (now.debug_flags | *add) & ~*remove;
  const bool changed = level != now.log_level || flags != now.debug_flags;
  c.state().set_log_settings(level, flags);
  // Said before a lower level would hide it, and after a higher one allows it.
  if (changed) {
    const std::string line = "scontrol setdebug by " + who.describe() + ": SlurmctldDebug=" +
                             std::string(config::debug_level_name(level)) +
                             " DebugFlags=" + config::debug_flags_text(flags);
    set_log_level(std::max(level, log_level()));
    log_line(line);
  }
  set_log_level(level);
  set_log_flags(flags);
  rep->set_level(std::string(config::debug_level_name(level)));
  rep->set_flags(config::debug_flags_text(flags));
  header(req, rep);
  done(0, "");
}

void status(Controller& c, const Caller&, const v1::StatusRequest& req, v1::StatusReply* rep, Done done) {
  *rep = c.state().status(c.now());
  header(req, rep);
  done(0, "");
}

namespace {

// Jobs of the store not in `have`: the named ones (and their arrays'
// elements), or every one that ended at or after `ended_after`.
Status history_from_store(const store::Store& st, const v1::GetJobHistoryRequest& req,
                          const std::function<void(v1::JobRecord&&)>& add) {
  auto visit = [&](store::Record&& r) {
    v1::JobRecord rec;
    if (rec.ParseFromString(r.payload)) add(std::move(rec));
    return true;
  };
  if (req.job_ids().empty()) return st.scan_from(kJobsTable, "end_time", std::max<int64_t>(1, req.ended_after()), visit);
  for (int64_t id : req.job_ids()) {
    auto one = st.get(kJobsTable, store::Key{id});
    if (!one) return one.error();
    if (*one) visit(std::move(**one));
    if (auto s = st.scan_where(kJobsTable, "array_job_id", store::Value{id}, visit); !s) return s;
  }
  return {};
}

// What sreport reads of a job (GetJobHistoryRequest.usage_only); its reservation too.
v1::AccountingJob usage_view(v1::AccountingJob&& full) {
  v1::AccountingJob a;
  const v1::JobRecord& r = full.job();
  v1::JobRecord* j = a.mutable_job();
  j->set_job_id(r.job_id());
  j->set_user(r.user());
  j->set_account(r.account());
  j->set_submit_time(r.submit_time());
  j->set_eligible_time(r.eligible_time());
  j->set_start_time(r.start_time());
  j->set_end_time(r.end_time());
  j->set_state(r.state());
  j->set_restart_count(r.restart_count());
  if (!r.desc().reservation().empty()) j->mutable_desc()->set_reservation(r.desc().reservation());
  a.set_req_cpus(full.req_cpus());
  *a.mutable_alloc_tres() = std::move(*full.mutable_alloc_tres());
  return a;
}

}  // namespace

void get_job_history(Controller& c, const Caller& who, const v1::GetJobHistoryRequest& req,
                     v1::GetJobHistoryReply* rep, Done done) {
  int64_t now = c.now();
  const ControllerState& state = c.state();
  std::map<int64_t, v1::AccountingJob> out;
  Status steps_read;
  // A job's steps: the controller's while it holds the job, else the store's steps table.
  auto steps_of = [&](const v1::JobRecord& r) {
    std::vector<v1::StepInfo> v;
    if (req.usage_only()) return v;
    if (auto it = state.steps().find(r.job_id()); it != state.steps().end()) {
      for (const auto& [id, s] : it->second.steps) v.push_back(s);
      return v;
    }
    if (r.start_time() <= 0) return v;
    auto st = c.store().scan_where(kStepsTable, "job_id", store::Value{r.job_id()}, [&](store::Record&& rec) {
      v1::StepInfo s;
      if (s.ParseFromString(rec.payload)) v.push_back(std::move(s));
      return true;
    });
    if (!st && steps_read) steps_read = st;
    return v;
  };
  // PrivateData=jobs: a plain user's sacct sees only their own jobs; =usage:
  // sreport their own usage; =events: no sacctmgr show event. Slurm takes
  // these from slurmdbd.conf's PrivateData; Drover keeps its accounting
  // itself, so slurm.conf's says them.
  const Settings& priv = state.settings();
  if (priv.private_events && !who.privileged && req.only_events()) return done(kPermissionDenied, kAccessDenied);
  const bool own_only = !who.privileged && (req.usage_only() ? priv.private_usage : priv.private_jobs);
  auto add = [&](const v1::JobRecord& r) {
    if (out.count(r.job_id()) || (own_only && r.uid() != who.uid)) return;
    v1::AccountingJob a = accounting_job(state.bridge(), r, steps_of(r), now);
    if (req.usage_only()) a = usage_view(std::move(a));
    // sacct -B / --env-vars: the caller's own jobs' scripts, or everyone's for the privileged.
    if ((req.with_script() || req.with_environment()) && (who.privileged || r.uid() == who.uid)) {
      a.set_script_env_shown(true);
      if (req.with_script()) a.mutable_job()->mutable_desc()->set_script(r.desc().script());
      if (req.with_environment()) *a.mutable_job()->mutable_desc()->mutable_environment() = r.desc().environment();
    }
    out.emplace(r.job_id(), std::move(a));
  };
  std::set<int64_t> named(req.job_ids().begin(), req.job_ids().end());
  static const std::map<core::JobId, Job> kNoJobs;
  for (const auto& [id, j] : req.only_events() ? kNoJobs : state.jobs()) {
    const v1::JobRecord& r = j.rec;
    bool hit = named.empty() ? !is_final(r.state()) || r.completing() || r.end_time() >= req.ended_after()
                             : named.count(id) || named.count(r.array_job_id());
    if (hit) add(r);
  }
  // What memory has forgotten (MinJobAge) is in the store; memory's copy wins.
  auto st = req.only_events() ? Status{} : history_from_store(c.store(), req, [&](v1::JobRecord&& r) { add(r); });
  if (!st) return done(kInternal, "reading job history from the state store: " + st.error().message);
  if (!steps_read) return done(kInternal, "reading job steps from the state store: " + steps_read.error().message);
  for (auto& [id, a] : out) {
    if (req.duplicates() && a.job().restart_count() > 0) {
      // sacct -D: the job's earlier runs first, in the order they ran.
      std::vector<v1::AccountingJob> runs;
      auto read = c.store().scan_where(kJobRunsTable, "job_id", store::Value{id}, [&](store::Record&& rec) {
        v1::AccountingJob run;
        if (run.ParseFromString(rec.payload)) runs.push_back(std::move(run));
        return true;
      });
      if (!read) return done(kInternal, "reading a requeued job's earlier runs from the state store: " +
                                            read.error().message);
      std::sort(runs.begin(), runs.end(), [](const v1::AccountingJob& x, const v1::AccountingJob& y) {
        return x.job().restart_count() < y.job().restart_count();
      });
      for (auto& run : runs) *rep->add_jobs() = req.usage_only() ? usage_view(std::move(run)) : std::move(run);
    }
    *rep->add_jobs() = std::move(a);
  }
  if (req.with_events()) {
    std::vector<v1::ClusterEvent> events;
    auto add_event = [&](store::Record&& rec) {
      v1::ClusterEvent e;
      if (e.ParseFromString(rec.payload)) events.push_back(std::move(e));
      return true;
    };
    auto read = c.store().scan_where(kEventsTable, "end_time", store::Value{int64_t{0}}, add_event);
    if (read) read = c.store().scan_from(kEventsTable, "end_time", std::max<int64_t>(1, req.ended_after()), add_event);
    if (!read) return done(kInternal, "reading the cluster's events from the state store: " + read.error().message);
    std::stable_sort(events.begin(), events.end(), [](const v1::ClusterEvent& x, const v1::ClusterEvent& y) {
      return x.start_time() != y.start_time() ? x.start_time() < y.start_time() : x.node() < y.node();
    });
    for (auto& e : events) *rep->add_events() = std::move(e);
  }
  rep->set_now(now);
  header(req, rep);
  done(0, "");
}

void diag(Controller& c, const Caller& who, const v1::DiagRequest& req, v1::DiagReply* rep, Done done) {
  if (req.reset()) {
    if (!who.privileged) return done(kPermissionDenied, "Access/permission denied");
    c.state().reset_statistics(c.now());
  }
  *rep = c.state().diag(c.now());
  store::StoreStats st = c.store().stats();
  rep->set_store_commits(static_cast<int64_t>(st.commits));
  rep->set_store_batches(static_cast<int64_t>(st.batches));
  rep->set_store_commit_us(static_cast<int64_t>(st.commit_micros));
  header(req, rep);
  done(0, "");
}

void get_associations(Controller& c, const Caller& who, const v1::GetAssociationsRequest& req,
                      v1::GetAssociationsReply* rep, Done done) {
  const Settings& priv = c.settings();
  const bool plain = !who.privileged;
  // PrivateData=accounts: no account list for a plain user (Drover has no coordinators).
  if (plain && priv.private_accounts && req.view() == v1::GetAssociationsRequest::ACCOUNTS) {
    return done(kPermissionDenied, kAccessDenied);
  }
  *rep = c.state().accounting().snapshot();
  // PrivateData=users: their own user record; for associations, their own
  // and the accounts above them, as slurmdbd lists them.
  if (plain && priv.private_users &&
      (req.view() == v1::GetAssociationsRequest::USERS || req.view() == v1::GetAssociationsRequest::ASSOCIATIONS)) {
    auto* users = rep->mutable_users();
    users->erase(std::remove_if(users->begin(), users->end(),
                                [&](const v1::UserRecord& u) { return u.name() != who.user; }),
                 users->end());
    if (req.view() == v1::GetAssociationsRequest::ASSOCIATIONS) {
      std::map<std::string, std::string> parent;
      for (const auto& a : rep->accounts()) parent[a.name()] = a.parent();
      std::set<std::string> keep;
      for (const auto& u : rep->users()) {
        for (const auto& as : u.assocs()) {
          for (std::string a = as.account(); !a.empty() && keep.insert(a).second;) a = parent[a];
        }
      }
      auto* accounts = rep->mutable_accounts();
      accounts->erase(std::remove_if(accounts->begin(), accounts->end(),
                                     [&](const v1::AccountRecord& a) { return !keep.count(a.name()); }),
                      accounts->end());
    }
  }
  rep->set_cluster(c.settings().cluster_name);
  header(req, rep);
  done(0, "");
}

void modify_associations(Controller& c, const Caller& who, const v1::ModifyAssociationsRequest& req,
                         v1::ModifyAssociationsReply* rep, Done done) {
  Effects fx;
  auto change = c.state().modify_associations(who, req, c.now(), fx);
  if (!change) return done(who.privileged ? kInvalidArgument : kPermissionDenied, change.error().message);
  for (const auto& l : change->lines) rep->add_lines(l);
  rep->set_unchanged(change->unchanged);
  rep->set_denied(change->denied);
  header(req, rep);
  finish_after(c, std::move(fx), std::move(done));
}

void get_priorities(Controller& c, const Caller& who, const v1::GetPrioritiesRequest& req,
                    v1::GetPrioritiesReply* rep, Done done) {
  *rep = c.state().priorities(c.now());
  auto* rows = rep->mutable_jobs();
  rows->erase(std::remove_if(rows->begin(), rows->end(),
                             [&](const v1::PriorityFactors& f) { return !c.state().may_see(who, f.job_id()); }),
              rows->end());
  header(req, rep);
  done(0, "");
}

void get_shares(Controller& c, const Caller& who, const v1::GetSharesRequest& req, v1::GetSharesReply* rep, Done done) {
  *rep = c.state().shares(c.now());
  // PrivateData=usage: a plain user's own rows only (no account's), not
  // indented under the accounts left out, as Slurm's sshare shows them.
  if (c.settings().private_usage && !who.privileged) {
    auto* rows = rep->mutable_rows();
    rows->erase(std::remove_if(rows->begin(), rows->end(),
                               [&](const v1::ShareRow& r) { return r.user().empty() || r.user() != who.user; }),
                rows->end());
    for (auto& r : *rows) r.set_depth(0);
  }
  header(req, rep);
  done(0, "");
}

}  // namespace drover::ctld::methods
