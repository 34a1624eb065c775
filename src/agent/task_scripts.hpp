// The per-task scripts of a step (Slurm's TaskProlog/TaskEpilog in
// slurm.conf, srun's --task-prolog/--task-epilog), run by the step daemon as
// the job's user. Order, as Slurm's: TaskProlog, srun's --task-prolog, the
// task, srun's --task-epilog, TaskEpilog.
//
// A prolog runs in the task's own process before it executes the command
// (SLURM_TASK_PID is that process), in its working directory, with its
// environment. What it prints to stdout steers the task:
//   export NAME=value   sets NAME (the value is the rest of the line)
//   unset NAME          removes NAME
//   print TEXT          writes TEXT to the task's stdout
// Other lines and its stderr are ignored. One that fails (exits non-zero,
// cannot run) ends the task with its exit code, with
// "slurmstepd-NODE: error: TaskProlog failed status=N" on the task's stderr.
//
// An epilog runs after each task ends, with the task's environment (as the
// step daemon built it) and SLURM_TASK_PID; its stdout is discarded, its
// stderr goes to the task's stderr, and a failure is only reported there
// ("... failed status=W", W the wait status). srun's --task-epilog is killed
// after 5 seconds, as Slurm's; TaskEpilog may run as long as it needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/site_script.hpp"

namespace drover::agent {

struct TaskScript {
  std::string label;    // "TaskProlog", "--task-prolog", ...: for the failure line
  std::string program;  // absolute path
  int64_t timeout_s = 0;
};

// The prologs (TaskProlog, then srun's), or the epilogs (srun's, then
// TaskEpilog), that a step runs around each task; empty names are skipped.
std::vector<TaskScript> task_prologs(const std::string& conf, const std::string& srun);
std::vector<TaskScript> task_epilogs(const std::string& srun, const std::string& conf);

// Applies a prolog's output to `env` (NAME=value strings) and returns what
// its "print" lines write to the task's stdout.
std::string apply_prolog_output(const std::string& output, std::vector<std::string>& env);

// In the task's process (forked, so it may allocate), as the user, in its
// working directory: runs the prologs in order on `env`, writes their print
// lines to fd 1. Returns 0, or the exit code the task ends with after the
// failure line on fd 2.
int run_task_prologs(const std::vector<TaskScript>& prologs, const std::string& node, const std::string& work_dir,
                     std::vector<std::string>& env);

// In the step daemon, after a task ended: runs the epilogs as `user` (unset:
// as the daemon), their stderr to `stderr_fd` (-1: discarded), where the
// failure lines go too.
void run_task_epilogs(const std::vector<TaskScript>& epilogs, const std::string& node, const std::string& work_dir,
                      const std::vector<std::string>& env, const std::optional<ScriptUser>& user, int stderr_fd);

}  // namespace drover::agent
