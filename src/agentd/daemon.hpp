// The node agent daemon (`drover agent --node NAME`): detects the node,
// opens the Supervisor (which re-adopts every step still in the spool),
// serves NodeAgentService on NodeAddr:Port and reports to the controller:
// a registration, then a heartbeat every few seconds and at once when a
// step ends. Several agents run on one host, each with its own NodeName,
// address or port and spool directory.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/hw/hardware.hpp"
#include "agent/supervisor.hpp"
#include "agentd/health_check.hpp"
#include "agentd/job_scripts.hpp"
#include "common/result.hpp"
#include "config/model.hpp"
#include "drover/v1/agent.pb.h"
#include "rpc/cluster_key.hpp"

namespace drover::rpc {
class RpcServer;
}

namespace drover::agentd {

struct AgentOptions {
  std::string node;
  std::string conf_path;
  std::string spool_dir;      // default: SlurmdSpoolDir/<node> (SlurmdSpoolDir's %n is the node name)
  std::string listen;         // default: NodeAddr:Port (Port 0: SlurmdPort)
  std::string controller;     // default: SlurmctldHost:SlurmctldPort
  std::string fake_gpus;      // "h100:4", or "config" for what slurm.conf declares; "" = detect
  std::string fake_gpu_dir;   // emulated device files; default none (no device isolation)
  std::string key_path;       // default: from slurm.conf (AuthInfo key=), else /etc/drover/drover.key
  std::string log_path;       // -L: the log file instead of SlurmdLogFile (empty: that, else stderr)
};

class Reporter;
}  // namespace drover::agentd
namespace drover::rpc {
class LocalSigner;
}  // namespace drover::rpc
namespace drover::agentd {

// After a report: false when it listed ended steps and the controller took
// none of them (nothing to gain from asking again at once). A step that
// ended after the report was made is news, reported at once: its job must
// not show RUNNING for the pause (before, every job ending while a report was
// in flight waited half a second to be reported).
bool worth_reporting_again_now(const v1::NodeReport& sent, const v1::NodeReportReply& reply);

class AgentDaemon {
 public:
  static Result<std::unique_ptr<AgentDaemon>> start(const AgentOptions& opts);
  ~AgentDaemon();

  // Reports until `stop` becomes true or the controller asks the agent to
  // shut down; then stops serving (jobs keep running).
  void run(const std::atomic<bool>& stop);

  // ---- for the service ----
  agent::Supervisor& supervisor() { return *supervisor_; }
  JobScripts& scripts() { return *scripts_; }
  const std::string& node() const { return opts_.node; }
  const std::string& spool_dir() const { return opts_.spool_dir; }
  const std::map<int, std::string>& gpu_files() const { return gpu_files_; }
  // Root, SlurmUser and the agent's own uid may command it.
  bool privileged(uint32_t uid) const;
  // Wakes the reporter (a step changed).
  void poke();
  // scontrol shutdown: run() returns soon after (the service's reply goes first).
  void request_shutdown();
  void log(const std::string& message) const;
  // The log file in use ("" = stderr), reopened on SIGUSR2 (logrotate).
  const std::string& log_file() const { return log_file_; }
  const config::ClusterConfig& config() const { return cfg_; }

  // The registration (registering) or heartbeat message.
  v1::NodeReport report(bool registering);

 private:
  AgentDaemon() = default;
  Status open(const AgentOptions& opts);
  Status detect();
  agent::hw::DetectOptions detect_options() const;
  void recheck_gpu_health();
  void start_signer();
  void apply(const v1::NodeReportReply& reply);

  AgentOptions opts_;
  config::ClusterConfig cfg_;
  const config::NodeConfig* node_cfg_ = nullptr;
  agent::hw::NodeHardware hw_;
  std::string drain_reason_;
  std::string log_file_;
  std::string gpu_health_;  // agent::gpu_health_problem of the last look ("" healthy)
  std::map<int, std::string> gpu_files_;
  std::unique_ptr<agent::Supervisor> supervisor_;
  std::unique_ptr<JobScripts> scripts_;  // before server_: destroyed after it
  std::unique_ptr<HealthCheck> health_;
  std::unique_ptr<rpc::RpcServer> server_;
  std::unique_ptr<Reporter> reporter_;
  std::unique_ptr<rpc::LocalSigner> signer_;  // this host's local signer, unless another agent serves it
  bool signer_elsewhere_ = false;             // another process serves it: look again now and then
  std::optional<rpc::ClusterKey> signer_key_;   // what the signer signs with, once read
  uint32_t slurm_user_uid_ = 0;
  int64_t start_time_ = 0;
  int heartbeat_ms_ = 5000;
  std::atomic<bool> poked_{false};
  std::atomic<bool> shutdown_{false};
};

// `drover agent --node NAME [...]`; other forms go to agent::agent_main.
int agentd_main(const std::vector<std::string>& args);
// `drover authd`: the local signer alone, for hosts without an agent (login nodes).
int authd_main(const std::vector<std::string>& args);

}  // namespace drover::agentd
