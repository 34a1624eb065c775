// RpcClient: a gRPC channel to a Drover daemon by Unix socket path or
// host:port, which signs every TCP request with a fresh token when the
// cluster key is readable (agents, root, SlurmUser).
//
//   auto client = rpc::RpcClient::connect({.target = "unix:/var/spool/drover/ctld.sock"});
//   if (!client) { print client.error().message; }
//   auto stub = drover::v1::PingService::NewStub(client->channel());
//
// Connecting never blocks; the first call connects. Plain users cannot read
// the key: over TCP their tokens come from the host's local signer when
// signer_socket is set (an agent or `drover authd` serves it), else their
// requests go unsigned and the server refuses them; unsigned_reason() says
// why, for the message (see docs/rpc.md).
// This header does not include grpcpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace grpc {
class Channel;
}

namespace drover::rpc {

struct ClientOptions {
  // "unix:/path", an absolute path ("/path", taken as a Unix socket), or
  // "host:port" / "[v6]:port" for TCP.
  std::string target;
  // TCP only: sign requests with this key when it is readable. Empty: never sign.
  std::string key_path;
  // Identity asserted in tokens; default the effective uid/gid. Only a key
  // holder can sign, and it may act as anyone (an agent acts as root).
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  // Each token is good for this long (the server caps it, default 300 s).
  std::chrono::seconds token_lifetime{60};
  // Owners besides root and the effective uid that the key file may have.
  std::vector<uint32_t> key_owner_uids;
  // TCP, when the key cannot be read: ask this host's local signer
  // (local_signer.hpp) for a token for each call. Empty: never.
  std::string signer_socket;
};

class RpcClient {
 public:
  static Result<RpcClient> connect(const ClientOptions& options);

  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  // The gRPC target dialed: "unix:/path" or "host:port".
  const std::string& target() const { return target_; }
  bool is_unix() const { return is_unix_; }
  bool signs_requests() const { return signs_; }
  // Over TCP without signing: why (key unreadable, none configured); else "".
  const std::string& unsigned_reason() const { return unsigned_reason_; }
  // A refusal's message with the client-side reason appended when that
  // explains it (UNAUTHENTICATED over TCP while unsigned). `code` is the gRPC code.
  std::string explain_failure(int code, const std::string& message) const;

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::string target_;
  bool is_unix_ = false;
  bool signs_ = false;
  std::string unsigned_reason_;
  // With the local signer: why it last gave no token ("" while it does).
  std::shared_ptr<std::string> signer_failure_;
};

}  // namespace drover::rpc
