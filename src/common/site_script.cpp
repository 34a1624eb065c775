#include "common/site_script.hpp"

#include <fcntl.h>
#include <glob.h>
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

constexpr std::size_t kKeptOutput = 4096;

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
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (opts.keep_output) {
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  if (!opts.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, opts.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  sigset_t dfl;
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  sigaddset(&dfl, SIGCHLD);
  sigaddset(&dfl, SIGTERM);
  sigaddset(&dfl, SIGINT);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dfl);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, program.c_str(), &fa, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (opts.keep_output) close(pipefd[1]);
  if (rc != 0) {
    if (opts.keep_output) close(pipefd[0]);
    run.error = fmt::format("{} cannot run: {}", program, std::strerror(rc));
    return run;
  }
  run.started = true;
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
          if (run.output.size() < kKeptOutput) run.output.append(buf, std::min<std::size_t>(n, kKeptOutput - run.output.size()));
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
      if (run.output.size() < kKeptOutput) run.output.append(buf, std::min<std::size_t>(n, kKeptOutput - run.output.size()));
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
