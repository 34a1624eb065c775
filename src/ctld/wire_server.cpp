#include "ctld/wire_server.hpp"

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
#include "rpc/call.hpp"
#include "rpc/unix_listener.hpp"
#include "rpc/wire.hpp"

namespace drover::ctld {
namespace {

constexpr uint16_t kInvalidArgument = 3;
constexpr uint16_t kUnimplemented = 12;

// A reply: `frame` holds the whole frame to send, of which the first `sent`
// bytes are already on the socket.
struct Outcome {
  std::string frame;
  std::size_t sent = 0;
};

Outcome error_outcome(uint16_t code, const std::string& text) { return Outcome{rpc::encode_frame(code, text), 0}; }

// Parses the request and runs `method` on the state thread. The reply is
// sent from the thread that produces it (the state thread, or the store's
// writer once the change is durable), as far as the socket takes it without
// waiting: the client then has its answer without waking this connection's
// thread first. This thread sends whatever did not fit.
template <class Req, class Rep, class Method>
Outcome call(Controller& ctl, int fd, const Caller& who, const std::string& payload, Method method) {
  auto req = std::make_shared<Req>();
  if (!req->ParseFromString(payload)) return error_outcome(kInvalidArgument, "the request could not be decoded");
  if (auto ok = rpc::check_request_header(req->header()); !ok) return error_outcome(kInvalidArgument, ok.error().message);
  auto rep = std::make_shared<Rep>();
  auto promise = std::make_shared<std::promise<Outcome>>();
  auto future = promise->get_future();
  ctl.post([&ctl, fd, who, req, rep, promise, method] {
    method(ctl, who, *req, rep.get(), methods::logged(*req, who, [fd, rep, promise](int code, const std::string& error) {
      Outcome out{rpc::encode_frame(static_cast<uint16_t>(code), code == 0 ? rep->SerializeAsString() : error), 0};
      out.sent = rpc::send_now(fd, out.frame);
      promise->set_value(std::move(out));
    }));
  });
  return future.get();
}

Outcome dispatch(Controller& c, int fd, const Caller& who, uint16_t method, const std::string& p) {
  namespace m = methods;
  switch (method) {
    case v1::WIRE_SUBMIT: return call<v1::SubmitRequest, v1::SubmitReply>(c, fd, who, p, m::submit);
    case v1::WIRE_GET_JOBS: return call<v1::GetJobsRequest, v1::GetJobsReply>(c, fd, who, p, m::get_jobs);
    case v1::WIRE_CANCEL: return call<v1::CancelRequest, v1::CancelReply>(c, fd, who, p, m::cancel);
    case v1::WIRE_CONTROL: return call<v1::ControlRequest, v1::ControlReply>(c, fd, who, p, m::control);
    case v1::WIRE_UPDATE_JOB: return call<v1::UpdateJobRequest, v1::UpdateJobReply>(c, fd, who, p, m::update_job);
    case v1::WIRE_GET_NODES: return call<v1::GetNodesRequest, v1::GetNodesReply>(c, fd, who, p, m::get_nodes);
    case v1::WIRE_GET_PARTITIONS:
      return call<v1::GetPartitionsRequest, v1::GetPartitionsReply>(c, fd, who, p, m::get_partitions);
    case v1::WIRE_UPDATE_NODE: return call<v1::UpdateNodeRequest, v1::UpdateNodeReply>(c, fd, who, p, m::update_node);
    case v1::WIRE_UPDATE_PARTITION:
      return call<v1::UpdatePartitionRequest, v1::UpdatePartitionReply>(c, fd, who, p, m::update_partition);
    case v1::WIRE_GET_CONFIG: return call<v1::GetConfigRequest, v1::GetConfigReply>(c, fd, who, p, m::get_config);
    case v1::WIRE_RECONFIGURE: return call<v1::ReconfigureRequest, v1::ReconfigureReply>(c, fd, who, p, m::reconfigure);
    case v1::WIRE_STATUS: return call<v1::StatusRequest, v1::StatusReply>(c, fd, who, p, m::status);
    case v1::WIRE_CHANGE_RESERVATION:
      return call<v1::ChangeReservationRequest, v1::ChangeReservationReply>(c, fd, who, p, m::change_reservation);
    case v1::WIRE_GET_RESERVATIONS:
      return call<v1::GetReservationsRequest, v1::GetReservationsReply>(c, fd, who, p, m::get_reservations);
    case v1::WIRE_SHUTDOWN: return call<v1::ShutdownRequest, v1::ShutdownReply>(c, fd, who, p, m::shutdown);
    case v1::WIRE_SET_DEBUG: return call<v1::SetDebugRequest, v1::SetDebugReply>(c, fd, who, p, m::set_debug);
    case v1::WIRE_CREATE_STEP: return call<v1::CreateStepRequest, v1::CreateStepReply>(c, fd, who, p, m::create_step);
    case v1::WIRE_GET_STEP: return call<v1::GetStepRequest, v1::GetStepReply>(c, fd, who, p, m::get_step);
    case v1::WIRE_GET_STEPS: return call<v1::GetStepsRequest, v1::GetStepsReply>(c, fd, who, p, m::get_steps);
    case v1::WIRE_GET_STEP_USAGE:
      return call<v1::GetStepUsageRequest, v1::GetStepUsageReply>(c, fd, who, p, m::get_step_usage);
    case v1::WIRE_BROADCAST_FILE:
      return call<v1::BroadcastFileRequest, v1::BroadcastFileReply>(c, fd, who, p, m::broadcast_file);
    case v1::WIRE_SIGNAL_STEP: return call<v1::SignalStepRequest, v1::SignalStepReply>(c, fd, who, p, m::signal_step);
    case v1::WIRE_COMPLETE_JOB:
      return call<v1::CompleteJobRequest, v1::CompleteJobReply>(c, fd, who, p, m::complete_job);
    case v1::WIRE_GET_JOB_HISTORY:
      return call<v1::GetJobHistoryRequest, v1::GetJobHistoryReply>(c, fd, who, p, m::get_job_history);
    case v1::WIRE_GET_PRIORITIES:
      return call<v1::GetPrioritiesRequest, v1::GetPrioritiesReply>(c, fd, who, p, m::get_priorities);
    case v1::WIRE_GET_SHARES: return call<v1::GetSharesRequest, v1::GetSharesReply>(c, fd, who, p, m::get_shares);
    case v1::WIRE_DIAG: return call<v1::DiagRequest, v1::DiagReply>(c, fd, who, p, m::diag);
    case v1::WIRE_GET_ASSOCIATIONS:
      return call<v1::GetAssociationsRequest, v1::GetAssociationsReply>(c, fd, who, p, m::get_associations);
    case v1::WIRE_MODIFY_ASSOCIATIONS:
      return call<v1::ModifyAssociationsRequest, v1::ModifyAssociationsReply>(c, fd, who, p, m::modify_associations);
    default: return error_outcome(kUnimplemented, "unknown method " + std::to_string(method) + " on the wire socket");
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
  s->listener_->accept_in_callers(kIdleWorker);
  std::lock_guard<std::mutex> lock(s->mu_);
  s->add_worker();
  return s;
}

void WireServer::add_worker() {
  ++workers_;
  std::thread([this] { work(); }).detach();
}

// Each worker takes a connection itself (blocking in accept) and serves it:
// no thread hands a command's connection to another on its way. While one
// serves, another waits for the next connection; a connection may stay open
// a long time (a client polling), so every one has a worker of its own. A
// worker idle for kIdleWorker ends, unless it is the only one waiting.
void WireServer::work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    ++idle_;
    lock.unlock();
    rpc::UnixListener::Connection c;
    auto taken = listener_->accept_one(c);
    lock.lock();
    --idle_;
    if (taken == rpc::UnixListener::Taken::kStopped) break;
    if (taken == rpc::UnixListener::Taken::kIdle) {
      if (idle_ > 0) break;
      continue;
    }
    if (stopping_) {
      ::close(c.fd);
      break;
    }
    active_.insert(c.fd);
    if (idle_ == 0) add_worker();  // someone waits for the next connection
    lock.unlock();
    serve(c.fd, identify_(c.peer.uid, c.peer.gid));
    lock.lock();
  }
  if (--workers_ == 0) cv_.notify_all();
}

void WireServer::serve(int fd, Caller who) {
  timeval idle{30, 0};  // a client that stops talking is dropped
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof idle);
  while (!stopping_) {
    auto frame = rpc::read_frame(fd);
    if (!frame) break;
    Outcome out = dispatch(ctl_, fd, who, frame->kind, frame->payload);
    if (!rpc::send_rest(fd, out.frame, out.sent)) break;
  }
  std::lock_guard<std::mutex> lock(mu_);
  active_.erase(fd);
  ::close(fd);
}

void WireServer::stop() {
  if (stopping_.exchange(true)) return;
  // Workers waiting for a connection end now; connections finish the
  // request they are in (the state thread still runs); idle ones are woken
  // by shutting their reading side.
  if (listener_) listener_->interrupt();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : active_) ::shutdown(fd, SHUT_RD);
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return workers_ == 0; });
  lock.unlock();
  if (listener_) listener_->stop();
}

}  // namespace drover::ctld
