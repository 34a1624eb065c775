// The local fast path (proto/drover/v1/wire.proto) on
// <StateSaveLocation>/ctld.wire.sock: a worker thread per connection, which
// accepts it itself (workers are kept a while for the next one), reads a
// frame, runs the method on the state thread (methods.hpp); the reply goes
// out once it is durable, from the thread that makes it so. The caller is
// who the kernel says (SO_PEERCRED).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "common/result.hpp"
#include "ctld/state.hpp"

namespace drover::rpc {
class UnixListener;
struct PeerCredentials;
}  // namespace drover::rpc

namespace drover::ctld {

class Controller;

class WireServer {
 public:
  // `who` turns the kernel's credentials into a Caller (privileges).
  using Identify = std::function<Caller(uint32_t uid, uint32_t gid)>;
  static Result<std::unique_ptr<WireServer>> start(Controller& ctl, const std::string& path, Identify identify);
  ~WireServer();
  // Stops accepting and waits for the connections' threads to end.
  void stop();

 private:
  WireServer(Controller& ctl, Identify identify);
  void add_worker();  // with mu_ held
  void work();
  void serve(int fd, Caller who);

  Controller& ctl_;
  Identify identify_;
  std::unique_ptr<rpc::UnixListener> listener_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<int> active_;  // connections being served
  int workers_ = 0, idle_ = 0;  // idle: waiting in accept
  static constexpr std::chrono::milliseconds kIdleWorker{10000};
  std::atomic<bool> stopping_{false};
};

}  // namespace drover::ctld
