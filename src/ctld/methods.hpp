// The client methods of the API, independent of the transport: the gRPC
// services (services.cpp) and the local fast path (wire_server.cpp) both
// call these on the state thread. Each fills the reply and calls `done`
// exactly once: code 0 (OK) only when every change it reports is durable,
// else a gRPC status code and the message.
#pragma once

#include <functional>
#include <string>

#include "drover/v1/accounting.pb.h"
#include "drover/v1/cluster.pb.h"
#include "drover/v1/jobs.pb.h"

namespace drover::ctld {

class Controller;
struct Caller;

using Done = std::function<void(int code, const std::string& error)>;

namespace methods {

inline constexpr const char* kServerName = "drover-controller 0.1.0";

// With DebugFlags=Protocol (or SlurmctldDebug=debug2 and up): `done`, which
// also logs the call's answer (the request's type, the caller, the code and
// how long it took); otherwise `done` itself.
Done logged(const google::protobuf::MessageLite& req, const Caller& who, Done done);

void submit(Controller& c, const Caller& who, const v1::SubmitRequest& req, v1::SubmitReply* rep, Done done);
void get_jobs(Controller& c, const Caller& who, const v1::GetJobsRequest& req, v1::GetJobsReply* rep, Done done);
void cancel(Controller& c, const Caller& who, const v1::CancelRequest& req, v1::CancelReply* rep, Done done);
void control(Controller& c, const Caller& who, const v1::ControlRequest& req, v1::ControlReply* rep, Done done);
void update_job(Controller& c, const Caller& who, const v1::UpdateJobRequest& req, v1::UpdateJobReply* rep,
                Done done);
void get_nodes(Controller& c, const Caller& who, const v1::GetNodesRequest& req, v1::GetNodesReply* rep, Done done);
void get_partitions(Controller& c, const Caller& who, const v1::GetPartitionsRequest& req,
                    v1::GetPartitionsReply* rep, Done done);
void update_node(Controller& c, const Caller& who, const v1::UpdateNodeRequest& req, v1::UpdateNodeReply* rep,
                 Done done);
void update_partition(Controller& c, const Caller& who, const v1::UpdatePartitionRequest& req,
                      v1::UpdatePartitionReply* rep, Done done);
void get_config(Controller& c, const Caller& who, const v1::GetConfigRequest& req, v1::GetConfigReply* rep,
                Done done);
void reconfigure(Controller& c, const Caller& who, const v1::ReconfigureRequest& req, v1::ReconfigureReply* rep,
                 Done done);
void change_reservation(Controller& c, const Caller& who, const v1::ChangeReservationRequest& req,
                        v1::ChangeReservationReply* rep, Done done);
void get_reservations(Controller& c, const Caller& who, const v1::GetReservationsRequest& req,
                      v1::GetReservationsReply* rep, Done done);
void shutdown(Controller& c, const Caller& who, const v1::ShutdownRequest& req, v1::ShutdownReply* rep, Done done);
void set_debug(Controller& c, const Caller& who, const v1::SetDebugRequest& req, v1::SetDebugReply* rep, Done done);
void status(Controller& c, const Caller& who, const v1::StatusRequest& req, v1::StatusReply* rep, Done done);
void diag(Controller& c, const Caller& who, const v1::DiagRequest& req, v1::DiagReply* rep, Done done);
void get_associations(Controller& c, const Caller& who, const v1::GetAssociationsRequest& req,
                      v1::GetAssociationsReply* rep, Done done);
void modify_associations(Controller& c, const Caller& who, const v1::ModifyAssociationsRequest& req,
                         v1::ModifyAssociationsReply* rep, Done done);
void get_priorities(Controller& c, const Caller& who, const v1::GetPrioritiesRequest& req,
                    v1::GetPrioritiesReply* rep, Done done);
void get_shares(Controller& c, const Caller& who, const v1::GetSharesRequest& req, v1::GetSharesReply* rep, Done done);
// sacct: jobs in memory, and older ones read from the store (never loaded into the state).
void get_job_history(Controller& c, const Caller& who, const v1::GetJobHistoryRequest& req,
                     v1::GetJobHistoryReply* rep, Done done);

}  // namespace methods
}  // namespace drover::ctld
