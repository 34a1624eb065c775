// Users and groups by name or id, for the commands. drover-cli is linked
// statically, and a statically linked C library crashes inside some NSS
// modules (nss_systemd does, for any name or id that /etc/passwd lacks:
// `squeue --me` by such a user was a segmentation fault). So these read
// /etc/passwd and /etc/group themselves, and ask `getent`, which uses the
// system's NSS in a process of its own, only for what those files lack
// (LDAP, sssd, systemd's dynamic users).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace drover {

struct UserEntry {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
  std::string shell;
  std::string full_name;  // the GECOS field up to its first comma (sreport's "Proper Name")
};

std::optional<UserEntry> user_by_uid(uid_t uid);
std::optional<UserEntry> user_by_name(const std::string& name);
// A user named as the commands take one (scancel -u, --uid): by name, else by a uid number.
std::optional<UserEntry> user_by_name_or_uid(const std::string& text);
std::optional<std::string> group_name(gid_t gid);
std::optional<gid_t> group_by_name(const std::string& name);
// A group named as --gid takes one: by name, else by a gid number this host knows.
std::optional<gid_t> group_by_name_or_gid(const std::string& text);

}  // namespace drover
