#include "rpc/client.hpp"

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rpc/cluster_key.hpp"
#include "rpc/server.hpp"
#include "rpc/token.hpp"

namespace drover::rpc {
namespace {

struct Signer {
  ClusterKey key;
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t lifetime_s = 60;
  std::string token() const { return sign_token(key, new_claims(uid, gid, unix_now_s(), lifetime_s)); }
};

// Adds a fresh token to every call's initial metadata.
class TokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(std::shared_ptr<const Signer> signer) : signer_(std::move(signer)) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({kTokenMetadataKey, signer_->token()});
    }
    methods->Proceed();
  }

 private:
  std::shared_ptr<const Signer> signer_;
};

class TokenInterceptorFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(std::shared_ptr<const Signer> signer) : signer_(std::move(signer)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo*) override {
    return new TokenInterceptor(signer_);
  }

 private:
  std::shared_ptr<const Signer> signer_;
};

grpc::ChannelArguments channel_args() {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  // After the peer went away, gRPC tries to connect again after 1 s, then
  // 1.6 times longer each time, up to 120 s: an agent whose controller was
  // down for some minutes would take up to two more to come back. 5 s at most.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  return args;
}

}  // namespace

Result<RpcClient> RpcClient::connect(const ClientOptions& options) {
  RpcClient c;
  const std::string& t = options.target;
  if (t.starts_with("unix:") || t.starts_with("/")) {
    c.is_unix_ = true;
    c.target_ = t.starts_with("/") ? "unix:" + t : t;
    c.channel_ = grpc::CreateCustomChannel(c.target_, grpc::InsecureChannelCredentials(), channel_args());
    return c;
  }
  if (auto hp = parse_host_port(t); !hp) return hp.error();
  c.target_ = t;
  std::shared_ptr<Signer> signer;
  if (options.key_path.empty()) {
    c.unsigned_reason_ = "no cluster key configured on this host";
  } else if (auto key = load_cluster_key(options.key_path, options.key_owner_uids); !key) {
    c.unsigned_reason_ = key.error().message;
  } else {
    signer = std::make_shared<Signer>();
    signer->key = std::move(*key);
    signer->uid = options.uid.value_or(::geteuid());
    signer->gid = options.gid.value_or(::getegid());
    signer->lifetime_s = options.token_lifetime.count();
  }
  if (!signer) {
    c.channel_ = grpc::CreateCustomChannel(t, grpc::InsecureChannelCredentials(), channel_args());
    return c;
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<TokenInterceptorFactory>(signer));
  c.signs_ = true;
  c.channel_ = grpc::experimental::CreateCustomChannelWithInterceptors(
      t, grpc::InsecureChannelCredentials(), channel_args(), std::move(interceptors));
  return c;
}

std::string RpcClient::explain_failure(int code, const std::string& message) const {
  if (code == grpc::StatusCode::UNAUTHENTICATED && !is_unix_ && !signs_) {
    return fmt::format("{} (this client sends unsigned requests: {})", message, unsigned_reason_);
  }
  return message;
}

}  // namespace drover::rpc
