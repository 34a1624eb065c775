// What a step's tasks use of the node (Slurm's jobacct_gather/linux role):
// read from /proc while they run and from the kernel's accounting when they
// end, kept per task in the step's state record, reported to the controller
// with the step's end (sacct) and on request while it runs (sstat).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace drover::agent {

// One task's use so far (final once the task has ended).
struct TaskUsage {
  int64_t user_cpu_us = 0, system_cpu_us = 0;
  int64_t max_rss_kb = 0, max_vmsize_kb = 0;  // peaks of the task's processes taken together
  int64_t pages = 0;                          // major page faults
  int64_t disk_read = 0, disk_write = 0;      // bytes through read(2)/write(2) and the like (rchar, wchar)
  bool operator==(const TaskUsage&) const = default;
};

// One process as /proc shows it: CPU time with that of the children it
// waited for, resident and virtual size, major faults (its own and its
// waited children's), bytes read and written (the same). A zombie still
// shows its times, faults and I/O; its sizes are 0.
struct ProcessUse {
  int64_t user_us = 0, system_us = 0;
  int64_t rss_kb = 0, vmsize_kb = 0;
  int64_t pages = 0;
  int64_t read_bytes = 0, write_bytes = 0;
  ProcessUse& operator+=(const ProcessUse& o);
};

// nullopt when the process is gone (or /proc/PID/stat cannot be read);
// I/O stays 0 when /proc/PID/io may not be read.
std::optional<ProcessUse> read_process_use(pid_t pid);
// The sum over `pids` (those gone count nothing).
ProcessUse sum_process_use(const std::vector<pid_t>& pids);

// A sample of a running task's processes taken together: raises the peaks
// and moves CPU time, faults and I/O on to what they are now.
void add_sample(TaskUsage& u, const ProcessUse& now);
// The task has ended: its times and faults from wait4(2)'s accounting (the
// task and every process it waited for), its largest process's peak when
// the samples saw less, its I/O from its last look as a zombie (`last`,
// which includes what its waited children did).
void add_exit(TaskUsage& u, const rusage& ru, const std::optional<ProcessUse>& last);
// A process of the step that no task waited for (reaped by the step daemon
// as their subreaper): its CPU time, faults and I/O count with the task.
void add_orphan(TaskUsage& u, const rusage& ru, const std::optional<ProcessUse>& last);

// What the step's orphans used, counted with a task: times, faults and I/O
// added, memory peaks the larger.
void merge_orphans(TaskUsage& u, const TaskUsage& orphans);

nlohmann::json to_json(const TaskUsage& u);
TaskUsage task_usage_from_json(const nlohmann::json& j);

}  // namespace drover::agent
