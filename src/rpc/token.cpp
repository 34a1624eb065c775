#include "rpc/token.hpp"

#include <chrono>
#include <limits>

#include <fmt/format.h>

#include "common/strings.hpp"
#include "rpc/crypto.hpp"

namespace drover::rpc {
namespace {

constexpr std::string_view kVersion = "v1";
constexpr std::size_t kNonceBytes = 16;

std::string mac_hex(const ClusterKey& key, std::string_view signed_part) {
  std::string message("drover-token-v1");
  message.push_back('\0');
  message.append(signed_part);
  auto mac = hmac_sha256(key.secret, message);
  return to_hex(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
}

TokenVerdict reject(TokenFailure failure, std::string message) {
  TokenVerdict v;
  v.failure = failure;
  v.message = std::move(message);
  return v;
}

struct ParsedToken {
  std::string key_id;
  std::string signed_part;
  std::string mac;
  TokenClaims claims;
};

template <class T>
bool parse_field(std::string_view text, T* out) {
  auto v = parse_int(text);
  if (!v || *v > static_cast<int64_t>(std::numeric_limits<T>::max())) return false;
  *out = static_cast<T>(*v);
  return true;
}

// Splits and parses the fields; the message names the first bad one.
Result<ParsedToken> parse_token(std::string_view token) {
  auto fields = split(token, '.');
  if (fields.size() != 8) {
    return make_error(fmt::format("malformed token: {} dot-separated fields, expected 8", fields.size()));
  }
  if (fields[0] != kVersion) {
    return make_error(fmt::format("unsupported token version '{}' (this server reads {})", fields[0], kVersion));
  }
  ParsedToken p;
  p.key_id = fields[1];
  TokenClaims& c = p.claims;
  if (!parse_field(fields[2], &c.uid)) return make_error("malformed token: bad uid field");
  if (!parse_field(fields[3], &c.gid)) return make_error("malformed token: bad gid field");
  if (!parse_field(fields[4], &c.issued_at_s)) return make_error("malformed token: bad issue time");
  if (!parse_field(fields[5], &c.expires_at_s)) return make_error("malformed token: bad expiry time");
  if (fields[6].size() != 2 * kNonceBytes || !from_hex(fields[6], &c.nonce)) {
    return make_error("malformed token: nonce is not 32 hex digits");
  }
  p.mac = fields[7];
  p.signed_part = std::string(token.substr(0, token.rfind('.')));
  return p;
}

}  // namespace

int64_t unix_now_s() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

TokenClaims new_claims(uint32_t uid, uint32_t gid, int64_t now_s, int64_t lifetime_s) {
  TokenClaims c;
  c.uid = uid;
  c.gid = gid;
  c.issued_at_s = now_s;
  c.expires_at_s = now_s + lifetime_s;
  c.nonce = random_bytes(kNonceBytes);
  return c;
}

std::string sign_token(const ClusterKey& key, const TokenClaims& c) {
  std::string signed_part = fmt::format("{}.{}.{}.{}.{}.{}.{}", kVersion, key.id, c.uid, c.gid,
                                        c.issued_at_s, c.expires_at_s, to_hex(c.nonce));
  std::string mac = mac_hex(key, signed_part);
  return signed_part + "." + mac;
}

TokenVerifier::TokenVerifier(std::vector<ClusterKey> keys, TokenPolicy policy, Clock clock)
    : keys_(std::move(keys)),
      policy_(policy),
      clock_(clock ? std::move(clock) : Clock(unix_now_s)),
      replay_(policy.replay_cache_entries) {}

const ClusterKey* TokenVerifier::find_key(std::string_view id) const {
  for (const auto& k : keys_) {
    if (k.id == id) return &k;
  }
  return nullptr;
}

TokenVerdict TokenVerifier::check_times(const TokenClaims& c, int64_t now_s) const {
  const int64_t skew = policy_.clock_skew_s;
  if (c.expires_at_s < c.issued_at_s) {
    return reject(TokenFailure::kMalformed, "malformed token: expires before it was issued");
  }
  if (c.expires_at_s + skew < now_s) {
    return reject(TokenFailure::kExpired,
                  fmt::format("token expired {} s ago (tokens are good for one request; "
                              "if this repeats, the client's clock is behind the server's)",
                              now_s - c.expires_at_s));
  }
  if (c.issued_at_s - skew > now_s) {
    return reject(TokenFailure::kNotYetValid,
                  fmt::format("token issued {} s in the future: the client's clock is ahead of the "
                              "server's by more than the {} s allowed; synchronize clocks (NTP)",
                              c.issued_at_s - now_s, skew));
  }
  if (c.expires_at_s - c.issued_at_s > policy_.max_lifetime_s) {
    return reject(TokenFailure::kLifetimeTooLong,
                  fmt::format("token lifetime {} s exceeds the server's maximum of {} s",
                              c.expires_at_s - c.issued_at_s, policy_.max_lifetime_s));
  }
  return {};
}

TokenVerdict TokenVerifier::verify(std::string_view token) {
  if (token.empty()) {
    return reject(TokenFailure::kMissing,
                  "missing authentication token: requests over TCP must carry a token signed with "
                  "the cluster key (readable by root and SlurmUser); plain users get theirs from "
                  "their host's local signer (AuthInfo socket=), or use the controller's Unix socket "
                  "on its host (see docs/rpc.md)");
  }
  auto parsed = parse_token(token);
  if (!parsed) return reject(TokenFailure::kMalformed, parsed.error().message);
  const ClusterKey* key = find_key(parsed->key_id);
  if (key == nullptr) {
    return reject(TokenFailure::kUnknownKey,
                  fmt::format("token signed with unknown key id {} (this server's key id is {}): "
                              "the cluster key files differ between client and server hosts",
                              parsed->key_id, keys_.empty() ? "none" : keys_.front().id));
  }
  if (!constant_time_equal(mac_hex(*key, parsed->signed_part), parsed->mac)) {
    return reject(TokenFailure::kBadSignature,
                  "bad token signature: the token was altered or not signed with the cluster key");
  }
  const int64_t now_s = clock_();
  if (auto t = check_times(parsed->claims, now_s); !t.ok()) return t;
  std::lock_guard lock(mu_);
  switch (replay_.check_and_insert(parsed->claims.nonce,
                                   parsed->claims.expires_at_s + policy_.clock_skew_s, now_s)) {
    case ReplayCache::Outcome::kReplayed:
      return reject(TokenFailure::kReplayed,
                    "replayed token: this token's nonce was already used; every request needs a "
                    "fresh token");
    case ReplayCache::Outcome::kFull:
      return reject(TokenFailure::kReplayCacheFull,
                    fmt::format("server busy: {} live token nonces remembered (the limit); retry in "
                                "a few seconds",
                                replay_.capacity()));
    case ReplayCache::Outcome::kFresh:
      break;
  }
  TokenVerdict ok;
  ok.claims = std::move(parsed->claims);
  return ok;
}

std::size_t TokenVerifier::remembered_nonces() const {
  std::lock_guard lock(mu_);
  return replay_.size();
}

}  // namespace drover::rpc
