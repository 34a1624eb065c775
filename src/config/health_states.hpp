// slurm.conf's HealthCheckNodeState: in which node states the agents run
// HealthCheckProgram (ALLOC, ANY, CYCLE, IDLE, MIXED, comma-separated, any
// case; ANY by default).
#pragma once

#include <set>
#include <string>

#include "common/result.hpp"

namespace drover::config {

struct HealthStates {
  bool any = true;
  bool cycle = false;            // spread the nodes over the interval
  std::set<std::string> states;  // "IDLE", "MIXED", "ALLOCATED"
  // Runs for a node in `base` state (IDLE, MIXED, ALLOCATED; "" unknown: runs).
  bool runs_in(const std::string& base) const { return any || base.empty() || states.count(base) > 0; }
};

Result<HealthStates> parse_health_states(const std::string& text);

}  // namespace drover::config
