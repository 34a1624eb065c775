// drover-stepd's PMIx server (srun --mpi=pmix): the PMIx server library
// (OpenPMIx) for the step's tasks on this node, and the exchange with the
// step's other nodes through srun (common/pmix_relay.hpp has the protocol).
//
// PMIx calls the module's functions on its own progress thread; they only
// queue work for the step daemon's thread (an eventfd wakes its poll loop),
// which does the relay I/O and answers PMIx (PMIx moves the answers onto its
// own thread). One server per step daemon, so per process.
#pragma once

#include <poll.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/launch_spec.hpp"
#include "agent/user_info.hpp"
#include "common/result.hpp"

namespace drover::agent {

// Whether this build has a PMIx server (libpmix was found at configure time).
bool pmix_available();

// "pmix", "pmix_v3", "pmix_v4" (any case): the step wants a PMIx server.
bool wants_pmix(const std::string& mpi);

// The step's namespace, the same on every node of the step ("drover.<job>.<step>").
std::string pmix_nspace(const StepKey& key);

class PmixStepServer {
 public:
  // Starts the server for the step's tasks on this node: a private tmpdir
  // (`tmp_base`/drover-pmix.<node>.<job>.<step>.<pid>, owned by the job's user),
  // the namespace with the job-level data, every local task registered, and
  // (with more than one node) the connection to srun.
  static Result<std::unique_ptr<PmixStepServer>> start(const LaunchRequest& req, const UserInfo& user,
                                                       const std::string& tmp_base);
  ~PmixStepServer();
  PmixStepServer(const PmixStepServer&) = delete;
  PmixStepServer& operator=(const PmixStepServer&) = delete;

  // The variables a local task needs (PMIX_NAMESPACE, PMIX_RANK,
  // PMIX_SERVER_URI*, ...), "K=V", from PMIx_server_setup_fork.
  Result<std::vector<std::string>> task_env(int rank);

  // The step daemon's poll loop: add these, then call process() after each poll.
  void add_poll_fds(std::vector<pollfd>& fds) const;
  void process();
  // Set once a task called PMIx_Abort, here or on another node: the reason to end the step.
  std::optional<std::string> take_abort();

  struct Impl;

 private:
  explicit PmixStepServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace drover::agent
