#include "ctld/wire_server.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <thread>

#include "ctld/controller.hpp"
#include "ctld/methods.hpp"
#include "ctld/step_methods.hpp"
#include "drover/v1/wire.pb.h"
#include "rpc/unix_listener.hpp"
#include "rpc/wire.hpp"

namespace drover::ctld {
namespace {

constexpr uint16_t kInvalidArgument = 3;
constexpr uint16_t kUnimplemented = 12;

struct Outcome {
  int code = 0;
  std::string bytes;  // the reply, or the error text
};

// Parses the request, runs `method` on the state thread and waits for its reply.
template <class Req, class Rep, class Method>
Outcome call(Controller& ctl, const Caller& who, const std::string& payload, Method method) {
  auto req = std::make_shared<Req>();
  if (!req->ParseFromString(payload)) return {kInvalidArgument, "the request could not be decoded"};
  auto rep = std::make_shared<Rep>();
  auto promise = std::make_shared<std::promise<Outcome>>();
  auto future = promise->get_future();
  ctl.post([&ctl, who, req, rep, promise, method] {
    method(ctl, who, *req, rep.get(), [rep, promise](int code, const std::string& error) {
      promise->set_value(code == 0 ? Outcome{0, rep->SerializeAsString()} : Outcome{code, error});
    });
  });
  return future.get();
}

Outcome dispatch(Controller& c, const Caller& who, uint16_t method, const std::string& p) {
  namespace m = methods;
  switch (method) {
    case v1::WIRE_SUBMIT: return call<v1::SubmitRequest, v1::SubmitReply>(c, who, p, m::submit);
    case v1::WIRE_GET_JOBS: return call<v1::GetJobsRequest, v1::GetJobsReply>(c, who, p, m::get_jobs);
    case v1::WIRE_CANCEL: return call<v1::CancelRequest, v1::CancelReply>(c, who, p, m::cancel);
    case v1::WIRE_CONTROL: return call<v1::ControlRequest, v1::ControlReply>(c, who, p, m::control);
    case v1::WIRE_UPDATE_JOB: return call<v1::UpdateJobRequest, v1::UpdateJobReply>(c, who, p, m::update_job);
    case v1::WIRE_GET_NODES: return call<v1::GetNodesRequest, v1::GetNodesReply>(c, who, p, m::get_nodes);
    case v1::WIRE_GET_PARTITIONS:
      return call<v1::GetPartitionsRequest, v1::GetPartitionsReply>(c, who, p, m::get_partitions);
    case v1::WIRE_UPDATE_NODE: return call<v1::UpdateNodeRequest, v1::UpdateNodeReply>(c, who, p, m::update_node);
    case v1::WIRE_GET_CONFIG: return call<v1::GetConfigRequest, v1::GetConfigReply>(c, who, p, m::get_config);
    case v1::WIRE_RECONFIGURE: return call<v1::ReconfigureRequest, v1::ReconfigureReply>(c, who, p, m::reconfigure);
    case v1::WIRE_STATUS: return call<v1::StatusRequest, v1::StatusReply>(c, who, p, m::status);
    case v1::WIRE_CREATE_STEP: return call<v1::CreateStepRequest, v1::CreateStepReply>(c, who, p, m::create_step);
    case v1::WIRE_GET_STEP: return call<v1::GetStepRequest, v1::GetStepReply>(c, who, p, m::get_step);
    case v1::WIRE_GET_STEPS: return call<v1::GetStepsRequest, v1::GetStepsReply>(c, who, p, m::get_steps);
    case v1::WIRE_SIGNAL_STEP: return call<v1::SignalStepRequest, v1::SignalStepReply>(c, who, p, m::signal_step);
    case v1::WIRE_COMPLETE_JOB:
      return call<v1::CompleteJobRequest, v1::CompleteJobReply>(c, who, p, m::complete_job);
    case v1::WIRE_GET_JOB_HISTORY:
      return call<v1::GetJobHistoryRequest, v1::GetJobHistoryReply>(c, who, p, m::get_job_history);
    case v1::WIRE_GET_PRIORITIES:
      return call<v1::GetPrioritiesRequest, v1::GetPrioritiesReply>(c, who, p, m::get_priorities);
    case v1::WIRE_GET_SHARES: return call<v1::GetSharesRequest, v1::GetSharesReply>(c, who, p, m::get_shares);
    case v1::WIRE_DIAG: return call<v1::DiagRequest, v1::DiagReply>(c, who, p, m::diag);
    case v1::WIRE_GET_ASSOCIATIONS:
      return call<v1::GetAssociationsRequest, v1::GetAssociationsReply>(c, who, p, m::get_associations);
    case v1::WIRE_MODIFY_ASSOCIATIONS:
      return call<v1::ModifyAssociationsRequest, v1::ModifyAssociationsReply>(c, who, p, m::modify_associations);
    default: return {kUnimplemented, "unknown method " + std::to_string(method) + " on the wire socket"};
  }
}

}  // namespace

WireServer::WireServer(Controller& ctl, Identify identify) : ctl_(ctl), identify_(std::move(identify)) {}

WireServer::~WireServer() { stop(); }

Result<std::unique_ptr<WireServer>> WireServer::start(Controller& ctl, const std::string& path, Identify identify) {
  rpc::UnixListenerOptions o;
  o.path = path;
  auto listener = rpc::UnixListener::open(o);
  if (!listener) return listener.error();
  std::unique_ptr<WireServer> s(new WireServer(ctl, std::move(identify)));
  s->listener_ = std::move(*listener);
  WireServer* raw = s.get();
  s->listener_->start([raw](int fd, const rpc::PeerCredentials& peer) {
    if (raw->stopping_) {
      ::close(fd);
      return;
    }
    raw->hand_off(fd, raw->identify_(peer.uid, peer.gid));
  });
  return s;
}

// A connection goes to a worker that waits for one, or to a new worker: a
// command is one connection, and a thread made and ended for each would be
// on every submission's path.
void WireServer::hand_off(int fd, Caller who) {
  std::lock_guard<std::mutex> lock(mu_);
  active_.insert(fd);
  waiting_.emplace_back(fd, std::move(who));
  // Every connection waiting needs a worker of its own: one may stay open
  // for a long time (a client polling), and must not hold up the next.
  if (static_cast<int>(waiting_.size()) <= idle_) {
    cv_.notify_one();
    return;
  }
  ++workers_;
  std::thread([this] { work(); }).detach();
}

void WireServer::work() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_;
    // An idle worker stays a while for the next command, then ends.
    bool got = cv_.wait_for(lock, std::chrono::seconds(10), [this] { return stopping_ || !waiting_.empty(); });
    --idle_;
    if (!got || waiting_.empty()) break;
    auto [fd, who] = std::move(waiting_.front());
    waiting_.pop_front();
    lock.unlock();
    serve(fd, who);
    lock.lock();
  }
  if (--workers_ == 0) cv_.notify_all();
}

void WireServer::serve(int fd, Caller who) {
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  timeval idle{30, 0};  // a client that stops talking is dropped
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof idle);
  while (!stopping_) {
    auto frame = rpc::read_frame(fd);
    if (!frame) break;
    Outcome out = dispatch(ctl_, who, frame->kind, frame->payload);
    if (!rpc::write_frame(fd, static_cast<uint16_t>(out.code), out.bytes)) break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  active_.erase(fd);
  ::close(fd);
}

void WireServer::stop() {
  if (stopping_.exchange(true)) return;
  if (listener_) listener_->stop();
  // Connections finish the request they are in (the state thread still
  // runs); idle ones are woken by shutting their reading side.
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : active_) ::shutdown(fd, SHUT_RD);
  }
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (active_.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Idle workers end now; none is left touching this object afterwards.
  std::unique_lock<std::mutex> lock(mu_);
  cv_.notify_all();
  cv_.wait(lock, [this] { return workers_ == 0; });
}

}  // namespace drover::ctld
