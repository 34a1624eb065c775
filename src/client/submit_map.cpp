#include "client/submit_map.hpp"

#include <limits.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "cli/cli_error.hpp"
#include "client/api.hpp"
#include "common/mail_type.hpp"
#include "common/rlimits.hpp"
#include "common/strings.hpp"
#include "common/task_layout.hpp"
#include "common/user_db.hpp"
#include "config/model.hpp"

extern char** environ;

namespace drover::client {
namespace {

std::string short_host() {
  char buf[HOST_NAME_MAX + 1] = {};
  gethostname(buf, sizeof buf - 1);
  std::string h = buf;
  return h.substr(0, h.find('.'));
}

void set_gpu(const std::optional<cli::GpuCount>& g, v1::GpuCount* out) {
  if (!g) return;
  out->set_type(g->type);
  out->set_count(static_cast<int32_t>(g->count));
  out->set_text(g->type.empty() ? std::to_string(g->count) : g->type + ":" + std::to_string(g->count));
}

v1::DepType dep_type(cli::DependencyType t) {
  switch (t) {
    case cli::DependencyType::kAfter: return v1::DEP_AFTER;
    case cli::DependencyType::kAfterOk: return v1::DEP_AFTER_OK;
    case cli::DependencyType::kAfterNotOk: return v1::DEP_AFTER_NOT_OK;
    case cli::DependencyType::kSingleton: return v1::DEP_SINGLETON;
    case cli::DependencyType::kAfterCorr: return v1::DEP_AFTER_CORR;
    default: return v1::DEP_AFTER_ANY;
  }
}

}  // namespace

void dependency_to_proto(const cli::DependencySpec& d, v1::Dependency* out) {
  out->set_any(d.any_of);
  out->set_text(cli::format_dependency(d));
  for (const auto& c : d.clauses) {
    if (c.type == cli::DependencyType::kSingleton) {
      out->add_items()->set_type(v1::DEP_SINGLETON);
      continue;
    }
    for (const auto& t : c.targets) {
      v1::DepItem* i = out->add_items();
      i->set_type(dep_type(c.type));
      i->set_job_id(t.job_id);
      i->set_array_task(t.array_task ? *t.array_task : -1);
      i->set_delay_s(t.delay);
    }
  }
}

namespace {

void set_shape(const cli::JobRequest& r, v1::JobDescriptor& d) {
  if (r.nodes) {
    d.set_min_nodes(static_cast<int32_t>(r.nodes->min));
    d.set_max_nodes(static_cast<int32_t>(r.nodes->max));
  }
  if (r.ntasks) d.set_ntasks(static_cast<int32_t>(*r.ntasks));
  if (r.ntasks_per_node) d.set_ntasks_per_node(static_cast<int32_t>(*r.ntasks_per_node));
  if (r.cpus_per_task) d.set_cpus_per_task(static_cast<int32_t>(*r.cpus_per_task));
  if (r.min_cpus_per_node) d.set_min_cpus_per_node(static_cast<int32_t>(*r.min_cpus_per_node));
  if (r.mem_per_node_mb) d.set_mem_per_node_mb(*r.mem_per_node_mb);
  if (r.mem_per_cpu_mb) d.set_mem_per_cpu_mb(*r.mem_per_cpu_mb);
  if (r.mem_per_gpu_mb) {
    d.set_mem_per_gpu_mb(*r.mem_per_gpu_mb);
    d.set_mem_per_gpu_text(std::to_string(*r.mem_per_gpu_mb));
  }
  if (r.tmp_disk_mb) d.set_tmp_disk_mb(*r.tmp_disk_mb);
  if (r.sockets_per_node) d.set_sockets_per_node(static_cast<int32_t>(*r.sockets_per_node));
  if (r.cores_per_socket) d.set_cores_per_socket(static_cast<int32_t>(*r.cores_per_socket));
  if (r.threads_per_core) d.set_threads_per_core(static_cast<int32_t>(*r.threads_per_core));
  if (r.ntasks_per_socket) d.set_ntasks_per_socket(static_cast<int32_t>(*r.ntasks_per_socket));
  if (r.ntasks_per_core) d.set_ntasks_per_core(static_cast<int32_t>(*r.ntasks_per_core));
  d.set_spread_job(r.spread_job);
  if (r.delay_boot) d.set_delay_boot_s(*r.delay_boot);
  if (r.kill_on_invalid_dep) d.set_kill_on_invalid_dep(*r.kill_on_invalid_dep);
  if (auto cc = r.uninterpreted.find("--cluster-constraint"); cc != r.uninterpreted.end()) {
    d.set_cluster_constraint(cc->second);
  }
  for (const auto& g : r.gres) d.add_gres(g.str());
  set_gpu(r.gpus, d.mutable_gpus());
  set_gpu(r.gpus_per_node, d.mutable_gpus_per_node());
  set_gpu(r.gpus_per_task, d.mutable_gpus_per_task());
  if (r.ntasks_per_gpu && *r.ntasks_per_gpu > 0) {
    // --ntasks-per-gpu (sbatch(1)): with the GPUs given and no -n, the task
    // count follows them; with -n and no GPU count, the GPUs follow the tasks.
    const int64_t per = *r.ntasks_per_gpu;
    d.set_ntasks_per_gpu(static_cast<int32_t>(per));
    const int64_t nodes = r.nodes ? std::max<int64_t>(1, r.nodes->min) : 1;
    int64_t gpus = r.gpus ? r.gpus->count : r.gpus_per_node ? r.gpus_per_node->count * nodes : 0;
    for (const auto& g : r.gres) {
      if (g.name == "gpu") gpus = g.count * nodes;
    }
    if (!r.ntasks && gpus > 0) {
      d.set_ntasks(static_cast<int32_t>(per * gpus));
    } else if (r.ntasks && gpus == 0) {
      d.mutable_gpus()->set_count(static_cast<int32_t>((*r.ntasks + per - 1) / per));  // no --gpus text: no SLURM_GPUS
    }
  }
  if (r.cpus_per_gpu) d.set_cpus_per_gpu(static_cast<int32_t>(*r.cpus_per_gpu));
  if (r.licenses) d.set_licenses(*r.licenses);
  if (r.constraint) d.set_constraint(*r.constraint);
  if (r.prefer) d.set_prefer(*r.prefer);
  if (r.nodelist) d.set_nodelist(*r.nodelist);
  if (r.exclude) d.set_exclude(*r.exclude);
  d.set_exclusive(r.sharing == cli::Sharing::kExclusive);
  d.set_exclusive_user(r.sharing == cli::Sharing::kExclusiveUser);
  d.set_exclusive_mcs(r.sharing == cli::Sharing::kExclusiveMcs);
  d.set_oversubscribe(r.sharing == cli::Sharing::kOversubscribe);
}

void set_files(const cli::JobRequest& r, const SubmitterContext& who, v1::JobDescriptor& d) {
  d.set_work_dir(work_dir_of(r, who));
  d.set_submit_dir(who.cwd);
  if (r.stdout_path) d.set_std_out(*r.stdout_path);
  if (r.stderr_path) d.set_std_err(*r.stderr_path);
  if (r.stdin_path) d.set_std_in(*r.stdin_path);
  if (r.open_mode != cli::OpenMode::kDefault) d.set_open_append(r.open_mode == cli::OpenMode::kAppend);
  std::map<std::string, std::string> env = who.env;
  if (r.command == cli::SubmitCommand::kSbatch) {
    for (auto& [k, v] : option_output_env(r)) env[k] = std::move(v);
  }
  for (const auto& [k, v] : env) d.add_environment(k + "=" + v);
  d.set_export_spec(export_text(r.export_env));
  d.set_mail_type(mail_type_text(r.mail_types));
  if (r.mail_user) d.set_mail_user(*r.mail_user);
  if (!r.script_path.empty() && r.script_path != "/dev/stdin" && !r.wrap) {
    d.set_command(r.script_path[0] == '/' ? r.script_path : who.cwd + "/" + r.script_path);
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> option_output_env(const cli::JobRequest& r) {
  std::vector<std::pair<std::string, std::string>> out;
  if (const std::string_view size = r.distribution ? plane_size(*r.distribution) : ""; !size.empty()) {
    const auto comma = r.distribution->find(',');  // Pack/NoPack stays
    out.emplace_back("SLURM_DISTRIBUTION", "plane" + (comma == std::string::npos ? "" : r.distribution->substr(comma)));
    out.emplace_back("SLURM_DIST_PLANESIZE", std::string(size));
  } else if (r.distribution) {
    out.emplace_back("SLURM_DISTRIBUTION", *r.distribution);
  }
  if (r.gpu_bind) out.emplace_back("SLURM_GPU_BIND", *r.gpu_bind);
  if (r.hint) out.emplace_back("SLURM_HINT", *r.hint);
  if (r.ntasks_per_core) out.emplace_back("SLURM_NTASKS_PER_CORE", std::to_string(*r.ntasks_per_core));
  if (r.threads_per_core) out.emplace_back("SLURM_THREADS_PER_CORE", std::to_string(*r.threads_per_core));
  return out;
}

std::string work_dir_of(const cli::JobRequest& r, const SubmitterContext& who) {
  std::string work = r.chdir ? *r.chdir : who.cwd;
  if (!work.empty() && work[0] != '/') work = who.cwd + "/" + work;
  return work;
}

std::string export_text(const cli::ExportSpec& e) {
  if (e.none) return "NONE";
  std::vector<std::string> parts;
  if (e.all) parts.push_back("ALL");
  parts.insert(parts.end(), e.names.begin(), e.names.end());
  for (const auto& [k, v] : e.assigned) parts.push_back(k + "=" + v);
  return parts.empty() ? "ALL" : join(parts, ",");
}

SubmitterContext current_submitter() {
  SubmitterContext c;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) c.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  char buf[PATH_MAX];
  if (getcwd(buf, sizeof buf)) c.cwd = buf;
  c.host = short_host();
  errno = 0;
  c.nice = getpriority(PRIO_PROCESS, 0);
  c.sid = getsid(0);
  // As typed: "/usr/bin/sbatch --wrap true" or "sbatch job.sh" (Slurm 22.05's SubmitLine).
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::string words((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  while (!words.empty() && words.back() == '\0') words.pop_back();
  std::replace(words.begin(), words.end(), '\0', ' ');
  c.command_line = std::move(words);
  return c;
}

bool add_propagated_rlimits(const char* program, const cli::JobRequest& req, const std::string& config_flag,
                            SubmitterContext& who) {
  (void)take_rlimits(who.env);  // any the environment already had: this shell's own go in their place
  auto chosen = rlimits_to_propagate(req.propagate, command_conf_value(config_flag, "PropagateResourceLimits"),
                                     command_conf_value(config_flag, "PropagateResourceLimitsExcept"));
  if (!chosen) {
    std::fprintf(stderr, "%s: error: %s: %s\n", program, config::resolve_config_path(config_flag).c_str(),
                 chosen.error().message.c_str());
    return false;
  }
  for (auto& [k, v] : rlimit_env(*chosen)) who.env[k] = std::move(v);
  return true;
}

v1::JobDescriptor descriptor_from_request(const cli::JobRequest& r, const SubmitterContext& who) {
  v1::JobDescriptor d;
  d.set_batch(r.command == cli::SubmitCommand::kSbatch);
  d.set_name(r.job_name ? *r.job_name : cli::default_job_name(r));
  d.set_script(r.script);
  for (const auto& a : r.argv) d.add_argv(a);
  if (r.partition) {
    for (const auto& p : split(*r.partition, ',')) {
      if (!p.empty()) d.add_partitions(p);
    }
  }
  if (r.account) d.set_account(*r.account);
  if (r.qos) d.set_qos(*r.qos);
  if (r.comment) d.set_comment(*r.comment);
  if (r.reservation) d.set_reservation(*r.reservation);
  if (r.wckey) d.set_wckey(*r.wckey);
  if (r.time_limit) d.set_time_limit_s(*r.time_limit);
  if (r.time_min) d.set_time_min_s(*r.time_min);
  if (r.begin) d.set_begin_time(*r.begin);
  if (r.deadline) d.set_deadline(*r.deadline);
  set_shape(r, d);
  if (r.dependency) dependency_to_proto(*r.dependency, d.mutable_dependency());
  d.set_hold(r.hold);
  if (r.nice) d.set_nice(static_cast<int32_t>(*r.nice));
  if (r.priority) d.set_priority(*r.priority);
  if (r.array) {
    for (int64_t id : r.array->task_ids()) d.mutable_array()->add_task_ids(id);
    d.mutable_array()->set_max_running(static_cast<int32_t>(r.array->max_running));
    d.mutable_array()->set_text(cli::format_array_spec(*r.array));
  }
  if (r.requeue) d.set_requeue(*r.requeue);
  d.set_no_kill(r.no_kill);
  if (r.signal) {
    d.mutable_signal()->set_signal(r.signal->signal);
    d.mutable_signal()->set_seconds_before(r.signal->lead_time);
    d.mutable_signal()->set_batch_shell_only(r.signal->batch_shell_only);
  }
  set_files(r, who, d);
  d.set_submit_host(who.host);
  d.set_submit_line(who.command_line);
  d.set_prio_process(who.nice);
  d.set_submit_sid(who.sid > 0 ? who.sid : 0);
  return d;
}

int apply_run_as(const cli::JobRequest& r, const std::string& program, v1::JobDescriptor& d) {
  if (!r.run_as_uid && !r.run_as_gid) return 0;
  if (getuid() != 0) {
    std::fprintf(stderr, "%s: error: --%s only permitted by root user\n", program.c_str(), r.run_as_uid ? "uid" : "gid");
    return cli::kExitBadOption;
  }
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (r.run_as_uid) {
    auto u = user_by_name_or_uid(*r.run_as_uid);
    if (!u) {
      std::fprintf(stderr, "%s: error: Invalid --uid specification\n", program.c_str());
      return cli::kExitBadOption;
    }
    uid = u->uid;  // the group stays the caller's unless --gid (Slurm 22.05: `id -g` was 0 under root's --uid=alice)
  }
  if (r.run_as_gid) {
    auto g = group_by_name_or_gid(*r.run_as_gid);
    if (!g) {
      std::fprintf(stderr, "%s: error: Invalid --gid specification\n", program.c_str());
      return cli::kExitBadOption;
    }
    gid = *g;
  }
  d.set_as_uid(uid);
  d.set_as_gid(gid);
  return 0;
}

}  // namespace drover::client
