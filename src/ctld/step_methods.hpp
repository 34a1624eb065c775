// The job-step methods of the API (steps.proto), transport-independent like
// methods.hpp: each runs on the state thread and calls `done` once, with 0
// only when every change it reports is durable.
#pragma once

#include "ctld/methods.hpp"
#include "drover/v1/steps.pb.h"

namespace drover::ctld::methods {

void create_step(Controller& c, const Caller& who, const v1::CreateStepRequest& req, v1::CreateStepReply* rep,
                 Done done);
void get_step(Controller& c, const Caller& who, const v1::GetStepRequest& req, v1::GetStepReply* rep, Done done);
void get_steps(Controller& c, const Caller& who, const v1::GetStepsRequest& req, v1::GetStepsReply* rep, Done done);
// sstat: asks the nodes of the job's running steps; answers once each has.
void get_step_usage(Controller& c, const Caller& who, const v1::GetStepUsageRequest& req, v1::GetStepUsageReply* rep,
                    Done done);
// sbcast: one block of a file to each node of a running job (or step).
void broadcast_file(Controller& c, const Caller& who, const v1::BroadcastFileRequest& req,
                    v1::BroadcastFileReply* rep, Done done);
void signal_step(Controller& c, const Caller& who, const v1::SignalStepRequest& req, v1::SignalStepReply* rep,
                 Done done);
void complete_job(Controller& c, const Caller& who, const v1::CompleteJobRequest& req, v1::CompleteJobReply* rep,
                  Done done);

}  // namespace drover::ctld::methods
