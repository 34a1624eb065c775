// The local fast path (proto/drover/v1/wire.proto) on
// <StateSaveLocation>/ctld.wire.sock: one thread per connection reads a
// frame, runs the method on the state thread (methods.hpp) and writes the
// reply once it is durable. The caller is who the kernel says (SO_PEERCRED).
#pragma once

#include <atomic>
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
  void serve(int fd, Caller who);

  Controller& ctl_;
  Identify identify_;
  std::unique_ptr<rpc::UnixListener> listener_;
  std::mutex mu_;
  std::set<int> active_;  // connections being served
  std::atomic<bool> stopping_{false};
};

}  // namespace drover::ctld
