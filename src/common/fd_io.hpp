// Writing all of a buffer to a file descriptor (a pipe, a file, a socket a
// peer reads): write(2) again after a short write or EINTR. And a descriptor
// closed with its owner.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <string_view>
#include <utility>

namespace drover {

// Owns a file descriptor (-1: none) and closes it when destroyed.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// false (errno set) when a write failed; what went before it was written.
bool write_all(int fd, const char* p, std::size_t n);
inline bool write_all(int fd, std::string_view s) { return write_all(fd, s.data(), s.size()); }

}  // namespace drover
