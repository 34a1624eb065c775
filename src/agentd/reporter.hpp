// The agent's client of the controller's AgentService (TCP, signed tokens).
#pragma once

#include <memory>
#include <string>

#include "common/result.hpp"
#include "drover/v1/agent.pb.h"

namespace drover::agentd {

class Reporter {
 public:
  static Result<std::unique_ptr<Reporter>> create(const std::string& target, const std::string& key_path);
  ~Reporter();
  // Sends one registration or heartbeat; `code` gets the gRPC status code on failure.
  Result<v1::NodeReportReply> send(const v1::NodeReport& report, bool registering, int* code);
  // True, once, when the connection of the last successful send is gone:
  // the controller stopped or restarted. The agent then reports at once
  // rather than at its next heartbeat (up to 30 s away), so that a restarted
  // controller hears from its nodes within a second, as Slurm's asks its
  // nodes to register when it starts. Cheap: reads the channel's state.
  bool connection_lost();

 private:
  struct Impl;
  explicit Reporter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace drover::agentd
