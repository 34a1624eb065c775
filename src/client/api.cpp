#include "client/api.hpp"

#include <chrono>
#include <map>
#include <optional>

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <random>
#include <thread>

#include "common/strings.hpp"
#include "config/model.hpp"
#include "drover/v1/wire.pb.h"
#include "rpc/wire.hpp"

namespace drover::client {
namespace {

TransportFactory g_remote = nullptr;

bool is_socket(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

// 32 hex digits (the envelope's request id): 16 bytes from getrandom(2), as
// the schema says. (A generator seeded from std::random_device had only 2^32
// sequences, and its set-up probes the CPU, which traps in a virtual machine.)
std::string request_id() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      break;
    }
  }
  if (got < sizeof bytes) {  // no getrandom (before Linux 3.17): the C++ library's source
    std::random_device rd;
    for (size_t i = got; i < sizeof bytes; ++i) bytes[i] = static_cast<unsigned char>(rd());
  }
  return to_hex(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

// The local fast path: one connection per command, requests one after the other.
class WireTransport final : public Transport {
 public:
  explicit WireTransport(std::string path) : path_(std::move(path)) {}
  ~WireTransport() override {
    if (fd_ >= 0) ::close(fd_);
  }

  ApiResult<std::string> call(int method, const std::string& request) override {
    // The controller drops a connection idle for 30 s (srun's and salloc's
    // can be): start a fresh one rather than write into a closed one.
    auto now = std::chrono::steady_clock::now();
    if (fd_ >= 0 && now - last_used_ > std::chrono::seconds(20)) {
      ::close(fd_);
      fd_ = -1;
    }
    last_used_ = now;
    if (fd_ < 0) {
      auto fd = rpc::connect_unix(path_);
      if (!fd) return ApiError{14, fd.error().message, true, false};
      fd_ = *fd;
    }
    if (auto st = rpc::write_frame(fd_, static_cast<uint16_t>(method), request); !st) {
      drop();
      return ApiError{14, st.error().message, true, true};
    }
    auto reply = rpc::read_frame(fd_);
    if (!reply) {
      drop();
      return ApiError{14, "the controller closed the connection: " + reply.error().message, true, true};
    }
    if (reply->kind != 0) return ApiError{reply->kind, reply->payload, false};
    return std::move(reply->payload);
  }

 private:
  void drop() {
    ::close(fd_);
    fd_ = -1;
  }
  std::string path_;
  int fd_ = -1;
  std::chrono::steady_clock::time_point last_used_{};
};

}  // namespace

bool is_this_host(const std::string& host) {
  if (host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1") return true;
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  std::string me = buf;
  return host == me || host == me.substr(0, me.find('.'));
}

void set_remote_transport(TransportFactory factory) { g_remote = factory; }
bool has_remote_transport() { return g_remote != nullptr; }

namespace {

// What a command needs from slurm.conf to reach the controller.
struct ControllerConf {
  Endpoint ep;               // all but wire_path
  std::string wire, socket;  // the local sockets under StateSaveLocation
  std::string name;          // SlurmctldHost's name (without its "(addr)")
  std::map<std::string, std::string> keys;  // the keys commands act on themselves (command_conf_value)
};

Result<ControllerConf> read_controller_conf(const std::string& config_flag) {
  ControllerConf c;
  Endpoint& ep = c.ep;
  ep.conf_path = config::resolve_config_path(config_flag);
  config::LoadOptions load{ep.conf_path, "", ""};
  load.globals_only = true;  // where the controller is and how to reach it
  auto cfg = config::load_config(load);
  if (!cfg) {
    return make_error(cfg.error().message +
                      " (the commands read the cluster's slurm.conf from --config, DROVER_CONF, "
                      "SLURM_CONF or /etc/drover/slurm.conf; `drover up` prints the export DROVER_CONF=... line)");
  }
  ep.cluster = cfg->cluster_name;
  c.wire = cfg->state_save_location + "/ctld.wire.sock";
  c.socket = cfg->state_save_location + "/ctld.sock";
  ep.key_path = cfg->auth_key_path();
  ep.signer_path = cfg->auth_socket_path();
  const std::string entry = cfg->slurmctld_hosts.empty() ? "localhost" : cfg->slurmctld_hosts.front();
  c.name = entry.substr(0, entry.find('('));
  ep.target = cfg->controller_host() + ":" + std::to_string(cfg->slurmctld_port);
  ep.retry_s = static_cast<int>(cfg->message_timeout);
  for (const char* k :
       {"SrunProlog", "SrunEpilog", "PropagateResourceLimits", "PropagateResourceLimitsExcept", "WaitTime"}) {
    c.keys[k] = cfg->passive_text(k);
  }
  c.keys["GresTypes"] = join(cfg->gres_types, ",");
  c.keys["KillWait"] = std::to_string(cfg->kill_wait);
  return c;
}

}  // namespace

namespace {

// A command may ask more than once (drover-cli to choose its transport, then
// the command itself): slurm.conf is read once per process and config flag.
Result<const ControllerConf*> cached_conf(const std::string& config_flag) {
  static std::string last_flag;
  static std::optional<ControllerConf> last;
  if (!last || last_flag != config_flag) {
    auto c = read_controller_conf(config_flag);
    if (!c) return c.error();
    last_flag = config_flag;
    last = std::move(*c);
  }
  return &*last;
}

}  // namespace

std::string command_conf_value(const std::string& config_flag, const std::string& key) {
  auto c = cached_conf(config_flag);
  if (!c) return "";
  auto it = (*c)->keys.find(key);
  return it == (*c)->keys.end() ? "" : it->second;
}

Result<Endpoint> find_controller(const std::string& config_flag) {
  auto conf = cached_conf(config_flag);
  if (!conf) return conf.error();
  const ControllerConf* last = *conf;
  Endpoint ep = last->ep;
  // The controller's host uses the local socket (also when the controller is
  // down: the call then says it cannot be contacted there). SlurmctldHost's
  // name says which host that is, not its address (name(addr)): a host that
  // reaches the controller at a loopback address under another name (a
  // login node emulated on one machine) goes over TCP like a remote one.
  if (is_socket(last->wire) || is_socket(last->socket) || is_this_host(last->name)) {
    ep.wire_path = last->wire;
  }
  return ep;
}

ControllerApi::ControllerApi(Endpoint ep, std::string name, std::unique_ptr<Transport> t)
    : ep_(std::move(ep)), name_(std::move(name)), transport_(std::move(t)) {}
ControllerApi::~ControllerApi() = default;

namespace {

Result<std::unique_ptr<Transport>> make_transport(const Endpoint& ep, const std::string& client_name) {
  if (ep.local()) return std::unique_ptr<Transport>(std::make_unique<WireTransport>(ep.wire_path));
  if (g_remote) return g_remote(ep, client_name);
  return make_error("the controller at " + ep.target + " is not on this host, and this command binary has no gRPC "
                    "transport; run it through `drover " + client_name.substr(0, client_name.find(' ')) + " ...`");
}

}  // namespace

Result<std::unique_ptr<ControllerApi>> ControllerApi::connect(const Endpoint& ep, std::string client_name) {
  auto t = make_transport(ep, client_name);
  if (!t) return t.error();
  return std::unique_ptr<ControllerApi>(new ControllerApi(ep, std::move(client_name), std::move(*t)));
}

namespace {

// Whether a request that may have reached the controller can be sent again:
// the reads, and a submission (the controller recognises its request id and
// answers with the job it already made).
bool may_send_again(int method) {
  switch (method) {
    case v1::WIRE_SUBMIT:
    case v1::WIRE_GET_JOBS:
    case v1::WIRE_GET_NODES:
    case v1::WIRE_GET_PARTITIONS:
    case v1::WIRE_GET_CONFIG:
    case v1::WIRE_STATUS:
    case v1::WIRE_GET_STEP:
    case v1::WIRE_GET_STEPS:
    case v1::WIRE_GET_STEP_USAGE:
    case v1::WIRE_GET_JOB_HISTORY:
    case v1::WIRE_DIAG:
    case v1::WIRE_GET_ASSOCIATIONS:
    case v1::WIRE_GET_PRIORITIES:
    case v1::WIRE_GET_SHARES: return true;
    default: return false;
  }
}

}  // namespace

// A controller that cannot be reached is tried again once a second for the
// endpoint's retry_s (MessageTimeout), as Slurm's commands do while a
// controller restarts, with the same request (and request id).
template <class Rep, class Req>
ApiResult<Rep> ControllerApi::call(int method, Req req) {
  req.mutable_header()->set_request_id(request_id());
  req.mutable_header()->set_client(name_);
  const std::string request = req.SerializeAsString();
  const auto start = std::chrono::steady_clock::now();
  const auto until = start + std::chrono::seconds(ep_.retry_s);
  auto bytes = transport_->call(method, request);
  bool said = false;
  while (!bytes && bytes.error().unreachable && (!bytes.error().maybe_sent || may_send_again(method)) &&
         std::chrono::steady_clock::now() + std::chrono::seconds(1) <= until) {
    if (!said && isatty(STDERR_FILENO)) {
      std::fprintf(stderr, "%s: the controller at %s does not answer; trying again for up to %d s\n",
                   name_.substr(0, name_.find(' ')).c_str(), ep_.describe().c_str(), ep_.retry_s - 1);
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
    // A fresh connection: a gRPC channel that failed to connect waits out its
    // own back-off (1 s, then 1.6 times longer each time) before trying again.
    if (!ep_.local()) {
      if (auto t = make_transport(ep_, name_)) transport_ = std::move(*t);
    }
    bytes = transport_->call(method, request);
  }
  if (!bytes) {
    ApiError e = bytes.error();
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start);
    if (e.unreachable && waited.count() > 0) e.message += " (tried for " + std::to_string(waited.count()) + " s)";
    if (e.unreachable && e.maybe_sent && !may_send_again(method)) {
      e.message += "; the request may have been carried out before the connection broke";
    }
    return e;
  }
  Rep rep;
  if (!rep.ParseFromString(*bytes)) return ApiError{13, "the controller's reply could not be decoded", false};
  return rep;
}

ApiResult<v1::SubmitReply> ControllerApi::submit(const v1::JobDescriptor& job, bool test_only) {
  v1::SubmitRequest req;
  *req.mutable_job() = job;
  req.set_test_only(test_only);
  return call<v1::SubmitReply>(v1::WIRE_SUBMIT, std::move(req));
}

ApiResult<v1::GetJobsReply> ControllerApi::get_jobs(const std::vector<int64_t>& ids, bool detail,
                                                    bool include_finished, bool with_script) {
  v1::GetJobsRequest req;
  for (int64_t id : ids) req.add_job_ids(id);
  req.set_detail(detail);
  req.set_without_script(detail && !with_script);
  req.set_include_finished(include_finished);
  return call<v1::GetJobsReply>(v1::WIRE_GET_JOBS, std::move(req));
}

ApiResult<v1::GetJobsReply> ControllerApi::poll_allocation(int64_t job_id) {
  v1::GetJobsRequest req;
  req.add_job_ids(job_id);
  req.set_include_finished(true);
  req.set_allocator(true);
  return call<v1::GetJobsReply>(v1::WIRE_GET_JOBS, std::move(req));
}

ApiResult<v1::CancelReply> ControllerApi::cancel(const v1::CancelRequest& req) {
  return call<v1::CancelReply>(v1::WIRE_CANCEL, req);
}

ApiResult<v1::ControlReply> ControllerApi::control(const v1::ControlRequest& req) {
  return call<v1::ControlReply>(v1::WIRE_CONTROL, req);
}

ApiResult<v1::UpdateJobReply> ControllerApi::update_job(const v1::UpdateJobRequest& req) {
  return call<v1::UpdateJobReply>(v1::WIRE_UPDATE_JOB, req);
}

ApiResult<v1::GetNodesReply> ControllerApi::get_nodes(const std::vector<std::string>& names, bool gres_only) {
  v1::GetNodesRequest req;
  for (const auto& n : names) req.add_names(n);
  req.set_gres_only(gres_only);
  return call<v1::GetNodesReply>(v1::WIRE_GET_NODES, std::move(req));
}

ApiResult<v1::GetPartitionsReply> ControllerApi::get_partitions() {
  return call<v1::GetPartitionsReply>(v1::WIRE_GET_PARTITIONS, v1::GetPartitionsRequest{});
}

ApiResult<v1::UpdateNodeReply> ControllerApi::update_node(const v1::UpdateNodeRequest& req) {
  return call<v1::UpdateNodeReply>(v1::WIRE_UPDATE_NODE, req);
}

ApiResult<v1::UpdatePartitionReply> ControllerApi::update_partition(const v1::UpdatePartitionRequest& req) {
  return call<v1::UpdatePartitionReply>(v1::WIRE_UPDATE_PARTITION, req);
}

ApiResult<v1::GetConfigReply> ControllerApi::get_config() {
  return call<v1::GetConfigReply>(v1::WIRE_GET_CONFIG, v1::GetConfigRequest{});
}

ApiResult<v1::ReconfigureReply> ControllerApi::reconfigure() {
  return call<v1::ReconfigureReply>(v1::WIRE_RECONFIGURE, v1::ReconfigureRequest{});
}

ApiResult<v1::ShutdownReply> ControllerApi::shutdown(bool controller_only) {
  v1::ShutdownRequest req;
  req.set_controller_only(controller_only);
  return call<v1::ShutdownReply>(v1::WIRE_SHUTDOWN, req);
}

ApiResult<v1::SetDebugReply> ControllerApi::set_debug(const v1::SetDebugRequest& req) {
  return call<v1::SetDebugReply>(v1::WIRE_SET_DEBUG, req);
}

ApiResult<v1::ChangeReservationReply> ControllerApi::change_reservation(const v1::ChangeReservationRequest& req) {
  return call<v1::ChangeReservationReply>(v1::WIRE_CHANGE_RESERVATION, req);
}

ApiResult<v1::GetReservationsReply> ControllerApi::get_reservations() {
  return call<v1::GetReservationsReply>(v1::WIRE_GET_RESERVATIONS, v1::GetReservationsRequest{});
}

ApiResult<v1::StatusReply> ControllerApi::status() {
  return call<v1::StatusReply>(v1::WIRE_STATUS, v1::StatusRequest{});
}

ApiResult<v1::CreateStepReply> ControllerApi::create_step(const v1::CreateStepRequest& req) {
  return call<v1::CreateStepReply>(v1::WIRE_CREATE_STEP, req);
}

ApiResult<v1::GetStepReply> ControllerApi::get_step(int64_t job_id, int64_t step_id, bool allocator) {
  v1::GetStepRequest req;
  req.set_job_id(job_id);
  req.set_step_id(step_id);
  req.set_allocator(allocator);
  return call<v1::GetStepReply>(v1::WIRE_GET_STEP, std::move(req));
}

ApiResult<v1::GetStepUsageReply> ControllerApi::get_step_usage(int64_t job_id, std::optional<int64_t> array_task,
                                                               std::optional<int64_t> step_id, bool all_steps) {
  v1::GetStepUsageRequest req;
  req.set_job_id(job_id);
  if (array_task) req.set_array_task(*array_task);
  if (step_id) req.set_step_id(*step_id);
  req.set_all_steps(all_steps);
  return call<v1::GetStepUsageReply>(v1::WIRE_GET_STEP_USAGE, std::move(req));
}

ApiResult<v1::BroadcastFileReply> ControllerApi::broadcast_file(v1::BroadcastFileRequest req) {
  return call<v1::BroadcastFileReply>(v1::WIRE_BROADCAST_FILE, std::move(req));
}

ApiResult<v1::GetStepsReply> ControllerApi::get_steps(const std::vector<int64_t>& job_ids) {
  v1::GetStepsRequest req;
  for (int64_t id : job_ids) req.add_job_ids(id);
  return call<v1::GetStepsReply>(v1::WIRE_GET_STEPS, std::move(req));
}

ApiResult<v1::SignalStepReply> ControllerApi::signal_step(int64_t job_id, int64_t step_id, int signal, bool cancel) {
  v1::SignalStepRequest req;
  req.set_job_id(job_id);
  req.set_step_id(step_id);
  req.set_signal(signal);
  req.set_cancel(cancel);
  return call<v1::SignalStepReply>(v1::WIRE_SIGNAL_STEP, std::move(req));
}

ApiResult<v1::CompleteJobReply> ControllerApi::complete_job(int64_t job_id, int exit_code, int exit_signal) {
  v1::CompleteJobRequest req;
  req.set_job_id(job_id);
  req.set_exit_code(exit_code);
  req.set_exit_signal(exit_signal);
  return call<v1::CompleteJobReply>(v1::WIRE_COMPLETE_JOB, std::move(req));
}

ApiResult<v1::GetJobHistoryReply> ControllerApi::get_job_history(const v1::GetJobHistoryRequest& req) {
  return call<v1::GetJobHistoryReply>(v1::WIRE_GET_JOB_HISTORY, req);
}

ApiResult<v1::DiagReply> ControllerApi::diag(bool reset) {
  v1::DiagRequest req;
  req.set_reset(reset);
  return call<v1::DiagReply>(v1::WIRE_DIAG, req);
}

ApiResult<v1::GetAssociationsReply> ControllerApi::get_associations(v1::GetAssociationsRequest::View view) {
  v1::GetAssociationsRequest req;
  req.set_view(view);
  return call<v1::GetAssociationsReply>(v1::WIRE_GET_ASSOCIATIONS, std::move(req));
}

ApiResult<v1::ModifyAssociationsReply> ControllerApi::modify_associations(const v1::ModifyAssociationsRequest& req) {
  return call<v1::ModifyAssociationsReply>(v1::WIRE_MODIFY_ASSOCIATIONS, req);
}

ApiResult<v1::GetPrioritiesReply> ControllerApi::get_priorities() {
  return call<v1::GetPrioritiesReply>(v1::WIRE_GET_PRIORITIES, v1::GetPrioritiesRequest{});
}

ApiResult<v1::GetSharesReply> ControllerApi::get_shares() {
  return call<v1::GetSharesReply>(v1::WIRE_GET_SHARES, v1::GetSharesRequest{});
}

std::string unreachable_text(const std::string& program, const ApiError& e, const Endpoint& ep) {
  return program + ": error: Unable to contact slurm controller (connect failure)\n" + program +
         ": error: the controller at " + ep.describe() + " (from " + ep.conf_path + ") did not answer: " + e.message +
         "; is it running? (`drover up` starts a local cluster)\n";
}

}  // namespace drover::client
