#include "rpc/authenticator.hpp"

#include <grpcpp/server_context.h>

#include <fmt/format.h>

#include "common/strings.hpp"

namespace drover::rpc {

void ServerAuthenticator::add_unix_connection(int fd, const PeerCredentials& peer) {
  UnixConnection conn{peer, names_.lookup(peer.uid)};
  std::lock_guard lock(mu_);
  unix_[fd] = std::move(conn);
}

void ServerAuthenticator::set_token_verifier(std::unique_ptr<TokenVerifier> verifier) {
  verifier_ = std::move(verifier);
}

AuthResult ServerAuthenticator::authenticate(const grpc::ServerContextBase& ctx) const {
  std::string peer = ctx.peer();
  std::string_view token;
  const auto& md = ctx.client_metadata();
  if (auto it = md.find(kTokenMetadataKey); it != md.end()) {
    token = std::string_view(it->second.data(), it->second.size());
  }
  return authenticate_peer(peer, token);
}

AuthResult ServerAuthenticator::authenticate_peer(std::string_view peer, std::string_view token) const {
  if (peer.starts_with("fd:")) return authenticate_unix(peer);
  if (peer.starts_with("ipv4:") || peer.starts_with("ipv6:")) return authenticate_tcp(peer, token);
  return AuthResult::deny(AuthCode::kUnauthenticated,
                          fmt::format("connection from {} did not come through Drover's Unix socket "
                                      "listener or its TCP port; cannot identify the caller",
                                      peer));
}

AuthResult ServerAuthenticator::authenticate_unix(std::string_view peer) const {
  auto fd = parse_int(peer.substr(3));
  std::lock_guard lock(mu_);
  auto it = fd ? unix_.find(static_cast<int>(*fd)) : unix_.end();
  if (it == unix_.end()) {
    return AuthResult::deny(AuthCode::kUnauthenticated,
                            fmt::format("no peer credentials recorded for connection {}", peer));
  }
  Identity id;
  id.uid = it->second.peer.uid;
  id.gid = it->second.peer.gid;
  id.pid = it->second.peer.pid;
  id.user_name = it->second.user_name;
  id.transport = Transport::kUnixSocket;
  id.peer = std::string(peer);
  return AuthResult::allow(std::move(id));
}

AuthResult ServerAuthenticator::authenticate_tcp(std::string_view peer, std::string_view token) const {
  if (!verifier_) {
    return AuthResult::deny(AuthCode::kUnauthenticated,
                            "this server has no cluster key and accepts no TCP requests");
  }
  TokenVerdict verdict = verifier_->verify(token);
  if (!verdict.ok()) {
    AuthCode code = verdict.failure == TokenFailure::kReplayCacheFull ? AuthCode::kUnavailable
                                                                      : AuthCode::kUnauthenticated;
    return AuthResult::deny(code, std::move(verdict.message));
  }
  Identity id;
  id.uid = verdict.claims.uid;
  id.gid = verdict.claims.gid;
  id.user_name = names_.lookup(id.uid);
  id.transport = Transport::kTcp;
  id.peer = std::string(peer);
  return AuthResult::allow(std::move(id));
}

}  // namespace drover::rpc
