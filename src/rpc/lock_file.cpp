#include "rpc/lock_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "common/strings.hpp"

namespace drover::rpc {
namespace {

std::string read_holder(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  auto pid = parse_int(trim(std::string_view(buf, static_cast<std::size_t>(n))));
  return pid ? fmt::format(" by pid {}", *pid) : "";
}

void write_pid(int fd) {
  std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd, 0) == 0) {
    // Best effort: the pid only improves the next contender's message.
    [[maybe_unused]] ssize_t n = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
}

}  // namespace

Result<LockFile> LockFile::acquire(const std::string& path, std::string_view what) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return make_error(fmt::format("cannot open lock file {} for {}: {}", path, what, std::strerror(errno)));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder = read_holder(fd);
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return make_error(fmt::format(
          "{} is in use: lock file {} is held{} (another daemon is running; stop it first or "
          "configure a different path)",
          what, path, holder));
    }
    return make_error(fmt::format("cannot lock {} for {}: {}", path, what, std::strerror(err)));
  }
  write_pid(fd);
  return LockFile(path, fd);
}

LockFile::LockFile(LockFile&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

LockFile& LockFile::operator=(LockFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

// The file is left in place: unlinking it would let a contender lock a new
// inode while a third process still waits on the old one.
LockFile::~LockFile() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace drover::rpc
