#include "agentd/reporter.hpp"

#include <grpcpp/grpcpp.h>

#include "drover/v1/agent.grpc.pb.h"
#include "rpc/call.hpp"
#include "rpc/client.hpp"

namespace drover::agentd {

struct Reporter::Impl {
  rpc::RpcClient client;
  std::unique_ptr<v1::AgentService::Stub> stub;
  bool connected = false;  // the last send succeeded, and its connection has not been seen gone since
};

Reporter::Reporter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Reporter::~Reporter() = default;

Result<std::unique_ptr<Reporter>> Reporter::create(const std::string& target, const std::string& key_path) {
  rpc::ClientOptions o;
  o.target = target;
  o.key_path = key_path;
  auto client = rpc::RpcClient::connect(o);
  if (!client) return client.error();
  if (!client->is_unix() && !client->signs_requests()) {
    return make_error("cannot sign requests to the controller at " + target + ": " + client->unsigned_reason());
  }
  auto impl = std::make_unique<Impl>(Impl{std::move(*client), nullptr, false});
  impl->stub = v1::AgentService::NewStub(impl->client.channel());
  return std::unique_ptr<Reporter>(new Reporter(std::move(impl)));
}

Result<v1::NodeReportReply> Reporter::send(const v1::NodeReport& report, bool registering, int* code) {
  grpc::ClientContext ctx;
  rpc::set_timeout(ctx, std::chrono::seconds(10));
  v1::NodeReport req = report;
  rpc::fill_request_header("drover-agent " + report.node(), req.mutable_header());
  v1::NodeReportReply reply;
  grpc::Status st = registering ? impl_->stub->Register(&ctx, req, &reply) : impl_->stub->Heartbeat(&ctx, req, &reply);
  if (!st.ok()) {
    impl_->connected = false;
    *code = st.error_code();
    return make_error(impl_->client.explain_failure(st.error_code(), st.error_message()));
  }
  impl_->connected = true;
  return reply;
}

bool Reporter::connection_lost() {
  if (!impl_->connected) return false;
  // READY while the connection lasts; IDLE (or another state) once the
  // controller's end closed it.
  if (impl_->client.channel()->GetState(false) == GRPC_CHANNEL_READY) return false;
  impl_->connected = false;
  return true;
}

}  // namespace drover::agentd
