#include "agent/job_env.hpp"

#include <cstdio>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "common/task_layout.hpp"

namespace drover::agent {
namespace {

std::pair<std::string, std::string> split_var(std::string_view kv) {
  auto eq = kv.find('=');
  if (eq == std::string_view::npos) return {std::string(kv), ""};
  return {std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1))};
}

bool is_slurm_var(std::string_view name) { return name.rfind("SLURM_", 0) == 0; }

void set_if(EnvMap& env, const char* key, const std::string& value) {
  if (!value.empty()) env[key] = value;
}

template <class T>
void set_opt(EnvMap& env, const char* key, const std::optional<T>& value) {
  if (value) env[key] = std::to_string(*value);
}

// Job-wide variables: the same for every task of the allocation.
void add_job_vars(EnvMap& env, const LaunchRequest& r) {
  const JobInfo& j = r.job;
  const std::string nodelist = hostlist_compress(j.nodes);
  env["SLURM_JOB_ID"] = env["SLURM_JOBID"] = std::to_string(j.job_id);
  env["SLURM_JOB_NAME"] = j.job_name;
  env["SLURM_JOB_USER"] = j.user;
  env["SLURM_JOB_UID"] = std::to_string(j.uid);
  env["SLURM_JOB_GID"] = std::to_string(j.gid);
  env["SLURM_JOB_NODELIST"] = env["SLURM_NODELIST"] = nodelist;
  env["SLURM_JOB_NUM_NODES"] = env["SLURM_NNODES"] = std::to_string(j.nodes.size());
  env["SLURM_JOB_CPUS_PER_NODE"] = compress_counts(j.cpus_per_node);
  set_if(env, "SLURM_JOB_ACCOUNT", j.account);
  set_if(env, "SLURM_JOB_PARTITION", j.partition);
  set_if(env, "SLURM_JOB_QOS", j.qos);
  set_if(env, "SLURM_JOB_RESERVATION", j.reservation);
  set_if(env, "SLURM_CLUSTER_NAME", j.cluster_name);
  set_if(env, "SLURM_WORKING_CLUSTER", j.working_cluster);
  set_if(env, "SLURM_SUBMIT_DIR", j.submit_dir);
  set_if(env, "SLURM_SUBMIT_HOST", j.submit_host);
  set_if(env, "SLURM_CONF", j.conf_path);
  set_if(env, "DROVER_CONF", j.conf_path);
  env["SLURM_PRIO_PROCESS"] = std::to_string(j.prio_process);
  if (j.restart_count > 0) env["SLURM_RESTART_COUNT"] = std::to_string(j.restart_count);
  if (!j.export_spec.empty() && j.export_spec != "ALL") env["SLURM_EXPORT_ENV"] = j.export_spec;
  set_opt(env, "SLURM_NTASKS_PER_NODE", j.ntasks_per_node);
  if (r.key.is_batch()) {
    // The job's GPU options, for the batch script (a step inside has them from srun's environment;
    // Slurm 22.05 gave none to the tasks of an srun that made its own allocation).
    const std::pair<const char*, const std::string*> gpu_options[] = {
        {"SLURM_GPUS", &j.gpus_opt},
        {"SLURM_NTASKS_PER_GPU", &j.ntasks_per_gpu_opt},
        {"SLURM_GPUS_PER_NODE", &j.gpus_per_node_opt},
        {"SLURM_GPUS_PER_TASK", &j.gpus_per_task_opt},
        {"SLURM_CPUS_PER_GPU", &j.cpus_per_gpu_opt},
        {"SLURM_MEM_PER_GPU", &j.mem_per_gpu_opt},
    };
    for (const auto& [key, value] : gpu_options) set_if(env, key, *value);
  }
  if (j.array) {
    env["SLURM_ARRAY_JOB_ID"] = std::to_string(j.array->array_job_id);
    env["SLURM_ARRAY_TASK_ID"] = std::to_string(j.array->task_id);
    env["SLURM_ARRAY_TASK_COUNT"] = std::to_string(j.array->task_count);
    env["SLURM_ARRAY_TASK_MIN"] = std::to_string(j.array->task_min);
    env["SLURM_ARRAY_TASK_MAX"] = std::to_string(j.array->task_max);
    env["SLURM_ARRAY_TASK_STEP"] = std::to_string(j.array->task_step);
  }
}

// This node's view: names, CPUs, GPUs (the task's, under the step's --gpu-bind).
void add_node_vars(EnvMap& env, const LaunchRequest& r, const TaskPlace& task, bool devices_constrained) {
  env["SLURMD_NODENAME"] = r.alloc.node_name;
  env["SLURM_TOPOLOGY_ADDR"] = r.alloc.node_name;  // no topology plugin: the node alone
  env["SLURM_TOPOLOGY_ADDR_PATTERN"] = "node";
  env["SLURM_CPUS_ON_NODE"] = std::to_string(r.alloc.cpus);
  if (r.alloc.gpus.empty()) return;
  std::vector<int> all;
  for (const auto& g : r.alloc.gpus) all.push_back(g.index);
  env["SLURM_GPUS_ON_NODE"] = std::to_string(r.alloc.gpus.size());
  if (r.key.is_batch()) env["SLURM_JOB_GPUS"] = join_ints(all);
  const bool bound = !r.key.is_batch() && !r.layout.gpu_bind.empty();
  if (bound) env["SLURMD_TRES_BIND"] = "gpu:" + r.layout.gpu_bind;
  const auto mine = task_gpu_positions(r, task.local_id, devices_constrained, nullptr);
  if (bound && mine.empty()) return;  // --gpu-bind=none: no GPU named at all (Slurm 22.05)
  std::vector<int> global, visible;
  for (std::size_t i : mine) {
    global.push_back(r.alloc.gpus[i].index);
    visible.push_back(devices_constrained ? static_cast<int>(i) : r.alloc.gpus[i].index);
  }
  const std::string vis = join_ints(visible);
  env["CUDA_VISIBLE_DEVICES"] = env["GPU_DEVICE_ORDINAL"] = env["ROCR_VISIBLE_DEVICES"] = vis;
  env["ZE_AFFINITY_MASK"] = vis;
  if (!r.key.is_batch()) env["SLURM_STEP_GPUS"] = join_ints(global);
}

void add_batch_vars(EnvMap& env, const LaunchRequest& r) {
  const JobInfo& j = r.job;
  env["ENVIRONMENT"] = "BATCH";
  env["HOSTNAME"] = r.alloc.node_name;
  env["SLURM_NODE_ALIASES"] = "(null)";  // no cloud nodes; set for batch scripts only, as Slurm does
  env["SLURM_TASKS_PER_NODE"] =
      compress_counts(job_tasks_per_node(j.cpus_per_node, j.tasks_per_node, j.ntasks.has_value(), j.cpus_per_task.value_or(1)));
  if (j.ntasks) env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = std::to_string(*j.ntasks);
  set_opt(env, "SLURM_CPUS_PER_TASK", j.cpus_per_task);
  set_opt(env, "SLURM_MEM_PER_NODE", j.mem_per_node_mb);
  set_opt(env, "SLURM_MEM_PER_CPU", j.mem_per_cpu_mb);
  env["SLURM_GTIDS"] = "0";
  env["SLURM_NODEID"] = "0";  // the batch script runs on the job's first node
}

void add_step_vars(EnvMap& env, const LaunchRequest& r) {
  const StepLayout& L = r.layout;
  int ntasks = 0;
  for (int n : L.tasks_per_node) ntasks += n;
  env["SLURM_STEP_ID"] = env["SLURM_STEPID"] = std::to_string(r.key.step_id);
  env["SLURM_STEP_NODELIST"] = hostlist_compress(L.nodes);
  // A step's task sees the step's node count as SLURM_NNODES (SLURM_JOB_NUM_NODES stays the job's).
  env["SLURM_STEP_NUM_NODES"] = env["SLURM_NNODES"] = std::to_string(L.nodes.size());
  env["SLURM_STEP_NUM_TASKS"] = env["SLURM_NTASKS"] = env["SLURM_NPROCS"] = std::to_string(ntasks);
  env["SLURM_STEP_TASKS_PER_NODE"] = env["SLURM_TASKS_PER_NODE"] = compress_counts(L.tasks_per_node);
  env["SLURM_GTIDS"] = join_ints(L.global_task_ids);
  env["SLURM_NODEID"] = std::to_string(L.node_index);
  if (L.show_distribution) {
    // -m plane=N shows as "plane" with the size apart (Slurm 22.05).
    if (const std::string_view size = plane_size(L.distribution); !size.empty()) {
      env["SLURM_DISTRIBUTION"] = "plane";
      env["SLURM_DIST_PLANESIZE"] = std::string(size);
    } else {
      env["SLURM_DISTRIBUTION"] = L.distribution;
    }
  }
  // Set by Slurm 22.05's srun inside an allocation (a heterogeneous job's first component's CPUs).
  if (L.in_allocation) env["SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"] = compress_counts(r.job.cpus_per_node);
  set_opt(env, "SLURM_CPUS_PER_TASK", L.cpus_per_task ? L.cpus_per_task : r.job.cpus_per_task);
  set_opt(env, "SLURM_MEM_PER_NODE", L.mem_per_node_mb);
  set_opt(env, "SLURM_MEM_PER_CPU", L.mem_per_cpu_mb);
  if (!L.launcher_host.empty()) {
    env["SLURM_SRUN_COMM_HOST"] = env["SLURM_LAUNCH_NODE_IPADDR"] = L.launcher_host;
  }
  if (L.launcher_port > 0) {
    env["SLURM_SRUN_COMM_PORT"] = env["SLURM_STEP_LAUNCHER_PORT"] = std::to_string(L.launcher_port);
  }
  if (L.pty) {  // srun --pty: the terminal's size when the step started (and where srun sends its changes)
    env["SLURM_PTY_PORT"] = std::to_string(L.launcher_port);
    env["SLURM_PTY_WIN_ROW"] = std::to_string(L.pty_rows);
    env["SLURM_PTY_WIN_COL"] = std::to_string(L.pty_cols);
  }
  if (L.umask) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(*L.umask) & 07777u);
    env["SLURM_UMASK"] = buf;
  }
}

}  // namespace

std::vector<std::size_t> task_gpu_positions(const LaunchRequest& r, int local_id, bool devices_constrained,
                                            std::string* complaint) {
  std::vector<std::size_t> all(r.alloc.gpus.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (r.key.is_batch() || r.layout.gpu_bind.empty() || all.empty()) return all;
  auto bind = parse_gpu_bind(r.layout.gpu_bind);
  if (!bind) return all;  // validate() refuses such a request before it gets here
  std::vector<int> ids;  // the ids map_gpu and mask_gpu name: global, or from 0 when the devices are confined
  for (std::size_t i = 0; i < all.size(); ++i) ids.push_back(devices_constrained ? static_cast<int>(i) : r.alloc.gpus[i].index);
  return gpus_for_task(*bind, r.layout.gpu_bind, ids, local_id, complaint);
}

Result<std::vector<std::string>> resolve_export(const std::vector<std::string>& submit_env,
                                                std::string_view export_spec) {
  std::map<std::string, std::string> submitted;
  std::vector<std::string> order;  // keep the submitter's order for "ALL"
  for (const auto& kv : submit_env) {
    auto [k, v] = split_var(kv);
    if (k.empty()) continue;
    if (!submitted.count(k)) order.push_back(k);
    submitted[k] = v;
  }
  std::vector<std::string> items = export_spec.empty() ? std::vector<std::string>{"ALL"} : split(export_spec, ',');
  bool all = false, none = false;
  std::map<std::string, std::string> chosen;
  std::vector<std::string> chosen_order;
  auto choose = [&](const std::string& k, const std::string& v) {
    if (!chosen.count(k)) chosen_order.push_back(k);
    chosen[k] = v;
  };
  for (const auto& raw : items) {
    std::string item(trim(raw));
    if (iequals(item, "ALL")) { all = true; continue; }
    if (iequals(item, "NONE")) { none = true; continue; }
    auto [k, v] = split_var(item);
    if (k.empty()) return make_error("--export=" + std::string(export_spec) + ": empty variable name in '" + item + "'");
    if (item.find('=') != std::string::npos) choose(k, v);
    else if (submitted.count(k)) choose(k, submitted[k]);
  }
  if (all && none) return make_error("--export=" + std::string(export_spec) + ": ALL and NONE exclude each other");
  std::vector<std::string> out;
  for (const auto& k : order) {
    if (all || is_slurm_var(k)) {
      if (!chosen.count(k)) out.push_back(k + "=" + submitted[k]);
    }
  }
  for (const auto& k : chosen_order) out.push_back(k + "=" + chosen[k]);
  return out;
}

EnvMap slurm_variables(const LaunchRequest& r, const TaskPlace& task, bool devices_constrained) {
  EnvMap env;
  add_job_vars(env, r);
  add_node_vars(env, r, task, devices_constrained);
  if (r.key.is_batch()) add_batch_vars(env, r);
  else add_step_vars(env, r);
  env["SLURM_PROCID"] = std::to_string(task.rank);
  env["SLURM_LOCALID"] = std::to_string(task.local_id);
  return env;
}

bool export_loads_login_env(std::string_view export_spec) {
  if (export_spec.empty()) return false;
  for (const auto& item : split(export_spec, ',')) {
    if (iequals(trim(item), "ALL")) return false;
  }
  return true;
}

Result<EnvMap> build_task_env(const LaunchRequest& r, const TaskPlace& task, bool devices_constrained,
                              const std::vector<std::string>& login_env) {
  auto exported = resolve_export(r.job.submit_env, r.job.export_spec);
  if (!exported) return exported.error();
  EnvMap env;
  const bool login = export_loads_login_env(r.job.export_spec);
  if (login) {
    for (const auto& kv : login_env) {
      auto [k, v] = split_var(kv);
      if (!k.empty()) env[k] = v;
    }
  }
  for (const auto& kv : *exported) {
    auto [k, v] = split_var(kv);
    env[k] = v;
  }
  // Slurm sets TMPDIR only when the job does not bring its own.
  if (!env.count("TMPDIR")) env["TMPDIR"] = "/tmp";
  std::optional<std::string> step_name;  // a step's SLURM_JOB_NAME is srun's (its -J or its command's name)
  if (!r.key.is_batch() && env.count("SLURM_JOB_NAME")) step_name = env["SLURM_JOB_NAME"];
  const EnvMap ours = slurm_variables(r, task, devices_constrained);
  if (!r.alloc.gpus.empty() && !ours.count("CUDA_VISIBLE_DEVICES")) {
    // Given no GPU on a node with GPUs (--gpu-bind=none): the task names none, not even the ones srun's
    // environment had (Slurm 22.05).
    for (const char* k : {"CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"}) {
      env.erase(k);
    }
  }
  for (const auto& [k, v] : ours) env[k] = v;
  if (step_name) env["SLURM_JOB_NAME"] = *step_name;
  if (login) env["SLURM_GET_USER_ENV"] = "1";
  return env;
}

std::vector<std::string> env_strings(const EnvMap& env) {
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

}  // namespace drover::agent
