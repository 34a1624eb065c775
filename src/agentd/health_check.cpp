#include "agentd/health_check.hpp"

#include <chrono>
#include <ctime>
#include <functional>

#include "common/site_script.hpp"

namespace drover::agentd {
namespace {

constexpr int64_t kKillAfterS = 60;  // Slurm's: the program is killed after 60 seconds

}  // namespace

HealthCheck::HealthCheck(HealthCheckOptions opts) : opts_(std::move(opts)) {
  auto parsed = config::parse_health_states(opts_.node_state);
  if (parsed) {
    states_ = *parsed;
  } else if (opts_.log) {
    opts_.log("HealthCheckNodeState=" + opts_.node_state + ": " + parsed.error().message + "; running it in any state");
  }
}

HealthCheck::~HealthCheck() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool HealthCheck::run_once() {
  if (!configured()) return true;
  ScriptOptions so;
  so.env = {"SLURMD_NODENAME=" + opts_.node};
  so.timeout_s = kKillAfterS;
  const ScriptRun run = run_script(opts_.program, so);
  if (run.ok()) return true;
  if (opts_.log) opts_.log("health check " + opts_.program + " failed: " + run.describe() + run.output_suffix());
  return false;
}

void HealthCheck::start() {
  if (!configured() || opts_.interval_s <= 0) return;
  thread_ = std::thread([this] { loop(); });
}

void HealthCheck::set_node_state(const std::string& base) {
  std::lock_guard lock(mu_);
  node_state_ = base;
}

void HealthCheck::loop() {
  const int64_t every = opts_.interval_s;
  // The same wall-clock moments on every node; CYCLE: each node its own
  // moment within the interval.
  const int64_t offset = states_.cycle ? static_cast<int64_t>(std::hash<std::string>{}(opts_.node) % every) : 0;
  for (;;) {
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    int64_t next = (now - offset) / every * every + every + offset;
    std::string state;
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, std::chrono::seconds(next - now), [this] { return stopping_; })) return;
      state = node_state_;
    }
    if (states_.runs_in(state)) run_once();
  }
}

}  // namespace drover::agentd
