// A listening Unix stream socket that Drover accepts on itself, so that it
// can read each connection's peer credentials (SO_PEERCRED) before handing
// the connection to gRPC. Holds a lock file so that a second daemon refuses
// to start instead of unlinking and re-binding a live daemon's socket.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
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

  // Instead of start(): the caller's own threads take the connections, each
  // blocking in accept() (the kernel hands a connection to one waiter), so
  // that the thread that takes a connection can serve it without a handoff.
  // `idle`: how long one accept_one() waits before it answers kIdle.
  void accept_in_callers(std::chrono::milliseconds idle);
  struct Connection {
    int fd = -1;  // blocking, close-on-exec; the caller owns it
    PeerCredentials peer;
  };
  enum class Taken { kConnection, kIdle, kStopped };
  // One connection, or kIdle after the idle time, or kStopped once stop() or
  // interrupt() has been called (at once for every thread waiting).
  Taken accept_one(Connection& out);
  // Wakes every thread in accept_one() with kStopped; new connections are
  // refused. stop() does this too, then closes the socket.
  void interrupt();
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
  std::atomic<bool> interrupted_{false};
};

// The kernel's credentials of the process at the other end of a Unix socket,
// as they were when it connected.
std::optional<PeerCredentials> peer_credentials(int fd);

}  // namespace drover::rpc
