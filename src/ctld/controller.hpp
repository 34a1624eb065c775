// The controller daemon: loads the configuration, takes the state lock,
// opens the store and recovers, then serves the API (Unix socket under
// StateSaveLocation, TCP at SlurmctldHost:SlurmctldPort) with one state
// thread (EventLoop) owning ControllerState. Every change is committed to
// the store before the caller's reply and before any command goes to an
// agent.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "ctld/loop.hpp"
#include "ctld/state.hpp"
#include "rpc/identity.hpp"
#include "rpc/user_names.hpp"

namespace grpc {
class ServerContextBase;
}

namespace drover::store {
class Store;
}
namespace drover::rpc {
class RpcServer;
}

namespace drover::ctld {

class AgentLink;
class WireServer;
struct ControllerLock;

struct ControllerOptions {
  std::string conf_path;
  // Overrides for tests and `drover up` (empty: from slurm.conf).
  std::string tcp_address;
  std::string log_path;  // -L: the log file instead of SlurmctldLogFile (empty: that, else stderr)
};

class Controller {
 public:
  static Result<std::unique_ptr<Controller>> start(const ControllerOptions& opts);
  ~Controller();

  // Blocks until stop() (or SIGTERM/SIGINT through request_stop()).
  void wait();
  void request_stop();
  void stop();
  // The store failed (disk full, I/O error): the process should exit non-zero.
  bool failed() const { return store_failed_; }

  // ---- for the service handlers ----
  // Who the caller is, with the privilege the controller grants.
  Result<Caller> identify(const grpc::ServerContextBase& ctx, int* grpc_code) const;
  Caller caller_for(uint32_t uid, uint32_t gid) const;
  void post(EventLoop::Task task) { loop_.post(std::move(task)); }
  ControllerState& state() { return *state_; }
  AgentLink* agents() { return agents_.get(); }  // null in tests without agents
  // Reads only (history queries); changes go through commit().
  const store::Store& store() const { return *store_; }
  // Makes fx durable, then calls `done` (status of the commit) and sends fx's commands.
  void commit(Effects fx, std::function<void(const Status&)> done);
  int64_t now() const;
  int tcp_port() const;
  const Settings& settings() const { return state_->settings(); }
  // Why no new job may be taken now: the filesystem of StateSaveLocation has
  // less free than the reserve kept for the jobs already accepted (their
  // starts, ends and accounting still have to be written); "" when it may.
  // The reserve is 64 MiB, or DROVER_STATE_RESERVE_MB in the controller's
  // environment. Logs when the shortage begins and ends.
  std::string state_space_shortage();
  // The log file in use ("" = stderr), reopened on SIGUSR2 (logrotate).
  const std::string& log_file() const { return log_file_; }
  // Re-reads slurm.conf; refuses a change the running state cannot take.
  Result<std::vector<std::string>> reconfigure();
  // scontrol shutdown: tells the registered agents to stop (unless
  // controller_only), then wait() returns once they have answered (at most a
  // few seconds) and the reply has had time to go. Returns the agents told.
  int shutdown(bool controller_only, const std::string& by);

 private:
  Controller() = default;
  Status open(const ControllerOptions& opts);
  Status recover();
  Status recover_accounting();
  Status recover_usage();
  void after_batch();
  void on_tick();
  void dispatch(std::vector<AgentCommand> commands);

  ControllerOptions opts_;
  std::unique_ptr<ControllerLock> lock_;
  std::unique_ptr<ControllerState> state_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<rpc::RpcServer> server_;
  std::unique_ptr<AgentLink> agents_;
  std::unique_ptr<WireServer> wire_;
  std::unique_ptr<Mailer> mailer_;
  std::unique_ptr<CtldScripts> scripts_;  // PrologSlurmctld/EpilogSlurmctld runs
  EventLoop loop_;
  bool need_schedule_ = false;
  // Batches committed by the current loop batch's tasks, submitted together after it.
  std::vector<std::pair<store::Batch, std::function<void(const Status&)>>> held_;
  void flush_commits();
  int64_t last_full_pass_ = 0;
  int64_t last_housekeeping_ = 0;
  mutable rpc::UserNames user_names_;
  std::atomic<bool> stop_requested_{false};
  std::string log_file_;  // SlurmctldLogFile or -L ("" = stderr)
  std::atomic<bool> store_failed_{false};
  uint64_t state_reserve_bytes_ = 64ull << 20;
  std::atomic<bool> short_of_space_{false};
  // scontrol shutdown: set when asked; ready once the agents have answered.
  std::atomic<bool> shutdown_asked_{false};
  std::shared_ptr<std::atomic<bool>> shutdown_ready_ = std::make_shared<std::atomic<bool>>(false);
};

// `drover controller [--config PATH]`: runs until SIGTERM/SIGINT.
int controller_main(const std::vector<std::string>& args);

}  // namespace drover::ctld
