// The gRPC transport of the commands (a controller on another host, over
// TCP with signed tokens). Linked only into the full `drover` binary.
#pragma once

namespace drover::client {

// Makes ControllerApi use gRPC for endpoints that are not local.
void enable_grpc_transport();

}  // namespace drover::client
