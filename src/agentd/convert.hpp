// Between the API's messages and the agent runtime's types: a Launch from
// the controller becomes an agent::LaunchRequest for the Supervisor, and a
// step's StepStatus becomes the StepReport the agent sends back.
#pragma once

#include <map>
#include <string>

#include "agent/launch_spec.hpp"
#include "agent/step_status.hpp"
#include "drover/v1/agent.pb.h"

namespace drover::agentd {

// `gpu_files`: this node's GPU device files by node-global index ("" when
// emulated: no device isolation then, CUDA_VISIBLE_DEVICES only).
agent::LaunchRequest launch_from_proto(const v1::LaunchRequest& in, const std::string& node_name,
                                       const std::map<int, std::string>& gpu_files);

v1::StepReport report_from_status(const agent::StepStatus& s);

agent::StepKey key_from_proto(const v1::StepRef& ref);
v1::StepRef key_to_proto(const agent::StepKey& key);

}  // namespace drover::agentd
