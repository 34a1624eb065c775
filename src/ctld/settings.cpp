// Controller settings from slurm.conf. Keys the config module keeps only as
// written (SlurmdTimeout, ReturnToService, JobRequeue, AuthInfo,
// SlurmctldParameters, AccountingStorageEnforce) are read from
// ClusterConfig::passive_values.
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "common/rlimits.hpp"
#include "common/strings.hpp"
#include "config/debug_levels.hpp"
#include "config/exit_codes.hpp"
#include "config/health_states.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

Result<int64_t> int_key(const config::ClusterConfig& cfg, const char* key, int64_t fallback) {
  const std::string* v = cfg.passive(key);
  if (!v) return fallback;
  auto n = parse_int(*v);
  if (!n) {
    const SourceLoc loc = cfg.passive_loc(key);
    return make_error((loc.known() ? loc.str() : cfg.slurm_conf_path) + ": " + key + "=" + *v +
                      ": expected a whole number");
  }
  return *n;
}

Result<std::set<uint32_t>> operator_uids(const config::ClusterConfig& cfg) {
  std::set<uint32_t> out;
  auto names = cfg.passive_item("SlurmctldParameters", "drover_operators");
  if (!names) return out;
  for (const auto& name : split(*names, ':')) {
    if (name.empty()) continue;
    if (auto uid = parse_int(name)) {
      out.insert(static_cast<uint32_t>(*uid));
      continue;
    }
    struct passwd* pw = getpwnam(name.c_str());
    if (!pw) {
      return make_error("SlurmctldParameters=drover_operators names user '" + name + "', who has no passwd entry on " +
                        "this host; fix the name or create the user");
    }
    out.insert(pw->pw_uid);
  }
  return out;
}

}  // namespace

Result<Settings> settings_from_config(const config::ClusterConfig& cfg, const std::string& conf_path) {
  Settings s;
  s.conf_path = conf_path;
  s.cluster_name = cfg.cluster_name;
  // Slurm's plugin ids: select/cons_tres 109 ("anchor:localhost:6817:9728:109"
  // on the anchor cluster), cons_res 101, linear 102.
  const int select_id = cfg.select_type == "select/linear" ? 102 : cfg.select_type == "select/cons_res" ? 101 : 109;
  s.working_cluster = fmt::format("{}:{}:{}:9728:{}", cfg.cluster_name, cfg.controller_host(), cfg.slurmctld_port, select_id);
  if (const std::string* prog = cfg.passive("MailProg"); prog && !prog->empty()) s.mail_prog = *prog;
  if (const std::string* domain = cfg.passive("MailDomain")) s.mail_domain = *domain;
  s.prolog = !cfg.passive_text("Prolog").empty();
  s.epilog = !cfg.passive_text("Epilog").empty();
  s.prolog_slurmctld = cfg.passive_text("PrologSlurmctld");
  s.epilog_slurmctld = cfg.passive_text("EpilogSlurmctld");
  s.nohold_on_prolog_fail = cfg.sched.nohold_on_prolog_fail;
  if (const std::string* flags = cfg.passive("PrologFlags")) {
    s.prolog_alloc = list_has(*flags, "Alloc") || list_has(*flags, "Contain");
  }
  const std::string* health_states = cfg.passive("HealthCheckNodeState");
  if (!cfg.passive_text("HealthCheckProgram").empty() && health_states) {
    auto h = config::parse_health_states(*health_states);
    s.health_states = h && !h->any;
  }
  s.state_dir = cfg.state_save_location;
  s.log_file = cfg.passive_text("SlurmctldLogFile");
  s.pid_file = cfg.passive_text("SlurmctldPidFile");
  const std::string private_data = cfg.passive_text("PrivateData");
  s.private_jobs = list_has(private_data, "jobs");
  s.private_nodes = list_has(private_data, "nodes");
  s.private_partitions = list_has(private_data, "partitions");
  s.private_reservations = list_has(private_data, "reservations");
  s.private_usage = list_has(private_data, "usage");
  s.private_users = list_has(private_data, "users");
  s.private_accounts = list_has(private_data, "accounts");
  s.private_events = list_has(private_data, "events");
  s.socket_path = s.state_dir + "/ctld.sock";
  if (!cfg.slurmctld_hosts.empty()) {
    s.host = cfg.controller_host();
    s.tcp_address = s.host + ":" + std::to_string(cfg.slurmctld_port);
  }
  // Slurm names the controller by SlurmctldHost's name (not the address in
  // name(address)), and one named "localhost" by this host's short name
  // (`scontrol ping`: "Slurmctld(primary) at vm is UP").
  s.shown_host = cfg.slurmctld_hosts.empty() ? s.host
                                             : cfg.slurmctld_hosts.front().substr(0, cfg.slurmctld_hosts.front().find('('));
  if (s.shown_host == "localhost") {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') {
      s.shown_host = std::string(name).substr(0, std::string(name).find('.'));
    }
  }
  s.key_path = cfg.auth_key_path();
  struct passwd* pw = getpwnam(cfg.slurm_user.c_str());
  if (!pw) {
    return make_error("SlurmUser=" + cfg.slurm_user + " in " + conf_path +
                      " has no passwd entry on this host; create the user or set SlurmUser=root");
  }
  s.slurm_user_uid = pw->pw_uid;
  auto ops = operator_uids(cfg);
  if (!ops) return ops.error();
  s.operator_uids = std::move(*ops);
  auto timeout = int_key(cfg, "SlurmdTimeout", 300);
  auto rts = int_key(cfg, "ReturnToService", 0);
  auto requeue = int_key(cfg, "JobRequeue", 1);
  auto first_id = int_key(cfg, "FirstJobId", 1);
  auto file_append = int_key(cfg, "JobFileAppend", 0);
  auto bad_exit = int_key(cfg, "KillOnBadExit", 0);
  auto inactive = int_key(cfg, "InactiveLimit", 0);
  for (auto* r : {&timeout, &rts, &requeue, &first_id, &file_append, &bad_exit, &inactive}) {
    if (!*r) return r->error();
  }
  s.inactive_limit_s = *inactive;  // parse_int takes no sign
  if (*first_id < 1) return make_error("FirstJobId=" + std::to_string(*first_id) + " in " + cfg.slurm_conf_path +
                                       ": must be 1 or more");
  s.first_job_id = *first_id;
  s.slurmd_timeout_s = std::max<int64_t>(*timeout, 2);
  s.heartbeat_s = std::clamp<int64_t>(s.slurmd_timeout_s / 6, 1, 30);
  s.return_to_service = *rts >= 1;
  s.job_requeue = *requeue != 0;
  s.job_file_append = *file_append == 1;
  s.kill_on_bad_exit = *bad_exit == 1;
  if (auto expire = cfg.passive_item("AuthInfo", "cred_expire")) {
    auto n = parse_int(*expire);
    if (!n || *n < 1) {
      const SourceLoc loc = cfg.passive_loc("AuthInfo");
      return make_error((loc.known() ? loc.str() : conf_path) + ": AuthInfo cred_expire=" + *expire +
                        " is not a number of seconds (1 or more)");
    }
    s.requeue_wait_s = *n + 1;
  }
  for (auto [key, codes] : {std::pair{"RequeueExit", &s.requeue_exit}, std::pair{"RequeueExitHold", &s.requeue_exit_hold}}) {
    const std::string* v = cfg.passive(key);
    if (!v) continue;
    auto parsed = config::parse_exit_codes(*v);
    if (!parsed) {
      const SourceLoc loc = cfg.passive_loc(key);
      return make_error((loc.known() ? loc.str() : conf_path) + ": " + key + "=" + *v + ": " + parsed.error().message);
    }
    *codes = *parsed;
  }
  // sbatch and srun act on them, and would refuse every submission over a bad one.
  if (auto prop = check_propagation_keys(cfg.passive_text("PropagateResourceLimits"),
                                         cfg.passive_text("PropagateResourceLimitsExcept"));
      !prop) {
    const SourceLoc loc = cfg.passive_loc(cfg.passive("PropagateResourceLimitsExcept") ? "PropagateResourceLimitsExcept"
                                                                                      : "PropagateResourceLimits");
    return make_error((loc.known() ? loc.str() : conf_path) + ": " + prop.error().message);
  }
  if (const std::string* dp = cfg.passive("DependencyParameters")) s.kill_invalid_depend = list_has(*dp, "kill_invalid_depend");
  s.calculate_running = std::find(cfg.priority_flags.begin(), cfg.priority_flags.end(), "CALCULATE_RUNNING") !=
                        cfg.priority_flags.end();
  s.min_job_age_s = cfg.min_job_age;
  s.kill_wait_s = cfg.kill_wait;
  s.max_array_size = cfg.max_array_size;
  s.max_script_size = cfg.sched.max_script_size;
  s.max_job_count = cfg.max_job_count;
  s.bf_interval_s = std::max<int64_t>(cfg.sched.bf_interval, 1);
  // SlurmctldDebug and DebugFlags: Slurm's controller does not start on a word it does not know.
  auto where = [&](const char* key) {
    const SourceLoc loc = cfg.passive_loc(key);
    return loc.known() ? loc.str() : conf_path;
  };
  if (const std::string* level = cfg.passive("SlurmctldDebug")) {
    auto parsed = config::parse_debug_level(*level);
    if (!parsed) {
      return make_error(where("SlurmctldDebug") + ": SlurmctldDebug=" + *level +
                        " is not a log level (quiet, fatal, error, info, verbose, debug, debug2 .. debug5, or 0-9)");
    }
    s.log_level = *parsed;
  }
  if (const std::string* flags = cfg.passive("DebugFlags")) {
    auto parsed = config::parse_debug_flags(*flags);
    if (!parsed) return make_error(where("DebugFlags") + ": DebugFlags=" + *flags + ": " + parsed.error().message);
    s.debug_flags = *parsed;
  }
  if (const std::string* enforce = cfg.passive("AccountingStorageEnforce")) {
    for (const auto& word : split(*enforce, ',')) {
      for (const char* implies : {"associations", "limits", "qos", "safe", "wckeys", "all"}) {
        if (iequals(trim(word), implies)) s.enforce_associations = true;
      }
      if (iequals(trim(word), "qos") || iequals(trim(word), "all")) s.enforce_qos = true;
      for (const char* implies : {"limits", "safe", "all"}) {
        if (iequals(trim(word), implies)) s.enforce_limits = true;
      }
    }
  }
  return s;
}

std::string Caller::describe() const {
  return user.empty() ? "uid " + std::to_string(uid) : user + "(" + std::to_string(uid) + ")";
}

}  // namespace drover::ctld
