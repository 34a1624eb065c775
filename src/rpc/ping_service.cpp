#include "rpc/ping_service.hpp"

#include <chrono>

#include <fmt/format.h>

#include "drover/v1/ping.grpc.pb.h"
#include "rpc/call.hpp"

namespace drover::rpc {
namespace {

constexpr std::size_t kMaxPayloadBytes = 4096;

class PingService final : public v1::PingService::CallbackService {
 public:
  PingService(const CallAuthenticator& auth, std::string server_name)
      : auth_(auth), server_name_(std::move(server_name)) {}

  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* ctx, const v1::PingRequest* request,
                                 v1::PingReply* reply) override {
    auto* reactor = ctx->DefaultReactor();
    reactor->Finish(handle(*ctx, *request, reply));
    return reactor;
  }

 private:
  grpc::Status handle(const grpc::CallbackServerContext& ctx, const v1::PingRequest& request,
                      v1::PingReply* reply) const {
    AuthResult who = auth_.authenticate(ctx);
    if (!who.ok()) return to_status(who);
    if (auto ok = check_request_header(request.header()); !ok) {
      return to_status(grpc::StatusCode::INVALID_ARGUMENT, ok.error());
    }
    if (request.payload().size() > kMaxPayloadBytes) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          fmt::format("ping payload is {} bytes; at most {} allowed",
                                      request.payload().size(), kMaxPayloadBytes));
    }
    fill_reply_header(request.header(), server_name_, reply->mutable_header());
    fill_caller(who.identity(), reply->mutable_caller());
    using namespace std::chrono;
    reply->set_server_time_unix_ms(
        duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
    reply->set_payload(request.payload());
    return grpc::Status::OK;
  }

  const CallAuthenticator& auth_;
  std::string server_name_;
};

}  // namespace

ServicePtr make_ping_service(const CallAuthenticator& auth, std::string server_name) {
  return ServicePtr(new PingService(auth, std::move(server_name)));
}

}  // namespace drover::rpc
