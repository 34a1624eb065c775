// The controller's gRPC services (JobService, ClusterService, AgentService
// and PingService). Each handler authenticates the caller, posts its work
// to the state thread and replies once the change is durable.
#pragma once

#include <vector>

#include "rpc/server.hpp"

namespace drover::ctld {

class Controller;

std::vector<rpc::ServicePtr> make_services(Controller& ctl, const rpc::CallAuthenticator& auth);

}  // namespace drover::ctld
