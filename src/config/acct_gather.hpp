// slurm.conf's JobAcctGatherFrequency: how often the agents' step daemons
// look at what each task uses ("30", "task=30" or "task=30,energy=0,...";
// the task interval in seconds, 30 by default; 0: only as tasks end).
#pragma once

#include <cstdint>
#include <string>

#include "common/result.hpp"

namespace drover::config {

Result<int64_t> task_sampling_interval(const std::string& value);

}  // namespace drover::config
