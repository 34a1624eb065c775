// A user's groups through this process's NSS (getgrouplist), for the
// daemons, which are linked dynamically; the statically linked commands use
// user_db.hpp instead. In a file of its own so that they never link it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace drover {

// The groups `name` is in, `gid` first.
std::vector<gid_t> group_list(const std::string& name, gid_t gid);

}  // namespace drover
