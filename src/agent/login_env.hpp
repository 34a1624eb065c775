// The user's login environment, for jobs submitted with --export=NONE or
// --export=K1,K2 (Slurm loads it on the node then, and sets SLURM_GET_USER_ENV=1).
#pragma once

#include <string>
#include <vector>

#include "agent/user_info.hpp"
#include "common/result.hpp"

namespace drover::agent {

// Runs the user's login shell (argv[0] "-bash" style, so /etc/profile and the
// user's profile are read) as the user, from a minimal environment (HOME,
// USER, LOGNAME, SHELL, PATH), and returns what it exports ("K=V"). Errors
// (no shell, timeout, non-zero exit) say which; the caller falls back to the
// minimal environment.
Result<std::vector<std::string>> load_login_env(const UserInfo& user, int timeout_ms);

// HOME, USER, LOGNAME, SHELL and a default PATH for `user`.
std::vector<std::string> minimal_login_env(const UserInfo& user);

}  // namespace drover::agent
