// sbatch's parsed request (cli::JobRequest) as the API's JobDescriptor,
// with what the submitting process contributes: its environment, working
// directory, host name and nice value.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli/job_request.hpp"
#include "drover/v1/jobs.pb.h"

namespace drover::client {

struct SubmitterContext {
  std::map<std::string, std::string> env;
  std::string cwd;
  std::string host;
  int nice = 0;
  int64_t sid = 0;  // getsid(0): scontrol's AllocNode:Sid, squeue's AllocSID
  std::string command_line;  // this process's words as it was started, joined by blanks (sacct's SubmitLine)
};

SubmitterContext current_submitter();

// sbatch and srun: puts this process's soft resource limits that the job's
// tasks are to get in `who.env` as SLURM_RLIMIT_<NAME>=<value> (its
// --propagate, else slurm.conf's PropagateResourceLimits or
// PropagateResourceLimitsExcept; with neither, all), after taking out any
// such entries the environment already had. False, having said why on
// stderr, when slurm.conf's keys cannot be read.
bool add_propagated_rlimits(const char* program, const cli::JobRequest& req, const std::string& config_flag,
                            SubmitterContext& who);
v1::JobDescriptor descriptor_from_request(const cli::JobRequest& req, const SubmitterContext& who);

// --uid/--gid: only root may give them, as Slurm's commands say ("--uid only
// permitted by root user", exit 255); the user and group, by name or number,
// go in `d` (the group is the caller's unless --gid, as Slurm 22.05 ran
// root's `sbatch --uid=alice` with gid 0). Returns the exit status when
// refused (said), else 0.
int apply_run_as(const cli::JobRequest& req, const std::string& program, v1::JobDescriptor& d);

// A parsed --dependency / Dependency= value in the API's form.
void dependency_to_proto(const cli::DependencySpec& d, v1::Dependency* out);

// What sbatch(1) puts in the job's environment for some of its options, as
// Slurm 22.05's did (its OUTPUT ENVIRONMENT VARIABLES): SLURM_DISTRIBUTION, SLURM_GPU_BIND,
// SLURM_HINT, SLURM_NTASKS_PER_CORE and SLURM_THREADS_PER_CORE (-B's, or
// the one --hint=nomultithread implies). srun inside the job reads them.
std::vector<std::pair<std::string, std::string>> option_output_env(const cli::JobRequest& r);

// "ALL", "NONE", "ALL,EDITOR=/bin/emacs", "EDITOR,ARG1=test": the --export text the agent resolves.
std::string export_text(const cli::ExportSpec& e);

// Where the job or step runs: -D/--chdir (a relative one from the
// submitter's directory, as Slurm's commands resolve it), else that directory.
std::string work_dir_of(const cli::JobRequest& r, const SubmitterContext& who);

}  // namespace drover::client
