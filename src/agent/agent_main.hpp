// `drover agent ...`: the node agent's command line.
#pragma once

#include <string>
#include <vector>

namespace drover::agent {

// drover agent --detect [--config PATH --node NAME] [--fake-gpus=h100:4] [--check-nvidia-smi]
//   prints the detected hardware as JSON (and, with a config, the comparison
//   with the node's declaration and the drain reason it would cause);
// drover agent --stepd STEP_DIR
//   the step daemon (started by the agent itself);
// drover agent --node NAME is the daemon, in src/agentd (agentd_main), which
//   hands the two forms above to this function.
int agent_main(const std::vector<std::string>& args);

}  // namespace drover::agent
