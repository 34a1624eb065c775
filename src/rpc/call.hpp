// Helpers for files that implement or call services. Includes grpcpp: include
// it only from .cpp files (11-13 s per file to compile).
#pragma once

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include <chrono>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "drover/v1/common.pb.h"
#include "rpc/identity.hpp"

namespace drover::rpc {

// The gRPC status for a refused caller (UNAUTHENTICATED or UNAVAILABLE).
grpc::Status to_status(const AuthResult& refused);
// An expected failure as a gRPC status with the given code.
grpc::Status to_status(grpc::StatusCode code, const Error& error);

// Server side: checks RequestHeader.request_id's form (empty or 32 hex digits).
Status check_request_header(const v1::RequestHeader& header);
// Server side: echoes the request id and names the server.
void fill_reply_header(const v1::RequestHeader& request, std::string_view server, v1::ReplyHeader* reply);
void fill_caller(const Identity& identity, v1::CallerIdentity* out);

// Client side: a fresh request id and the client's name.
void fill_request_header(std::string_view client, v1::RequestHeader* header);
// Client side: sets a deadline `timeout` from now.
void set_timeout(grpc::ClientContext& ctx, std::chrono::milliseconds timeout);

}  // namespace drover::rpc
