#include "rpc/user_names.hpp"

#include <pwd.h>
#include <unistd.h>

#include <vector>

#include "rpc/token.hpp"

namespace drover::rpc {

std::string user_name_of(uint32_t uid) {
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(hint > 0 ? static_cast<std::size_t>(hint) : 4096);
  for (;;) {
    struct passwd pw {};
    struct passwd* found = nullptr;
    int rc = ::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    return rc == 0 && found != nullptr ? std::string(found->pw_name) : std::string();
  }
}

std::string UserNames::lookup(uint32_t uid) {
  const int64_t now = unix_now_s();
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(uid);
    if (it != cache_.end() && now - it->second.looked_up_s < ttl_s_) return it->second.name;
  }
  // Looked up without the lock: NSS may be slow, and two racing lookups agree.
  std::string name = user_name_of(uid);
  std::lock_guard lock(mu_);
  cache_[uid] = Entry{name, now};
  return name;
}

}  // namespace drover::rpc
