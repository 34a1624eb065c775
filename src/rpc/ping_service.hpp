// drover.v1.PingService: liveness and "who am I". Register one on every
// daemon's RpcServer. Header without grpcpp; the service object is created
// behind make_ping_service.
#pragma once

#include <memory>
#include <string>

#include "rpc/identity.hpp"
#include "rpc/server.hpp"

namespace drover::rpc {

// `server_name` goes into every ReplyHeader ("drover-controller 0.1.0").
ServicePtr make_ping_service(const CallAuthenticator& auth, std::string server_name);

}  // namespace drover::rpc
