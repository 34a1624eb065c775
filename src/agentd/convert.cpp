#include "agentd/convert.hpp"

namespace drover::agentd {
namespace {

agent::JobInfo job_info(const v1::LaunchRequest& in) {
  agent::JobInfo j;
  j.job_id = static_cast<uint64_t>(in.step().job_id());
  j.job_name = in.job_name();
  j.user = in.user();
  j.uid = in.uid();
  j.gid = in.gid();
  j.account = in.account();
  j.partition = in.partition();
  j.qos = in.qos();
  j.reservation = in.reservation();
  j.cluster_name = in.cluster_name();
  j.working_cluster = in.working_cluster();
  j.submit_dir = in.submit_dir();
  j.submit_host = in.submit_host();
  j.nodes.assign(in.nodes().begin(), in.nodes().end());
  j.cpus_per_node.assign(in.cpus_per_node().begin(), in.cpus_per_node().end());
  j.tasks_per_node.assign(in.tasks_per_node().begin(), in.tasks_per_node().end());
  if (in.ntasks() > 0) j.ntasks = in.ntasks();
  if (in.ntasks_per_node() > 0) j.ntasks_per_node = in.ntasks_per_node();
  if (in.cpus_per_task() > 0) j.cpus_per_task = in.cpus_per_task();
  if (in.has_mem_per_node_mb()) j.mem_per_node_mb = in.mem_per_node_mb();
  if (in.has_mem_per_cpu_mb()) j.mem_per_cpu_mb = in.mem_per_cpu_mb();
  j.gpus_opt = in.gpus_opt();
  j.gpus_per_node_opt = in.gpus_per_node_opt();
  j.gpus_per_task_opt = in.gpus_per_task_opt();
  j.cpus_per_gpu_opt = in.cpus_per_gpu_opt();
  j.mem_per_gpu_opt = in.mem_per_gpu_opt();
  j.ntasks_per_gpu_opt = in.ntasks_per_gpu_opt();
  if (in.array_job_id() != 0) {
    agent::ArrayInfo a;
    a.array_job_id = static_cast<uint64_t>(in.array_job_id());
    a.task_id = static_cast<uint32_t>(in.array_task_id());
    a.task_count = static_cast<uint32_t>(in.array_task_count());
    a.task_min = static_cast<uint32_t>(in.array_task_min());
    a.task_max = static_cast<uint32_t>(in.array_task_max());
    a.task_step = static_cast<uint32_t>(std::max(1, in.array_task_step()));
    j.array = a;
  }
  j.prio_process = in.prio_process();
  j.restart_count = in.restart_count();
  j.submit_env.assign(in.environment().begin(), in.environment().end());
  j.export_spec = in.export_spec().empty() ? "ALL" : in.export_spec();
  j.conf_path = in.conf_path();
  return j;
}

agent::StepLayout layout_from_proto(const v1::StepLayout& in) {
  agent::StepLayout L;
  L.nodes.assign(in.nodes().begin(), in.nodes().end());
  L.tasks_per_node.assign(in.tasks_per_node().begin(), in.tasks_per_node().end());
  L.node_index = in.node_index();
  L.global_task_ids.assign(in.global_task_ids().begin(), in.global_task_ids().end());
  if (in.cpus_per_task() > 0) L.cpus_per_task = in.cpus_per_task();
  L.gpus_opt = in.gpus_opt();
  L.launcher_host = in.launcher_host();
  L.launcher_port = in.launcher_port();
  L.io_key = in.io_key();
  if (in.umask() >= 0) L.umask = static_cast<mode_t>(in.umask());
  L.kill_on_bad_exit = in.kill_on_bad_exit();
  L.stdin_all = in.stdin_all();
  L.stdin_task = in.stdin_task();
  L.mpi = in.mpi();
  L.pty = in.pty();
  L.pty_rows = in.pty_rows();
  L.pty_cols = in.pty_cols();
  L.task_prolog = in.task_prolog();
  L.task_epilog = in.task_epilog();
  L.gpu_bind = in.gpu_bind();
  L.distribution = in.distribution();
  L.show_distribution = in.show_distribution();
  L.in_allocation = in.in_allocation();
  return L;
}

}  // namespace

agent::StepKey key_from_proto(const v1::StepRef& ref) {
  return agent::StepKey{static_cast<uint64_t>(ref.job_id()), ref.step_id()};
}

v1::StepRef key_to_proto(const agent::StepKey& key) {
  v1::StepRef r;
  r.set_job_id(static_cast<int64_t>(key.job_id));
  r.set_step_id(key.step_id);
  return r;
}

agent::LaunchRequest launch_from_proto(const v1::LaunchRequest& in, const std::string& node_name,
                                       const std::map<int, std::string>& gpu_files) {
  agent::LaunchRequest r;
  r.job = job_info(in);
  r.key = key_from_proto(in.step());
  r.script = in.script();
  r.argv.assign(in.argv().begin(), in.argv().end());
  r.multi_prog = in.multi_prog();
  r.work_dir = in.work_dir();
  r.alloc.node_name = node_name;
  r.alloc.cpus = in.cpus();
  r.alloc.cpu_ids.assign(in.cpu_ids().begin(), in.cpu_ids().end());
  r.alloc.mem_limit_mb = in.mem_limit_mb();
  for (const auto& g : in.gpus()) {
    agent::GpuDevice d;
    d.index = g.index();
    auto it = gpu_files.find(g.index());
    if (it != gpu_files.end()) d.device_file = it->second;
    r.alloc.gpus.push_back(d);
  }
  r.io.stdout_pattern = in.stdout_pattern();
  r.io.stderr_pattern = in.stderr_pattern();
  r.io.stdin_path = in.stdin_path();
  r.io.append = in.append();
  r.time_limit_s = in.time_limit_s();
  r.start_time = in.start_time();
  if (in.has_layout()) r.layout = layout_from_proto(in.layout());
  if (in.warn_signal() > 0) {
    agent::WarnSignal w;
    w.signal = in.warn_signal();
    w.seconds_before = in.warn_seconds();
    w.batch_shell_only = in.warn_batch_only();
    r.warn_signal = w;
  }
  return r;
}

v1::StepReport report_from_status(const agent::StepStatus& s) {
  v1::StepReport r;
  *r.mutable_step() = key_to_proto(s.key);
  r.set_ended(s.ended());
  r.set_state(std::string(agent::state_name(s.state)));
  r.set_exit_code(s.exit.code);
  r.set_exit_signal(s.exit.signal);
  r.set_reason(s.reason);
  r.set_launch_failed(s.launch_failed);
  r.set_start_time(s.start_time);
  r.set_end_time(s.end_time);
  r.set_oom_kills(s.oom_kills);
  for (const auto& w : s.warnings) r.add_warnings(w);
  r.set_stdout_path(s.stdout_path);
  r.set_stderr_path(s.stderr_path);
  for (std::size_t i = 0; i < s.tasks.size(); ++i) {
    agent::TaskUsage u = s.tasks[i].usage;
    if (i == 0) agent::merge_orphans(u, s.orphans);  // the step's orphans count with its first task here
    v1::TaskUsage* p = r.add_usage();
    p->set_rank(s.tasks[i].rank);
    p->set_user_cpu_us(u.user_cpu_us);
    p->set_system_cpu_us(u.system_cpu_us);
    p->set_max_rss_kb(u.max_rss_kb);
    p->set_max_vmsize_kb(u.max_vmsize_kb);
    p->set_pages(u.pages);
    p->set_disk_read(u.disk_read);
    p->set_disk_write(u.disk_write);
  }
  if (!s.key.is_batch()) {
    for (const auto& t : s.tasks) {
      v1::TaskExit* e = r.add_tasks();
      e->set_rank(t.rank);
      e->set_exit_code(t.exit.code);
      e->set_exit_signal(t.exit.signal);
      e->set_error(t.error);
    }
  }
  return r;
}

}  // namespace drover::agentd
