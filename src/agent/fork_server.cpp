#include "agent/fork_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/proc.hpp"

extern char** environ;

namespace drover::agent {
namespace {

constexpr char kPing[] = "?";           // a request without descriptors: "are you there"
constexpr int kAnswerTimeoutMs = 5000;  // a fork takes well under a millisecond
constexpr std::size_t kMaxDir = 4096;

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Sends `payload` with `fds` attached.
bool send_with_fds(int sock, const std::string& payload, const int* fds, int nfds) {
  iovec iov{const_cast<char*>(payload.data()), payload.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(static_cast<std::size_t>(nfds) * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(static_cast<std::size_t>(nfds) * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds, static_cast<std::size_t>(nfds) * sizeof(int));
  }
  ssize_t n;
  while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  return n == static_cast<ssize_t>(payload.size());
}

// The server's int32 answer, within the timeout.
Result<int32_t> read_answer(int sock) {
  pollfd p{sock, POLLIN, 0};
  int rc;
  while ((rc = poll(&p, 1, kAnswerTimeoutMs)) < 0 && errno == EINTR) {
  }
  if (rc == 0) return make_error("the step daemon fork server did not answer within " +
                                 std::to_string(kAnswerTimeoutMs) + " ms");
  int32_t answer = 0;
  ssize_t n;
  while ((n = recv(sock, &answer, sizeof answer, 0)) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof answer)) {
    return make_error(n == 0 ? std::string("the step daemon fork server has exited")
                             : errno_text("reading the step daemon fork server's answer"));
  }
  return answer;
}

// In the forked child: the descriptors a step daemon starts with, then its body.
[[noreturn]] void become_step_daemon(int sock, int sig_fd, const sigset_t& old_mask, int log_fd, int notify_fd,
                                     const std::string& dir, int (*run)(const std::string&)) {
  close(sock);
  close(sig_fd);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  prctl(PR_SET_NAME, "drover-stepd", 0, 0, 0);
  setsid();
  // Out of the way of 0-3 first, whatever numbers they arrived with.
  const int log_hi = fcntl(log_fd, F_DUPFD, 10);
  const int notify_hi = fcntl(notify_fd, F_DUPFD, 10);
  const int null_fd = open("/dev/null", O_RDONLY);
  if (log_hi < 0 || notify_hi < 0 || null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(log_hi, 1) < 0 ||
      dup2(log_hi, 2) < 0 || dup2(notify_hi, 3) < 0) {
    _exit(126);
  }
  close_range(4, ~0U, 0);
  std::exit(run(dir));
}

}  // namespace

Result<std::unique_ptr<ForkServer>> ForkServer::start(const std::vector<std::string>& command) {
  if (command.empty()) return make_error("no step daemon command to start a fork server with");
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return make_error(errno_text("socketpair"));
  std::vector<std::string> argv = command;
  argv.push_back("--fork-server");
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, sv[1], 3);  // stdout and stderr stay the agent's (its log)
  posix_spawn_file_actions_addclosefrom_np(&fa, 4);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &fa, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  close(sv[1]);
  if (rc != 0) {
    close(sv[0]);
    return make_error("the step daemon fork server '" + argv[0] + "' could not start: " + std::strerror(rc));
  }
  std::unique_ptr<ForkServer> fs(new ForkServer(pid, sv[0]));
  if (!send_with_fds(fs->fd_, kPing, nullptr, 0)) return make_error(errno_text("the step daemon fork server"));
  auto answer = read_answer(fs->fd_);
  if (!answer) return answer.error();
  if (*answer != 0) return make_error("the step daemon fork server '" + argv[0] + "' answered " +
                                      std::to_string(*answer) + " to a ping instead of 0");
  return fs;
}

ForkServer::~ForkServer() {
  close(fd_);  // the server sees the end of its requests and exits
  const int pidfd = open_pidfd(pid_);
  if (pidfd >= 0 && !wait_pidfd(pidfd, 2000)) send_signal(pidfd, pid_, SIGKILL);
  if (pidfd >= 0) close(pidfd);
  waitpid(pid_, nullptr, 0);
}

Result<pid_t> ForkServer::spawn(const std::string& dir, int log_fd, int notify_fd, bool* sent) {
  *sent = false;
  if (dir.empty() || dir.size() > kMaxDir) return make_error("fork server: bad step directory '" + dir + "'");
  std::lock_guard lock(mu_);
  const int fds[2] = {log_fd, notify_fd};
  if (!send_with_fds(fd_, dir, fds, 2)) return make_error(errno_text("sending to the step daemon fork server"));
  *sent = true;
  auto answer = read_answer(fd_);
  if (!answer) return answer.error();
  if (*answer <= 0) {
    *sent = false;  // refused or fork failed: certainly nothing runs
    return make_error(std::string("the step daemon fork server could not fork: ") + std::strerror(-*answer));
  }
  return static_cast<pid_t>(*answer);
}

int serve_fork_requests(int fd, int (*run)(const std::string& dir)) {
  prctl(PR_SET_NAME, "drover-stepd-fs", 0, 0, 0);
  sigset_t chld, old_mask;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old_mask);
  const int sig_fd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sig_fd < 0) {
    std::fprintf(stderr, "drover-stepd fork server: signalfd: %s\n", std::strerror(errno));
    return 1;
  }
  std::string dir(kMaxDir + 1, '\0');
  for (;;) {
    pollfd p[2] = {{fd, POLLIN, 0}, {sig_fd, POLLIN, 0}};
    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "drover-stepd fork server: poll: %s\n", std::strerror(errno));
      return 1;
    }
    if (p[1].revents & POLLIN) {  // step daemons that ended: collect them (their CPU time adds to ours)
      signalfd_siginfo info;
      while (read(sig_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      }
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    }
    if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    iovec iov{dir.data(), dir.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // the agent's end closed (or broke): done; running step daemons stay
    std::vector<int> fds;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int f;
        std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
        fds.push_back(f);
      }
    }
    const std::string request(dir.data(), static_cast<std::size_t>(n));
    int32_t answer = 0;
    if (request == kPing && fds.empty()) {
      answer = 0;
    } else if (fds.size() != 2 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || request.find('\0') != std::string::npos) {
      answer = -EINVAL;
    } else {
      std::fflush(nullptr);
      const pid_t pid = fork();
      if (pid == 0) become_step_daemon(fd, sig_fd, old_mask, fds[0], fds[1], request, run);
      answer = pid > 0 ? pid : -errno;
    }
    for (int f : fds) close(f);
    if (send(fd, &answer, sizeof answer, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof answer)) break;
  }
  return 0;
}

}  // namespace drover::agent
