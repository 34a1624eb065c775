// The account a job runs as, resolved on the node from the passwd/group
// databases (NSS), before the step daemon forks the job's processes.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.hpp"

namespace drover::agent {

struct UserInfo {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;  // the job's primary group (may differ from the passwd entry's: sbatch --gid)
  std::string home;
  std::string shell;
  std::vector<gid_t> groups;  // supplementary groups (initgroups' list, the job gid included)
};

// Resolves `name` and checks that it has uid `uid`: the controller and this
// node must agree on who the user is. Errors say which database lacks what.
Result<UserInfo> lookup_user(const std::string& name, uid_t uid, gid_t gid);

// The agent resolves the user and hands the answer to the step daemon in its
// spool record: a lookup costs a short-lived process more than its whole
// start (NSS loads its modules and reads the databases each time), the
// long-lived agent little.
nlohmann::json to_json(const UserInfo& u);
std::optional<UserInfo> user_info_from_json(const nlohmann::json& j);  // nullopt: absent or malformed

}  // namespace drover::agent
