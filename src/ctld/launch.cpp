// The Launch message for a job's batch script: the allocation-wide facts
// the agent turns into the job's SLURM_* environment, and the batch node's
// share (CPUs, memory, GPUs) it enforces.
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

void add_layout(const core::Cluster& c, const Job& j, v1::LaunchRequest& l) {
  for (const auto& t : j.alloc.nodes) {
    l.add_nodes(c.nodes[t.node].name);
    l.add_cpus_per_node(t.cpus);
    l.add_tasks_per_node(t.tasks);
  }
  const v1::JobDescriptor& d = j.rec.desc();
  int32_t nodes = static_cast<int32_t>(j.alloc.nodes.size());
  if (d.ntasks() > 0) {
    l.set_ntasks(d.ntasks());
  } else if (d.ntasks_per_node() > 0) {
    l.set_ntasks(d.ntasks_per_node() * nodes);
  }
  l.set_ntasks_per_node(d.ntasks_per_node());
  l.set_cpus_per_task(d.cpus_per_task());
}

void add_memory(const CoreBridge& b, const Job& j, v1::LaunchRequest& l) {
  const v1::JobDescriptor& d = j.rec.desc();
  // Slurm 22.05 names no memory in the job's environment for --mem=0 (every node's memory) or --mem-per-gpu.
  if (d.mem_per_gpu_mb() > 0) return;
  if (d.has_mem_per_node_mb()) {
    if (d.mem_per_node_mb() > 0) l.set_mem_per_node_mb(d.mem_per_node_mb());
    return;
  }
  if (d.has_mem_per_cpu_mb()) {
    l.set_mem_per_cpu_mb(d.mem_per_cpu_mb());
    return;
  }
  auto sum = b.summarize(j.spec, b.find_partition(j.rec.partition()));
  if (!sum) return;
  if (sum->mem_per_cpu_mb > 0) {
    l.set_mem_per_cpu_mb(sum->mem_per_cpu_mb);
  } else if (sum->mem_per_node_mb > 0) {
    l.set_mem_per_node_mb(sum->mem_per_node_mb);
  }
}

void add_array(const v1::JobRecord& r, v1::LaunchRequest& l) {
  if (r.array_job_id() == 0) return;
  l.set_array_job_id(r.array_job_id());
  l.set_array_task_id(r.array_task_id());
  l.set_array_task_count(static_cast<int32_t>(r.array_task_count()));
  l.set_array_task_min(static_cast<int32_t>(r.array_task_min()));
  l.set_array_task_max(static_cast<int32_t>(r.array_task_max()));
  l.set_array_task_step(static_cast<int32_t>(r.array_task_step()));
}

// The batch node's share: CPU ids from the cores (core c, thread t -> c*threads+t).
void add_share(const core::NodeSpec& n, const core::NodeTake& t, v1::LaunchRequest& l) {
  l.set_cpus(t.cpus);
  int32_t tpc = std::max(1, n.threads_per_core);
  for (int32_t core : t.cores) {
    for (int32_t th = 0; th < tpc; ++th) l.add_cpu_ids(core * tpc + th);
  }
  l.set_mem_limit_mb(t.mem_mb);
  for (const auto& g : t.gres) {
    const auto& pool = n.gres[g.pool];
    if (pool.name != "gpu") continue;
    for (int32_t dev : g.devices) {
      v1::GpuDevice* gd = l.add_gpus();
      gd->set_index(global_gpu_index(n, g.pool, dev));
      gd->set_type(pool.type);
    }
  }
}

// `append`: slurm.conf's JobFileAppend, for a job without --open-mode.
void add_io(const v1::JobDescriptor& d, bool append, v1::LaunchRequest& l) {
  l.set_stdout_pattern(d.std_out());
  l.set_stderr_pattern(d.std_err());
  l.set_stdin_path(d.std_in());
  l.set_append(d.has_open_append() ? d.open_append() : append);
  if (d.signal().signal() > 0) {
    l.set_warn_signal(d.signal().signal());
    l.set_warn_seconds(d.signal().seconds_before());
    l.set_warn_batch_only(d.signal().batch_shell_only());
  }
}

}  // namespace

v1::LaunchRequest ControllerState::build_launch(const Job& j, const core::NodeTake& here) const {
  const core::Cluster& c = bridge_->cluster();
  const v1::JobRecord& r = j.rec;
  const v1::JobDescriptor& d = r.desc();
  v1::LaunchRequest l;
  l.mutable_step()->set_job_id(r.job_id());
  l.mutable_step()->set_step_id(-2);
  l.set_job_name(d.name());
  l.set_user(r.user());
  l.set_uid(r.uid());
  l.set_gid(r.gid());
  l.set_account(r.account());
  l.set_partition(r.partition());
  l.set_qos(r.qos());
  l.set_reservation(d.reservation());
  l.set_cluster_name(settings_.cluster_name);
  l.set_working_cluster(settings_.working_cluster);
  l.set_submit_dir(d.submit_dir().empty() ? d.work_dir() : d.submit_dir());
  l.set_submit_host(d.submit_host());
  add_layout(c, j, l);
  add_memory(*bridge_, j, l);
  l.set_gpus_opt(d.gpus().text());
  l.set_gpus_per_node_opt(d.gpus_per_node().text());
  l.set_gpus_per_task_opt(d.gpus_per_task().text());
  if (d.cpus_per_gpu() > 0) l.set_cpus_per_gpu_opt(std::to_string(d.cpus_per_gpu()));
  l.set_mem_per_gpu_opt(d.mem_per_gpu_text());
  if (d.ntasks_per_gpu() > 0) l.set_ntasks_per_gpu_opt(std::to_string(d.ntasks_per_gpu()));
  add_array(r, l);
  l.set_prio_process(d.prio_process());
  l.set_restart_count(r.restart_count());
  *l.mutable_environment() = d.environment();
  l.set_export_spec(d.export_spec().empty() ? "ALL" : d.export_spec());
  l.set_conf_path(settings_.conf_path);
  l.set_script(d.script());
  *l.mutable_argv() = d.argv();
  l.set_work_dir(d.work_dir());
  add_share(c.nodes[here.node], here, l);
  add_io(d, settings_.job_file_append, l);
  l.set_time_limit_s(enforced_time_limit(r));
  // --signal=B:...@SECS counts back from the job's own limit, not from the OverTimeLimit after it.
  if (l.warn_signal() > 0 && l.time_limit_s() > 0) l.set_warn_seconds(l.warn_seconds() + over_time_s(r));
  l.set_start_time(r.start_time());
  if (settings_.job_scripts()) {
    // The job's share of the node (an srun step's may be less).
    for (const auto& t : j.alloc.nodes) {
      if (t.node != here.node) continue;
      for (auto& e : script_env(j, t, false)) l.add_prolog_env(std::move(e));
      break;
    }
  }
  return l;
}

}  // namespace drover::ctld
