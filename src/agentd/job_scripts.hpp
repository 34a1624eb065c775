// slurm.conf's Prolog and Epilog on a node (Slurm's slurmd runs them as
// root, with the prolog_slurmd / epilog_slurmd environment the controller
// sends). The Prolog runs once per run of a job on the node, before its
// first step starts there; launches that arrive meanwhile wait for it. The
// Epilog runs when the controller says the job is over on the node, after
// every step of it there has ended; its end is reported with the node's
// next report until the controller acknowledges it. Both survive an agent
// restart through SPOOL/scripts/: a Prolog that succeeded is not run again,
// an Epilog that had not ended runs again, and an ended one is reported.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "agent/supervisor.hpp"
#include "common/result.hpp"
#include "drover/v1/agent.pb.h"

namespace drover::agentd {

struct JobScriptOptions {
  std::string prolog;      // Prolog= (a program or a glob pattern); "" none
  std::string epilog;      // Epilog=
  int64_t timeout_s = 0;   // PrologEpilogTimeout; 0 waits as long as they run
  std::string spool_dir;   // the agent's; state goes to spool_dir/scripts
  std::function<void(const std::string&)> log;
  std::function<void()> ended;  // an Epilog ended: report it now
};

class JobScripts {
 public:
  JobScripts(JobScriptOptions opts, agent::Supervisor& sup);
  ~JobScripts();  // Epilogs still waiting for steps stop waiting; running ones are waited for
  JobScripts(const JobScripts&) = delete;
  JobScripts& operator=(const JobScripts&) = delete;

  // The Prolog for this run of the job (its environment: the launch's
  // prolog_env), unless it already ran here: an error (what failed, with
  // the Prolog's output) when it failed.
  Status prolog(const v1::LaunchRequest& launch);
  // The job is over here: ends its steps left on the node, then runs the
  // Epilog (in the background). A repeated order is ignored.
  void order(const v1::EpilogOrder& order);
  // Ended Epilogs not yet acknowledged, for the node's report.
  void fill(v1::NodeReport& report) const;
  void acknowledge(const v1::EpilogDone& done);

 private:
  using Key = std::pair<uint64_t, int32_t>;  // job, restart count
  struct Prolog;
  struct Epilog {
    v1::EpilogOrder order;
    bool ended = false;
    bool failed = false;
    std::string message;
  };
  std::string path(const char* kind, const Key& k) const;
  void save(const Key& k, const Epilog& e) const;
  void start(const Key& k);  // under mu_
  void run_epilog(Key k);
  // Runs every program of `spec` in turn; "" when all succeeded, else what failed.
  std::string run_all(const std::string& spec, const char* what, const std::vector<std::string>& env) const;

  JobScriptOptions opts_;
  agent::Supervisor& sup_;
  std::string dir_;
  mutable std::mutex mu_;
  std::map<Key, std::shared_ptr<Prolog>> prologs_;  // running, or failed and still being answered
  std::map<Key, Epilog> epilogs_;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> over;  // the thread has returned (join does not wait)
  };
  std::vector<Worker> workers_;
  bool stopping_ = false;
};

}  // namespace drover::agentd
