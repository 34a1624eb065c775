// slurm.conf's PrologSlurmctld and EpilogSlurmctld, as Slurm's slurmctld
// runs them: on the controller's host, as the controller's user (SlurmUser
// when it runs as that user), with the job's variables. A job's PrologSlurmctld
// runs as the job starts and its batch script (or first step) waits for it;
// EpilogSlurmctld runs as the job ends and changes nothing. Each run has its
// own thread, which hands the result back to the controller's loop.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/site_script.hpp"

namespace drover::ctld {

struct CtldScript {
  int64_t job_id = 0;
  int32_t restart_count = 0;
  bool prolog = true;  // PrologSlurmctld, else EpilogSlurmctld
  std::string program;
  std::vector<std::string> env;  // NAME=value
};

class CtldScripts {
 public:
  using Done = std::function<void(const CtldScript&, const ScriptRun&)>;
  explicit CtldScripts(Done done);
  // Results of runs still going are dropped; their programs run on.
  ~CtldScripts();
  CtldScripts(const CtldScripts&) = delete;
  CtldScripts& operator=(const CtldScripts&) = delete;

  void start(CtldScript s);

 private:
  struct Shared {
    std::mutex mu;
    bool alive = true;
    Done done;
  };
  std::shared_ptr<Shared> shared_;
};

}  // namespace drover::ctld
