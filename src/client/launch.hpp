// What srun and salloc share: getting an allocation (blocking, with Slurm's
// messages) and running one step in it with the tasks' streams forwarded
// (step_io.cpp).
#pragma once

#include <cstdint>
#include <chrono>
#include <string>
#include <vector>

#include "client/api.hpp"
#include "drover/v1/steps.pb.h"

namespace drover::client {

struct StepOutput {
  bool label = false;       // -l: "R: " before every line of task R
  bool unbuffered = false;  // -u: write what arrives, not whole lines
  bool quiet = false;       // -Q
  int verbose = 0;          // -v
  int immediate_s = -1;     // -I inside an allocation: give up on a busy step after this many seconds
  // --pty with a terminal on stdout: task 0 runs in a pseudo-terminal of this
  // size; srun's terminal is raw while it runs and its size changes follow.
  bool pty = false;
  int pty_rows = 0, pty_cols = 0;
  bool quit_on_interrupt = false;  // --quit-on-interrupt: the first Ctrl-C ends the step (no status)
  bool disable_status = false;     // -X: Ctrl-C is passed to the tasks (SIGINT), no status report
  int task_wait_s = 0;             // -W: the step is ended this long after its first task ended (0: never)
  int64_t* created_step = nullptr;  // when set, receives the step's id once it is created
  int kill_wait_s = 30;  // slurm.conf's KillWait: how long a cancelled step may take ("Job step aborted: ...")
  bool own_allocation = false;  // srun outside an allocation: its asking keeps the allocation's (InactiveLimit)
};

// Creates the step (waiting while other steps hold what it needs), forwards
// stdin/stdout/stderr and signals until every task has ended, prints Slurm's
// per-task error lines and returns srun's exit status: the highest task exit
// code, 128+signal for a task killed by a signal (srun(1) RETURN VALUE).
// `req` is filled except for the launcher address, which this sets.
int run_step(const std::string& program, ControllerApi& api, v1::CreateStepRequest req, const StepOutput& out);

// Allocation for srun/salloc outside one: submits `job` (batch=false) and
// waits until it runs, printing "<program>: job N queued and waiting for
// resources" and "... has been allocated resources" as Slurm does.
// immediate_s >= 0 (-I): gives up after that many seconds (0: at once),
// cancels the request and prints "Unable to allocate resources: ...".
// Returns the running job's record, or the exit status to return (>0).
// `watched`: the caller stays with the allocation (srun, salloc without
// --no-shell) and its asking tells the controller so (InactiveLimit).
struct Allocation {
  int64_t job_id = 0;
  v1::JobRecord rec;
  int failed = 0;  // non-zero: exit with this
  std::chrono::steady_clock::duration waited{};  // from submission to the grant
};
Allocation allocate(const std::string& program, ControllerApi& api, const v1::JobDescriptor& job, int immediate_s,
                    bool quiet, bool watched);

// salloc's environment for its command (SLURM_JOB_ID, SLURM_JOB_NODELIST, ...).
std::vector<std::string> allocation_env(const v1::JobRecord& rec, const std::string& cluster,
                                        const std::string& conf_path);

}  // namespace drover::client
