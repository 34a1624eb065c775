#include "agent/launch_spec.hpp"

#include <nlohmann/json.hpp>

#include "common/task_layout.hpp"

// std::optional as "absent or null" in JSON.
namespace nlohmann {
template <class T>
struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) j = *v;
    else j = nullptr;
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null()) v.reset();
    else v = j.get<T>();
  }
};
}  // namespace nlohmann

namespace drover::agent {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepKey, job_id, step_id)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ArrayInfo, array_job_id, task_id, task_count, task_min, task_max,
                                                task_step)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(WarnSignal, signal, seconds_before, batch_shell_only)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(JobInfo, job_id, job_name, user, uid, gid, account, partition, qos,
                                                reservation, cluster_name, working_cluster, submit_dir, submit_host, nodes,
                                                cpus_per_node, tasks_per_node, ntasks, ntasks_per_node, cpus_per_task,
                                                mem_per_node_mb, mem_per_cpu_mb, gpus_opt, gpus_per_node_opt,
                                                gpus_per_task_opt, cpus_per_gpu_opt, mem_per_gpu_opt, ntasks_per_gpu_opt, array,
                                                prio_process, restart_count, submit_env, export_spec, conf_path)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(StepLayout, nodes, tasks_per_node, node_index, global_task_ids,
                                                cpus_per_task, gpus_opt, mem_per_cpu_mb, mem_per_node_mb,
                                                launcher_host, launcher_port, umask, kill_on_bad_exit, io_key,
                                                stdin_all, mpi, pty, pty_rows, pty_cols, task_prolog,
                                                task_epilog, gpu_bind, distribution, show_distribution,
                                                in_allocation, stdin_task)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(GpuDevice, index, device_file)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(NodeAlloc, node_name, cpus, cpu_ids, mem_limit_mb, gpus)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(IoSpec, stdout_pattern, stderr_pattern, stdin_path, append)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LaunchRequest, job, key, layout, script, argv, work_dir, alloc, io,
                                                time_limit_s, start_time, warn_signal, multi_prog, task_prolog,
                                                task_epilog)

std::string StepKey::str() const {
  return std::to_string(job_id) + "." + (is_batch() ? std::string("batch") : std::to_string(step_id));
}

nlohmann::json to_json(const LaunchRequest& r) {
  nlohmann::json j = r;
  return j;
}

Result<LaunchRequest> launch_request_from_json(const nlohmann::json& j) {
  try {
    return j.get<LaunchRequest>();
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("launch request: ") + e.what());
  }
}

namespace {

Status check_layout(const std::string& at, const LaunchRequest& r) {
  const auto& L = r.layout;
  if (L.nodes.empty()) return make_error(at + ": the step layout names no node");
  if (L.tasks_per_node.size() != L.nodes.size()) {
    return make_error(at + ": step layout has " + std::to_string(L.nodes.size()) + " nodes but " +
                      std::to_string(L.tasks_per_node.size()) + " task counts");
  }
  if (L.node_index < 0 || L.node_index >= static_cast<int>(L.nodes.size())) {
    return make_error(at + ": node_index " + std::to_string(L.node_index) + " is outside the step's node list");
  }
  if (static_cast<int>(L.global_task_ids.size()) != L.tasks_per_node[L.node_index]) {
    return make_error(at + ": " + std::to_string(L.global_task_ids.size()) + " task ids given for " +
                      std::to_string(L.tasks_per_node[L.node_index]) + " tasks on this node");
  }
  if (r.argv.empty()) return make_error(at + ": the step has no command to run");
  if (!L.gpu_bind.empty()) {
    if (auto b = parse_gpu_bind(L.gpu_bind); !b) return make_error(at + ": " + b.error().message);
  }
  return {};
}

}  // namespace

Status validate(const LaunchRequest& r) {
  const std::string at = r.key.str();
  if (r.key.job_id == 0 || r.key.job_id != r.job.job_id) {
    return make_error(at + ": step key job id does not match the job's id " + std::to_string(r.job.job_id));
  }
  if (r.job.user.empty()) return make_error(at + ": no user to run the job as");
  if (r.job.nodes.empty()) return make_error(at + ": the job's node list is empty");
  if (r.job.cpus_per_node.size() != r.job.nodes.size() || r.job.tasks_per_node.size() != r.job.nodes.size()) {
    return make_error(at + ": cpus_per_node and tasks_per_node need one entry per job node (" +
                      std::to_string(r.job.nodes.size()) + ")");
  }
  if (r.alloc.node_name.empty()) return make_error(at + ": the allocation names no node");
  if (r.key.is_batch()) {
    if (r.script.rfind("#!", 0) != 0) {
      return make_error(at + ": the batch script must start with \"#!\" (an interpreter line such as #!/bin/bash)");
    }
    return {};
  }
  if (r.key.step_id < 0) return make_error(at + ": step id must be >= 0 or the batch step");
  return check_layout(at, r);
}

}  // namespace drover::agent
