// The agent's spool directory (slurm.conf SlurmdSpoolDir, one per node): one
// small record per step it runs, so that a restarted agent finds its steps
// again. Layout:
//   <spool>/job<ID>.<STEP>/spec.json   request + step daemon settings   (0600, written by the agent)
//                          stepd.json  pid and start time of the step daemon (agent)
//                          state.json  StepStatus, rewritten by the step daemon on every change
//                          ctl         control FIFO: one command per line (0600)
//                          script      the batch script (0500, owned by the job's user)
//                          stepd.log   the step daemon's own messages
// The record is removed when the controller has the final status (acknowledge).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "agent/cgroup.hpp"
#include "agent/launch_spec.hpp"
#include "common/result.hpp"

namespace drover::agent {

inline constexpr const char* kSpecFile = "spec.json";
inline constexpr const char* kStepdFile = "stepd.json";
inline constexpr const char* kStateFile = "state.json";
inline constexpr const char* kCtlFifo = "ctl";
inline constexpr const char* kScriptFile = "script";
inline constexpr const char* kStepdLog = "stepd.log";

// Settings the agent hands each step daemon with the request.
struct StepdConfig {
  int64_t kill_wait_ms = 30000;    // KillWait
  bool allow_root_jobs = false;
  CgroupPlan cgroups;
  std::vector<std::string> node_gpu_files;  // every GPU device file of the node
  std::string cgroup_node;                  // directory level for this agent below the cgroup base
  int64_t usage_interval_s = 30;            // JobAcctGatherFrequency's task= (0: only as tasks end)
  bool usage_samples = true;                // JobAcctGatherType is not jobacct_gather/none
};

nlohmann::json to_json(const StepdConfig& c);
StepdConfig stepd_config_from_json(const nlohmann::json& j);

std::string step_dir_name(const StepKey& key);  // "job123.batch", "job123.0"
std::optional<StepKey> parse_step_dir_name(std::string_view name);

// Writes via a temporary file and rename(2), so readers never see half a record.
Status write_file_atomic(const std::string& path, const std::string& content, unsigned mode = 0600);
Result<nlohmann::json> read_json_file(const std::string& path);

// Control commands, one line each (the FIFO is the transport):
//   "signal <sig> all|batch", "terminate <STATE> <reason...>", "time_limit <seconds>",
//   "sample" (read the tasks' usage now and rewrite state.json: sstat).
struct ControlCommand {
  std::string verb;
  std::vector<std::string> args;
  std::string rest;  // everything after the verb's fixed arguments (the reason)
};
std::optional<ControlCommand> parse_control_line(std::string_view line);
// Sends one line to a step daemon; errors when no daemon listens.
Status send_control(const std::string& step_dir, const std::string& line);

}  // namespace drover::agent
