// The node agent's job runtime: the API the controller/agent RPC layer calls.
//
//   auto sup = Supervisor::open(opts);          // probes cgroups, adopts running steps from the spool
//   sup->launch(req);                           // batch script or this node's tasks of a step
//   sup->signal(key, SIGUSR1, kAllProcesses);   // scancel --signal / --signal=[B:]SIG
//   sup->terminate_job(id, kCancelled, "...");  // scancel; SIGTERM, KillWait, SIGKILL
//   sup->wait_any(ms) / sup->finished();        // steps that ended and are not yet acknowledged
//   sup->acknowledge(key);                      // the controller has the exit: forget the record
//
// Each step runs under its own step daemon (stepd.hpp), which outlives the
// agent: destroying the Supervisor, or the agent dying, leaves every job
// running, and the next Supervisor::open on the same spool re-attaches to
// them (pidfd + the step's cgroup) and reports their exits. Thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "agent/cgroup.hpp"
#include "agent/fork_server.hpp"
#include "agent/launch_spec.hpp"
#include "agent/step_status.hpp"
#include "agent/user_info.hpp"
#include "common/result.hpp"

namespace drover::agent {

struct SupervisorOptions {
  std::string node_name;  // this agent's NodeName
  std::string spool_dir;  // SlurmdSpoolDir for this node (created if missing)
  // How to start a step daemon; the step's spool directory is appended.
  // Production: default_stepd_command() ("<this executable> agent --stepd").
  std::vector<std::string> stepd_command;
  // The step daemon for steps that want a PMIx server (srun --mpi=pmix);
  // empty: stepd_command. The small drover-stepd carries no PMIx (loading
  // libpmix and its libraries costs more than the rest of its start), so
  // the agent gives those steps to the full binary.
  std::vector<std::string> pmix_stepd_command;
  int64_t kill_wait_ms = 30000;  // KillWait
  int64_t usage_interval_s = 30; // JobAcctGatherFrequency (task=)
  bool usage_samples = true;     // JobAcctGatherType other than jobacct_gather/none
  bool allow_root_jobs = false;  // run jobs whose user is root (refused otherwise)
  std::string task_prolog;       // slurm.conf's TaskProlog / TaskEpilog, given to every step
  std::string task_epilog;
  CgroupOptions cgroups;
  std::vector<std::string> node_gpu_files;  // every GPU device file of this node, for isolation
  int launch_timeout_ms = 30000;           // how long launch() waits for the tasks to start
  // Fork step daemons from a resident `stepd_command --fork-server` instead
  // of executing stepd_command for each (fork_server.hpp); steps that want
  // PMIx, and every launch while the server cannot be had, are executed.
  bool fork_server = true;
};

// "<path of the running executable> agent --stepd".
std::vector<std::string> default_stepd_command();

enum class SignalScope {
  kAllProcesses,  // every process of the step (scancel --signal, srun signals)
  kBatchShell,    // the batch script's shell only (scancel -b, --signal=B:)
};

struct LaunchResult {
  StepKey key;
  bool started = false;        // the tasks were started (they may have ended since)
  bool already_known = false;  // the step was already in the spool: nothing was launched again
  std::string failure;         // when !started: why; the step's final status says the same
  std::vector<pid_t> task_pids;
};

class Supervisor {
 public:
  static Result<std::unique_ptr<Supervisor>> open(SupervisorOptions opts);
  ~Supervisor();  // closes handles only: running steps keep running
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // What this host cannot enforce, one line each (said once by the caller at start-up).
  std::vector<std::string> cannot_enforce() const;
  std::string enforcement_summary() const;
  // Steps found running (or ended, unreported) in the spool at open().
  std::vector<StepKey> adopted() const;

  // Starts a step daemon and waits until the tasks run or the launch failed.
  // Errors are the agent's own (invalid request, spool not writable, daemon
  // could not start); a job-level failure (missing --chdir directory, unknown
  // user, refused root job) is a LaunchResult with started=false and a final
  // FAILED status carrying the reason.
  Result<LaunchResult> launch(const LaunchRequest& request);

  Status signal(const StepKey& key, int sig, SignalScope scope);
  // signal() to every process of every running step of the job on this node
  // (scontrol suspend's SIGSTOP, resume's SIGCONT).
  Status signal_job(uint64_t job_id, int sig);
  // How terminate() ends a step: quietly (a clean-up), or as a cancel or
  // time limit the step's user is told of on its stderr (Slurm's "*** JOB
  // 12 ON cpu1 CANCELLED AT ... ***"), told as a requeue ("... DUE TO JOB
  // REQUEUE ***"), as a preemption ("... DUE TO PREEMPTION ***"), or told
  // with SIGKILL at once (scancel N.S).
  enum class Ending { kQuiet, kNotice, kRequeue, kPreempt, kKillNow };
  // Ends a step the way Slurm does (SIGCONT+SIGTERM, KillWait, SIGKILL) and
  // records `state` (kCancelled, kTimeout, kNodeFail, ...) with `reason`.
  Status terminate(const StepKey& key, JobState state, const std::string& reason, Ending how = Ending::kQuiet);
  // terminate() for every running step of the job on this node.
  Status terminate_job(uint64_t job_id, JobState state, const std::string& reason, Ending how = Ending::kQuiet);
  // New time limit in seconds from the job's start (0: unlimited).
  Status set_time_limit(const StepKey& key, int64_t seconds);

  std::optional<StepStatus> status(const StepKey& key);
  // sstat: asks the step daemon to read its tasks' usage now and returns
  // the status with it (within timeout_ms; else the last one it wrote).
  Result<StepStatus> sample(const StepKey& key, int timeout_ms);
  std::vector<StepStatus> steps();     // every step known: running and ended-unacknowledged, by key
  std::vector<StepStatus> finished();  // ended, not yet acknowledged, by key
  // Blocks until the step has ended (or timeout_ms passes; -1 waits forever).
  std::optional<StepStatus> wait(const StepKey& key, int timeout_ms);
  // Blocks until at least one step has ended and is unacknowledged, or timeout_ms passes.
  std::vector<StepStatus> wait_any(int timeout_ms);
  // Forgets an ended step: its spool record is removed. Error while it runs.
  Status acknowledge(const StepKey& key);

  // Removes this node's cgroup directories when no step uses them any more
  // (for an agent that stops for good, and for tests). Running steps keep theirs.
  void release_cgroups();

 private:
  // `act` for each running step of the job here; the first failure, or an
  // error naming the node when the job has no running step on it.
  Status for_each_running_step(uint64_t job_id, const std::function<Status(const StepKey&)>& act);
  struct Tracked {
    std::string dir;
    pid_t pid = 0;
    uint64_t start_ticks = 0;
    int pidfd = -1;
    bool launching = false;  // placeholder while launch() runs without the lock
    bool reaped = false;     // the daemon has exited and (when our child) been waited for
    StepStatus last;
  };

  explicit Supervisor(SupervisorOptions opts);
  void adopt_existing();
  void refresh(Tracked& t);
  void reap(Tracked& t, int wait_ms);
  void handle_vanished(Tracked& t);
  Result<LaunchResult> start_stepd(const LaunchRequest& req, Tracked& t);
  // Follows the step daemon `pid` (pidfd, and stepd.json for a restarted agent).
  void track(Tracked& t, pid_t pid);
  // What launch() answers once the daemon gave its word (or did not).
  LaunchResult launch_result(const LaunchRequest& req, Tracked& t, const std::string& word, const std::string& log);
  Status prepare_record(const LaunchRequest& req, const std::string& dir);
  Status control(const StepKey& key, const std::string& line);
  // A step daemon forked by the fork server (started, or restarted, here); an
  // Error when there is none to be had: the caller executes one instead,
  // unless `*sent` (the request reached a server that then failed: a daemon
  // may run, and only its report on the notify pipe can tell).
  Result<pid_t> fork_stepd(const std::string& dir, const std::string& log, int notify_fd, bool* sent);
  // lookup_user(), remembered for a few seconds per account; nullopt when it fails.
  std::optional<UserInfo> cached_user(const std::string& name, uid_t uid, gid_t gid);

  SupervisorOptions opts_;
  CgroupHost cgroups_;
  std::string cgroup_node_;
  mutable std::mutex mu_;
  std::map<StepKey, Tracked> steps_;
  std::vector<StepKey> adopted_;
  int wake_fd_ = -1;  // eventfd: a launch wakes wait_any()
  std::mutex fork_mu_;
  std::unique_ptr<ForkServer> fork_server_;
  int fork_server_starts_ = 0;  // bounded: a server that keeps failing is given up for exec
  std::mutex users_mu_;
  std::map<std::tuple<std::string, uid_t, gid_t>, std::pair<std::chrono::steady_clock::time_point, UserInfo>> users_;
};

}  // namespace drover::agent
