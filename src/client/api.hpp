// The commands' way to the controller: finds the configuration as Slurm's
// commands find theirs (--config, else DROVER_CONF, else SLURM_CONF, else
// /etc/drover/slurm.conf). On the controller's host it uses the local fast
// path (proto/drover/v1/wire.proto: the Unix socket
// <StateSaveLocation>/ctld.wire.sock, the kernel says who the caller is);
// elsewhere gRPC over TCP at SlurmctldHost:SlurmctldPort, signed when the
// cluster key is readable. gRPC is a transport plugged in by the full
// `drover` binary (client/grpc_transport.hpp); the small command binary
// runs the full one for a remote controller. This header does not include grpcpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "drover/v1/accounting.pb.h"
#include "drover/v1/cluster.pb.h"
#include "drover/v1/jobs.pb.h"
#include "drover/v1/steps.pb.h"

namespace drover::client {

// ApiError::code of a refusal for want of rights (gRPC's PERMISSION_DENIED).
inline constexpr int kPermissionDeniedCode = 7;

// A failed call: the gRPC code and the controller's (or the transport's) message.
struct ApiError {
  int code = 0;
  std::string message;
  bool unreachable = false;  // the controller could not be contacted at all
  // With unreachable: whether the request may have reached the controller
  // (the connection broke after it was written) or certainly did not (no
  // connection was made).
  bool maybe_sent = false;
  // The controller's error without its detail lines: Slurm's words (common/job_errors.hpp).
  std::string headline() const { return message.substr(0, message.find('\n')); }
  // The controller refused the caller for want of rights (PrivateData, another user's job, ...).
  bool denied() const { return !unreachable && code == kPermissionDeniedCode; }
};

template <class T>
using ApiResult = Result<T, ApiError>;

struct Endpoint {
  std::string conf_path;
  std::string wire_path; // the local fast path's socket, when it is on this host
  std::string target;    // gRPC: "unix:/path" or "host:port"
  std::string key_path;  // for TCP
  std::string signer_path;  // for TCP without the key: the host's local signer (AuthInfo socket=)
  std::string cluster;
  // How long (seconds) a call keeps trying, once a second, to reach a
  // controller that does not answer: slurm.conf's MessageTimeout, as Slurm's
  // commands wait through a controller's restart. 0: one attempt.
  int retry_s = 0;
  bool local() const { return !wire_path.empty(); }
  std::string describe() const { return local() ? "unix:" + wire_path : target; }
};

// One way of carrying a request (serialized message) to a method and its reply back.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual ApiResult<std::string> call(int method, const std::string& request) = 0;  // v1::WireMethod
};

// Installed by the full binary: gRPC for endpoints that are not local.
using TransportFactory = Result<std::unique_ptr<Transport>> (*)(const Endpoint&, const std::string& client_name);
void set_remote_transport(TransportFactory factory);
// Whether a host name or address is this machine: localhost, 127.0.0.0/8
// (every emulated node's NodeAddr), ::1, or this host's name (short or full).
bool is_this_host(const std::string& host);
bool has_remote_transport();

// Reads the configuration (only the keys the commands need) and picks the target.
Result<Endpoint> find_controller(const std::string& config_flag);

// A slurm.conf key that a command acts on itself (srun's SrunProlog), from the
// same reading as find_controller's: its text, trimmed, "" when unset or when
// slurm.conf cannot be read (find_controller reports that).
std::string command_conf_value(const std::string& config_flag, const std::string& key);

class ControllerApi {
 public:
  // Errors: no transport for the endpoint (a remote controller without gRPC), or the transport's.
  static Result<std::unique_ptr<ControllerApi>> connect(const Endpoint& ep, std::string client_name);
  ~ControllerApi();

  const Endpoint& endpoint() const { return ep_; }
  // One attempt per call while it lives (Endpoint::retry_s 0): for a loop
  // that polls and asks again later when a call fails (srun's step,
  // salloc's allocation), so that it keeps serving its streams and its
  // command meanwhile, and for scontrol ping, which asks once.
  class OneAttempt {
   public:
    explicit OneAttempt(ControllerApi& api) : api_(api), saved_(api.ep_.retry_s) { api.ep_.retry_s = 0; }
    ~OneAttempt() { api_.ep_.retry_s = saved_; }
    OneAttempt(const OneAttempt&) = delete;
    OneAttempt& operator=(const OneAttempt&) = delete;

   private:
    ControllerApi& api_;
    int saved_;
  };

  ApiResult<v1::SubmitReply> submit(const v1::JobDescriptor& job, bool test_only);
  // ids empty: every active job, and the finished ones still remembered with include_finished.
  // `detail`: per-node detail, and (with_script) the script and environment of the caller's own jobs.
  ApiResult<v1::GetJobsReply> get_jobs(const std::vector<int64_t>& ids, bool detail, bool include_finished = true,
                                       bool with_script = true);
  // The salloc or srun holding job_id's allocation asks how it stands (and
  // so tells the controller it is still there: InactiveLimit).
  ApiResult<v1::GetJobsReply> poll_allocation(int64_t job_id);
  ApiResult<v1::CancelReply> cancel(const v1::CancelRequest& req);
  ApiResult<v1::ControlReply> control(const v1::ControlRequest& req);
  ApiResult<v1::UpdateJobReply> update_job(const v1::UpdateJobRequest& req);
  // gres_only: each node's GRES alone (what PrivateData=nodes leaves a plain user).
  ApiResult<v1::GetNodesReply> get_nodes(const std::vector<std::string>& names, bool gres_only = false);
  ApiResult<v1::GetPartitionsReply> get_partitions();
  ApiResult<v1::UpdateNodeReply> update_node(const v1::UpdateNodeRequest& req);
  ApiResult<v1::UpdatePartitionReply> update_partition(const v1::UpdatePartitionRequest& req);
  ApiResult<v1::GetConfigReply> get_config();
  ApiResult<v1::ReconfigureReply> reconfigure();
  // scontrol shutdown [slurmctld]
  ApiResult<v1::ShutdownReply> shutdown(bool controller_only);
  // scontrol setdebug / setdebugflags
  ApiResult<v1::SetDebugReply> set_debug(const v1::SetDebugRequest& req);
  // scontrol create|update|delete ReservationName=; show reservation, sinfo -T.
  ApiResult<v1::ChangeReservationReply> change_reservation(const v1::ChangeReservationRequest& req);
  ApiResult<v1::GetReservationsReply> get_reservations();
  ApiResult<v1::StatusReply> status();
  // Job steps (steps.proto; the local fast path only).
  ApiResult<v1::CreateStepReply> create_step(const v1::CreateStepRequest& req);
  // `allocator`: the caller is the srun holding the job's allocation (as poll_allocation).
  ApiResult<v1::GetStepReply> get_step(int64_t job_id, int64_t step_id, bool allocator = false);
  ApiResult<v1::GetStepsReply> get_steps(const std::vector<int64_t>& job_ids);
  // sstat: what the job's running steps use now (step_id -2: the batch step).
  ApiResult<v1::GetStepUsageReply> get_step_usage(int64_t job_id, std::optional<int64_t> array_task,
                                                  std::optional<int64_t> step_id, bool all_steps);
  // sbcast: one block of a file to the nodes of a running job.
  ApiResult<v1::BroadcastFileReply> broadcast_file(v1::BroadcastFileRequest req);
  ApiResult<v1::SignalStepReply> signal_step(int64_t job_id, int64_t step_id, int signal, bool cancel);
  ApiResult<v1::CompleteJobReply> complete_job(int64_t job_id, int exit_code, int exit_signal);
  ApiResult<v1::GetJobHistoryReply> get_job_history(const v1::GetJobHistoryRequest& req);
  ApiResult<v1::DiagReply> diag(bool reset = false);
  ApiResult<v1::GetPrioritiesReply> get_priorities();
  ApiResult<v1::GetSharesReply> get_shares();
  ApiResult<v1::GetAssociationsReply> get_associations(
      v1::GetAssociationsRequest::View view = v1::GetAssociationsRequest::OTHER);
  ApiResult<v1::ModifyAssociationsReply> modify_associations(const v1::ModifyAssociationsRequest& req);

 private:
  ControllerApi(Endpoint ep, std::string name, std::unique_ptr<Transport> t);
  template <class Rep, class Req>
  ApiResult<Rep> call(int method, Req req);
  Endpoint ep_;
  std::string name_;
  std::unique_ptr<Transport> transport_;
};

// Slurm's words for a controller that cannot be reached, plus Drover's line.
std::string unreachable_text(const std::string& program, const ApiError& e, const Endpoint& ep);

}  // namespace drover::client
