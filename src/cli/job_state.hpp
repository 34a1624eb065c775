// Job states as Slurm's commands print and accept them: long names
// (PENDING, RUNNING, ...) and compact codes (PD, R, ...).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace drover::cli {

// Every state a job is displayed in. The controller reports the one state a
// job is in now; transient Slurm flags (COMPLETING, CONFIGURING, REQUEUED,
// ...) are states here, as squeue prints them.
enum class JobState {
  kPending,
  kRunning,
  kSuspended,
  kCompleted,
  kCancelled,
  kFailed,
  kTimeout,
  kNodeFail,
  kPreempted,
  kBootFail,
  kDeadline,
  kOutOfMemory,
  kCompleting,
  kConfiguring,
  kResizing,
  kResvDelHold,
  kRequeued,
  kRequeueFed,
  kRequeueHold,
  kRevoked,
  kSignaling,
  kSpecialExit,
  kStageOut,
  kStopped,
};

const char* job_state_long(JobState s);     // "PENDING"
const char* job_state_compact(JobState s);  // "PD"
// Long or compact name, any case ("pd", "Running"). nullopt when unknown.
std::optional<JobState> parse_job_state(std::string_view name);
// All states in Slurm's listing order (for "Valid job states include: ...").
const std::vector<JobState>& all_job_states();
// Finished: the job holds no resources and will not run again by itself.
bool job_state_is_final(JobState s);

}  // namespace drover::cli
