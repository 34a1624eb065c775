// slurm.conf's RequeueExit and RequeueExitHold: the exit codes of a batch
// script that put its job back in the queue ("1-9,18").
#pragma once

#include <bitset>
#include <string_view>

#include "common/result.hpp"

namespace drover::config {

using ExitCodes = std::bitset<256>;

// Codes 0-255 and ranges lo-hi, separated by commas; the error names the
// first item that is neither.
Result<ExitCodes> parse_exit_codes(std::string_view list);

}  // namespace drover::config
