// Checks of scheduling policy against the seed's starvation pitfalls:
// "backfill off -> small jobs queue long" and "no priority config -> big jobs
// starve small ones" (fix: QOS + multifactor priority with age decay).
#include "common/strings.hpp"
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

// Prolog, Epilog and the other site scripts are accepted but not run: what
// a site counts on them for silently does not happen, so say so once.
void scripts_not_run(const Facts& f, Diagnostics& out) {
  static const char* const kScripts[] = {"Prolog",     "Epilog",     "PrologSlurmctld", "EpilogSlurmctld",
                                         "TaskProlog", "TaskEpilog", "SrunProlog",      "SrunEpilog",
                                         "HealthCheckProgram"};
  std::vector<std::string> set;
  SourceLoc first{f.cfg.slurm_conf_path, 0, 0};
  for (const char* k : kScripts) {
    const std::string* v = f.cfg.passive(k);
    if (!v || v->empty()) continue;
    if (set.empty()) {
      if (auto it = f.cfg.passive_locs.find(k); it != f.cfg.passive_locs.end()) first = it->second;
    }
    set.push_back(std::string(k) + "=" + *v);
  }
  if (set.empty()) return;
  out.add(Severity::kWarning, "scripts-not-run", first, set.front().substr(0, set.front().find('=')),
          join(set, ", ") + (set.size() == 1 ? " is" : " are") +
              " set, but Drover runs no prolog, epilog or health-check scripts: what they do here (checking a "
              "node and draining it when it is bad, cleaning /tmp or GPU state between jobs, preparing job "
              "directories) does not happen",
          "do that work another way (in the jobs' own scripts, or a periodic check on each node that runs "
          "scontrol update NodeName=... State=DRAIN Reason=...), and remove the keys");
}

}  // namespace

void check_policy(const Facts& f, Diagnostics& out) {
  backfill(f, out);
  priority_type(f, out);
  weights(f, out);
  scripts_not_run(f, out);
}

}  // namespace drover::config::doctor
