// Checks of scheduling policy against the seed's starvation pitfalls:
// "backfill off -> small jobs queue long" and "no priority config -> big jobs
// starve small ones" (fix: QOS + multifactor priority with age decay).
#include <unistd.h>

#include <algorithm>

#include "common/rlimits.hpp"
#include "common/site_script.hpp"
#include "common/strings.hpp"
#include "config/acct_gather.hpp"
#include "config/core_cluster.hpp"
#include "config/debug_levels.hpp"
#include "config/exit_codes.hpp"
#include "config/health_states.hpp"
#include "config/doctor_internal.hpp"

namespace drover::config::doctor {
namespace {

// "normal=1000, training=3000, debug=5000" when QOS priorities differ; empty otherwise.
std::string distinct_qos_priorities(const ClusterConfig& cfg) {
  std::set<int64_t> values;
  std::vector<std::string> parts;
  for (const auto& q : cfg.qos) {
    values.insert(q.priority);
    parts.push_back(q.name + "=" + std::to_string(q.priority));
  }
  return values.size() > 1 ? join(parts, ", ") : std::string{};
}

// Where a key was written, else `fallback` (the line that turned the feature on).
SourceLoc written_or(const ClusterConfig& cfg, const std::string& key, const SourceLoc& fallback) {
  return global_written(cfg, key) ? global_loc(cfg, key) : fallback;
}

void backfill(const Facts& f, Diagnostics& out) {
  if (!iequals(f.cfg.scheduler_type, "sched/builtin")) return;
  out.add(Severity::kWarning, "backfill-off", global_loc(f.cfg, "SchedulerType"), "SchedulerType",
          "SchedulerType=sched/builtin starts jobs strictly in priority order: while the first job in the queue "
          "waits for resources nothing behind it starts, so small jobs that would fit in the idle gaps queue "
          "behind big ones (seed pitfall: backfill off, small jobs queue long)",
          "SchedulerType=sched/backfill: small jobs then fill the gaps without delaying the big job's start");
}

void priority_type(const Facts& f, Diagnostics& out) {
  const auto& cfg = f.cfg;
  if (iequals(cfg.priority_type, "priority/multifactor")) return;
  const bool written = global_written(cfg, "PriorityType");
  std::string what = written ? "PriorityType=" + cfg.priority_type
                             : "PriorityType is not set, so it is " + cfg.priority_type + ", which";
  std::string qos = distinct_qos_priorities(cfg);
  out.add(Severity::kWarning, "priority-not-multifactor", global_loc(cfg, "PriorityType"), "PriorityType",
          what + " orders jobs by submission time alone: waiting time, fair share and QOS priority" +
              (qos.empty() ? "" : " (" + qos + ")") +
              " count for nothing, so whoever submits many big jobs first holds the cluster and small jobs "
              "starve behind them (seed pitfall: no priority config)",
          "PriorityType=priority/multifactor with PriorityWeightAge, PriorityWeightFairshare and "
          "PriorityWeightQOS above 0");
}

bool all_weights_zero(const ClusterConfig& cfg) {
  if (cfg.priority_weight_age || cfg.priority_weight_fairshare || cfg.priority_weight_job_size ||
      cfg.priority_weight_partition || cfg.priority_weight_qos)
    return false;
  for (const auto& [tres, w] : cfg.priority_weight_tres) {
    if (w > 0) return false;
  }
  return true;
}

void weights(const Facts& f, Diagnostics& out) {
  const auto& cfg = f.cfg;
  if (!iequals(cfg.priority_type, "priority/multifactor")) return;
  const SourceLoc at = global_loc(cfg, "PriorityType");
  if (all_weights_zero(cfg)) {
    std::string qos = distinct_qos_priorities(cfg);
    out.add(Severity::kWarning, "priority-weights-zero", at, "PriorityType",
            "PriorityType=priority/multifactor but every PriorityWeight* is 0 (the default): all jobs get the "
            "same priority, so waiting time, fair share and QOS priority" +
                (qos.empty() ? "" : " (" + qos + ")") +
                " count for nothing and big jobs can starve small ones (seed pitfall: no priority config)",
            "set the weights, e.g. PriorityWeightAge=1000 PriorityWeightFairshare=10000 PriorityWeightQOS=10000 "
            "(their ratios are what matter)");
    return;
  }
  if (cfg.priority_weight_age == 0) {
    out.add(Severity::kWarning, "priority-no-age", written_or(cfg, "PriorityWeightAge", at), "PriorityWeightAge",
            "PriorityWeightAge is 0: a job gains nothing by waiting, so a big job can be passed over by newer "
            "work indefinitely (the seed's fix for starvation is multifactor priority with age)",
            "PriorityWeightAge=1000 (or more) so that waiting jobs rise in the queue");
  } else if (cfg.priority_max_age == 0) {
    out.add(Severity::kWarning, "priority-no-age", global_loc(cfg, "PriorityMaxAge"), "PriorityMaxAge",
            "PriorityMaxAge=0 leaves the age factor no range to grow in: older jobs gain nothing over newer ones, "
            "so PriorityWeightAge=" + std::to_string(cfg.priority_weight_age) + " has no effect",
            "PriorityMaxAge=7-0 (Slurm's default): the age factor then grows over a week of waiting");
  }
  std::string qos = distinct_qos_priorities(cfg);
  if (cfg.priority_weight_qos == 0 && !qos.empty()) {
    auto& d = out.add(Severity::kWarning, "qos-priority-unused", written_or(cfg, "PriorityWeightQOS", at),
                      "PriorityWeightQOS",
                      "the QOS priorities differ (" + qos + ") but PriorityWeightQOS is 0, so they do not change "
                      "the order of jobs",
                      "PriorityWeightQOS=10000 (or another value above 0)");
    for (const auto& q : cfg.qos) d.related.push_back(key_loc(q.key_locs, "Priority", q.loc));
  }
}

// Prolog= and Epilog= name programs every node runs as root around each
// job; one that cannot run fails every job's Prolog (each node it lands on
// drains, the job is requeued held) or Epilog (the node drains); a
// HealthCheckProgram that cannot run checks nothing. PrologSlurmctld and
// EpilogSlurmctld run on the controller's host. Checked on the host that
// runs the check: say so when it is missing or not executable.
void job_scripts_present(const Facts& f, Diagnostics& out) {
  for (const char* k : {"Prolog", "Epilog", "HealthCheckProgram", "TaskProlog", "TaskEpilog", "PrologSlurmctld",
                        "EpilogSlurmctld"}) {
    const std::string spec = f.cfg.passive_text(k);
    if (spec.empty()) continue;
    const SourceLoc loc = f.cfg.passive_loc(k);
    const std::string key = k;
    const bool per_task = key == "TaskProlog" || key == "TaskEpilog";
    const bool controller = key == "PrologSlurmctld" || key == "EpilogSlurmctld";
    const bool pattern = (key == "Prolog" || key == "Epilog") && spec.find_first_of("*?[") != std::string::npos;
    const char* fails = key == "Prolog" ? "each job's Prolog fails: every node it lands on drains (\"Prolog error\") and "
                                          "the job is requeued held"
                        : key == "Epilog" ? "each job's Epilog fails: every node drains (\"Epilog error\") as its first "
                                            "job ends"
                        : key == "TaskProlog" ? "every task fails before it starts (exit 127, \"TaskProlog failed\" on "
                                                "its stderr)"
                        : key == "TaskEpilog" ? "it fails after every task (\"TaskEpilog failed\" on the task's stderr)"
                        : key == "PrologSlurmctld" ? "it fails as each job starts: every batch job is requeued held "
                                                     "(\"launch failed requeued held\") and every other job cancelled"
                        : key == "EpilogSlurmctld" ? "it fails as each job ends (logged), doing nothing"
                                                   : "the health check fails on every node (logged) and checks nothing";
    if (spec.front() != '/') {
      out.add(Severity::kWarning, "script-not-absolute", loc, k,
              std::string(k) + "=" + spec + " is not an absolute path: the " + (controller ? "controller" : "agents") +
                  " run" + (controller ? "s" : "") + " it from " + (per_task ? "each job's working directory" : "/") +
                  ", where it is not found and " + fails,
              std::string("give the full path, e.g. ") + k + "=/etc/slurm/" + spec);
      continue;
    }
    const std::vector<std::string> programs = pattern ? script_programs(spec) : std::vector<std::string>{spec};
    if (pattern && programs.empty()) {
      out.add(Severity::kWarning, "script-missing", loc, k,
              std::string(k) + "=" + spec + " matches no file on this host: no " + k + " runs on a node where it "
              "matches none either",
              "put the scripts in place on every node, or remove the key");
      continue;
    }
    for (const auto& p : programs) {
      if (access(p.c_str(), X_OK) == 0) continue;
      const bool absent = access(p.c_str(), F_OK) != 0;
      out.add(Severity::kWarning, "script-missing", loc, k,
              std::string(k) + " program " + p + (absent ? " does not exist" : " is not executable") +
                  " on this host; if it is the same on the " + (controller ? "controller's host" : "nodes") + ", " +
                  fails,
              absent ? (controller ? "install it on the controller's host, or remove the key"
                                   : "install it on every node (the same path), or remove the key")
                     : "chmod 755 " + p + (controller ? " on the controller's host" : " on every node"));
    }
  }
}

// HealthCheckNodeState's words; the agents would ignore a wrong one and run
// the program in every state.
void health_check_states(const Facts& f, Diagnostics& out) {
  const std::string* v = f.cfg.passive("HealthCheckNodeState");
  if (!v) return;
  auto parsed = parse_health_states(*v);
  if (parsed) return;
  out.add(Severity::kError, "health-state-unknown", f.cfg.passive_loc("HealthCheckNodeState"), "HealthCheckNodeState",
          "HealthCheckNodeState=" + *v + ": " + parsed.error().message,
          "HealthCheckNodeState=IDLE,MIXED (or ANY, the default)");
}

// JobAcctGatherFrequency the agents cannot read: they would sample every 30 s.
void acct_gather_frequency(const Facts& f, Diagnostics& out) {
  const std::string* v = f.cfg.passive("JobAcctGatherFrequency");
  if (!v) return;
  auto n = task_sampling_interval(*v);
  if (n && *n >= 0) return;
  out.add(Severity::kError, "acct-gather-frequency", f.cfg.passive_loc("JobAcctGatherFrequency"),
          "JobAcctGatherFrequency",
          "JobAcctGatherFrequency=" + *v + ": " + (n ? std::string("a negative interval") : n.error().message) +
              "; the agents would sample each task every 30 s",
          "JobAcctGatherFrequency=30 (or task=30; 0: only as tasks end)");
}

// The daemons' log levels and DebugFlags: Slurm's daemons refuse to start
// on a word they do not know; Drover's controller would log at info instead.
void log_settings(const Facts& f, Diagnostics& out) {
  for (const char* key : {"SlurmctldDebug", "SlurmdDebug", "SlurmctldSyslogDebug", "SlurmdSyslogDebug"}) {
    const std::string* v = f.cfg.passive(key);
    if (!v || parse_debug_level(*v)) continue;
    out.add(Severity::kError, "debug-level-unknown", f.cfg.passive_loc(key), key,
            std::string(key) + "=" + *v + " is not a log level (Slurm's daemons would not start)",
            std::string(key) + "=info (or quiet, fatal, error, verbose, debug, debug2 .. debug5, or 0-9)");
  }
  if (const std::string* v = f.cfg.passive("DebugFlags")) {
    if (auto flags = parse_debug_flags(*v); !flags) {
      out.add(Severity::kError, "debug-flag-unknown", f.cfg.passive_loc("DebugFlags"), "DebugFlags",
              "DebugFlags=" + *v + ": " + flags.error().message + " (Slurm's daemons would not start)",
              "remove it, or name the subsystems of `man slurm.conf` (Backfill, Priority, Protocol, TraceJobs, ...)");
    }
  }
}

// The controller's whole-number keys (ctld/settings.cpp): it would not start
// on anything else.
void whole_number_keys(const Facts& f, Diagnostics& out) {
  for (const char* key : {"SlurmdTimeout", "ReturnToService", "JobRequeue", "FirstJobId", "JobFileAppend",
                          "KillOnBadExit", "InactiveLimit"}) {
    const std::string* v = f.cfg.passive(key);
    if (!v || parse_int(*v)) continue;
    out.add(Severity::kError, "whole-number-expected", f.cfg.passive_loc(key), key,
            std::string(key) + "=" + *v + " is not a whole number (the controller would not start)",
            std::string_view(key) == "InactiveLimit"
                ? std::string(key) + "=0 (never) or a number of seconds"
                : std::string(key) + "=0 or 1 (or a number of seconds for SlurmdTimeout)");
  }
}

// RequeueExit/RequeueExitHold the controller cannot read: it would not start.
void requeue_exit_codes(const Facts& f, Diagnostics& out) {
  for (const char* key : {"RequeueExit", "RequeueExitHold"}) {
    const std::string* v = f.cfg.passive(key);
    if (!v) continue;
    if (auto codes = parse_exit_codes(*v); !codes) {
      out.add(Severity::kError, "requeue-exit-invalid", f.cfg.passive_loc(key), key,
              std::string(key) + "=" + *v + ": " + codes.error().message + " (the controller would not start)",
              std::string(key) + "=1-9,18 (exit codes 0-255, comma-separated, ranges lo-hi)");
    }
  }
}

// PropagateResourceLimits(Except) that the controller would not start on.
void propagation(const Facts& f, Diagnostics& out) {
  const char* key = f.cfg.passive("PropagateResourceLimitsExcept") ? "PropagateResourceLimitsExcept"
                                                                   : "PropagateResourceLimits";
  if (auto chosen = check_propagation_keys(f.cfg.passive_text("PropagateResourceLimits"),
                                           f.cfg.passive_text("PropagateResourceLimitsExcept"));
      !chosen) {
    out.add(Severity::kError, "propagate-invalid", f.cfg.passive_loc(key), key,
            chosen.error().message + " (the controller would not start)",
            "PropagateResourceLimits=ALL, NONE or a comma list of AS, CORE, CPU, DATA, FSIZE, MEMLOCK, NOFILE, "
            "NPROC, RSS, STACK; or PropagateResourceLimitsExcept= such a list");
  }
}

// A PrivateData word that is none of Slurm's hides nothing.
void private_data(const Facts& f, Diagnostics& out) {
  const std::string* v = f.cfg.passive("PrivateData");
  if (!v) return;
  static const char* const kWords[] = {"accounts", "cloud", "events", "jobs", "nodes",
                                       "partitions", "reservations", "usage", "users"};
  std::vector<std::string> unknown;
  for (const auto& raw : split(*v, ',')) {
    const std::string word(trim(raw));
    if (word.empty()) continue;
    if (std::none_of(std::begin(kWords), std::end(kWords), [&](const char* k) { return iequals(word, k); })) {
      unknown.push_back(word);
    }
  }
  if (unknown.empty()) return;
  out.add(Severity::kWarning, "private-data-unknown", f.cfg.passive_loc("PrivateData"), "PrivateData",
          "PrivateData=" + *v + ": " + join(unknown, ", ") + (unknown.size() == 1 ? " is not a word" : " are not words") +
              " it takes, and hide" + (unknown.size() == 1 ? "s" : "") + " nothing",
          "its words: accounts, cloud, events, jobs, nodes, partitions, reservations, usage, users");
}

// PriorityFlags other than NO_NORMAL_PART, _QOS, _TRES, _ALL,
// SMALL_RELATIVE_TO_TIME, ACCRUE_ALWAYS, MAX_TRES, INCR_ONLY and
// CALCULATE_RUNNING change nothing in Drover.
// FAIR_TREE names what is the default anyway.
void priority_flags(const Facts& f, Diagnostics& out) {
  std::vector<std::string> inert;
  for (const std::string& flag : f.cfg.priority_flags) {
    const bool built = (flag.starts_with("NO_NORMAL_") && flag != "NO_NORMAL_ASSOC") || flag == "FAIR_TREE" ||
                       flag == "SMALL_RELATIVE_TO_TIME" || flag == "ACCRUE_ALWAYS" || flag == "MAX_TRES" ||
                       flag == "INCR_ONLY" || flag == "CALCULATE_RUNNING";
    if (!built) inert.push_back(flag);  // NO_NORMAL_ASSOC: PriorityWeightAssoc has no effect in Drover
  }
  if (inert.empty()) return;
  out.add(Severity::kWarning, "priority-flag-not-built", global_loc(f.cfg, "PriorityFlags"), "PriorityFlags",
          "PriorityFlags: " + join(inert, ", ") + (inert.size() == 1 ? " is" : " are") +
              " not built in Drover: priorities are computed as without " + (inert.size() == 1 ? "it" : "them"),
          "remove " + std::string(inert.size() == 1 ? "it" : "them") +
              " (Drover acts on NO_NORMAL_PART, NO_NORMAL_QOS, NO_NORMAL_TRES, NO_NORMAL_ALL, "
              "SMALL_RELATIVE_TO_TIME, ACCRUE_ALWAYS, MAX_TRES, INCR_ONLY and CALCULATE_RUNNING)");
}

// A PreemptMode Drover does not build: SUSPEND and GANG.
bool mode_not_built(const std::string& mode) {
  const core::PreemptMode m = preempt_mode_value(mode);
  return m == core::PreemptMode::kSuspend || m == core::PreemptMode::kGang;
}

void mode_not_built_warning(Diagnostics& out, const SourceLoc& at, const std::string& where, const std::string& mode) {
  out.add(Severity::kWarning, "preempt-mode-not-built", at, "PreemptMode",
          where + "PreemptMode=" + mode + ": Drover does not build suspension or gang scheduling, so the jobs "
              "this mode would preempt keep running",
          "PreemptMode=REQUEUE (preempted jobs go back to the queue) or CANCEL (they end PREEMPTED)");
}

// Preemption settings that preempt nothing, or in a way Drover does not build.
void preemption(const Facts& f, Diagnostics& out) {
  const ClusterConfig& cfg = f.cfg;
  const bool on = !iequals(cfg.preempt_type, "preempt/none");
  if (on && mode_not_built(cfg.preempt_mode)) {
    mode_not_built_warning(out, global_loc(cfg, "PreemptMode"), "", cfg.preempt_mode);
  }
  for (const auto& p : cfg.partitions) {
    if (on && !p.preempt_mode.empty() && mode_not_built(p.preempt_mode)) {
      mode_not_built_warning(out, key_loc(p.key_locs, "PreemptMode", p.loc), "partition " + p.name + ": ",
                             p.preempt_mode);
    }
  }
  bool qos_mode = false;
  for (const auto& q : cfg.qos) {
    qos_mode = qos_mode || (!q.preempt_mode.empty() && preempt_mode_value(q.preempt_mode) != core::PreemptMode::kOff);
    if (on && !q.preempt_mode.empty() && mode_not_built(q.preempt_mode)) {
      mode_not_built_warning(out, key_loc(q.key_locs, "PreemptMode", q.loc), "QOS " + q.name + ": ", q.preempt_mode);
    }
    for (const auto& name : q.preempt) {
      if (cfg.find_qos(name)) continue;
      out.add(Severity::kError, "preempt-unknown-qos", key_loc(q.key_locs, "Preempt", q.loc), "Preempt",
              "QOS " + q.name + ": Preempt=" + join(q.preempt, ",") + " names QOS " + name + ", which is not defined",
              "name QOS defined in qos.conf (or by sacctmgr add qos)");
    }
    if (!q.preempt.empty() && !iequals(cfg.preempt_type, "preempt/qos")) {
      out.add(Severity::kWarning, "preempt-no-effect", key_loc(q.key_locs, "Preempt", q.loc), "Preempt",
              "QOS " + q.name + ": Preempt=" + join(q.preempt, ",") + " has no effect while PreemptType=" +
                  cfg.preempt_type,
              "PreemptType=preempt/qos in slurm.conf");
    }
  }
  const bool partition_mode = std::any_of(cfg.partitions.begin(), cfg.partitions.end(), [](const auto& p) {
    return !p.preempt_mode.empty() && preempt_mode_value(p.preempt_mode) != core::PreemptMode::kOff;
  });
  const bool some_mode = iequals(cfg.preempt_type, "preempt/qos") ? qos_mode : partition_mode;
  if (on && preempt_mode_value(cfg.preempt_mode) == core::PreemptMode::kOff && !some_mode) {
    out.add(Severity::kWarning, "preempt-no-effect", global_loc(cfg, "PreemptType"), "PreemptType",
            "PreemptType=" + cfg.preempt_type + " with PreemptMode=OFF preempts nothing",
            "PreemptMode=REQUEUE or CANCEL");
  }
}

}  // namespace

void check_policy(const Facts& f, Diagnostics& out) {
  backfill(f, out);
  priority_type(f, out);
  weights(f, out);
  job_scripts_present(f, out);
  health_check_states(f, out);
  acct_gather_frequency(f, out);
  log_settings(f, out);
  requeue_exit_codes(f, out);
  propagation(f, out);
  private_data(f, out);
  priority_flags(f, out);
  whole_number_keys(f, out);
  preemption(f, out);
}

}  // namespace drover::config::doctor
