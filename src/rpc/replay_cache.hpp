// Remembers token nonces until their token could no longer be accepted, so a
// captured token cannot be sent twice. Bounded: when `capacity` live entries
// exist, new tokens are refused (kFull) rather than forgetting a live nonce,
// which would reopen the replay window. Not thread-safe; TokenVerifier locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

namespace drover::rpc {

class ReplayCache {
 public:
  enum class Outcome { kFresh, kReplayed, kFull };

  explicit ReplayCache(std::size_t capacity) : capacity_(capacity) {}

  // Forgets entries whose time is past, then records `nonce` until
  // `forget_after_s` (Unix seconds) unless it is already present.
  Outcome check_and_insert(std::string_view nonce, int64_t forget_after_s, int64_t now_s);
  std::size_t size() const { return nonces_.size(); }
  std::size_t capacity() const { return capacity_; }

 private:
  void purge(int64_t now_s);

  std::size_t capacity_;
  std::unordered_set<std::string> nonces_;
  std::set<std::pair<int64_t, std::string>> by_expiry_;  // (forget_after_s, nonce)
};

}  // namespace drover::rpc
