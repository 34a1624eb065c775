// A listening Unix stream socket that Drover accepts on itself, so that it
// can read each connection's peer credentials (SO_PEERCRED) before handing
// the connection to gRPC. Holds a lock file so that a second daemon refuses
// to start instead of unlinking and re-binding a live daemon's socket.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "common/result.hpp"
#include "rpc/lock_file.hpp"

namespace drover::rpc {

struct PeerCredentials {
  int32_t pid = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

struct UnixListenerOptions {
  std::string path;
  std::string lock_path;    // default: path + ".lock"
  mode_t mode = 0666;       // every local user may connect; the kernel says who they are
  int backlog = 1024;
};

class UnixListener {
 public:
  // Receives each accepted connection (non-blocking, close-on-exec) and owns it.
  using OnAccept = std::function<void(int fd, const PeerCredentials& peer)>;

  // Takes the lock, removes a stale socket file left by a dead daemon, binds,
  // sets the mode and listens. Does not accept yet.
  static Result<std::unique_ptr<UnixListener>> open(const UnixListenerOptions& options);
  ~UnixListener();

  // Starts the accept thread. Call once.
  void start(OnAccept on_accept);
  // Stops accepting, closes the socket and removes its file. Idempotent.
  void stop();
  const std::string& path() const { return path_; }
  uint64_t accepted() const { return accepted_.load(); }

 private:
  UnixListener(std::string path, LockFile lock, int listen_fd, int wake_fd, ino_t inode);
  void accept_loop();

  std::string path_;
  LockFile lock_;
  int listen_fd_;
  int wake_fd_;       // eventfd that stop() signals
  ino_t inode_;       // of the socket file we created, so stop() never removes another's
  OnAccept on_accept_;
  std::thread thread_;
  std::atomic<uint64_t> accepted_{0};
  bool stopped_ = false;
};

// The kernel's credentials of the process at the other end of a Unix socket,
// as they were when it connected.
std::optional<PeerCredentials> peer_credentials(int fd);

}  // namespace drover::rpc
