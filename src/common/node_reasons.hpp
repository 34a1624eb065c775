// Node reasons that the agent and the controller both read.
#pragma once

namespace drover {

// Reasons the agent's own GPU health check gives start with this, as NHC's
// start with "NHC:": the controller lifts a drain with such a reason, and only
// such a drain, once the agent reports the GPUs healthy again.
inline constexpr const char* kGpuHealthPrefix = "gpu health: ";

}  // namespace drover
