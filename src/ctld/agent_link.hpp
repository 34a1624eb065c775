// Commands from the controller to node agents (NodeAgentService on
// NodeAddr:Port over TCP, signed with the cluster key). Calls are
// asynchronous: send() returns at once; a Launch's outcome comes back
// through the callback (on a gRPC thread: post it to the loop).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/model.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {

class AgentLink {
 public:
  // reply set: the agent answered; otherwise `error` says why the call failed.
  using LaunchDone = std::function<void(int64_t job_id, int64_t step_id, const std::string& node, int32_t restart_count, std::optional<v1::LaunchReply> reply,
                                        std::string error)>;
  using Log = std::function<void(const std::string&)>;

  AgentLink(const config::ClusterConfig& cfg, std::string key_path, LaunchDone on_launch, Log log);
  ~AgentLink();

  void send(const AgentCommand& cmd);
  // scontrol shutdown: asks each node's agent to stop; `answered` runs once
  // every one has answered or failed (on a gRPC thread; at once for none).
  void shutdown_agents(const std::vector<std::string>& nodes, std::function<void()> answered);
  // sstat: what a running step's tasks on `node` use now. `answered` runs
  // once (on a gRPC thread): with the reply, or with why there is none.
  using UsageDone = std::function<void(std::optional<v1::StepUsageReply> reply, std::string error)>;
  void step_usage(const std::string& node, int64_t job_id, int64_t step_id, UsageDone answered);
  // sbcast: one block of a file, written on `node`; `answered` as above.
  using WriteDone = std::function<void(std::optional<v1::WriteFileReply> reply, std::string error)>;
  void write_file(const std::string& node, v1::WriteFileRequest req, WriteDone answered);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace drover::ctld
