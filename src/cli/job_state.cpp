#include "cli/job_state.hpp"

#include <array>

#include "common/strings.hpp"

namespace drover::cli {
namespace {

struct StateName {
  JobState state;
  const char* long_name;
  const char* compact;
};

// Slurm's order (squeue's "Valid job states include" list).
constexpr std::array<StateName, 24> kStates{{
    {JobState::kPending, "PENDING", "PD"},
    {JobState::kRunning, "RUNNING", "R"},
    {JobState::kSuspended, "SUSPENDED", "S"},
    {JobState::kCompleted, "COMPLETED", "CD"},
    {JobState::kCancelled, "CANCELLED", "CA"},
    {JobState::kFailed, "FAILED", "F"},
    {JobState::kTimeout, "TIMEOUT", "TO"},
    {JobState::kNodeFail, "NODE_FAIL", "NF"},
    {JobState::kPreempted, "PREEMPTED", "PR"},
    {JobState::kBootFail, "BOOT_FAIL", "BF"},
    {JobState::kDeadline, "DEADLINE", "DL"},
    {JobState::kOutOfMemory, "OUT_OF_MEMORY", "OOM"},
    {JobState::kCompleting, "COMPLETING", "CG"},
    {JobState::kConfiguring, "CONFIGURING", "CF"},
    {JobState::kResizing, "RESIZING", "RS"},
    {JobState::kResvDelHold, "RESV_DEL_HOLD", "RD"},
    {JobState::kRequeued, "REQUEUED", "RQ"},
    {JobState::kRequeueFed, "REQUEUE_FED", "RF"},
    {JobState::kRequeueHold, "REQUEUE_HOLD", "RH"},
    {JobState::kRevoked, "REVOKED", "RV"},
    {JobState::kSignaling, "SIGNALING", "SI"},
    {JobState::kSpecialExit, "SPECIAL_EXIT", "SE"},
    {JobState::kStageOut, "STAGE_OUT", "SO"},
    {JobState::kStopped, "STOPPED", "ST"},
}};

const StateName& entry(JobState s) { return kStates[static_cast<std::size_t>(s)]; }

}  // namespace

const char* job_state_long(JobState s) { return entry(s).long_name; }
const char* job_state_compact(JobState s) { return entry(s).compact; }

std::optional<JobState> parse_job_state(std::string_view name) {
  for (const auto& e : kStates)
    if (iequals(name, e.long_name) || iequals(name, e.compact)) return e.state;
  return std::nullopt;
}

const std::vector<JobState>& all_job_states() {
  static const std::vector<JobState> all = [] {
    std::vector<JobState> v;
    for (const auto& e : kStates) v.push_back(e.state);
    return v;
  }();
  return all;
}

bool job_state_is_final(JobState s) {
  switch (s) {
    case JobState::kCompleted:
    case JobState::kCancelled:
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kNodeFail:
    case JobState::kPreempted:
    case JobState::kBootFail:
    case JobState::kDeadline:
    case JobState::kOutOfMemory:
    case JobState::kRevoked:
      return true;
    default:
      return false;
  }
}

}  // namespace drover::cli
