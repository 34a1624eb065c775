#include "client/grpc_transport.hpp"

#include <grpcpp/grpcpp.h>

#include "client/api.hpp"
#include "drover/v1/accounting.grpc.pb.h"
#include "drover/v1/cluster.grpc.pb.h"
#include "drover/v1/jobs.grpc.pb.h"
#include "drover/v1/steps.grpc.pb.h"
#include "drover/v1/wire.pb.h"
#include "rpc/call.hpp"
#include "rpc/client.hpp"

namespace drover::client {
namespace {

class GrpcTransport final : public Transport {
 public:
  GrpcTransport(rpc::RpcClient client)
      : client_(std::move(client)),
        jobs_(v1::JobService::NewStub(client_.channel())),
        cluster_(v1::ClusterService::NewStub(client_.channel())),
        accounting_(v1::AccountingService::NewStub(client_.channel())),
        steps_(v1::StepService::NewStub(client_.channel())) {}

  ApiResult<std::string> call(int method, const std::string& request) override {
    using S = v1::JobService::Stub;
    using C = v1::ClusterService::Stub;
    using A = v1::AccountingService::Stub;
    using T = v1::StepService::Stub;
    switch (method) {
      case v1::WIRE_SUBMIT: return invoke<v1::SubmitRequest, v1::SubmitReply>(request, jobs_.get(), &S::Submit);
      case v1::WIRE_GET_JOBS: return invoke<v1::GetJobsRequest, v1::GetJobsReply>(request, jobs_.get(), &S::GetJobs);
      case v1::WIRE_CANCEL: return invoke<v1::CancelRequest, v1::CancelReply>(request, jobs_.get(), &S::Cancel);
      case v1::WIRE_CONTROL: return invoke<v1::ControlRequest, v1::ControlReply>(request, jobs_.get(), &S::Control);
      case v1::WIRE_UPDATE_JOB: return invoke<v1::UpdateJobRequest, v1::UpdateJobReply>(request, jobs_.get(), &S::Update);
      case v1::WIRE_GET_NODES: return invoke<v1::GetNodesRequest, v1::GetNodesReply>(request, cluster_.get(), &C::GetNodes);
      case v1::WIRE_GET_PARTITIONS:
        return invoke<v1::GetPartitionsRequest, v1::GetPartitionsReply>(request, cluster_.get(), &C::GetPartitions);
      case v1::WIRE_UPDATE_NODE:
        return invoke<v1::UpdateNodeRequest, v1::UpdateNodeReply>(request, cluster_.get(), &C::UpdateNode);
      case v1::WIRE_UPDATE_PARTITION:
        return invoke<v1::UpdatePartitionRequest, v1::UpdatePartitionReply>(request, cluster_.get(),
                                                                             &C::UpdatePartition);
      case v1::WIRE_GET_CONFIG: return invoke<v1::GetConfigRequest, v1::GetConfigReply>(request, cluster_.get(), &C::GetConfig);
      case v1::WIRE_RECONFIGURE:
        return invoke<v1::ReconfigureRequest, v1::ReconfigureReply>(request, cluster_.get(), &C::Reconfigure);
      case v1::WIRE_STATUS: return invoke<v1::StatusRequest, v1::StatusReply>(request, cluster_.get(), &C::Status);
      case v1::WIRE_CHANGE_RESERVATION:
        return invoke<v1::ChangeReservationRequest, v1::ChangeReservationReply>(request, cluster_.get(),
                                                                                &C::ChangeReservation);
      case v1::WIRE_GET_RESERVATIONS:
        return invoke<v1::GetReservationsRequest, v1::GetReservationsReply>(request, cluster_.get(),
                                                                            &C::GetReservations);
      case v1::WIRE_SHUTDOWN:
        return invoke<v1::ShutdownRequest, v1::ShutdownReply>(request, cluster_.get(), &C::Shutdown);
      case v1::WIRE_SET_DEBUG:
        return invoke<v1::SetDebugRequest, v1::SetDebugReply>(request, cluster_.get(), &C::SetDebug);
      case v1::WIRE_CREATE_STEP:
        return invoke<v1::CreateStepRequest, v1::CreateStepReply>(request, steps_.get(), &T::CreateStep);
      case v1::WIRE_GET_STEP: return invoke<v1::GetStepRequest, v1::GetStepReply>(request, steps_.get(), &T::GetStep);
      case v1::WIRE_GET_STEPS:
        return invoke<v1::GetStepsRequest, v1::GetStepsReply>(request, steps_.get(), &T::GetSteps);
      case v1::WIRE_GET_STEP_USAGE:
        return invoke<v1::GetStepUsageRequest, v1::GetStepUsageReply>(request, steps_.get(), &T::GetStepUsage);
      case v1::WIRE_BROADCAST_FILE:
        return invoke<v1::BroadcastFileRequest, v1::BroadcastFileReply>(request, steps_.get(), &T::BroadcastFile);
      case v1::WIRE_SIGNAL_STEP:
        return invoke<v1::SignalStepRequest, v1::SignalStepReply>(request, steps_.get(), &T::SignalStep);
      case v1::WIRE_COMPLETE_JOB:
        return invoke<v1::CompleteJobRequest, v1::CompleteJobReply>(request, steps_.get(), &T::CompleteJob);
      case v1::WIRE_GET_JOB_HISTORY:
        return invoke<v1::GetJobHistoryRequest, v1::GetJobHistoryReply>(request, accounting_.get(), &A::GetJobHistory);
      case v1::WIRE_GET_PRIORITIES:
        return invoke<v1::GetPrioritiesRequest, v1::GetPrioritiesReply>(request, accounting_.get(), &A::GetPriorities);
      case v1::WIRE_GET_SHARES:
        return invoke<v1::GetSharesRequest, v1::GetSharesReply>(request, accounting_.get(), &A::GetShares);
      case v1::WIRE_DIAG: return invoke<v1::DiagRequest, v1::DiagReply>(request, accounting_.get(), &A::Diag);
      case v1::WIRE_GET_ASSOCIATIONS:
        return invoke<v1::GetAssociationsRequest, v1::GetAssociationsReply>(request, accounting_.get(),
                                                                            &A::GetAssociations);
      case v1::WIRE_MODIFY_ASSOCIATIONS:
        return invoke<v1::ModifyAssociationsRequest, v1::ModifyAssociationsReply>(request, accounting_.get(),
                                                                                  &A::ModifyAssociations);
      default: return ApiError{12, "unknown method " + std::to_string(method), false};
    }
  }

 private:
  template <class Req, class Rep, class Stub, class Fn>
  ApiResult<std::string> invoke(const std::string& bytes, Stub* stub, Fn fn) {
    Req req;
    req.ParseFromString(bytes);
    grpc::ClientContext ctx;
    rpc::set_timeout(ctx, std::chrono::seconds(60));
    Rep rep;
    grpc::Status st = (stub->*fn)(&ctx, req, &rep);
    if (st.ok()) return rep.SerializeAsString();
    ApiError e;
    e.code = st.error_code();
    e.unreachable = st.error_code() == grpc::StatusCode::UNAVAILABLE;
    // gRPC says "failed to connect to all addresses" when no connection was
    // made; any other UNAVAILABLE may have come after the request went out.
    e.maybe_sent = e.unreachable && st.error_message().find("ailed to connect") == std::string::npos;
    e.message = client_.explain_failure(st.error_code(), st.error_message());
    return e;
  }

  rpc::RpcClient client_;
  std::unique_ptr<v1::JobService::Stub> jobs_;
  std::unique_ptr<v1::ClusterService::Stub> cluster_;
  std::unique_ptr<v1::AccountingService::Stub> accounting_;
  std::unique_ptr<v1::StepService::Stub> steps_;
};

Result<std::unique_ptr<Transport>> make(const Endpoint& ep, const std::string&) {
  rpc::ClientOptions o;
  o.target = ep.target;
  o.key_path = ep.key_path;
  o.signer_socket = ep.signer_path;
  auto client = rpc::RpcClient::connect(o);
  if (!client) return client.error();
  return std::unique_ptr<Transport>(new GrpcTransport(std::move(*client)));
}

}  // namespace

void enable_grpc_transport() { set_remote_transport(&make); }

}  // namespace drover::client
