#include "rpc/token.hpp"

#include <gtest/gtest.h>

#include "rpc/crypto.hpp"

namespace drover::rpc {
namespace {

TEST(Crypto, HmacSha256MatchesRfc4231Case2) {
  auto mac = hmac_sha256("Jefe", "what do ya want for nothing?");
  EXPECT_EQ(to_hex(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size())),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(Crypto, HexRoundTripAndRejectsBadDigits) {
  std::string bytes;
  ASSERT_TRUE(from_hex("00ff10Ab", &bytes));
  EXPECT_EQ(to_hex(bytes), "00ff10ab");
  EXPECT_FALSE(from_hex("abc", &bytes));
  EXPECT_FALSE(from_hex("zz", &bytes));
  EXPECT_EQ(new_request_id().size(), 32u);
  EXPECT_NE(new_request_id(), new_request_id());
}

ClusterKey test_key(std::string secret) {
  ClusterKey k;
  k.secret = std::move(secret);
  k.id = key_id(k.secret);
  return k;
}

constexpr int64_t kNow = 1'700'000'000;

struct Verifier {
  int64_t now = kNow;
  TokenPolicy policy;
  TokenVerifier make(std::vector<ClusterKey> keys) {
    return TokenVerifier(std::move(keys), policy, [this] { return now; });
  }
};

TEST(Token, ValidTokenCarriesItsClaims) {
  ClusterKey key = test_key(std::string(64, 'k'));
  Verifier v;
  auto verifier = v.make({key});
  TokenClaims claims = new_claims(1234, 567, kNow, 60);
  TokenVerdict verdict = verifier.verify(sign_token(key, claims));
  ASSERT_TRUE(verdict.ok()) << verdict.message;
  EXPECT_EQ(verdict.claims.uid, 1234u);
  EXPECT_EQ(verdict.claims.gid, 567u);
  EXPECT_EQ(verdict.claims.expires_at_s, kNow + 60);
}

TEST(Token, KeyIdIsStableAndDistinguishesKeys) {
  EXPECT_EQ(key_id(std::string(64, 'k')), key_id(std::string(64, 'k')));
  EXPECT_NE(key_id(std::string(64, 'k')), key_id(std::string(64, 'j')));
  EXPECT_EQ(key_id("x").size(), 8u);
}

// Replaces dot-separated field `index` of a token.
std::string with_field(const std::string& token, std::size_t index, const std::string& value) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    auto dot = token.find('.', start);
    parts.push_back(token.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  parts[index] = value;
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? "." : "") + parts[i];
  return out;
}

struct RejectCase {
  std::string name;
  std::function<std::string(const ClusterKey&)> token;
  TokenFailure failure;
  std::string message_part;
};

TEST(Token, RejectionsSayWhatFailed) {
  const ClusterKey key = test_key(std::string(64, 'k'));
  const ClusterKey other = test_key(std::string(64, 'o'));
  std::vector<RejectCase> cases = {
      {"missing", [](const ClusterKey&) { return std::string(); }, TokenFailure::kMissing,
       "missing authentication token"},
      {"garbage", [](const ClusterKey&) { return std::string("hello"); }, TokenFailure::kMalformed,
       "malformed token: 1 dot-separated fields, expected 8"},
      {"version", [](const ClusterKey& k) { return with_field(sign_token(k, new_claims(1, 1, kNow, 60)), 0, "v9"); },
       TokenFailure::kMalformed, "unsupported token version 'v9'"},
      {"bad uid", [](const ClusterKey& k) { return with_field(sign_token(k, new_claims(1, 1, kNow, 60)), 2, "-1"); },
       TokenFailure::kMalformed, "malformed token: bad uid field"},
      {"short nonce",
       [](const ClusterKey& k) { return with_field(sign_token(k, new_claims(1, 1, kNow, 60)), 6, "abcd"); },
       TokenFailure::kMalformed, "nonce is not 32 hex digits"},
      {"unknown key", [&](const ClusterKey&) { return sign_token(other, new_claims(1, 1, kNow, 60)); },
       TokenFailure::kUnknownKey, "token signed with unknown key id " + other.id},
      {"uid altered",
       [](const ClusterKey& k) { return with_field(sign_token(k, new_claims(1000, 1, kNow, 60)), 2, "0"); },
       TokenFailure::kBadSignature, "bad token signature"},
      {"expired", [](const ClusterKey& k) { return sign_token(k, new_claims(1, 1, kNow - 200, 60)); },
       TokenFailure::kExpired, "token expired 140 s ago"},
      {"from the future", [](const ClusterKey& k) { return sign_token(k, new_claims(1, 1, kNow + 100, 60)); },
       TokenFailure::kNotYetValid, "token issued 100 s in the future"},
      {"too long", [](const ClusterKey& k) { return sign_token(k, new_claims(1, 1, kNow, 3600)); },
       TokenFailure::kLifetimeTooLong, "token lifetime 3600 s exceeds the server's maximum of 300 s"},
  };
  for (const auto& c : cases) {
    Verifier v;
    auto verifier = v.make({key});
    TokenVerdict verdict = verifier.verify(c.token(key));
    EXPECT_EQ(verdict.failure, c.failure) << c.name << ": " << verdict.message;
    EXPECT_NE(verdict.message.find(c.message_part), std::string::npos) << c.name << ": " << verdict.message;
  }
}

TEST(Token, WithinClockSkewIsAccepted) {
  const ClusterKey key = test_key(std::string(64, 'k'));
  Verifier v;
  auto verifier = v.make({key});
  EXPECT_TRUE(verifier.verify(sign_token(key, new_claims(1, 1, kNow - 80, 60))).ok());  // expired 20 s ago
  EXPECT_TRUE(verifier.verify(sign_token(key, new_claims(1, 1, kNow + 20, 60))).ok());  // 20 s ahead
}

TEST(Token, ReplayIsRefusedUntilTheTokenWouldHaveExpired) {
  const ClusterKey key = test_key(std::string(64, 'k'));
  Verifier v;
  auto verifier = v.make({key});
  const std::string token = sign_token(key, new_claims(1, 1, kNow, 60));
  ASSERT_TRUE(verifier.verify(token).ok());
  TokenVerdict again = verifier.verify(token);
  EXPECT_EQ(again.failure, TokenFailure::kReplayed);
  EXPECT_NE(again.message.find("replayed token"), std::string::npos);
  EXPECT_EQ(verifier.remembered_nonces(), 1u);
  // Once the token is past expiry + skew it is refused as expired and its nonce forgotten.
  v.now = kNow + 60 + v.policy.clock_skew_s + 1;
  EXPECT_EQ(verifier.verify(token).failure, TokenFailure::kExpired);
  EXPECT_TRUE(verifier.verify(sign_token(key, new_claims(1, 1, v.now, 60))).ok());
  EXPECT_EQ(verifier.remembered_nonces(), 1u);
}

TEST(Token, FullReplayCacheRefusesNewTokensInsteadOfForgetting) {
  const ClusterKey key = test_key(std::string(64, 'k'));
  Verifier v;
  v.policy.replay_cache_entries = 2;
  auto verifier = v.make({key});
  const std::string first = sign_token(key, new_claims(1, 1, kNow, 60));
  ASSERT_TRUE(verifier.verify(first).ok());
  ASSERT_TRUE(verifier.verify(sign_token(key, new_claims(1, 1, kNow, 60))).ok());
  TokenVerdict full = verifier.verify(sign_token(key, new_claims(1, 1, kNow, 60)));
  EXPECT_EQ(full.failure, TokenFailure::kReplayCacheFull);
  EXPECT_NE(full.message.find("retry"), std::string::npos);
  EXPECT_EQ(verifier.verify(first).failure, TokenFailure::kReplayed);  // still remembered
}

TEST(Token, AcceptsEveryConfiguredKeyDuringRotation) {
  const ClusterKey old_key = test_key(std::string(64, 'a'));
  const ClusterKey new_key = test_key(std::string(64, 'b'));
  Verifier v;
  auto verifier = v.make({new_key, old_key});
  EXPECT_TRUE(verifier.verify(sign_token(old_key, new_claims(1, 1, kNow, 60))).ok());
  EXPECT_TRUE(verifier.verify(sign_token(new_key, new_claims(1, 1, kNow, 60))).ok());
}

}  // namespace
}  // namespace drover::rpc
