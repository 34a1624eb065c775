// The step daemon (Slurm's slurmstepd role): one process per step on a node,
// started by the agent, that forks the step's tasks, enforces its limits and
// records how it ends. It is the child subreaper of every process of the step,
// so a double-forked daemon or a setsid'd grandchild still comes back to it
// and is killed with the step. It keeps running when the agent restarts; the
// new agent finds it through the spool (spool.hpp) and talks to it through the
// control FIFO.
//
// Single-threaded by design: after fork() the task child may allocate, and the
// daemon can switch its effective uid to open files as the job's user. The one
// exception is the PMIx server's progress thread (srun --mpi=pmix), started
// once every task's files are open (no seteuid after it); glibc's fork() keeps
// malloc usable in the child.
#pragma once

#include <poll.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/cgroup.hpp"
#include "agent/io_pattern.hpp"
#include "agent/launch_spec.hpp"
#include "agent/pmix_server.hpp"
#include "agent/spool.hpp"
#include "common/rlimits.hpp"
#include "agent/step_status.hpp"
#include "agent/task_scripts.hpp"
#include "agent/user_info.hpp"

namespace drover::agent {

// Entry point: `drover agent --stepd STEP_DIR` and `drover-stepd STEP_DIR`.
// File descriptor 3, when open, is the launch notification pipe to the agent.
int stepd_main(const std::vector<std::string>& args);

// A TCP connection to srun (the step's launcher_host:launcher_port) that has
// sent `hello`; `purpose` names it in errors.
Result<int> connect_to_launcher(const StepLayout& L, const std::string& hello, const std::string& purpose);

// A task's stream connection to srun, announced "DROVERIO <io_key> <rank>
// <stream>": 0 its stdin, 1 stdout, 2 stderr, kWinchStream srun --pty's
// window sizes (lines "ROWS COLS"). Half-closed the way it is not used.
inline constexpr int kWinchStream = 4;
Result<int> connect_task_stream(const StepLayout& L, int rank, int stream);

// One task to start: the parts computed before fork().
struct TaskPlan {
  int rank = 0;      // the task's rank in the step (SLURM_PROCID)
  int local_id = 0;
  std::vector<std::string> env;  // without SLURM_TASK_PID
  int in_fd = -1, out_fd = -1, err_fd = -1;
  std::string out_path, err_path;
  bool controlling_tty = false;  // srun --pty: the task leads a session whose terminal is in_fd
};

class StepDaemon {
 public:
  StepDaemon(std::string dir, int notify_fd);
  int run();

 private:
  // setup (stepd.cpp)
  Status load();
  Status detach();
  Status check_user();
  void setup_cgroup();
  void set_time_limit(int64_t seconds);
  // launch (stepd_launch.cpp)
  Status start_pmix();
  Status prepare_tasks();
  // rlimits_ from what the job's environment asked (notes: a line for each
  // limit above this node's hard one, for the first task's stderr).
  void plan_rlimits(const std::vector<PropagatedLimit>& wanted, std::string& notes);
  Status open_task_io(TaskPlan& t, const std::string& work_dir);
  Status connect_task_io(TaskPlan& t, const std::string& work_dir, const PatternValues& v);
  Status open_task_input(TaskPlan& t, const std::string& work_dir, const PatternValues& v);
  // srun --pty (stepd_pty.cpp): task 0's terminal and its relay to srun
  Status open_task_pty(TaskPlan& t);
  void pty_poll_fds(std::vector<pollfd>& fds) const;
  void pty_pump();
  void pty_close();
  void start_tasks();
  pid_t fork_task(const TaskPlan& t, std::string& error);
  Result<std::vector<std::string>> task_command(int rank) const;
  // running (stepd.cpp)
  void event_loop();
  void reap_children();
  void run_epilogs(std::size_t task);
  void read_commands();
  void handle_command(const ControlCommand& c);
  void handle_timers();
  int next_timeout_ms() const;
  // `kill_now`: SIGKILL at once (scancel of one step) instead of SIGTERM
  // and SIGKILL after KillWait.
  void begin_termination(JobState state, const std::string& reason, bool kill_now = false);
  // `why`: " DUE TO JOB REQUEUE", " DUE TO PREEMPTION" or "" (a time limit says its own).
  void termination_notice(JobState state, std::string_view why);
  void signal_processes(int sig, bool batch_shell_only);
  std::vector<pid_t> step_processes() const;
  bool all_tasks_ended() const;
  void sample_usage();
  // ending
  void finish();
  void fail_launch(const std::string& reason);
  void write_state();
  void notify(const char* word);

  std::string dir_;
  int notify_fd_ = -1;
  LaunchRequest req_;
  StepdConfig cfg_;
  UserInfo user_;
  std::optional<UserInfo> agent_user_;  // the agent's lookup, from the spool record
  StepCgroup cgroup_;
  StepStatus status_;
  std::vector<TaskPlan> plans_;
  // TaskProlog / srun's --task-prolog, run in each task's process before it
  // executes; srun's --task-epilog / TaskEpilog, run after each task ends
  // (task_scripts.hpp). With epilogs each task's stderr stays open here.
  std::vector<TaskScript> task_prologs_, task_epilogs_;
  // The submitting shell's resource limits each task gets (SLURM_RLIMIT_*,
  // common/rlimits.hpp), as planned against this daemon's own.
  std::vector<std::pair<int, struct rlimit>> rlimits_;
  std::unique_ptr<PmixStepServer> pmix_;  // srun --mpi=pmix: the PMIx server of the step's tasks here
  bool devices_constrained_ = false;
  // Where the tasks run: --chdir or the submit directory, or /tmp when that
  // cannot be entered (Slurm's "going to /tmp instead"); set by prepare_tasks.
  std::string run_dir_;
  // srun --pty: the terminal's master side, srun's keystrokes (stream 0),
  // what goes back to srun (stream 1), srun's window sizes (stream 4), and
  // the bytes not yet written each way.
  int pty_master_ = -1, pty_in_ = -1, pty_out_ = -1, pty_winch_ = -1;
  std::string pty_to_srun_, pty_to_task_, pty_winch_buf_;
  int sig_fd_ = -1;
  int ctl_fd_ = -1;
  std::string ctl_buf_;
  int64_t start_ms_ = 0;     // what the time limit counts from (unix ms)
  int64_t deadline_ms_ = 0;  // time limit (unix ms); 0: none
  int64_t warn_ms_ = 0;      // --signal delivery time; 0: none or done
  int64_t kill_ms_ = 0;      // SIGKILL after KillWait; 0: not terminating
  // A task's stderr, kept until the last task ends for the step's notice of
  // its end ("*** JOB 12 ON cpu1 CANCELLED AT ... ***"); -1: none.
  int notice_fd_ = -1;
  int64_t sample_ms_ = 0;    // next look at the tasks' usage (unix ms); 0: none planned
  std::optional<JobState> end_state_;
  bool notice_given_ = false;  // termination_notice() wrote its line (once per step)
  std::string end_reason_;
};

}  // namespace drover::agent
