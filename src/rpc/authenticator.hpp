// The server side of authentication: identifies the caller of a gRPC call
// from what its connection is.
//
// Unix socket: Drover accepts connections itself (UnixListener), reads
// SO_PEERCRED, records it under the descriptor number and hands the
// descriptor to gRPC (grpc::AddInsecureChannelFromFd), whose calls then
// report the peer "fd:<n>". gRPC 1.51 offers no API to read peer
// credentials, and this is the approach verified to work with it (see
// docs/rpc.md for why the number cannot be reused while a call is live).
// TCP: the call must carry a token (metadata "drover-token") that
// TokenVerifier accepts; the identity is the token's uid/gid.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "rpc/identity.hpp"
#include "rpc/token.hpp"
#include "rpc/unix_listener.hpp"
#include "rpc/user_names.hpp"

namespace drover::rpc {

class ServerAuthenticator final : public CallAuthenticator {
 public:
  // Records a just-accepted Unix connection. Must happen before its
  // descriptor is given to gRPC, so no call on it can come first.
  void add_unix_connection(int fd, const PeerCredentials& peer);
  // Enables TCP: without a verifier every TCP call is refused.
  void set_token_verifier(std::unique_ptr<TokenVerifier> verifier);

  AuthResult authenticate(const grpc::ServerContextBase& ctx) const override;
  // The decision itself, from the gRPC peer string and the token metadata
  // (empty when absent); what authenticate() calls.
  AuthResult authenticate_peer(std::string_view peer, std::string_view token) const;

 private:
  struct UnixConnection {
    PeerCredentials peer;
    std::string user_name;
  };
  AuthResult authenticate_unix(std::string_view peer) const;
  AuthResult authenticate_tcp(std::string_view peer, std::string_view token) const;

  mutable std::mutex mu_;
  // Keyed by descriptor number; an entry is replaced when the number is
  // reused by a new connection (gRPC closes a descriptor only after every
  // call on it is gone).
  std::unordered_map<int, UnixConnection> unix_;
  std::unique_ptr<TokenVerifier> verifier_;
  mutable UserNames names_;
};

}  // namespace drover::rpc
