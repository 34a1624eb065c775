#include "rpc/replay_cache.hpp"

namespace drover::rpc {

void ReplayCache::purge(int64_t now_s) {
  while (!by_expiry_.empty() && by_expiry_.begin()->first < now_s) {
    nonces_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
}

ReplayCache::Outcome ReplayCache::check_and_insert(std::string_view nonce, int64_t forget_after_s,
                                                   int64_t now_s) {
  purge(now_s);
  std::string key(nonce);
  if (nonces_.count(key) != 0) return Outcome::kReplayed;
  if (nonces_.size() >= capacity_) return Outcome::kFull;
  by_expiry_.emplace(forget_after_s, key);
  nonces_.insert(std::move(key));
  return Outcome::kFresh;
}

}  // namespace drover::rpc
