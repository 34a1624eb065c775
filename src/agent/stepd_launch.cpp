// The step daemon's launch half: working directory, standard streams opened
// as the job's user, environment, and fork/exec of each task.
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <grp.h>
#include <signal.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "agent/hw/hardware.hpp"
#include "agent/io_pattern.hpp"
#include "agent/job_env.hpp"
#include "agent/login_env.hpp"
#include "agent/stepd.hpp"
#include "common/fd_io.hpp"
#include "common/multi_prog.hpp"
#include "common/rlimits.hpp"
#include "common/strings.hpp"

namespace drover::agent {
namespace {

constexpr uint32_t kNoArrayTask = 4294967294u;  // what Slurm prints for %a outside an array
constexpr int kLoginEnvTimeoutMs = 8000;


// Switches the effective identity to the job's user for file access, and back.
// Only when the daemon is root and the user is not; a no-op otherwise.
class AsUser {
 public:
  explicit AsUser(const UserInfo& u) {
    if (geteuid() != 0 || u.uid == 0) return;
    saved_groups_.resize(static_cast<std::size_t>(std::max(getgroups(0, nullptr), 0)));
    if (!saved_groups_.empty()) getgroups(static_cast<int>(saved_groups_.size()), saved_groups_.data());
    active_ = setgroups(u.groups.size(), u.groups.data()) == 0 && setegid(u.gid) == 0 && seteuid(u.uid) == 0;
    switched_ = true;
  }
  ~AsUser() {
    if (!switched_) return;
    if (seteuid(0) != 0 || setegid(0) != 0) std::abort();  // never continue with a user's identity
    setgroups(saved_groups_.size(), saved_groups_.data());
  }
  AsUser(const AsUser&) = delete;
  AsUser& operator=(const AsUser&) = delete;
  bool failed() const { return switched_ && !active_; }

 private:
  bool switched_ = false;
  bool active_ = false;
  std::vector<gid_t> saved_groups_;
};

std::string absolute(const std::string& path, const std::string& work_dir) {
  if (path.empty() || path[0] == '/') return path;
  return work_dir + "/" + path;
}

enum Stage : int { kStageIo = 1, kStageIdentity, kStageChdir, kStageExec };

std::string stage_text(int stage) {
  switch (stage) {
    case kStageIo: return "redirecting standard streams";
    case kStageIdentity: return "switching to the job's user";
    case kStageChdir: return "chdir";
    default: return "execve";
  }
}

// The programs execve is tried on: a name with a slash as it is; another
// along the task's PATH and then in the working directory, as Slurm's
// slurmstepd looks for it.
std::vector<std::string> exec_candidates(const std::string& program, const std::vector<std::string>& env,
                                         const std::string& run_dir) {
  if (program.find('/') != std::string::npos) return {program};
  std::string path = "/usr/local/bin:/usr/bin:/bin";
  for (const auto& kv : env) {
    if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
  }
  std::vector<std::string> out;
  for (const auto& dir : split(path, ':')) out.push_back((dir.empty() ? "." : dir) + "/" + program);
  out.push_back(run_dir + "/" + program);
  return out;
}

// A TCP connection to srun for one stream of one task, announced with
// "DROVERIO <key> <rank> <stream>\n" (stream 0 stdin, 1 stdout, 2 stderr).
Result<int> connect_launcher(const StepLayout& L, int rank, int stream) {
  std::string hello = "DROVERIO " + L.io_key + " " + std::to_string(rank) + " " + std::to_string(stream) + "\n";
  auto fd = connect_to_launcher(L, hello, "the tasks' streams");
  if (!fd) return fd;
  if (stream == 0 || stream == kWinchStream) shutdown(*fd, SHUT_WR);  // srun writes on these
  else shutdown(*fd, SHUT_RD);
  return fd;
}

}  // namespace

Result<int> connect_task_stream(const StepLayout& L, int rank, int stream) { return connect_launcher(L, rank, stream); }

Result<int> connect_to_launcher(const StepLayout& L, const std::string& hello, const std::string& purpose) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::string port = std::to_string(L.launcher_port);
  int rc = getaddrinfo(L.launcher_host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) return make_error("cannot resolve srun's host " + L.launcher_host + ": " + gai_strerror(rc));
  int fd = -1;
  int err = 0;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      err = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) {
    return make_error("cannot connect to srun at " + L.launcher_host + ":" + port + " for " + purpose + ": " +
                      std::strerror(err));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (write(fd, hello.data(), hello.size()) != static_cast<ssize_t>(hello.size())) {
    int e = errno;
    close(fd);
    return make_error("cannot write to srun at " + L.launcher_host + ":" + port + ": " + std::strerror(e));
  }
  return fd;
}

Status StepDaemon::connect_task_io(TaskPlan& t, const std::string& work_dir, const PatternValues& v) {
  const StepLayout& L = req_.layout;
  auto out = connect_launcher(L, t.rank, 1);
  if (!out) return out.error();
  t.out_fd = *out;
  t.out_path = "srun " + L.launcher_host + ":" + std::to_string(L.launcher_port);
  if (req_.io.stderr_pattern.empty()) {
    auto err = connect_launcher(L, t.rank, 2);
    if (!err) return err.error();
    t.err_fd = *err;
    t.err_path = t.out_path;
  } else {
    t.err_path = absolute(expand_io_pattern(req_.io.stderr_pattern, v), work_dir);
    for (const auto& p : plans_) {  // tasks naming the same file share one open file
      if (&p != &t && p.err_path == t.err_path && p.err_fd >= 0) t.err_fd = dup(p.err_fd);
    }
    if (t.err_fd < 0) {
      AsUser as(user_);
      const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | (req_.io.append ? O_APPEND : O_TRUNC);
      t.err_fd = as.failed() ? -1 : open(t.err_path.c_str(), flags, 0644);
    }
    if (t.err_fd < 0) return make_error("cannot open " + t.err_path + " as user " + user_.name + ": " + std::strerror(errno));
  }
  if (req_.io.stdin_path.empty() && (L.stdin_all || t.rank == L.stdin_task)) {
    auto in = connect_launcher(L, t.rank, 0);
    if (!in) return in.error();
    t.in_fd = *in;
    return {};
  }
  return open_task_input(t, work_dir, v);
}

// -i PATTERN (as the job's user), else /dev/null. As Slurm's srun, -i N with
// no task N in the step reads a file named N.
Status StepDaemon::open_task_input(TaskPlan& t, const std::string& work_dir, const PatternValues& v) {
  const StepLayout& L = req_.layout;
  std::string pattern = req_.io.stdin_path;
  if (pattern.empty() && !L.stdin_all && L.launcher_port > 0) {
    int ntasks = 0;
    for (int n : L.tasks_per_node) ntasks += n;
    if (L.stdin_task >= ntasks) pattern = std::to_string(L.stdin_task);
  }
  std::string in_path = pattern.empty() ? "/dev/null" : absolute(expand_io_pattern(pattern, v), work_dir);
  AsUser as(user_);
  t.in_fd = as.failed() ? -1 : open(in_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (t.in_fd < 0) return make_error("cannot open input " + in_path + " as user " + user_.name + ": " + std::strerror(errno));
  return {};
}

void StepDaemon::plan_rlimits(const std::vector<PropagatedLimit>& wanted, std::string& notes) {
  rlimits_.clear();
  for (const auto& w : wanted) {
    struct rlimit have {};
    if (getrlimit(static_cast<__rlimit_resource_t>(w.resource), &have) != 0) continue;
    RlimitPlan p = plan_rlimit(w, have);
    rlimits_.emplace_back(w.resource, p.limit);
    if (!p.note.empty()) notes += "slurmstepd-" + req_.alloc.node_name + ": error: " + p.note + "\n";
  }
}

Status StepDaemon::prepare_tasks() {
  const std::string work_dir = req_.work_dir.empty() ? req_.job.submit_dir : req_.work_dir;
  if (work_dir.empty()) return make_error("no working directory: neither --chdir nor the submit directory is set");
  std::string chdir_note;
  {
    AsUser as(user_);
    if (as.failed()) return make_error("cannot take the identity of user " + user_.name + ": " + std::strerror(errno));
    struct stat st {};
    run_dir_ = work_dir;
    if (stat(work_dir.c_str(), &st) != 0 || faccessat(AT_FDCWD, work_dir.c_str(), X_OK, AT_EACCESS) != 0) {
      chdir_note = std::strerror(errno);
    } else if (!S_ISDIR(st.st_mode)) {
      chdir_note = std::strerror(ENOTDIR);
    }
  }
  if (!chdir_note.empty()) {
    // Slurm's slurmstepd goes on in /tmp and says so on the first task's
    // stderr (anchor cluster, 22.05); output paths stay relative to the
    // directory asked for, so a relative one there fails the launch.
    chdir_note = "slurmstepd-" + req_.alloc.node_name + ": error: couldn't chdir to `" + work_dir + "': " +
                 chdir_note + ": going to /tmp instead\n";
    run_dir_ = "/tmp";
  }
  std::vector<std::string> login;
  if (export_loads_login_env(req_.job.export_spec)) {
    auto env = load_login_env(user_, kLoginEnvTimeoutMs);
    if (env) {
      login = std::move(*env);
    } else {
      status_.warnings.push_back("--export=" + req_.job.export_spec + ": " + env.error().message +
                                 "; the job starts from HOME, USER, LOGNAME, SHELL and a default PATH");
      login = minimal_login_env(user_);
    }
  }
  std::string limit_notes;  // a limit a task cannot have as the submitting shell had it: said on its stderr
  task_prologs_ = task_prologs(req_.task_prolog, req_.layout.task_prolog);
  task_epilogs_ = task_epilogs(req_.layout.task_epilog, req_.task_epilog);
  std::vector<int> ranks = req_.key.is_batch() ? std::vector<int>{0} : req_.layout.global_task_ids;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    TaskPlan t;
    t.rank = ranks[i];
    t.local_id = static_cast<int>(i);
    auto env = build_task_env(req_, TaskPlace{t.rank, t.local_id}, devices_constrained_, login);
    if (!env) return env.error();
    const std::vector<PropagatedLimit> wanted = take_rlimits(*env);  // the same for every task
    if (i == 0) plan_rlimits(wanted, limit_notes);
    t.env = env_strings(*env);
    plans_.push_back(std::move(t));
    if (Status st = open_task_io(plans_.back(), work_dir); !st) return st;
    std::string unbound;  // a --gpu-bind that names none of the step's GPUs here: said on the task's stderr
    task_gpu_positions(req_, t.local_id, devices_constrained_, &unbound);
    if (plans_.back().err_fd >= 0) {
      // Once for the node and once for each of its tasks, all on the first
      // task's stderr: 2 lines for a batch job, 3 for `srun -n 2 -l`, each "0: ".
      if (!chdir_note.empty() && i == 0) {
        for (std::size_t k = 0; k <= ranks.size(); ++k) write_all(plans_.back().err_fd, chdir_note);
      }
      if (i == 0) write_all(plans_.back().err_fd, limit_notes);
      if (!unbound.empty()) write_all(plans_.back().err_fd, "slurmstepd-" + req_.alloc.node_name + ": error: " + unbound + "\n");
    }
    TaskStatus ts;
    ts.rank = ranks[i];
    status_.tasks.push_back(ts);
  }
  status_.stdout_path = plans_.front().out_path;
  status_.stderr_path = plans_.front().err_path;
  return {};
}

// srun --mpi=pmix: the PMIx server for this node's tasks, and each task's
// PMIX_* variables (replacing any of the same name from the submitter).
Status StepDaemon::start_pmix() {
  if (req_.key.is_batch() || !wants_pmix(req_.layout.mpi)) return {};
  if (!pmix_available()) {
    status_.warnings.push_back("--mpi=" + req_.layout.mpi + ": this step daemon has no PMIx server (a build "
                               "without libpmix-dev, or the small drover-stepd, which leaves such steps to "
                               "`drover agent --stepd`); the tasks run without a PMIx server");
    return {};
  }
  const char* tmp = std::getenv("TMPDIR");
  auto server = PmixStepServer::start(req_, user_, tmp && *tmp == '/' ? tmp : "/tmp");
  if (!server) return make_error("--mpi=pmix: " + server.error().message);
  pmix_ = std::move(*server);
  for (auto& t : plans_) {
    auto extra = pmix_->task_env(t.rank);
    if (!extra) return make_error("--mpi=pmix: " + extra.error().message);
    for (const auto& kv : *extra) {
      const std::string key = kv.substr(0, kv.find('=') + 1);
      std::erase_if(t.env, [&](const std::string& e) { return e.rfind(key, 0) == 0; });
      t.env.push_back(kv);
    }
  }
  return {};
}

Status StepDaemon::open_task_io(TaskPlan& t, const std::string& work_dir) {
  PatternValues v;
  v.job_id = req_.key.job_id;
  v.step = req_.key.is_batch() ? "batch" : std::to_string(req_.key.step_id);
  v.array_job_id = req_.job.array ? req_.job.array->array_job_id : req_.key.job_id;
  v.array_task = std::to_string(req_.job.array ? req_.job.array->task_id : kNoArrayTask);
  v.node_name = hw::short_host_name();  // %N is the machine's short name in Slurm, not the NodeName
  v.node_index = req_.key.is_batch() ? 0 : req_.layout.node_index;
  v.task_rank = t.rank;
  v.user = user_.name;
  v.job_name = req_.job.job_name;
  const bool batch = req_.key.is_batch();
  const StepLayout& L = req_.layout;
  if (!batch && L.pty && L.launcher_port > 0 && req_.io.stdout_pattern.empty()) {
    // srun --pty: task 0 in the terminal; the others' streams are /dev/null (srun(1)).
    if (t.rank == 0) return open_task_pty(t);
    for (int* fd : {&t.in_fd, &t.out_fd, &t.err_fd}) {
      *fd = open("/dev/null", (fd == &t.in_fd ? O_RDONLY : O_WRONLY) | O_CLOEXEC | O_NOCTTY);
      if (*fd < 0) return make_error(std::string("cannot open /dev/null: ") + std::strerror(errno));
    }
    t.out_path = t.err_path = "/dev/null";
    return {};
  }
  if (!batch && L.launcher_port > 0 && req_.io.stdout_pattern.empty()) return connect_task_io(t, work_dir, v);
  // With srun's address the streams went to srun above; without it (no
  // launcher) a step without -o/-e writes into its spool record.
  std::string out_pattern = req_.io.stdout_pattern;
  if (out_pattern.empty()) out_pattern = batch ? default_batch_output(req_.job.array.has_value()) : "";
  t.out_path = out_pattern.empty() ? dir_ + "/task" + std::to_string(t.rank) + ".out"
                                   : absolute(expand_io_pattern(out_pattern, v), work_dir);
  std::string err_pattern = req_.io.stderr_pattern;
  if (err_pattern.empty() && !batch && req_.io.stdout_pattern.empty()) {
    t.err_path = dir_ + "/task" + std::to_string(t.rank) + ".err";
  } else {
    t.err_path = err_pattern.empty() ? t.out_path : absolute(expand_io_pattern(err_pattern, v), work_dir);
  }
  // Tasks that name the same file share one open file (and its offset).
  std::map<std::string, int> opened;
  for (const auto& p : plans_) {
    if (&p == &t) continue;
    opened.emplace(p.out_path, p.out_fd);
    opened.emplace(p.err_path, p.err_fd);
  }
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOCTTY | (req_.io.append ? O_APPEND : O_TRUNC);
  auto open_out = [&](const std::string& path, int& fd) -> Status {
    if (auto it = opened.find(path); it != opened.end()) {
      fd = dup(it->second);
    } else if (path.rfind(dir_ + "/", 0) == 0) {
      fd = open(path.c_str(), flags, 0600);  // the spool is the daemon's: opened as root
      if (fd >= 0) opened.emplace(path, fd);
    } else {
      AsUser as(user_);  // created with the user's ownership and checked with the user's rights
      fd = as.failed() ? -1 : open(path.c_str(), flags, 0644);
      if (fd >= 0) opened.emplace(path, fd);
    }
    if (fd < 0) return make_error("cannot open " + path + " as user " + user_.name + ": " + std::strerror(errno));
    return {};
  };
  if (Status st = open_out(t.out_path, t.out_fd); !st) return st;
  if (t.err_path == t.out_path) {
    t.err_fd = dup(t.out_fd);
  } else if (Status st = open_out(t.err_path, t.err_fd); !st) {
    return st;
  }
  return open_task_input(t, work_dir, v);
}

void StepDaemon::start_tasks() {
  for (std::size_t i = 0; i < plans_.size(); ++i) {
    std::string error;
    pid_t pid = fork_task(plans_[i], error);
    TaskStatus& ts = status_.tasks[i];
    if (pid > 0 && error.empty()) {
      ts.pid = pid;
      continue;
    }
    ts.pid = pid > 0 ? pid : 0;
    ts.error = error;
    if (pid <= 0) {  // never started: nothing to reap
      ts.ended = true;
      ts.exit = ExitStatus{1, 0, false};
    }
  }
  // The first started task's stderr is kept for the step's notice of its
  // end (termination_notice); not a terminal's (srun --pty), whose master
  // side must see the last task's end.
  for (std::size_t i = 0; i < plans_.size() && notice_fd_ < 0; ++i) {
    const TaskPlan& p = plans_[i];
    if (p.err_fd >= 0 && !p.controlling_tty && !status_.tasks[i].ended) {
      notice_fd_ = fcntl(p.err_fd, F_DUPFD_CLOEXEC, 3);
    }
  }
  for (auto& p : plans_) {
    // An epilog's errors go to the task's stderr (not a terminal's: srun --pty).
    const bool keep_err = !task_epilogs_.empty() && !p.controlling_tty;
    for (int* fd : {&p.in_fd, &p.out_fd, &p.err_fd}) {
      if (*fd < 0 || (keep_err && fd == &p.err_fd)) continue;
      close(*fd);
      *fd = -1;
    }
  }
  reap_children();  // tasks whose exec failed have exited already
}

namespace {

// Everything the child needs, computed before it is created: it shares the
// step daemon's memory (CLONE_VM, see fork_task), so it allocates nothing and
// calls the kernel directly where the C library would act on every thread.
struct ChildPlan {
  int in_fd, out_fd, err_fd;
  std::vector<const char*> procs_files;
  bool drop_privileges;
  uid_t uid;
  gid_t gid;
  const std::vector<gid_t>* groups;
  const char* work_dir;
  std::optional<mode_t> umask;
  std::vector<char*> argv;  // null-terminated
  std::vector<char*> envp;  // null-terminated; one entry is pid_slot
  char* pid_slot;           // "SLURM_TASK_PID=" and room for the digits
  std::vector<const char*> candidates;
  bool searched;  // the program was looked for along PATH: argv[0] becomes the path it was found at
  int error_fd;
  const char* shown_program;  // the program as an execve failure names it on the task's stderr
  bool controlling_tty = false;  // a session of its own with stdin its controlling terminal (srun --pty)
  // Set only when the child is forked (its own copy of memory, so it may
  // allocate): the prologs it runs before it executes the command.
  const std::vector<TaskScript>* prologs = nullptr;
  const char* node = "";  // the NodeName, for the task's error lines
  const std::vector<std::pair<int, struct rlimit>>* rlimits = nullptr;  // set while still root
};

// Appends `text` at `at` within `end` (no allocation: the child shares the
// daemon's memory).
char* put_text(char* at, const char* end, const char* text) {
  while (*text && at < end) *at++ = *text++;
  return at;
}

constexpr char kTaskPidVar[] = "SLURM_TASK_PID=";

// Writes `v` in decimal at `out`, NUL-terminated (no allocation).
void put_decimal(char* out, long v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  while (n > 0) *out++ = digits[--n];
  *out = '\0';
}

// In the child: join the cgroups, set up the streams, become the user, enter
// the working directory and exec. Any failure is reported as {stage, errno}
// on error_fd, which exec closes on success. A program that cannot be
// executed makes the task exit with the errno (2 for a missing one, 13 when
// it may not be run), as Slurm's slurmstepd does.
int run_child(void* arg) {
  // Not const: a program found along PATH becomes argv[0]. The daemon is
  // stopped until the exec (CLONE_VFORK) and reads the plan no more.
  ChildPlan& p = *static_cast<ChildPlan*>(arg);
  auto fail = [&](int stage) {
    int msg[2] = {stage, errno};
    ssize_t ignored = write(p.error_fd, msg, sizeof msg);
    (void)ignored;
    _exit(stage == kStageExec && msg[1] > 0 && msg[1] < 256 ? msg[1] : 1);
  };
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // the handler table is this child's own
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (const char* f : p.procs_files) {  // while still root
    int fd = open(f, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t ignored = write(fd, "0", 1);
      (void)ignored;
      close(fd);
    }
  }
  if (p.controlling_tty) {
    if (setsid() < 0) fail(kStageIo);
  } else {
    setpgid(0, 0);
  }
  if (dup2(p.in_fd, 0) < 0 || dup2(p.out_fd, 1) < 0 || dup2(p.err_fd, 2) < 0) fail(kStageIo);
  if (p.controlling_tty && ioctl(0, TIOCSCTTY, 0) != 0) fail(kStageIo);
  if (p.rlimits) {
    // Within the hard limits this daemon has (plan_rlimit), so they hold.
    for (const auto& [resource, limit] : *p.rlimits) setrlimit(static_cast<__rlimit_resource_t>(resource), &limit);
  }
  if (p.drop_privileges) {
    // Raw system calls: the C library's setuid() would act on every thread of
    // the step daemon, whose memory this child shares.
    if (syscall(SYS_setgroups, p.groups->size(), p.groups->data()) != 0 || syscall(SYS_setgid, p.gid) != 0 ||
        syscall(SYS_setuid, p.uid) != 0) {
      fail(kStageIdentity);
    }
    if (syscall(SYS_setuid, 0) == 0) {
      errno = EPERM;
      fail(kStageIdentity);  // privileges must be gone for good
    }
  }
  if (chdir(p.work_dir) != 0) fail(kStageChdir);
  if (p.umask) umask(*p.umask);
  put_decimal(p.pid_slot + sizeof kTaskPidVar - 1, static_cast<long>(syscall(SYS_getpid)));
  char* const* envp = p.envp.data();
  std::vector<std::string> env;
  std::vector<char*> env_ptrs;
  if (p.prologs) {
    env.assign(p.envp.begin(), p.envp.end() - 1);
    if (int code = run_task_prologs(*p.prologs, p.node, p.work_dir, env); code != 0) _exit(code);
    for (auto& e : env) env_ptrs.push_back(e.data());
    env_ptrs.push_back(nullptr);
    envp = env_ptrs.data();
  }
  int best = ENOENT;
  for (const char* c : p.candidates) {
    if (p.searched) p.argv[0] = const_cast<char*>(c);
    execve(c, p.argv.data(), envp);
    if (errno != ENOENT && errno != ENOTDIR) best = errno;
  }
  if (p.searched) errno = best;
  // Slurm's slurmstepd says it on the task's stderr, and the task exits
  // with the errno (anchor cluster: "slurmstepd-cpu01: error: execve():
  // nosuchcmd: No such file or directory", exit code 2).
  // A script whose interpreter is missing is named by it: "bad
  // interpreter(/bin/nosuch)", as Slurm's says it.
  const int exec_errno = errno;
  char interp[256] = {0};
  if (exec_errno == ENOENT) {
    for (const char* c : p.candidates) {
      int fd = open(c, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char head[sizeof interp + 2];
      ssize_t n = read(fd, head, sizeof head - 1);
      close(fd);
      if (n > 2 && head[0] == '#' && head[1] == '!') {
        ssize_t i = 2, k = 0;
        while (i < n && (head[i] == ' ' || head[i] == '\t')) ++i;
        while (i < n && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && k + 1 < ssize_t(sizeof interp)) {
          interp[k++] = head[i++];
        }
      }
      break;
    }
  }
  char line[1024];
  char* at = line;
  const char* end = line + sizeof line - 1;
  at = put_text(at, end, "slurmstepd-");
  at = put_text(at, end, p.node);
  at = put_text(at, end, ": error: execve(): ");
  if (interp[0]) {
    at = put_text(at, end, "bad interpreter(");
    at = put_text(at, end, interp);
    at = put_text(at, end, ")");
  } else {
    at = put_text(at, end, p.shown_program);
  }
  at = put_text(at, end, ": ");
  at = put_text(at, end, strerror(errno));
  *at++ = '\n';
  ssize_t ignored = write(2, line, static_cast<std::size_t>(at - line));
  (void)ignored;
  errno = exec_errno;
  fail(kStageExec);
  return 127;  // not reached
}

}  // namespace

// The batch script; a step's command; with --multi-prog, the rank's record
// of the configuration with the rest of srun's arguments added.
Result<std::vector<std::string>> StepDaemon::task_command(int rank) const {
  if (req_.key.is_batch()) return std::vector<std::string>{dir_ + "/" + kScriptFile};
  if (req_.multi_prog.empty()) return req_.argv;
  const std::string file = req_.argv.empty() ? std::string("(multi-prog)") : req_.argv.front();
  auto mp = parse_multi_prog(req_.multi_prog, file);
  if (!mp) return mp.error();
  std::vector<std::string> extra(req_.argv.empty() ? req_.argv.end() : req_.argv.begin() + 1, req_.argv.end());
  return multi_prog_argv(*mp, rank, extra);
}

// The task is started as posix_spawn starts a program: a child that shares
// the daemon's memory until it executes (CLONE_VM | CLONE_VFORK), so that
// neither the page tables are copied nor the daemon's pages made
// copy-on-write at every launch.
pid_t StepDaemon::fork_task(const TaskPlan& t, std::string& error) {
  auto command = task_command(t.rank);
  if (!command) {
    error = command.error().message;
    return -1;
  }
  std::vector<std::string> argv = std::move(*command);
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return -1;
  }
  std::vector<std::string> env = t.env;
  env.push_back(kTaskPidVar + std::string(24, '0'));
  const std::vector<std::string> candidates = exec_candidates(argv[0], env, run_dir_);
  const bool searched = argv[0].find('/') == std::string::npos;
  // A relative path is named from the working directory, as Slurm's does.
  const std::string shown = searched || argv[0].front() == '/' ? argv[0] : run_dir_ + "/" + argv[0];
  ChildPlan plan{t.in_fd, t.out_fd, t.err_fd, {}, geteuid() == 0 && user_.uid != 0, user_.uid, user_.gid,
                 &user_.groups, run_dir_.c_str(), req_.key.is_batch() ? std::nullopt : req_.layout.umask,
                 {}, {}, nullptr, {}, searched, errpipe[1], shown.c_str()};
  plan.controlling_tty = t.controlling_tty;
  plan.node = req_.alloc.node_name.c_str();
  if (!task_prologs_.empty()) plan.prologs = &task_prologs_;
  if (!rlimits_.empty()) plan.rlimits = &rlimits_;
  for (const auto& f : cgroup_.procs_files()) plan.procs_files.push_back(f.c_str());
  for (auto& a : argv) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  for (auto& kv : env) plan.envp.push_back(kv.data());
  plan.envp.push_back(nullptr);
  plan.pid_slot = env.back().data();
  for (const auto& c : candidates) plan.candidates.push_back(c.c_str());
  // The child's stack, left uninitialised: zeroing it would touch (fault in)
  // every page, where the child uses a few.
  constexpr std::size_t kChildStack = 256 * 1024;
  std::unique_ptr<char[]> stack(new char[kChildStack]);
  // No signal may be handled in the child before it resets the handlers.
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old);
  // With prologs the child runs programs and reads their output before it
  // executes: a fork, which copies the daemon, instead of sharing its memory.
  pid_t pid = plan.prologs ? fork() : clone(run_child, stack.get() + kChildStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
  if (pid == 0) _exit(run_child(&plan));  // the fork's child
  const int clone_errno = errno;
  sigprocmask(SIG_SETMASK, &old, nullptr);
  close(errpipe[1]);
  if (pid < 0) {
    error = std::string(plan.prologs ? "fork: " : "clone: ") + std::strerror(clone_errno);
    close(errpipe[0]);
    return -1;
  }
  int msg[2] = {0, 0};
  ssize_t n;
  while ((n = read(errpipe[0], msg, sizeof msg)) < 0 && errno == EINTR) {
  }
  close(errpipe[0]);
  // An execve failure was said on the task's stderr, and its errno is the
  // task's exit code: the task ran and failed, as under Slurm.
  if (n == static_cast<ssize_t>(sizeof msg) && msg[0] != kStageExec) {
    std::string what = msg[0] == kStageChdir ? "chdir(" + run_dir_ + ")" : stage_text(msg[0]);
    error = what + ": " + std::strerror(msg[1]);
  }
  return pid;
}

}  // namespace drover::agent
