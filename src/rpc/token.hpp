// Request tokens for TCP: "v1.<key id>.<uid>.<gid>.<issued>.<expires>.<nonce>.<mac>"
// where issued/expires are Unix seconds, nonce is 32 hex digits (16 random
// bytes) and mac is HMAC-SHA256 over "drover-token-v1\0" + everything before
// the last dot, keyed with the cluster key, in hex. A token proves that its
// signer holds the cluster key (root or SlurmUser on some host) and asserts
// the uid/gid it acts as; it is good for one request before it expires.
// It authenticates the caller, not the request body (see docs/rpc.md).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rpc/cluster_key.hpp"
#include "rpc/replay_cache.hpp"

namespace drover::rpc {

// The gRPC metadata key that carries the token.
inline constexpr const char* kTokenMetadataKey = "drover-token";

struct TokenClaims {
  uint32_t uid = 0;
  uint32_t gid = 0;
  int64_t issued_at_s = 0;
  int64_t expires_at_s = 0;
  std::string nonce;  // 16 raw bytes
};

// Claims for a new token: a fresh nonce, valid from `now_s` for `lifetime_s`.
TokenClaims new_claims(uint32_t uid, uint32_t gid, int64_t now_s, int64_t lifetime_s);
std::string sign_token(const ClusterKey& key, const TokenClaims& claims);

struct TokenPolicy {
  // Tokens may not live longer than this (bounds the replay cache's memory).
  int64_t max_lifetime_s = 300;
  // Clock difference tolerated between signer and verifier.
  int64_t clock_skew_s = 30;
  // Live nonces remembered at most; beyond that new tokens are refused with
  // UNAVAILABLE until old ones expire (roughly 150 bytes each).
  std::size_t replay_cache_entries = 1 << 19;
};

enum class TokenFailure {
  kNone,
  kMissing,
  kMalformed,
  kUnknownKey,
  kBadSignature,
  kExpired,
  kNotYetValid,
  kLifetimeTooLong,
  kReplayed,
  kReplayCacheFull,
};

struct TokenVerdict {
  TokenFailure failure = TokenFailure::kNone;
  std::string message;  // what failed, for the gRPC status; empty when ok
  TokenClaims claims;   // valid when ok
  bool ok() const { return failure == TokenFailure::kNone; }
};

// Checks tokens against one or more cluster keys (several during a key
// rotation) and remembers nonces. Thread-safe.
class TokenVerifier {
 public:
  using Clock = std::function<int64_t()>;  // Unix seconds

  TokenVerifier(std::vector<ClusterKey> keys, TokenPolicy policy, Clock clock = {});

  // Checks, in order: form, key id, signature, time window, lifetime, replay.
  // An empty token is kMissing.
  TokenVerdict verify(std::string_view token);
  const TokenPolicy& policy() const { return policy_; }
  std::size_t remembered_nonces() const;

 private:
  TokenVerdict check_times(const TokenClaims& claims, int64_t now_s) const;
  const ClusterKey* find_key(std::string_view id) const;

  std::vector<ClusterKey> keys_;
  TokenPolicy policy_;
  Clock clock_;
  mutable std::mutex mu_;
  ReplayCache replay_;
};

int64_t unix_now_s();

}  // namespace drover::rpc
