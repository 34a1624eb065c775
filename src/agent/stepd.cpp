#include "agent/stepd.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>
#include <thread>

#include "agent/fork_server.hpp"
#include "agent/proc.hpp"
#include "agent/usage.hpp"
#include "common/fd_io.hpp"

namespace drover::agent {
namespace {

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

void log_line(const std::string& msg) { std::fprintf(stderr, "drover-stepd[%d]: %s\n", getpid(), msg.c_str()); }

std::string limit_text(int64_t seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(seconds / 3600),
                static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60));
  return buf;
}

}  // namespace

StepDaemon::StepDaemon(std::string dir, int notify_fd) : dir_(std::move(dir)), notify_fd_(notify_fd) {}

int StepDaemon::run() {
  if (Status st = load(); !st) {
    log_line(st.error().message);
    notify("failed");
    return 1;
  }
  if (Status st = detach(); !st) {
    fail_launch(st.error().message);
    return 0;
  }
  if (Status st = check_user(); !st) {
    fail_launch(st.error().message);
    return 0;
  }
  setup_cgroup();
  if (Status st = prepare_tasks(); !st) {
    fail_launch(st.error().message);
    return 0;
  }
  if (Status st = start_pmix(); !st) {
    fail_launch(st.error().message);
    return 0;
  }
  start_tasks();
  // The first look at the tasks' use a second in (most jobs' peak shows by
  // then, and short ones end before it), the next every interval.
  if (cfg_.usage_samples && cfg_.usage_interval_s > 0) sample_ms_ = now_ms() + 1000;
  write_state();
  notify("ok");
  event_loop();
  finish();
  return 0;
}

Status StepDaemon::load() {
  auto doc = read_json_file(dir_ + "/" + kSpecFile);
  if (!doc) return doc.error();
  auto req = launch_request_from_json((*doc)["request"]);
  if (!req) return req.error();
  req_ = std::move(*req);
  cfg_ = stepd_config_from_json((*doc)["config"]);
  if (doc->contains("user")) agent_user_ = user_info_from_json((*doc)["user"]);
  status_.key = req_.key;
  status_.stepd_pid = getpid();
  status_.stepd_start_ticks = process_start_ticks(getpid()).value_or(0);
  // The limit runs from the job's start when the controller gives it (steps,
  // restarts), else from now, to the millisecond.
  start_ms_ = req_.start_time > 0 ? req_.start_time * 1000 : now_ms();
  status_.start_time = start_ms_ / 1000;
  set_time_limit(req_.time_limit_s);
  return {};
}

void StepDaemon::set_time_limit(int64_t seconds) {
  status_.time_limit_s = seconds;
  deadline_ms_ = seconds > 0 ? start_ms_ + seconds * 1000 : 0;
  warn_ms_ = 0;
  // --signal without B: goes to the steps, with B: to the batch shell only.
  if (req_.warn_signal && deadline_ms_ > 0 && req_.warn_signal->batch_shell_only == req_.key.is_batch()) {
    warn_ms_ = std::max<int64_t>(1, deadline_ms_ - req_.warn_signal->seconds_before * 1000);
  }
}

// Leaves the agent's session, becomes the subreaper of everything the step
// starts, and takes SIGCHLD and the control FIFO into the event loop.
Status StepDaemon::detach() {
  setsid();
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    return make_error(std::string("prctl(PR_SET_CHILD_SUBREAPER): ") + std::strerror(errno));
  }
  // Only the agent (through the FIFO) ends a step: a stray kill of the daemon
  // must not orphan the job's processes. SIGKILL still works and is handled by
  // the agent as NODE_FAIL.
  for (int sig : {SIGPIPE, SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGUSR1, SIGUSR2}) signal(sig, SIG_IGN);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  sig_fd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sig_fd_ < 0) return make_error(std::string("signalfd: ") + std::strerror(errno));
  const std::string fifo = dir_ + "/" + kCtlFifo;
  ctl_fd_ = open(fifo.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);  // RDWR: never sees EOF
  if (ctl_fd_ < 0) return make_error("cannot open control FIFO " + fifo + ": " + std::strerror(errno));
  return {};
}

Status StepDaemon::check_user() {
  // The agent's answer when it gave one for this very account (as the
  // lookup would: the name, the uid, the job's group), else our own lookup.
  const bool given = agent_user_ && agent_user_->name == req_.job.user && agent_user_->uid == req_.job.uid &&
                     agent_user_->gid == req_.job.gid;
  auto user = given ? Result<UserInfo>(*agent_user_) : lookup_user(req_.job.user, req_.job.uid, req_.job.gid);
  if (!user) return user.error();
  user_ = std::move(*user);
  if (user_.uid == 0 && !cfg_.allow_root_jobs) {
    return make_error("refusing to run job " + req_.key.str() +
                      " as root (uid 0); allow it explicitly with the agent's --allow-root-jobs setting");
  }
  if (geteuid() != 0 && geteuid() != user_.uid) {
    return make_error("the agent runs as uid " + std::to_string(geteuid()) +
                      " without root privileges and can only run that user's jobs; job user " + user_.name +
                      " has uid " + std::to_string(user_.uid));
  }
  return {};
}

void StepDaemon::setup_cgroup() {
  if (!cfg_.cgroups.tracks()) return;
  const std::string rel_job = (cfg_.cgroup_node.empty() ? std::string("node") : cfg_.cgroup_node) + "/job_" +
                              std::to_string(req_.key.job_id);
  const std::string rel_step = req_.key.is_batch() ? "step_batch" : "step_" + std::to_string(req_.key.step_id);
  // The devices hierarchy only serves to deny the node's other GPUs: without
  // any to deny (a CPU node, or devices not constrained) the step gets no
  // directory there (two mkdir and two rmdir less for every job).
  CgroupPlan plan = cfg_.cgroups;
  const bool deny_devices = plan.constrain_devices && !cfg_.node_gpu_files.empty();
  if (!deny_devices) plan.devices.clear();
  auto cg = StepCgroup::create(plan, rel_job, rel_step, status_.warnings);
  if (!cg) {
    status_.warnings.push_back(cg.error().message);
    return;
  }
  cgroup_ = std::move(*cg);
  if (Status st = cgroup_.limit_memory(req_.alloc.mem_limit_mb, status_.warnings); !st) {
    status_.warnings.push_back("memory limit not enforced: " + st.error().message);
  }
  if (Status st = cgroup_.limit_cpus(req_.alloc.cpu_ids, status_.warnings); !st) {
    status_.warnings.push_back("cores not confined: " + st.error().message);
  }
  if (deny_devices) {
    std::set<std::string> mine;
    for (const auto& g : req_.alloc.gpus) mine.insert(g.device_file);
    std::vector<std::string> deny;
    for (const auto& f : cfg_.node_gpu_files) {
      if (!mine.count(f)) deny.push_back(f);
    }
    devices_constrained_ = cgroup_.deny_devices(deny, status_.warnings);
  }
  status_.cgroup = cgroup_.to_json();
}

// --- running ---------------------------------------------------------------

void StepDaemon::event_loop() {
  std::vector<pollfd> fds;
  while (!all_tasks_ended()) {
    fds.assign({{sig_fd_, POLLIN, 0}, {ctl_fd_, POLLIN, 0}});
    pty_poll_fds(fds);
    if (pmix_) pmix_->add_poll_fds(fds);
    int rc = poll(fds.data(), fds.size(), next_timeout_ms());
    if (rc < 0 && errno != EINTR) {
      log_line(std::string("poll: ") + std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (rc > 0 && (fds[0].revents & POLLIN)) {
      signalfd_siginfo info;
      while (read(sig_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      }
    }
    pty_pump();
    reap_children();
    if (rc > 0 && (fds[1].revents & POLLIN)) read_commands();
    if (pmix_) {
      pmix_->process();
      if (auto why = pmix_->take_abort()) begin_termination(JobState::kFailed, *why);
    }
    handle_timers();
  }
}

int StepDaemon::next_timeout_ms() const {
  int64_t next = 0;
  for (int64_t t : {deadline_ms_, warn_ms_, kill_ms_, sample_ms_}) {
    if (t > 0 && (next == 0 || t < next)) next = t;
  }
  if (next == 0) return 1000;  // also re-checks for a missed SIGCHLD now and then
  return static_cast<int>(std::clamp<int64_t>(next - now_ms(), 0, 1000));
}

// Each child that exited: a task's end (its usage from the kernel's
// accounting, its I/O read while it is still a zombie), or a process of the
// step that no task waited for (kept as the step's orphans' usage).
void StepDaemon::reap_children() {
  for (;;) {
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid <= 0) return;
    const pid_t pid = info.si_pid;
    std::optional<ProcessUse> last = read_process_use(pid);
    int wstatus = 0;
    rusage ru{};
    if (wait4(pid, &wstatus, 0, &ru) != pid) return;
    auto task = std::find_if(status_.tasks.begin(), status_.tasks.end(),
                             [&](const TaskStatus& t) { return t.pid == pid && !t.ended; });
    if (task == status_.tasks.end()) {
      add_orphan(status_.orphans, ru, last);
      continue;
    }
    const std::size_t i = static_cast<std::size_t>(task - status_.tasks.begin());
    TaskStatus& t = *task;
    add_exit(t.usage, ru, last);
    run_epilogs(i);
    t.ended = true;
    t.exit = ExitStatus::from_wait_status(wstatus);
    // When the last task ends, finish() writes the state next.
    if (!all_tasks_ended()) {
      write_state();
    } else if (notice_fd_ >= 0) {
      close(notice_fd_);  // srun's stream ends with the last task
      notice_fd_ = -1;
    }
    if (!t.exit.success() && req_.layout.kill_on_bad_exit && !end_state_ && kill_ms_ == 0 && !all_tasks_ended()) {
      // srun --kill-on-bad-exit: the step ends with the failing task (state from the exits: FAILED),
      // the others ended as Slurm's are: told on the step's stderr ("*** STEP ... CANCELLED AT"),
      // SIGCONT and SIGTERM, SIGKILL after KillWait.
      status_.reason = "task " + std::to_string(t.rank) + " exited " + t.exit.str() + " (--kill-on-bad-exit)";
      termination_notice(JobState::kCancelled, "");
      signal_processes(SIGCONT, false);
      signal_processes(SIGTERM, false);
      kill_ms_ = now_ms() + std::max<int64_t>(cfg_.kill_wait_ms, 0);
    }
  }
}

// srun's --task-epilog and TaskEpilog for a task that ended, as its user,
// before the task counts as ended (and the step as over).
void StepDaemon::run_epilogs(std::size_t task) {
  if (task >= plans_.size()) return;
  TaskPlan& p = plans_[task];
  if (!task_epilogs_.empty()) {
    std::vector<std::string> env = p.env;
    env.push_back("SLURM_TASK_PID=" + std::to_string(status_.tasks[task].pid));
    std::optional<ScriptUser> as;
    if (geteuid() == 0 && user_.uid != 0) as = ScriptUser{user_.uid, user_.gid, user_.groups};
    run_task_epilogs(task_epilogs_, req_.alloc.node_name, run_dir_, env, as, p.err_fd);
  }
  if (p.err_fd >= 0) close(p.err_fd);
  p.err_fd = -1;
}

void StepDaemon::read_commands() {
  char buf[512];
  ssize_t n;
  while ((n = read(ctl_fd_, buf, sizeof buf)) > 0) ctl_buf_.append(buf, static_cast<std::size_t>(n));
  std::size_t nl;
  while ((nl = ctl_buf_.find('\n')) != std::string::npos) {
    std::string line = ctl_buf_.substr(0, nl);
    ctl_buf_.erase(0, nl + 1);
    if (auto cmd = parse_control_line(line)) {
      handle_command(*cmd);
    } else if (!line.empty()) {
      log_line("ignoring malformed control line '" + line + "'");
    }
  }
}

void StepDaemon::handle_command(const ControlCommand& c) {
  if (c.verb == "signal") {
    int sig = std::atoi(c.args[0].c_str());
    if (sig > 0 && sig < NSIG) signal_processes(sig, c.args[1] == "batch");
  } else if (c.verb == "terminate" || c.verb == "end" || c.verb == "requeue" || c.verb == "preempt" ||
             c.verb == "kill") {
    // terminate: a clean-up; end: a cancel or time limit, told on the
    // step's stderr; requeue, preempt: told as one; kill: told, with
    // SIGKILL at once (supervisor.hpp).
    auto state = parse_state(c.args[0]).value_or(JobState::kCancelled);
    // Said once, also when a quiet "terminate" came first: the controller
    // may tell a step to end both in a report's reply and by a call, and
    // either can arrive first.
    if (c.verb != "terminate" && !notice_given_) {
      termination_notice(state, c.verb == "requeue" ? " DUE TO JOB REQUEUE"
                                : c.verb == "preempt" ? " DUE TO PREEMPTION"
                                                      : "");
    }
    begin_termination(state, c.rest, c.verb == "kill");
  } else if (c.verb == "time_limit") {
    set_time_limit(std::max<int64_t>(0, std::atoll(c.args[0].c_str())));
    write_state();
  } else if (c.verb == "sample") {
    sample_usage();
    write_state();
  } else {
    log_line("ignoring unknown control command '" + c.verb + "'");
  }
}

void StepDaemon::handle_timers() {
  const int64_t now = now_ms();
  if (warn_ms_ > 0 && now >= warn_ms_) {
    warn_ms_ = 0;
    signal_processes(req_.warn_signal->signal, req_.warn_signal->batch_shell_only);
  }
  if (deadline_ms_ > 0 && now >= deadline_ms_ && !end_state_) {
    deadline_ms_ = 0;
    termination_notice(JobState::kTimeout, "");
    begin_termination(JobState::kTimeout, "time limit of " + limit_text(status_.time_limit_s) + " reached");
  }
  if (sample_ms_ > 0 && now >= sample_ms_) {
    sample_usage();
    write_state();
    sample_ms_ = now + cfg_.usage_interval_s * 1000;
  }
  if (kill_ms_ > 0 && now >= kill_ms_) {
    cgroup_.kill_all();
    signal_processes(SIGKILL, false);
    kill_ms_ = now + 1000;  // again each second until every task has ended
  }
}

// Slurm's termination: SIGCONT and SIGTERM to every process of the step, then
// SIGKILL after KillWait. The first reason to end the step wins.
void StepDaemon::begin_termination(JobState state, const std::string& reason, bool kill_now) {
  if (end_state_) return;
  end_state_ = state;
  end_reason_ = reason;
  if (kill_now) {
    cgroup_.kill_all();
    signal_processes(SIGKILL, false);
    kill_ms_ = now_ms() + 1000;  // again each second until every task has ended
    return;
  }
  signal_processes(SIGCONT, false);
  signal_processes(SIGTERM, false);
  kill_ms_ = now_ms() + std::max<int64_t>(cfg_.kill_wait_ms, 0);
}

// What Slurm's step daemon writes on the step's stderr when the job or the
// step is cancelled or reaches its time limit (the batch script's output
// file, or srun's stderr): "slurmstepd-cpu01: error: *** JOB 12 ON cpu01
// CANCELLED AT 2026-12-06T05:50:12 ***", "*** STEP 12.0 ON cpu01 ... DUE
// TO TIME LIMIT ***", "... DUE TO JOB REQUEUE ***" (Slurm 22.05 on the
// anchor cluster), "... DUE TO PREEMPTION ***", and when --kill-on-bad-exit
// ends the step's other tasks. A lost node says nothing here.
void StepDaemon::termination_notice(JobState state, std::string_view why) {
  if (notice_fd_ < 0 || (state != JobState::kCancelled && state != JobState::kTimeout)) return;
  notice_given_ = true;
  const std::string& node = req_.alloc.node_name;
  const std::string what = req_.key.is_batch() ? "JOB " + std::to_string(req_.key.job_id) : "STEP " + req_.key.str();
  char at[32] = "";
  const time_t now = time(nullptr);
  tm local{};
  if (localtime_r(&now, &local)) strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%S", &local);
  write_all(notice_fd_, "slurmstepd-" + node + ": error: *** " + what + " ON " + node + " CANCELLED AT " + at +
                            std::string(state == JobState::kTimeout ? std::string_view(" DUE TO TIME LIMIT") : why) +
                            " ***\n");
}

void StepDaemon::signal_processes(int sig, bool batch_shell_only) {
  if (batch_shell_only) {
    if (!status_.tasks.empty() && !status_.tasks.front().ended) ::kill(status_.tasks.front().pid, sig);
    return;
  }
  for (pid_t pid : step_processes()) ::kill(pid, sig);
}

std::vector<pid_t> StepDaemon::step_processes() const {
  std::set<pid_t> all;
  for (pid_t p : cgroup_.members()) all.insert(p);
  for (pid_t p : process_descendants(getpid())) all.insert(p);
  all.erase(getpid());
  return {all.begin(), all.end()};
}

// A look at what each running task's processes use now, and at the memory
// of the step's processes that no task waited for (its orphans).
void StepDaemon::sample_usage() {
  std::set<pid_t> in_tasks;
  for (auto& t : status_.tasks) {
    if (t.ended || t.pid <= 0) continue;
    std::vector<pid_t> tree = process_descendants(t.pid);
    tree.push_back(t.pid);
    in_tasks.insert(tree.begin(), tree.end());
    add_sample(t.usage, sum_process_use(tree));
  }
  std::vector<pid_t> orphans;
  status_.pids = step_processes();
  for (pid_t p : status_.pids) {
    if (!in_tasks.count(p)) orphans.push_back(p);
  }
  if (!orphans.empty()) {
    const ProcessUse now = sum_process_use(orphans);
    status_.orphans.max_rss_kb = std::max(status_.orphans.max_rss_kb, now.rss_kb);
    status_.orphans.max_vmsize_kb = std::max(status_.orphans.max_vmsize_kb, now.vmsize_kb);
  }
  status_.sampled_ms = now_ms();
}

bool StepDaemon::all_tasks_ended() const {
  return std::all_of(status_.tasks.begin(), status_.tasks.end(), [](const TaskStatus& t) { return t.ended; });
}

// --- ending ----------------------------------------------------------------

void StepDaemon::finish() {
  pmix_.reset();  // every task has ended: PMIx_server_finalize, its tmpdir removed
  // What the tasks left behind (background jobs, daemons) ends with the step
  // as Slurm ends a job's processes: SIGCONT and SIGTERM (unless a
  // termination sent them already), then SIGKILL after KillWait. An srun
  // left running by a script that ended passes the SIGTERM on to its step
  // and says how the step ended before it exits, as Slurm's did.
  std::vector<pid_t> left = step_processes();
  if (!left.empty()) {
    write_state();  // the tasks' ends, while what they left behind is ended
    if (!end_state_) {
      for (pid_t pid : left) ::kill(pid, SIGCONT);
      for (pid_t pid : left) ::kill(pid, SIGTERM);
    }
    const int64_t until = end_state_ && kill_ms_ > 0 ? kill_ms_ : now_ms() + std::max<int64_t>(cfg_.kill_wait_ms, 0);
    while (!left.empty() && now_ms() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      reap_children();
      left = step_processes();
    }
  }
  for (int round = 0; round < 500; ++round) {
    left = step_processes();
    if (left.empty()) break;
    cgroup_.kill_all();
    for (pid_t pid : left) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    reap_children();
  }
  pty_close();  // the terminal's last output to srun
  if (!left.empty()) {
    std::string pids;
    for (pid_t p : left) pids += (pids.empty() ? "" : ",") + std::to_string(p);
    status_.warnings.push_back("processes that did not die with the step (uninterruptible?): " + pids);
  }
  status_.oom_kills = cgroup_.oom_kills();
  std::vector<ExitStatus> exits;
  bool launch_error = false;
  for (const auto& t : status_.tasks) {
    exits.push_back(t.exit);
    if (!t.error.empty()) {
      launch_error = true;
      if (status_.reason.empty()) status_.reason = "task " + std::to_string(t.rank) + ": " + t.error;
    }
  }
  status_.exit = worst_exit(exits);
  if (end_state_) {
    status_.state = *end_state_;
    status_.reason = end_reason_;
  } else if (status_.oom_kills > 0) {
    status_.state = JobState::kOutOfMemory;
    status_.reason = "out of memory: the OOM killer ended " + std::to_string(status_.oom_kills) +
                     " process(es) at the limit of " + std::to_string(req_.alloc.mem_limit_mb) + " MB";
  } else {
    status_.state = status_.exit.success() && !launch_error ? JobState::kCompleted : JobState::kFailed;
  }
  status_.end_time = now_ms() / 1000;
  cgroup_.remove();  // before the final record: whoever reads it finds the cgroups gone
  write_state();
}

void StepDaemon::fail_launch(const std::string& reason) {
  pmix_.reset();
  log_line("launch of " + req_.key.str() + " failed: " + reason);
  status_.state = JobState::kFailed;
  status_.exit = ExitStatus{1, 0, false};
  status_.reason = "launch failed: " + reason;
  status_.launch_failed = true;
  status_.end_time = now_ms() / 1000;
  for (auto& p : plans_) {
    for (int fd : {p.in_fd, p.out_fd, p.err_fd}) {
      if (fd >= 0) close(fd);
    }
  }
  pty_close();
  cgroup_.remove();
  write_state();
  notify("failed");
}

void StepDaemon::write_state() {
  if (Status st = write_file_atomic(dir_ + "/" + kStateFile, to_json(status_).dump(1)); !st) {
    log_line(st.error().message);
  }
}

void StepDaemon::notify(const char* word) {
  if (notify_fd_ < 0) return;
  std::string msg = std::string(word) + "\n";
  ssize_t ignored = write(notify_fd_, msg.data(), msg.size());
  (void)ignored;
  close(notify_fd_);
  notify_fd_ = -1;
}

int stepd_main(const std::vector<std::string>& args) {
  if (args.size() == 1 && args[0] == "--fork-server") {
    // Started by the agent with fd 3 its end of the request socket (fork_server.hpp).
    if (fcntl(3, F_GETFD) < 0) {
      std::fprintf(stderr, "drover-stepd --fork-server: fd 3 is not open (started by the node agent only)\n");
      return 2;
    }
    fcntl(3, F_SETFD, FD_CLOEXEC);
    return serve_fork_requests(3, [](const std::string& dir) { return stepd_main({dir}); });
  }
  if (args.size() != 1 || args[0].empty() || args[0][0] == '-') {
    std::fprintf(stderr, "usage: drover-stepd STEP_SPOOL_DIR\n(started by the node agent; not for interactive use)\n");
    return 2;
  }
  int notify_fd = fcntl(3, F_GETFD) >= 0 ? 3 : -1;
  if (notify_fd >= 0) fcntl(notify_fd, F_SETFD, FD_CLOEXEC);
  StepDaemon d(args[0], notify_fd);
  return d.run();
}

}  // namespace drover::agent
