// `drover sim run|compare|gen`: the simulator's command line (docs/sim.md).
#pragma once

#include <string>
#include <vector>

namespace drover::sim {

// Arguments after "sim"; returns the exit status (0 ok, 1 the run failed, 2 bad usage or input).
int sim_main(const std::vector<std::string>& args);

}  // namespace drover::sim
