#include "rpc/unix_listener.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace drover::rpc {
namespace {

Result<sockaddr_un> unix_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty()) return make_error("Unix socket path is empty");
  if (path.size() >= sizeof addr.sun_path) {
    return make_error(fmt::format(
        "Unix socket path {} is {} bytes long; the kernel allows at most {}. Choose a shorter "
        "StateSaveLocation or socket path",
        path, path.size(), sizeof addr.sun_path - 1));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

// Removes a socket file nobody listens on (a crashed daemon's). We hold the
// lock, so no live Drover daemon can be behind it; anything that is not a
// socket is left alone and reported.
Status remove_stale_socket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return make_error(fmt::format("cannot inspect {}: {}", path, std::strerror(errno)));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return make_error(fmt::format(
        "{} exists and is not a socket; refusing to replace it. Remove it or choose another path", path));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return make_error(fmt::format("cannot remove stale socket {}: {}", path, std::strerror(errno)));
  }
  return {};
}

Result<int> bind_and_listen(const std::string& path, mode_t mode, int backlog) {
  auto addr = unix_address(path);
  if (!addr) return addr.error();
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(fmt::format("cannot create Unix socket: {}", std::strerror(errno)));
  auto fail = [&](std::string_view what) {
    Error e = make_error(fmt::format("cannot {} Unix socket {}: {}", what, path, std::strerror(errno)));
    ::close(fd);
    return e;
  };
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof *addr) != 0) return fail("bind");
  // bind() applied the umask; set the mode we mean (connect needs write permission).
  if (::chmod(path.c_str(), mode) != 0) return fail("chmod");
  if (::listen(fd, backlog) != 0) return fail("listen on");
  return fd;
}

// After a failed accept(): when the process or system is out of descriptors
// or memory, the pending connection stays queued; says so and waits 100 ms
// (instead of spinning on a listening socket that stays readable). Whether
// it was that.
bool back_off_when_out_of_descriptors(const std::string& path) {
  if (errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM) return false;
  std::fprintf(stderr, "drover: accept on %s: %s; retrying in 100 ms\n", path.c_str(), std::strerror(errno));
  ::poll(nullptr, 0, 100);
  return true;
}

}  // namespace

std::optional<PeerCredentials> peer_credentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
    return std::nullopt;
  }
  return PeerCredentials{cred.pid, cred.uid, cred.gid};
}

Result<std::unique_ptr<UnixListener>> UnixListener::open(const UnixListenerOptions& options) {
  if (auto addr = unix_address(options.path); !addr) return addr.error();
  const std::string lock_path = options.lock_path.empty() ? options.path + ".lock" : options.lock_path;
  auto lock = LockFile::acquire(lock_path, fmt::format("the Unix socket {}", options.path));
  if (!lock) return lock.error();
  if (auto ok = remove_stale_socket(options.path); !ok) return ok.error();
  auto fd = bind_and_listen(options.path, options.mode, options.backlog);
  if (!fd) return fd.error();
  struct stat st {};
  if (::stat(options.path.c_str(), &st) != 0) st.st_ino = 0;
  int wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    ::close(*fd);
    return make_error(fmt::format("cannot create eventfd: {}", std::strerror(errno)));
  }
  return std::unique_ptr<UnixListener>(
      new UnixListener(options.path, std::move(*lock), *fd, wake, st.st_ino));
}

UnixListener::UnixListener(std::string path, LockFile lock, int listen_fd, int wake_fd, ino_t inode)
    : path_(std::move(path)), lock_(std::move(lock)), listen_fd_(listen_fd), wake_fd_(wake_fd),
      inode_(inode) {}

UnixListener::~UnixListener() {
  stop();
  ::close(wake_fd_);
}

void UnixListener::start(OnAccept on_accept) {
  on_accept_ = std::move(on_accept);
  thread_ = std::thread([this] { accept_loop(); });
}

void UnixListener::accept_loop() {
  pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  for (;;) {
    int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[1].revents & POLLIN) != 0) return;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      back_off_when_out_of_descriptors(path_);
      continue;
    }
    auto peer = peer_credentials(fd);
    if (!peer) {
      ::close(fd);
      continue;
    }
    accepted_.fetch_add(1);
    on_accept_(fd, *peer);
  }
}

void UnixListener::accept_in_callers(std::chrono::milliseconds idle) {
  int flags = ::fcntl(listen_fd_, F_GETFL);
  ::fcntl(listen_fd_, F_SETFL, flags & ~O_NONBLOCK);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(idle.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((idle.count() % 1000) * 1000);
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);  // accept() honours it
}

UnixListener::Taken UnixListener::accept_one(Connection& out) {
  for (;;) {
    if (interrupted_) return Taken::kStopped;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (interrupted_) return Taken::kStopped;  // a shut-down listening socket answers EINVAL
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Taken::kIdle;
      if (back_off_when_out_of_descriptors(path_)) continue;
      return Taken::kStopped;
    }
    auto peer = peer_credentials(fd);
    if (!peer) {
      ::close(fd);
      continue;
    }
    accepted_.fetch_add(1);
    out = Connection{fd, *peer};
    return Taken::kConnection;
  }
}

void UnixListener::interrupt() {
  if (interrupted_.exchange(true)) return;
  ::shutdown(listen_fd_, SHUT_RDWR);  // wakes every accept() blocked on it
}

void UnixListener::stop() {
  if (stopped_) return;
  stopped_ = true;
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
  interrupt();
  ::close(listen_fd_);
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && st.st_ino == inode_) ::unlink(path_.c_str());
}

}  // namespace drover::rpc
