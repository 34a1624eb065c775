#include "common/site_script.hpp"

#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "common/strings.hpp"

namespace drover {
namespace {

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

}  // namespace

std::string ScriptRun::describe() const {
  if (!started) return error;
  if (timed_out) return "timed out and was killed";
  if (signal) return fmt::format("killed by signal {}", signal);
  return fmt::format("exit {}", exit_code);
}

std::string ScriptRun::output_suffix(std::size_t max) const {
  std::string line(trim(output));
  if (line.empty()) return "";
  std::replace(line.begin(), line.end(), '\n', '|');
  if (line.size() > max) line = line.substr(0, max) + "...";
  return "; output: " + line;
}

std::vector<std::string> script_programs(const std::string& spec) {
  if (spec.empty()) return {};
  if (!has_glob_chars(spec)) return {spec};
  glob_t g{};
  std::vector<std::string> out;
  if (glob(spec.c_str(), 0, nullptr, &g) == 0) {  // sorted by name
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

namespace {

// The signals a program starts with at their default action (the daemons
// that run it may ignore or catch them).
constexpr int kDefaultSignals[] = {SIGPIPE, SIGCHLD, SIGTERM, SIGINT};

// Where the program's stderr goes: the caller's descriptor, /dev/null
// (kStderrDiscard), or (kStderrWithStdout) the same pipe as its stdout.
int stderr_target(const ScriptOptions& opts) {
  if (opts.stderr_fd == kStderrWithStdout && !opts.keep_output && opts.stdout_fd < 0) return kStderrDiscard;
  return opts.stderr_fd;
}

// posix_spawn: from any thread, without copying the caller's memory.
int spawn_as_caller(const std::string& program, const ScriptOptions& opts, int out_fd, char** argv, char** envp,
                    pid_t& pid) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0) posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  else posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  const int err = stderr_target(opts);
  if (err == kStderrWithStdout) posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
  else if (err >= 0) posix_spawn_file_actions_adddup2(&fa, err, 2);
  else posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  if (!opts.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, opts.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t dfl;
  sigemptyset(&dfl);
  for (int sig : kDefaultSignals) sigaddset(&dfl, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dfl);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
  const int rc = posix_spawn(&pid, program.c_str(), &fa, &attr, argv, envp);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

// fork: the child takes the user's identity before it executes the program.
// Its failure to start comes back as an errno on a close-on-exec pipe.
int spawn_as_user(const std::string& program, const ScriptOptions& opts, int out_fd, char** argv, char** envp,
                  pid_t& pid) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return errno;
  const ScriptUser& u = *opts.user;
  const int err = stderr_target(opts);
  pid = fork();
  if (pid < 0) {
    const int e = errno;
    close(report[0]);
    close(report[1]);
    return e;
  }
  if (pid == 0) {
    auto fail = [&] {
      int e = errno;
      ssize_t ignored = write(report[1], &e, sizeof e);
      (void)ignored;
      _exit(127);
    };
    sigset_t none;
    sigemptyset(&none);
    for (int sig : kDefaultSignals) signal(sig, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    setsid();
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd < 0) fail();
    if (dup2(null_fd, 0) < 0) fail();
    if (dup2(out_fd >= 0 ? out_fd : null_fd, 1) < 0) fail();
    if (dup2(err == kStderrWithStdout ? out_fd : err >= 0 ? err : null_fd, 2) < 0) fail();
    if (setgroups(u.groups.size(), u.groups.data()) != 0 || setgid(u.gid) != 0 || setuid(u.uid) != 0) fail();
    if (!opts.cwd.empty() && chdir(opts.cwd.c_str()) != 0) fail();
    execve(program.c_str(), argv, envp);
    fail();
  }
  close(report[1]);
  int e = 0;
  ssize_t n;
  while ((n = read(report[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    waitpid(pid, nullptr, 0);
    return e;
  }
  return 0;
}

}  // namespace

ScriptRun run_script(const std::string& program, const ScriptOptions& opts) {
  ScriptRun run;
  std::vector<std::string> args{program};
  args.insert(args.end(), opts.argv.begin(), opts.argv.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = opts.env;
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  int pipefd[2] = {-1, -1};
  if (opts.keep_output && pipe2(pipefd, O_CLOEXEC) != 0) {
    run.error = fmt::format("{} cannot run: pipe: {}", program, std::strerror(errno));
    return run;
  }
  pid_t pid = -1;
  const int stdout_to = opts.keep_output ? pipefd[1] : opts.stdout_fd;
  const int rc = opts.user ? spawn_as_user(program, opts, stdout_to, argv.data(), envp.data(), pid)
                           : spawn_as_caller(program, opts, stdout_to, argv.data(), envp.data(), pid);
  if (opts.keep_output) close(pipefd[1]);
  if (rc != 0) {
    if (opts.keep_output) close(pipefd[0]);
    run.error = fmt::format("{} cannot run: {}", program, std::strerror(rc));
    return run;
  }
  run.started = true;
  auto keep = [&](const char* buf, ssize_t n) {
    if (run.output.size() < opts.keep_bytes) {
      run.output.append(buf, std::min<std::size_t>(static_cast<std::size_t>(n), opts.keep_bytes - run.output.size()));
    }
  };
  using Clock = std::chrono::steady_clock;
  const auto give_up = opts.timeout_s > 0 ? Clock::now() + std::chrono::seconds(opts.timeout_s) : Clock::time_point::max();
  int status = 0;
  bool reaped = false;
  int out_fd = opts.keep_output ? pipefd[0] : -1;
  while (!reaped) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) {
      reaped = true;
      break;
    }
    if (Clock::now() >= give_up) {
      kill(-pid, SIGKILL);  // its session's group: what it started goes too
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      run.timed_out = true;
      reaped = true;
      break;
    }
    if (out_fd >= 0) {
      pollfd p{out_fd, POLLIN, 0};
      if (poll(&p, 1, 50) > 0) {
        char buf[1024];
        ssize_t n = read(out_fd, buf, sizeof buf);
        if (n > 0) {
          keep(buf, n);
        } else {
          close(out_fd);  // EOF: the program (and all it started) closed its end
          out_fd = -1;
        }
      }
    } else {
      usleep(10000);
    }
  }
  if (out_fd >= 0) {
    // What it wrote just before it ended (non-blocking: a child it left
    // behind may hold the pipe open).
    fcntl(out_fd, F_SETFL, O_NONBLOCK);
    char buf[1024];
    ssize_t n;
    while ((n = read(out_fd, buf, sizeof buf)) > 0) {
      keep(buf, n);
    }
    close(out_fd);
  }
  if (!run.timed_out) {
    if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  }
  return run;
}

}  // namespace drover
