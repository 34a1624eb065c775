#include "agent/user_info.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/user_groups.hpp"

namespace drover::agent {

Result<UserInfo> lookup_user(const std::string& name, uid_t uid, gid_t gid) {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<std::size_t>(size) : 16384);
  passwd pw{};
  passwd* found = nullptr;
  int rc = getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found);
  if (rc != 0 || !found) {
    return make_error("user '" + name + "' is not known on this node" +
                      (rc ? std::string(" (") + std::strerror(rc) + ")" : "") +
                      "; add the account (same name and uid as on the submit host)");
  }
  if (pw.pw_uid != uid) {
    return make_error("user '" + name + "' has uid " + std::to_string(pw.pw_uid) + " on this node but uid " +
                      std::to_string(uid) + " in the job; the user databases of the nodes disagree");
  }
  UserInfo u;
  u.name = name;
  u.uid = pw.pw_uid;
  u.gid = gid;
  u.home = pw.pw_dir ? pw.pw_dir : "";
  u.shell = pw.pw_shell ? pw.pw_shell : "";
  u.groups = group_list(name, gid);
  return u;
}

nlohmann::json to_json(const UserInfo& u) {
  return {{"name", u.name}, {"uid", u.uid}, {"gid", u.gid}, {"home", u.home}, {"shell", u.shell}, {"groups", u.groups}};
}

std::optional<UserInfo> user_info_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  try {
    UserInfo u;
    u.name = j.at("name").get<std::string>();
    u.uid = j.at("uid").get<uid_t>();
    u.gid = j.at("gid").get<gid_t>();
    u.home = j.at("home").get<std::string>();
    u.shell = j.at("shell").get<std::string>();
    u.groups = j.at("groups").get<std::vector<gid_t>>();
    return u;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace drover::agent
