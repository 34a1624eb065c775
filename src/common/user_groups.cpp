#include "common/user_groups.hpp"

#include <grp.h>

namespace drover {

std::vector<gid_t> group_list(const std::string& name, gid_t gid) {
  int ngroups = 64;
  std::vector<gid_t> groups(static_cast<std::size_t>(ngroups));
  while (getgrouplist(name.c_str(), gid, groups.data(), &ngroups) < 0) {
    groups.resize(static_cast<std::size_t>(ngroups) + 16);
    ngroups = static_cast<int>(groups.size());
  }
  groups.resize(static_cast<std::size_t>(ngroups));
  return groups;
}

}  // namespace drover
