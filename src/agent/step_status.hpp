// How a step is doing or how it ended, as the step daemon records it in the
// spool and the agent reports it to the controller.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/launch_spec.hpp"
#include "agent/usage.hpp"

namespace drover::agent {

// Slurm's job/step states that a node can observe.
enum class JobState { kRunning, kCompleted, kFailed, kCancelled, kTimeout, kOutOfMemory, kNodeFail };

std::string_view state_name(JobState s);  // "RUNNING", "COMPLETED", ..., "OUT_OF_MEMORY", "NODE_FAIL"
std::optional<JobState> parse_state(std::string_view name);
inline std::ostream& operator<<(std::ostream& os, JobState s) { return os << state_name(s); }

// Slurm's ExitCode "code:signal": a process that exited has code = its exit
// status and signal 0; one killed by a signal has code 0 and that signal.
struct ExitStatus {
  int code = 0;
  int signal = 0;
  bool core_dumped = false;

  static ExitStatus from_wait_status(int wstatus);
  std::string str() const;  // "0:0", "1:0", "0:9"
  bool success() const { return code == 0 && signal == 0; }
  bool operator==(const ExitStatus&) const = default;
};

// A node's part of a step, from its tasks' exits in rank order, as Slurm
// 22.05's step daemon reported it on the anchor cluster: the first task a
// signal ended (0:9 from exits 1, 5 and a SIGKILL; 0:15 from a SIGTERM of
// rank 0 after a SIGKILL of rank 1), else the highest exit code.
ExitStatus worst_exit(const std::vector<ExitStatus>& exits);

struct TaskStatus {
  int rank = 0;
  pid_t pid = 0;
  bool ended = false;
  ExitStatus exit;
  std::string error;  // launch error of this task ("execve(/bin/nope): No such file or directory")
  TaskUsage usage;    // so far; final once ended
};

struct StepStatus {
  StepKey key;
  JobState state = JobState::kRunning;
  ExitStatus exit;                    // aggregate, valid once ended
  std::string reason;                 // why it ended the way it did, in words; "" for a plain exit
  bool launch_failed = false;         // its tasks never started (StepDaemon::fail_launch)
  std::vector<TaskStatus> tasks;
  std::vector<std::string> warnings;  // limits this step runs without, said once per step
  int64_t start_time = 0;             // unix seconds the step started
  int64_t end_time = 0;               // unix seconds it ended; 0 while running
  int64_t time_limit_s = 0;           // in force (0: none)
  pid_t stepd_pid = 0;
  uint64_t stepd_start_ticks = 0;
  std::string stdout_path, stderr_path;  // of the first task on this node
  nlohmann::json cgroup;              // StepCgroup::to_json()
  int64_t oom_kills = 0;
  // What the step's processes that no task waited for used (reaped by the
  // step daemon as their subreaper); reported with the first task here.
  TaskUsage orphans;
  int64_t sampled_ms = 0;             // when the tasks' usage was last read (unix ms); 0: never
  std::vector<pid_t> pids;            // the step's processes at that time

  bool ended() const { return state != JobState::kRunning; }
};

nlohmann::json to_json(const StepStatus& s);
Result<StepStatus> step_status_from_json(const nlohmann::json& j);

}  // namespace drover::agent
