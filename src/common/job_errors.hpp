// Slurm's words for what went wrong with a job operation. The controller
// answers with them (the first line of its error; a second line may say
// more), and the commands compare an answer's first line with them to word
// and number their own output as Slurm's commands do.
#pragma once

namespace drover {

inline constexpr const char* kInvalidJobId = "Invalid job id specified";
inline constexpr const char* kAccessDenied = "Access/permission denied";
// Slurm 22.05's answer to scontrol update, hold or release of another user's job (anchor cluster).
inline constexpr const char* kInvalidUserId = "Invalid user id";
inline constexpr const char* kAlreadyDone = "Job/step already completing or completed";
inline constexpr const char* kNoSuchStep = "Job step not running";  // a running job without that step (Drover's)
inline constexpr const char* kJobPending = "Job is pending execution";
inline constexpr const char* kNotPending = "Job is no longer pending execution";
inline constexpr const char* kJobHeld = "Job is in held state, pending scheduler release";
inline constexpr const char* kFinished = "Job has already finished";
// A signal (not SIGKILL) to a pending job: Slurm 22.05's scancel said this, and exited 228 (2020 % 256).
inline constexpr const char* kCannotAlterNow = "Job can not be altered now, try again later";
inline constexpr const char* kInvalidGres = "Invalid generic resource (gres) specification";

}  // namespace drover
