// An exclusive advisory lock (flock) on a file, held for the life of the
// object, so that a second daemon refuses to start instead of taking over
// the first one's socket or state. The kernel drops the lock when the process
// dies, so a crash never leaves a stale lock behind. The file holds the
// holder's pid, for the message the next contender prints.
#pragma once

#include <string>
#include <string_view>

#include "common/result.hpp"

namespace drover::rpc {

class LockFile {
 public:
  // Creates `path` if needed (mode 0644) and locks it without waiting.
  // `what` names what the lock protects, for the refusal message
  // ("the Unix socket /var/spool/drover/ctld.sock").
  static Result<LockFile> acquire(const std::string& path, std::string_view what);

  LockFile(LockFile&& other) noexcept;
  LockFile& operator=(LockFile&& other) noexcept;
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;
  ~LockFile();

  const std::string& path() const { return path_; }

 private:
  LockFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace drover::rpc
