// The environment a job's processes start with, as Slurm builds it: the
// submitter's exported variables plus the SLURM_* (and GPU) variables.
// Pure functions: no I/O, deterministic output order.
//
// Where --export is resolved: on the node, here. The controller stores the
// submitter's captured environment and the --export text verbatim; the agent
// resolves them with resolve_export() when it launches (Slurm's sbatch does the
// filtering on the client; doing it on the node keeps the stored job complete
// and lets `scontrol show job -dd` show what was asked).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/launch_spec.hpp"
#include "common/result.hpp"
#include "common/strings.hpp"

namespace drover::agent {

using drover::compress_counts;  // common/strings.hpp

// --export semantics, as real Slurm 22.05 behaves (checked on a scratch
// cluster; see docs/agent.md):
//   "ALL" or ""      every submitted variable;
//   "ALL,K=v,..."    every variable, then K=v set (the given value wins);
//   "NONE"           only the SLURM_* variables of the submitted environment,
//                    on top of the user's login environment (below);
//   "K1,K2=v,..."    SLURM_* variables plus the ones named (K1 from the
//                    submitted environment, K2 with the value given), on top
//                    of the user's login environment.
// Errors name the bad item of the --export value.
Result<std::vector<std::string>> resolve_export(const std::vector<std::string>& submit_env,
                                                std::string_view export_spec);

// Whether the job starts from the user's login environment (Slurm sets
// SLURM_GET_USER_ENV=1 then): every --export without ALL.
bool export_loads_login_env(std::string_view export_spec);

// One task's place: its global rank, its index among this node's tasks.
struct TaskPlace {
  int rank = 0;
  int local_id = 0;
};

// The ordered variable map of one task, without SLURM_TASK_PID (added by the
// step daemon after fork, when the pid exists). `devices_constrained`: the
// device cgroup hides every GPU but the allocated ones, so CUDA numbering
// restarts at 0 (Slurm's behaviour with ConstrainDevices); SLURM_JOB_GPUS and
// SLURM_STEP_GPUS stay node-global either way.
// `login_env` ("K=V", from the user's login shell) is the base when
// export_loads_login_env(); it is ignored otherwise.
using EnvMap = std::map<std::string, std::string>;
Result<EnvMap> build_task_env(const LaunchRequest& r, const TaskPlace& task, bool devices_constrained,
                              const std::vector<std::string>& login_env = {});

// The variables Drover itself sets (everything build_task_env adds on top of the
// exported environment) for this request; used by tests and `scontrol show job -dd`.
EnvMap slurm_variables(const LaunchRequest& r, const TaskPlace& task, bool devices_constrained);

// The positions in r.alloc.gpus of the GPUs task `local_id` of a step is
// given under its --gpu-bind (every one without a binding, and for the batch
// script); empty under --gpu-bind=none. `complaint`, when given, is set to
// Slurm's words when the binding names none of the step's GPUs here (the
// task then gets the first one).
std::vector<std::size_t> task_gpu_positions(const LaunchRequest& r, int local_id, bool devices_constrained,
                                            std::string* complaint);

// "K=V" strings in map order.
std::vector<std::string> env_strings(const EnvMap& env);

}  // namespace drover::agent
