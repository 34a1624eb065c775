// Resource limits carried from the submitting shell to a job's tasks, as
// Slurm's PropagateResourceLimits, PropagateResourceLimitsExcept and the
// --propagate option of sbatch and srun do: the command reads its own soft
// limits and sends those chosen in the job's environment as
// SLURM_RLIMIT_<NAME>=<value> (a number, or "unlimited"); the step daemon
// takes them out of the environment and sets them on each task before it
// runs. A name not chosen leaves the task with the agent's own limit.
#pragma once

#include <sys/resource.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace drover {

// The limits Slurm propagates, by the names its options take.
struct RlimitKind {
  const char* name;  // "NOFILE"
  int resource;      // RLIMIT_NOFILE
};
const std::vector<RlimitKind>& rlimit_kinds();

// A comma list of ALL, NONE and the names above (any case) as a bit set over
// rlimit_kinds(); "" is ALL. The error names the word it does not know.
Result<unsigned> parse_rlimit_list(std::string_view text);

// Which limits a command sends: its --propagate if given (`option`, "" for
// the bare option: all), else slurm.conf's PropagateResourceLimits, else all
// but PropagateResourceLimitsExcept's; with neither, all.
Result<unsigned> rlimits_to_propagate(const std::optional<std::string>& option, std::string_view conf_list,
                                      std::string_view conf_except);

// slurm.conf's two keys together: an error when both are set or either
// names what is not a limit.
Result<unsigned> check_propagation_keys(std::string_view conf_list, std::string_view conf_except);

// This process's soft limits for the chosen kinds, as environment entries.
std::vector<std::pair<std::string, std::string>> rlimit_env(unsigned chosen);

inline constexpr std::string_view kRlimitEnvPrefix = "SLURM_RLIMIT_";

struct PropagatedLimit {
  int resource;
  const char* name;
  rlim_t value;
};

// Removes every SLURM_RLIMIT_* entry from `env`, returning those it can read
// (an unknown name or a value that is not a number is dropped).
std::vector<PropagatedLimit> take_rlimits(std::map<std::string, std::string>& env);

// The limits a task gets for `want` when the daemon's own are `have`: the
// soft limit `want`, the hard one unchanged; a `want` above the hard limit
// gets the hard limit (slurm.conf(5): the user's limits cannot exceed the
// hard limits the node's daemon runs under), and `note` says so.
struct RlimitPlan {
  struct rlimit limit;
  std::string note;  // empty when applied as asked
};
RlimitPlan plan_rlimit(const PropagatedLimit& want, const struct rlimit& have);

}  // namespace drover
