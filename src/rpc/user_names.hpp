// uid -> user name through the system's passwd database (NSS), cached so a
// request does not pay for an LDAP lookup. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace drover::rpc {

class UserNames {
 public:
  // Entries are looked up again after `ttl_s` seconds (renames, new users).
  explicit UserNames(int64_t ttl_s = 300) : ttl_s_(ttl_s) {}
  // The name of `uid`, or "" when it has no passwd entry.
  std::string lookup(uint32_t uid);

 private:
  struct Entry {
    std::string name;
    int64_t looked_up_s = 0;
  };
  int64_t ttl_s_;
  std::mutex mu_;
  std::unordered_map<uint32_t, Entry> cache_;
};

// Direct getpwuid_r lookup, uncached; "" when unknown.
std::string user_name_of(uint32_t uid);

}  // namespace drover::rpc
