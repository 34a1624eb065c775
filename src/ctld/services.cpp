#include "ctld/services.hpp"

#include <grpcpp/grpcpp.h>

#include "ctld/controller.hpp"
#include "ctld/methods.hpp"
#include "ctld/step_methods.hpp"
#include "drover/v1/accounting.grpc.pb.h"
#include "drover/v1/agent.grpc.pb.h"
#include "drover/v1/cluster.grpc.pb.h"
#include "drover/v1/jobs.grpc.pb.h"
#include "drover/v1/steps.grpc.pb.h"
#include "rpc/call.hpp"
#include "rpc/ping_service.hpp"

namespace drover::ctld {
namespace {

using methods::kServerName;

grpc::Status status(grpc::StatusCode code, const std::string& message) { return grpc::Status(code, message); }

// Authenticates, checks the envelope, then runs `work(reactor, caller)` on
// the state thread. `work` finishes the reactor (at once, or from a store completion).
template <class Req, class Work>
grpc::ServerUnaryReactor* handle(Controller& ctl, grpc::CallbackServerContext* ctx, const Req* req, Work work,
                                 bool privileged_only = false) {
  auto* reactor = ctx->DefaultReactor();
  int code = 0;
  auto who = ctl.identify(*ctx, &code);
  if (!who) {
    reactor->Finish(status(static_cast<grpc::StatusCode>(code), who.error().message));
    return reactor;
  }
  if (privileged_only && !who->privileged) {
    reactor->Finish(status(grpc::StatusCode::PERMISSION_DENIED,
                           "only root, SlurmUser or an operator may call this; you are " + who->describe()));
    return reactor;
  }
  if (auto ok = rpc::check_request_header(req->header()); !ok) {
    reactor->Finish(status(grpc::StatusCode::INVALID_ARGUMENT, ok.error().message));
    return reactor;
  }
  ctl.post([reactor, who = *who, work = std::move(work)]() mutable { work(reactor, who); });
  return reactor;
}

// A client method (methods.hpp) served over gRPC.
template <class Req, class Rep, class Method>
grpc::ServerUnaryReactor* serve(Controller& ctl, grpc::CallbackServerContext* ctx, const Req* req, Rep* rep,
                                Method method) {
  return handle(ctl, ctx, req, [&ctl, req, rep, method](grpc::ServerUnaryReactor* r, const Caller& who) {
    method(ctl, who, *req, rep, methods::logged(*req, who, [r](int code, const std::string& error) {
      r->Finish(code == 0 ? grpc::Status::OK : status(static_cast<grpc::StatusCode>(code), error));
    }));
  });
}

template <class Req, class Rep>
void header(const Req* req, Rep* rep) {
  rpc::fill_reply_header(req->header(), kServerName, rep->mutable_header());
}

class JobServiceImpl final : public v1::JobService::CallbackService {
 public:
  explicit JobServiceImpl(Controller& ctl) : ctl_(ctl) {}
  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* ctx, const v1::SubmitRequest* req,
                                   v1::SubmitReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::submit);
  }
  grpc::ServerUnaryReactor* GetJobs(grpc::CallbackServerContext* ctx, const v1::GetJobsRequest* req,
                                    v1::GetJobsReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_jobs);
  }
  grpc::ServerUnaryReactor* Cancel(grpc::CallbackServerContext* ctx, const v1::CancelRequest* req,
                                   v1::CancelReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::cancel);
  }
  grpc::ServerUnaryReactor* Control(grpc::CallbackServerContext* ctx, const v1::ControlRequest* req,
                                    v1::ControlReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::control);
  }
  grpc::ServerUnaryReactor* Update(grpc::CallbackServerContext* ctx, const v1::UpdateJobRequest* req,
                                   v1::UpdateJobReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::update_job);
  }

 private:
  Controller& ctl_;
};

class ClusterServiceImpl final : public v1::ClusterService::CallbackService {
 public:
  explicit ClusterServiceImpl(Controller& ctl) : ctl_(ctl) {}
  grpc::ServerUnaryReactor* GetNodes(grpc::CallbackServerContext* ctx, const v1::GetNodesRequest* req,
                                     v1::GetNodesReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_nodes);
  }
  grpc::ServerUnaryReactor* GetPartitions(grpc::CallbackServerContext* ctx, const v1::GetPartitionsRequest* req,
                                          v1::GetPartitionsReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_partitions);
  }
  grpc::ServerUnaryReactor* UpdateNode(grpc::CallbackServerContext* ctx, const v1::UpdateNodeRequest* req,
                                       v1::UpdateNodeReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::update_node);
  }
  grpc::ServerUnaryReactor* UpdatePartition(grpc::CallbackServerContext* ctx, const v1::UpdatePartitionRequest* req,
                                            v1::UpdatePartitionReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::update_partition);
  }
  grpc::ServerUnaryReactor* GetConfig(grpc::CallbackServerContext* ctx, const v1::GetConfigRequest* req,
                                      v1::GetConfigReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_config);
  }
  grpc::ServerUnaryReactor* Reconfigure(grpc::CallbackServerContext* ctx, const v1::ReconfigureRequest* req,
                                        v1::ReconfigureReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::reconfigure);
  }
  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* ctx, const v1::StatusRequest* req,
                                   v1::StatusReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::status);
  }
  grpc::ServerUnaryReactor* ChangeReservation(grpc::CallbackServerContext* ctx, const v1::ChangeReservationRequest* req,
                                              v1::ChangeReservationReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::change_reservation);
  }
  grpc::ServerUnaryReactor* GetReservations(grpc::CallbackServerContext* ctx, const v1::GetReservationsRequest* req,
                                            v1::GetReservationsReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_reservations);
  }
  grpc::ServerUnaryReactor* SetDebug(grpc::CallbackServerContext* ctx, const v1::SetDebugRequest* req,
                                     v1::SetDebugReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::set_debug);
  }
  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext* ctx, const v1::ShutdownRequest* req,
                                     v1::ShutdownReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::shutdown);
  }

 private:
  Controller& ctl_;
};

class AccountingServiceImpl final : public v1::AccountingService::CallbackService {
 public:
  explicit AccountingServiceImpl(Controller& ctl) : ctl_(ctl) {}
  grpc::ServerUnaryReactor* GetJobHistory(grpc::CallbackServerContext* ctx, const v1::GetJobHistoryRequest* req,
                                          v1::GetJobHistoryReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_job_history);
  }
  grpc::ServerUnaryReactor* Diag(grpc::CallbackServerContext* ctx, const v1::DiagRequest* req,
                                 v1::DiagReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::diag);
  }
  grpc::ServerUnaryReactor* GetPriorities(grpc::CallbackServerContext* ctx, const v1::GetPrioritiesRequest* req,
                                          v1::GetPrioritiesReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_priorities);
  }
  grpc::ServerUnaryReactor* GetShares(grpc::CallbackServerContext* ctx, const v1::GetSharesRequest* req,
                                      v1::GetSharesReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_shares);
  }
  grpc::ServerUnaryReactor* GetAssociations(grpc::CallbackServerContext* ctx, const v1::GetAssociationsRequest* req,
                                            v1::GetAssociationsReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_associations);
  }
  grpc::ServerUnaryReactor* ModifyAssociations(grpc::CallbackServerContext* ctx,
                                               const v1::ModifyAssociationsRequest* req,
                                               v1::ModifyAssociationsReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::modify_associations);
  }

 private:
  Controller& ctl_;
};

// srun and salloc on hosts other than the controller's (on its host they use
// the local fast path).
class StepServiceImpl final : public v1::StepService::CallbackService {
 public:
  explicit StepServiceImpl(Controller& ctl) : ctl_(ctl) {}
  grpc::ServerUnaryReactor* CreateStep(grpc::CallbackServerContext* ctx, const v1::CreateStepRequest* req,
                                       v1::CreateStepReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::create_step);
  }
  grpc::ServerUnaryReactor* GetStep(grpc::CallbackServerContext* ctx, const v1::GetStepRequest* req,
                                    v1::GetStepReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_step);
  }
  grpc::ServerUnaryReactor* GetSteps(grpc::CallbackServerContext* ctx, const v1::GetStepsRequest* req,
                                     v1::GetStepsReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_steps);
  }
  grpc::ServerUnaryReactor* GetStepUsage(grpc::CallbackServerContext* ctx, const v1::GetStepUsageRequest* req,
                                         v1::GetStepUsageReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::get_step_usage);
  }
  grpc::ServerUnaryReactor* BroadcastFile(grpc::CallbackServerContext* ctx, const v1::BroadcastFileRequest* req,
                                          v1::BroadcastFileReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::broadcast_file);
  }
  grpc::ServerUnaryReactor* SignalStep(grpc::CallbackServerContext* ctx, const v1::SignalStepRequest* req,
                                       v1::SignalStepReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::signal_step);
  }
  grpc::ServerUnaryReactor* CompleteJob(grpc::CallbackServerContext* ctx, const v1::CompleteJobRequest* req,
                                        v1::CompleteJobReply* rep) override {
    return serve(ctl_, ctx, req, rep, methods::complete_job);
  }

 private:
  Controller& ctl_;
};

class AgentServiceImpl final : public v1::AgentService::CallbackService {
 public:
  explicit AgentServiceImpl(Controller& ctl) : ctl_(ctl) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx, const v1::NodeReport* req,
                                     v1::NodeReportReply* rep) override {
    return report(ctx, req, rep, true);
  }
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx, const v1::NodeReport* req,
                                      v1::NodeReportReply* rep) override {
    return report(ctx, req, rep, false);
  }

 private:
  grpc::ServerUnaryReactor* report(grpc::CallbackServerContext* ctx, const v1::NodeReport* req,
                                   v1::NodeReportReply* rep, bool registering) {
    return handle(
        ctl_, ctx, req,
        [this, req, rep, registering](grpc::ServerUnaryReactor* r, const Caller&) {
          Effects fx;
          auto reply = ctl_.state().node_report(*req, registering, ctl_.now(), fx);
          if (!reply) {
            r->Finish(status(grpc::StatusCode::NOT_FOUND, reply.error().message));
            return;
          }
          *rep = std::move(*reply);
          header(req, rep);
          fx.batch.may_wait = kAgentNewsMayWait;
          ctl_.commit(std::move(fx), [r](const drover::Status& st) {
            r->Finish(st ? grpc::Status::OK : status(grpc::StatusCode::INTERNAL, st.error().message));
          });
        },
        true);
  }

  Controller& ctl_;
};

}  // namespace

std::vector<rpc::ServicePtr> make_services(Controller& ctl, const rpc::CallAuthenticator& auth) {
  std::vector<rpc::ServicePtr> out;
  out.emplace_back(new JobServiceImpl(ctl));
  out.emplace_back(new ClusterServiceImpl(ctl));
  out.emplace_back(new AccountingServiceImpl(ctl));
  out.emplace_back(new StepServiceImpl(ctl));
  out.emplace_back(new AgentServiceImpl(ctl));
  out.push_back(rpc::make_ping_service(auth, kServerName));
  return out;
}

}  // namespace drover::ctld
