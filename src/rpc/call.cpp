#include "rpc/call.hpp"

#include <fmt/format.h>

#include "rpc/crypto.hpp"

namespace drover::rpc {

grpc::Status to_status(const AuthResult& refused) {
  const auto code = refused.code() == AuthCode::kUnavailable ? grpc::StatusCode::UNAVAILABLE
                                                             : grpc::StatusCode::UNAUTHENTICATED;
  return grpc::Status(code, refused.message());
}

grpc::Status to_status(grpc::StatusCode code, const Error& error) {
  return grpc::Status(code, error.message);
}

Status check_request_header(const v1::RequestHeader& header) {
  const std::string& id = header.request_id();
  std::string bytes;
  if (!id.empty() && (id.size() != 32 || !from_hex(id, &bytes))) {
    return make_error(fmt::format(
        "request_id '{}' must be empty or 32 hex digits (16 random bytes)", id.substr(0, 64)));
  }
  return {};
}

void fill_reply_header(const v1::RequestHeader& request, std::string_view server, v1::ReplyHeader* reply) {
  reply->set_request_id(request.request_id());
  reply->set_server(std::string(server));
}

void fill_caller(const Identity& identity, v1::CallerIdentity* out) {
  out->set_uid(identity.uid);
  out->set_gid(identity.gid);
  out->set_user_name(identity.user_name);
  out->set_transport(std::string(transport_name(identity.transport)));
}

void fill_request_header(std::string_view client, v1::RequestHeader* header) {
  header->set_request_id(new_request_id());
  header->set_client(std::string(client));
}

void set_timeout(grpc::ClientContext& ctx, std::chrono::milliseconds timeout) {
  ctx.set_deadline(std::chrono::system_clock::now() + timeout);
}

}  // namespace drover::rpc
