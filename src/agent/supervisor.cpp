#include "agent/supervisor.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "agent/pmix_server.hpp"
#include "agent/proc.hpp"
#include "agent/spool.hpp"

namespace drover::agent {
namespace {

int64_t now_s() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

// A cgroup directory name from a node name: no slashes, no dots at the start.
std::string cgroup_name(const std::string& node) {
  std::string s = "node_";
  for (char c : node) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return s;
}

std::string tail_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

// The step's record (state.json) as its daemon last wrote it; nullopt when
// there is none yet or it does not parse.
std::optional<StepStatus> read_status(const std::string& dir) {
  auto state = read_json_file(dir + "/" + kStateFile);
  if (!state) return std::nullopt;
  auto status = step_status_from_json(*state);
  if (!status) return std::nullopt;
  return *status;
}

// The step daemon's word on its notify pipe ("ok", "failed"), within
// `timeout_ms`; "" when it closed the pipe without one or said nothing in
// time (`*timed_out`). Closes the pipe.
std::string read_notify_word(int fd, int timeout_ms, bool* timed_out) {
  std::string word;
  pollfd p{fd, POLLIN, 0};
  const bool late = poll(&p, 1, timeout_ms) == 0;
  if (!late) {
    char buf[16] = {};
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n > 0) word.assign(buf, static_cast<std::size_t>(n));
  }
  close(fd);
  if (timed_out) *timed_out = late;
  return word;
}

}  // namespace

std::vector<std::string> default_stepd_command() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return {ec ? std::string("drover") : self.string(), "agent", "--stepd"};
}

Supervisor::Supervisor(SupervisorOptions opts)
    : opts_(std::move(opts)), wake_fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

Supervisor::~Supervisor() {
  if (wake_fd_ >= 0) close(wake_fd_);
  for (auto& [key, t] : steps_) {
    if (t.last.ended()) reap(t, 200);  // its daemon is on its way out: collect it
    if (t.pidfd >= 0) close(t.pidfd);
  }
}

Result<std::unique_ptr<Supervisor>> Supervisor::open(SupervisorOptions opts) {
  if (opts.node_name.empty()) return make_error("agent: no node name given (--node NAME)");
  if (opts.spool_dir.empty()) return make_error("agent " + opts.node_name + ": no spool directory (SlurmdSpoolDir)");
  if (opts.stepd_command.empty()) return make_error("agent " + opts.node_name + ": no step daemon command configured");
  std::error_code ec;
  std::filesystem::create_directories(opts.spool_dir, ec);
  struct stat st {};
  if (ec || stat(opts.spool_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return make_error("agent " + opts.node_name + ": cannot create spool directory " + opts.spool_dir +
                      (ec ? ": " + ec.message() : ""));
  }
  // Job users must be able to pass through it to run their batch script.
  if ((st.st_mode & 0111) != 0111) chmod(opts.spool_dir.c_str(), (st.st_mode & 07777) | 0111);
  std::unique_ptr<Supervisor> sup(new Supervisor(std::move(opts)));
  sup->cgroups_ = CgroupHost::probe(sup->opts_.cgroups);
  sup->cgroup_node_ = cgroup_name(sup->opts_.node_name);
  sup->adopt_existing();
  return sup;
}

std::vector<std::string> Supervisor::cannot_enforce() const {
  std::vector<std::string> out = cgroups_.limits();
  if (geteuid() != 0) {
    out.push_back("running jobs as their users: the agent is not root, so it can run only jobs of uid " +
                  std::to_string(geteuid()));
  }
  return out;
}

std::string Supervisor::enforcement_summary() const {
  std::string s = "node " + opts_.node_name + ": " + cgroups_.description();
  auto limits = cannot_enforce();
  if (limits.empty()) return s + "; every limit is enforced";
  s += "; cannot enforce on this host:";
  for (const auto& l : limits) s += "\n  - " + l;
  return s;
}

std::vector<StepKey> Supervisor::adopted() const {
  std::lock_guard lock(mu_);
  return adopted_;
}

void Supervisor::adopt_existing() {
  DIR* d = opendir(opts_.spool_dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) names.emplace_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    auto key = parse_step_dir_name(name);
    if (!key) continue;
    Tracked t;
    t.dir = opts_.spool_dir + "/" + name;
    t.last.key = *key;
    if (auto sj = read_json_file(t.dir + "/" + kStepdFile)) {
      t.pid = sj->value("pid", 0);
      t.start_ticks = sj->value("start_ticks", uint64_t{0});
    }
    if (auto s = read_status(t.dir)) {
      t.last = *s;
      if (t.pid == 0) {
        t.pid = s->stepd_pid;
        t.start_ticks = s->stepd_start_ticks;
      }
    }
    if (!t.last.ended() && t.pid > 0 && process_alive(t.pid, t.start_ticks)) {
      t.pidfd = open_pidfd(t.pid);
    }
    refresh(t);
    adopted_.push_back(*key);
    steps_.emplace(*key, std::move(t));
  }
}

// Collects a step daemon that has exited: waitpid when it is this process's
// child (no zombies in a long-running agent), and the pidfd is closed.
// `wait_ms` > 0 waits that long for a daemon that is still on its way out.
void Supervisor::reap(Tracked& t, int wait_ms) {
  if (t.reaped || t.pid <= 0) return;
  if (wait_ms > 0 && t.pidfd >= 0) wait_pidfd(t.pidfd, wait_ms);
  bool gone = t.pidfd >= 0 ? wait_pidfd(t.pidfd, 0) : !process_alive(t.pid, t.start_ticks);
  pid_t w = waitpid(t.pid, nullptr, WNOHANG);  // > 0: our child, collected; -1: not ours
  if (w == 0 && !gone) return;                  // still running
  t.reaped = true;
  if (t.pidfd >= 0) {
    close(t.pidfd);
    t.pidfd = -1;
  }
}

// Brings `t.last` up to date; notices a step daemon that has exited.
void Supervisor::refresh(Tracked& t) {
  if (t.launching) return;
  if (t.last.ended()) {
    reap(t, 0);
    return;
  }
  bool gone;
  if (t.pidfd >= 0) {
    gone = wait_pidfd(t.pidfd, 0);
  } else {
    gone = t.pid <= 0 || !process_alive(t.pid, t.start_ticks);
  }
  if (auto s = read_status(t.dir)) t.last = *s;
  if (!gone) return;
  reap(t, 0);
  if (auto s = read_status(t.dir)) t.last = *s;
  if (!t.last.ended()) handle_vanished(t);
}

// The step daemon died without a final record (killed, node rebooted): kill
// what is left of the step through its cgroup and record NODE_FAIL.
void Supervisor::handle_vanished(Tracked& t) {
  StepCgroup cg = StepCgroup::from_json(t.last.cgroup);
  int killed = cg.empty() ? 0 : cg.kill_all();
  cg.remove();
  t.last.state = JobState::kNodeFail;
  t.last.end_time = now_s();
  t.last.reason = "the step daemon (pid " + std::to_string(t.pid) + ") ended without reporting the step's end" +
                  (cg.empty() ? std::string("; without a cgroup its remaining processes could not be found")
                              : "; " + std::to_string(killed) + " remaining process(es) killed");
  (void)write_file_atomic(t.dir + "/" + kStateFile, to_json(t.last).dump(1));
}

Status Supervisor::prepare_record(const LaunchRequest& req, const std::string& dir) {
  if (mkdir(dir.c_str(), 0711) != 0 && errno != EEXIST) {
    return make_error("cannot create spool record " + dir + ": " + std::strerror(errno));
  }
  StepdConfig cfg;
  cfg.kill_wait_ms = opts_.kill_wait_ms;
  cfg.usage_interval_s = opts_.usage_interval_s;
  cfg.usage_samples = opts_.usage_samples;
  cfg.allow_root_jobs = opts_.allow_root_jobs;
  cfg.cgroups = cgroups_.plan();
  cfg.node_gpu_files = opts_.node_gpu_files;
  cfg.cgroup_node = cgroup_node_;
  nlohmann::json doc = {{"request", to_json(req)}, {"config", to_json(cfg)}};
  // Resolved here for the step daemon (user_info.hpp); when it fails, the
  // daemon looks again and fails the launch with the lookup's message.
  if (auto user = cached_user(req.job.user, req.job.uid, req.job.gid)) doc["user"] = to_json(*user);
  if (Status st = write_file_atomic(dir + "/" + kSpecFile, doc.dump(1)); !st) return st;
  if (req.key.is_batch()) {
    const std::string script = dir + "/" + kScriptFile;
    if (Status st = write_file_atomic(script, req.script, 0500); !st) return st;
    if (geteuid() == 0 && chown(script.c_str(), req.job.uid, req.job.gid) != 0) {
      return make_error("cannot give " + script + " to uid " + std::to_string(req.job.uid) + ": " + std::strerror(errno));
    }
  }
  const std::string fifo = dir + "/" + kCtlFifo;
  if (mkfifo(fifo.c_str(), 0600) != 0 && errno != EEXIST) {
    return make_error("cannot create control FIFO " + fifo + ": " + std::strerror(errno));
  }
  return {};
}

Result<LaunchResult> Supervisor::launch(const LaunchRequest& request) {
  if (Status st = validate(request); !st) return st.error();
  LaunchRequest req = request;
  req.task_prolog = opts_.task_prolog;
  req.task_epilog = opts_.task_epilog;
  Tracked t;
  t.dir = opts_.spool_dir + "/" + step_dir_name(req.key);
  t.last.key = req.key;
  {
    std::lock_guard lock(mu_);
    if (auto it = steps_.find(req.key); it != steps_.end()) {
      refresh(it->second);
      LaunchResult r;
      r.key = req.key;
      r.already_known = true;
      r.started = it->second.launching || !it->second.last.launch_failed;
      for (const auto& task : it->second.last.tasks) r.task_pids.push_back(task.pid);
      return r;
    }
    Tracked placeholder;
    placeholder.launching = true;
    placeholder.last.key = req.key;
    steps_.emplace(req.key, std::move(placeholder));
  }
  // Without the lock: other calls go on while this step starts.
  Result<LaunchResult> result = make_error("");
  if (Status st = prepare_record(req, t.dir); !st) {
    result = st.error();
  } else {
    result = start_stepd(req, t);
  }
  std::lock_guard lock(mu_);
  if (!result) {
    std::error_code ec;
    std::filesystem::remove_all(t.dir, ec);
    steps_.erase(req.key);
    return result;
  }
  steps_[req.key] = std::move(t);
  // A waiter in wait_any() watches the pidfds it saw when it began: wake it so
  // that it watches this step too (a short step ends within the waiter's slice).
  if (wake_fd_ >= 0) {
    uint64_t one = 1;
    ssize_t ignored = write(wake_fd_, &one, sizeof one);
    (void)ignored;
  }
  return result;
}

Result<LaunchResult> Supervisor::start_stepd(const LaunchRequest& req, Tracked& t) {
  const bool pmix = !req.key.is_batch() && wants_pmix(req.layout.mpi) && !opts_.pmix_stepd_command.empty();
  std::vector<std::string> argv = pmix ? opts_.pmix_stepd_command : opts_.stepd_command;
  argv.push_back(t.dir);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const std::string log = t.dir + "/" + kStepdLog;
  int notify[2];
  if (pipe2(notify, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = -1;
  int rc = 0;
  bool sent = false;
  auto forked = pmix ? Result<pid_t>(make_error("")) : fork_stepd(t.dir, log, notify[1], &sent);
  if (forked) {
    pid = *forked;
  } else if (sent) {
    // The fork server took the request and then failed: a daemon may run.
    // Its word on the pipe and the pid in its record tell; never a second one.
    close(notify[1]);
    std::string word = read_notify_word(notify[0], opts_.launch_timeout_ms, nullptr);
    auto st = read_status(t.dir);
    if (!st || st->stepd_pid <= 0) {
      return make_error(req.key.str() + ": the step daemon fork server failed while starting the step (" +
                        forked.error().message + ") and no step daemon reported; see " + log);
    }
    track(t, st->stepd_pid);
    return launch_result(req, t, word, log);
  } else {
    // posix_spawn, not fork: the agent is a large multi-threaded process, and
    // copying its page tables for every launch cost more CPU than the rest of
    // the launch. The child is the step daemon in a session of its own: stdin
    // /dev/null, stdout and stderr its log, fd 3 the pipe it reports on.
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_adddup2(&fa, notify[1], 3);  // the copy is not close-on-exec
    posix_spawn_file_actions_addclosefrom_np(&fa, 4);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    rc = posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
  }
  close(notify[1]);
  if (rc != 0) {
    close(notify[0]);
    return make_error(fmt::format("{}: the step daemon '{}' could not start: {}", req.key.str(), args[0],
                                  std::strerror(rc)));
  }
  track(t, pid);
  bool timed_out = false;
  const std::string word = read_notify_word(notify[0], opts_.launch_timeout_ms, &timed_out);
  if (word.empty() && access((t.dir + "/" + kStateFile).c_str(), F_OK) != 0) {
    // No word and no record: the daemon never got going (exec failed, or it hangs).
    if (timed_out) {
      return make_error(req.key.str() + ": the step daemon did not report within " +
                        std::to_string(opts_.launch_timeout_ms) + " ms; see " + log);
    }
    // It closed the pipe: it is exiting. Our child when executed; the fork server's when forked.
    if (waitpid(pid, nullptr, 0) < 0 && t.pidfd >= 0) wait_pidfd(t.pidfd, 2000);
    if (t.pidfd >= 0) close(t.pidfd);
    std::string why = tail_of(log);
    return make_error(req.key.str() + ": the step daemon '" + argv[0] + "' could not start" +
                      (why.empty() ? "" : ": " + why));
  }
  return launch_result(req, t, word, log);
}

void Supervisor::track(Tracked& t, pid_t pid) {
  t.pid = pid;
  t.start_ticks = process_start_ticks(pid).value_or(0);
  t.pidfd = open_pidfd(pid);
  (void)write_file_atomic(t.dir + "/" + kStepdFile,
                          nlohmann::json{{"pid", pid}, {"start_ticks", t.start_ticks}}.dump());
}

LaunchResult Supervisor::launch_result(const LaunchRequest& req, Tracked& t, const std::string& word,
                                       const std::string& log) {
  refresh(t);
  LaunchResult r;
  r.key = req.key;
  // "ok": the tasks were started (they may have ended already); no word but a
  // running record: the notification was lost, the step runs all the same.
  r.started = word.rfind("ok", 0) == 0 || (word.empty() && !t.last.ended());
  if (r.started) {
    for (const auto& task : t.last.tasks) r.task_pids.push_back(task.pid);
  } else {
    r.failure = t.last.reason.empty() ? tail_of(log) : t.last.reason;
  }
  return r;
}

std::optional<UserInfo> Supervisor::cached_user(const std::string& name, uid_t uid, gid_t gid) {
  // A user's groups change rarely; a job started within this many seconds of
  // another of the same account gets the same lookup (as slurmd's group cache).
  constexpr auto kUserTtl = std::chrono::seconds(10);
  const auto now = std::chrono::steady_clock::now();
  const auto key = std::make_tuple(name, uid, gid);
  {
    std::lock_guard lock(users_mu_);
    if (auto it = users_.find(key); it != users_.end() && now - it->second.first < kUserTtl) return it->second.second;
  }
  auto user = lookup_user(name, uid, gid);
  if (!user) return std::nullopt;  // not cached: the step daemon looks again and says why
  std::lock_guard lock(users_mu_);
  if (users_.size() > 1024) users_.clear();
  users_[key] = {now, *user};
  return *user;
}

Result<pid_t> Supervisor::fork_stepd(const std::string& dir, const std::string& log, int notify_fd, bool* sent) {
  constexpr int kMaxStarts = 10;
  *sent = false;
  if (!opts_.fork_server) return make_error("no fork server");
  std::lock_guard lock(fork_mu_);
  if (!fork_server_) {
    if (fork_server_starts_ >= kMaxStarts) return make_error("the fork server was given up");
    ++fork_server_starts_;
    auto fs = ForkServer::start(opts_.stepd_command);
    if (!fs) return fs.error();
    fork_server_ = std::move(*fs);
  }
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) return make_error("cannot open " + log + ": " + std::strerror(errno));
  auto pid = fork_server_->spawn(dir, log_fd, notify_fd, sent);
  close(log_fd);
  if (!pid) fork_server_.reset();  // gone or broken: the next launch starts another
  return pid;
}

Status Supervisor::control(const StepKey& key, const std::string& line) {
  std::lock_guard lock(mu_);
  auto it = steps_.find(key);
  if (it == steps_.end()) return make_error("step " + key.str() + " is not running on node " + opts_.node_name);
  if (it->second.launching) return make_error("step " + key.str() + " is still being launched on node " + opts_.node_name);
  refresh(it->second);
  if (it->second.last.ended()) {
    return make_error("step " + key.str() + " has already ended (" +
                      std::string(state_name(it->second.last.state)) + ")");
  }
  return send_control(it->second.dir, line);
}

Status Supervisor::signal(const StepKey& key, int sig, SignalScope scope) {
  if (sig <= 0 || sig >= 65) return make_error("invalid signal number " + std::to_string(sig));
  return control(key, "signal " + std::to_string(sig) + (scope == SignalScope::kBatchShell ? " batch" : " all"));
}

Status Supervisor::terminate(const StepKey& key, JobState state, const std::string& reason, Ending how) {
  const char* verb = how == Ending::kKillNow   ? "kill "
                     : how == Ending::kRequeue ? "requeue "
                     : how == Ending::kPreempt ? "preempt "
                     : how == Ending::kNotice  ? "end "
                                               : "terminate ";
  return control(key, verb + std::string(state_name(state)) + " " + reason);
}

Status Supervisor::terminate_job(uint64_t job_id, JobState state, const std::string& reason, Ending how) {
  return for_each_running_step(job_id, [&](const StepKey& k) { return terminate(k, state, reason, how); });
}

Status Supervisor::signal_job(uint64_t job_id, int sig) {
  return for_each_running_step(job_id, [&](const StepKey& k) { return signal(k, sig, SignalScope::kAllProcesses); });
}

Status Supervisor::for_each_running_step(uint64_t job_id, const std::function<Status(const StepKey&)>& act) {
  std::vector<StepKey> keys;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, t] : steps_) {
      refresh(t);
      if (key.job_id == job_id && !t.last.ended()) keys.push_back(key);
    }
  }
  if (keys.empty()) return make_error("job " + std::to_string(job_id) + " has no running step on node " + opts_.node_name);
  Status result;
  for (const auto& k : keys) {
    if (Status st = act(k); !st && result) result = st;
  }
  return result;
}

Status Supervisor::set_time_limit(const StepKey& key, int64_t seconds) {
  if (seconds < 0) return make_error("time limit must be >= 0 seconds (0: unlimited)");
  return control(key, "time_limit " + std::to_string(seconds));
}

std::optional<StepStatus> Supervisor::status(const StepKey& key) {
  std::lock_guard lock(mu_);
  auto it = steps_.find(key);
  if (it == steps_.end()) return std::nullopt;
  refresh(it->second);
  return it->second.last;
}

Result<StepStatus> Supervisor::sample(const StepKey& key, int timeout_ms) {
  auto before = status(key);
  if (!before) return make_error("step " + key.str() + " is not running on node " + opts_.node_name);
  if (before->ended()) return *before;
  if (Status st = control(key, "sample"); !st) return st.error();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::optional<StepStatus> now = before;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    now = status(key);
    if (!now) return make_error("step " + key.str() + " is not running on node " + opts_.node_name);
    if (now->ended() || now->sampled_ms != before->sampled_ms) break;
  }
  return *now;
}

std::vector<StepStatus> Supervisor::steps() {
  std::lock_guard lock(mu_);
  std::vector<StepStatus> out;
  for (auto& [key, t] : steps_) {
    refresh(t);
    out.push_back(t.last);
  }
  return out;
}

std::vector<StepStatus> Supervisor::finished() {
  std::vector<StepStatus> out;
  for (auto& s : steps()) {
    if (s.ended()) out.push_back(std::move(s));
  }
  return out;
}

std::optional<StepStatus> Supervisor::wait(const StepKey& key, int timeout_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int pidfd = -1;
    {
      std::lock_guard lock(mu_);
      auto it = steps_.find(key);
      if (it == steps_.end()) return std::nullopt;
      refresh(it->second);
      if (it->second.last.ended()) return it->second.last;
      pidfd = it->second.pidfd >= 0 ? dup(it->second.pidfd) : -1;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (timeout_ms >= 0 && left <= 0) {
      if (pidfd >= 0) close(pidfd);
      return status(key);
    }
    int slice = timeout_ms < 0 ? 200 : static_cast<int>(std::min<int64_t>(left, 200));
    if (pidfd >= 0) {
      wait_pidfd(pidfd, slice);
      close(pidfd);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(slice, 20)));
    }
  }
}

std::vector<StepStatus> Supervisor::wait_any(int timeout_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto done = finished();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (!done.empty() || (timeout_ms >= 0 && left <= 0)) return done;
    std::vector<pollfd> fds;
    {
      std::lock_guard lock(mu_);
      for (auto& [key, t] : steps_) {
        if (t.pidfd >= 0) fds.push_back({dup(t.pidfd), POLLIN, 0});
      }
    }
    int slice = timeout_ms < 0 ? 200 : static_cast<int>(std::min<int64_t>(left, 200));
    const std::size_t watched = fds.size();
    if (wake_fd_ >= 0) fds.push_back({wake_fd_, POLLIN, 0});
    if (fds.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(std::min(slice, 20)));
    else poll(fds.data(), fds.size(), slice);
    if (wake_fd_ >= 0 && (fds.back().revents & POLLIN)) {
      uint64_t n;
      ssize_t ignored = read(wake_fd_, &n, sizeof n);
      (void)ignored;
    }
    for (std::size_t i = 0; i < watched; ++i) close(fds[i].fd);
  }
}

Status Supervisor::acknowledge(const StepKey& key) {
  std::lock_guard lock(mu_);
  auto it = steps_.find(key);
  if (it == steps_.end()) return make_error("step " + key.str() + " is not known on node " + opts_.node_name);
  refresh(it->second);
  if (!it->second.last.ended()) return make_error("step " + key.str() + " is still running; it cannot be forgotten");
  reap(it->second, 1000);  // the daemon exits right after its final record
  std::error_code ec;
  std::filesystem::remove_all(it->second.dir, ec);
  if (ec) return make_error("cannot remove spool record " + it->second.dir + ": " + ec.message());
  steps_.erase(it);
  return {};
}

}  // namespace drover::agent

namespace drover::agent {

void Supervisor::release_cgroups() {
  const CgroupPlan& p = cgroups_.plan();
  for (const std::string* base : {&p.memory, &p.cpuset, &p.devices, &p.freezer, &p.unified}) {
    if (!base->empty()) rmdir((*base + "/" + cgroup_node_).c_str());  // EBUSY while a job is there: kept
    if (!base->empty()) rmdir(base->c_str());  // the last node of this base to stop removes it
  }
}

}  // namespace drover::agent
