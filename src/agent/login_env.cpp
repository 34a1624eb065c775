#include "agent/login_env.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace drover::agent {
namespace {

// Printed by the shell before `env -0`, so that anything a profile script
// writes to stdout is skipped.
constexpr char kMarker[] = "DROVER-LOGIN-ENV-BEGIN";

std::string read_all(int fd, int timeout_ms, bool& timed_out) {
  std::string out;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      return out;
    }
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) out.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR) return out;
  }
}

}  // namespace

std::vector<std::string> minimal_login_env(const UserInfo& user) {
  return {"HOME=" + user.home, "USER=" + user.name, "LOGNAME=" + user.name,
          "SHELL=" + (user.shell.empty() ? std::string("/bin/sh") : user.shell),
          "PATH=/usr/local/bin:/usr/bin:/bin"};
}

Result<std::vector<std::string>> load_login_env(const UserInfo& user, int timeout_ms) {
  const std::string shell = user.shell.empty() ? "/bin/sh" : user.shell;
  const std::string argv0 = "-" + shell.substr(shell.rfind('/') + 1);
  const std::string script = std::string("printf '\\0") + kMarker + "\\0'; exec env -0";
  std::vector<std::string> env = minimal_login_env(user);
  std::vector<char*> envp;
  for (auto& kv : env) envp.push_back(kv.data());
  envp.push_back(nullptr);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return make_error(std::string("pipe: ") + std::strerror(errno));
  const bool drop = geteuid() == 0 && user.uid != 0;
  pid_t pid = fork();
  if (pid == 0) {
    int null_fd = open("/dev/null", O_RDWR);
    dup2(null_fd, 0);
    dup2(out[1], 1);
    dup2(null_fd, 2);
    setsid();
    if (drop && (setgroups(user.groups.size(), user.groups.data()) != 0 || setgid(user.gid) != 0 ||
                 setuid(user.uid) != 0)) {
      _exit(126);
    }
    if (chdir(user.home.c_str()) != 0 && chdir("/") != 0) _exit(126);
    char* args[] = {const_cast<char*>(argv0.c_str()), const_cast<char*>("-c"), const_cast<char*>(script.c_str()),
                    nullptr};
    execve(shell.c_str(), args, envp.data());
    _exit(127);
  }
  close(out[1]);
  if (pid < 0) {
    close(out[0]);
    return make_error(std::string("fork: ") + std::strerror(errno));
  }
  bool timed_out = false;
  std::string text = read_all(out[0], timeout_ms, timed_out);
  close(out[0]);
  if (timed_out) kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string who = "login shell " + shell + " of user " + user.name;
  if (timed_out) return make_error(who + " did not finish within " + std::to_string(timeout_ms) + " ms");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return make_error(who + " failed (exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  const std::string marker = std::string("\0", 1) + kMarker + std::string("\0", 1);
  auto at = text.find(marker);
  if (at == std::string::npos) return make_error(who + " printed no environment");
  std::vector<std::string> vars;
  std::size_t pos = at + marker.size();
  while (pos < text.size()) {
    std::size_t end = text.find('\0', pos);
    if (end == std::string::npos) end = text.size();
    std::string kv = text.substr(pos, end - pos);
    if (kv.find('=') != std::string::npos && kv.rfind("_=", 0) != 0) vars.push_back(std::move(kv));
    pos = end + 1;
  }
  return vars;
}

}  // namespace drover::agent
