// Who is calling: the one small interface every RPC handler uses.
//
// A handler asks the CallAuthenticator it was constructed with:
//   AuthResult who = auth.authenticate(*ctx);
//   if (!who.ok()) { reactor->Finish(to_status(who)); return reactor; }
//   const Identity& caller = who.identity();
// The identity comes from the kernel on the Unix socket (SO_PEERCRED) and
// from a verified signed token over TCP; see docs/rpc.md. Authorization (may
// this caller cancel that job?) is the handler's business, not this layer's.
//
// This header does not include grpcpp, so any module may include it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace grpc {
class ServerContextBase;
}

namespace drover::rpc {

enum class Transport {
  kUnixSocket,  // uid/gid from SO_PEERCRED, taken when the connection was accepted
  kTcp,         // uid/gid asserted by a token signed with the cluster key
};

// "unix" or "tcp", as in CallerIdentity.transport.
std::string_view transport_name(Transport transport);

struct Identity {
  uint32_t uid = 0;
  uint32_t gid = 0;
  // Resolved on the server; empty when the uid has no passwd entry there.
  std::string user_name;
  Transport transport = Transport::kUnixSocket;
  // Unix socket only: the pid that connected (0 over TCP). Informational: the
  // process may have exited since.
  int32_t pid = 0;
  // The gRPC peer string ("fd:12", "ipv4:10.0.0.5:40122"), for logs.
  std::string peer;

  bool is_root() const { return uid == 0; }
  // "alice(1000)" or "uid 1234" when the name is unknown; for messages.
  std::string describe() const;
};

enum class AuthCode {
  kUnauthenticated,  // gRPC UNAUTHENTICATED: the caller could not be identified
  kUnavailable,      // gRPC UNAVAILABLE: try again later (replay cache full)
};

// Either an Identity or a refusal with a message saying what failed.
class [[nodiscard]] AuthResult {
 public:
  static AuthResult allow(Identity identity) { return AuthResult(std::move(identity)); }
  static AuthResult deny(AuthCode code, std::string message) {
    return AuthResult(code, std::move(message));
  }
  bool ok() const { return ok_; }
  const Identity& identity() const { return identity_; }
  AuthCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  explicit AuthResult(Identity identity) : identity_(std::move(identity)), ok_(true) {}
  AuthResult(AuthCode code, std::string message)
      : code_(code), message_(std::move(message)), ok_(false) {}

  Identity identity_;
  AuthCode code_ = AuthCode::kUnauthenticated;
  std::string message_;
  bool ok_ = false;
};

class CallAuthenticator {
 public:
  virtual ~CallAuthenticator() = default;
  // Identifies the caller of the call `ctx` belongs to. Thread-safe; call it
  // while the call is live (inside the handler, before Finish).
  virtual AuthResult authenticate(const grpc::ServerContextBase& ctx) const = 0;
};

}  // namespace drover::rpc
