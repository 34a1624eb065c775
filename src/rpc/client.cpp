#include "rpc/client.hpp"

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rpc/cluster_key.hpp"
#include "rpc/local_signer.hpp"
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

// Where each call's token comes from: signed here with the key, or asked of
// the host's local signer (local_signer.hpp). Empty: the call goes unsigned
// (the server then refuses it, and explain_failure says why).
using TokenSource = std::function<std::string()>;

// Adds a fresh token to every call's initial metadata.
class TokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit TokenInterceptor(std::shared_ptr<const TokenSource> source) : source_(std::move(source)) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      std::string token = (*source_)();
      if (!token.empty()) methods->GetSendInitialMetadata()->insert({kTokenMetadataKey, std::move(token)});
    }
    methods->Proceed();
  }

 private:
  std::shared_ptr<const TokenSource> source_;
};

class TokenInterceptorFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit TokenInterceptorFactory(std::shared_ptr<const TokenSource> source) : source_(std::move(source)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo*) override {
    return new TokenInterceptor(source_);
  }

 private:
  std::shared_ptr<const TokenSource> source_;
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
  std::shared_ptr<TokenSource> source;
  if (options.key_path.empty()) {
    c.unsigned_reason_ = "no cluster key configured on this host";
  } else if (auto key = load_cluster_key(options.key_path, options.key_owner_uids); !key) {
    c.unsigned_reason_ = key.error().message;
  } else {
    auto signer = std::make_shared<Signer>();
    signer->key = std::move(*key);
    signer->uid = options.uid.value_or(::geteuid());
    signer->gid = options.gid.value_or(::getegid());
    signer->lifetime_s = options.token_lifetime.count();
    source = std::make_shared<TokenSource>([signer] { return signer->token(); });
  }
  // Without the key (a plain user): the host's local signer vouches for the
  // uid and gid the kernel tells it, as munged does for Slurm.
  if (!source && !options.signer_socket.empty() && !options.uid && !options.gid) {
    auto why = std::make_shared<std::string>();
    c.signer_failure_ = why;
    source = std::make_shared<TokenSource>([path = options.signer_socket, why] {
      auto token = fetch_local_token(path);
      if (token) {
        why->clear();
        return std::move(*token);
      }
      *why = token.error().message;
      return std::string();
    });
  }
  if (!source) {
    c.channel_ = grpc::CreateCustomChannel(t, grpc::InsecureChannelCredentials(), channel_args());
    return c;
  }
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<TokenInterceptorFactory>(source));
  c.signs_ = c.signer_failure_ == nullptr;
  c.channel_ = grpc::experimental::CreateCustomChannelWithInterceptors(
      t, grpc::InsecureChannelCredentials(), channel_args(), std::move(interceptors));
  return c;
}

std::string RpcClient::explain_failure(int code, const std::string& message) const {
  if (code == grpc::StatusCode::UNAUTHENTICATED && !is_unix_ && signer_failure_ && !signer_failure_->empty()) {
    return fmt::format("{} (this client cannot sign requests: {}, and the host's local signer gave no token: {}; is "
                       "an agent or `drover authd` running on this host?)",
                       message, unsigned_reason_, *signer_failure_);
  }
  if (code == grpc::StatusCode::UNAUTHENTICATED && !is_unix_ && !signs_ && !signer_failure_) {
    return fmt::format("{} (this client sends unsigned requests: {})", message, unsigned_reason_);
  }
  return message;
}

}  // namespace drover::rpc
