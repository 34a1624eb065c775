// slurm.conf's HealthCheckProgram on a node, as Slurm's slurmd runs it: as
// root with only SLURMD_NODENAME set, once when the agent starts (before it
// registers) and then every HealthCheckInterval seconds, at the same
// wall-clock moments on every node (HealthCheckNodeState=CYCLE spreads the
// nodes over the interval instead), only while the node is in one of the
// HealthCheckNodeState states (ANY by default). It is killed after 60
// seconds. The program acts for itself (scontrol update NodeName=...
// State=DRAIN); its failure is only logged, as Slurm's is.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "config/health_states.hpp"

namespace drover::agentd {

struct HealthCheckOptions {
  std::string program;        // "" none
  int64_t interval_s = 0;     // 0: only at start
  std::string node_state;     // HealthCheckNodeState as written ("" = ANY)
  std::string node;
  std::function<void(const std::string&)> log;
};

class HealthCheck {
 public:
  explicit HealthCheck(HealthCheckOptions opts);
  ~HealthCheck();
  HealthCheck(const HealthCheck&) = delete;
  HealthCheck& operator=(const HealthCheck&) = delete;

  bool configured() const { return !opts_.program.empty(); }
  // Runs the program now (the start-up run); false when it failed.
  bool run_once();
  // Starts the periodic runs (nothing when there is no program or interval).
  void start();
  // The node's state as the controller last said (IDLE, MIXED, ALLOCATED).
  void set_node_state(const std::string& base);

 private:
  void loop();
  HealthCheckOptions opts_;
  config::HealthStates states_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::string node_state_;
  std::thread thread_;
};

}  // namespace drover::agentd
