#include "common/user_db.hpp"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <vector>

#include "common/site_script.hpp"
#include "common/strings.hpp"

namespace drover {
namespace {

// The first line of `file` (passwd or group: "name:x:id:...") whose field `field` is `key`.
std::optional<std::vector<std::string>> from_file(const char* file, std::size_t field, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '+' || line[0] == '-') continue;
    auto f = split(line, ':');
    if (f.size() > field && f[field] == key) return f;
  }
  return std::nullopt;
}

// `getent DATABASE KEY`: the system's NSS answer, in a process of its own.
std::optional<std::vector<std::string>> from_getent(const char* database, const std::string& key) {
  for (const char* program : {"/usr/bin/getent", "/bin/getent"}) {
    if (access(program, X_OK) != 0) continue;
    ScriptOptions so;
    so.argv = {database, key};
    so.stderr_fd = kStderrDiscard;
    so.timeout_s = 10;
    const ScriptRun run = run_script(program, so);
    if (!run.ok()) return std::nullopt;  // exit 2: no such entry
    std::string line = run.output.substr(0, run.output.find('\n'));
    if (line.empty()) return std::nullopt;
    return split(line, ':');
  }
  return std::nullopt;
}

std::optional<std::vector<std::string>> lookup(const char* file, const char* database, std::size_t field,
                                               const std::string& key) {
  if (auto f = from_file(file, field, key)) return f;
  return from_getent(database, key);
}

std::optional<UserEntry> user_of(const std::optional<std::vector<std::string>>& f) {
  if (!f || f->size() < 7) return std::nullopt;
  auto uid = parse_int((*f)[2]);
  auto gid = parse_int((*f)[3]);
  if (!uid || !gid) return std::nullopt;
  const std::string& gecos = (*f)[4];
  return UserEntry{(*f)[0], static_cast<uid_t>(*uid), static_cast<gid_t>(*gid), (*f)[5], (*f)[6],
                   gecos.substr(0, gecos.find(','))};
}

}  // namespace

std::optional<UserEntry> user_by_uid(uid_t uid) {
  return user_of(lookup("/etc/passwd", "passwd", 2, std::to_string(uid)));
}

std::optional<UserEntry> user_by_name(const std::string& name) {
  if (name.empty() || name.find(':') != std::string::npos) return std::nullopt;
  auto f = from_file("/etc/passwd", 0, name);
  if (!f && !parse_int(name)) f = from_getent("passwd", name);  // getent takes a number for a uid
  return user_of(f);
}

std::optional<UserEntry> user_by_name_or_uid(const std::string& text) {
  if (auto u = user_by_name(text)) return u;
  auto n = parse_int(text);
  if (!n || *n < 0 || *n > UINT32_MAX) return std::nullopt;
  return user_by_uid(static_cast<uid_t>(*n));
}

std::optional<gid_t> group_by_name(const std::string& name) {
  if (name.empty() || name.find(':') != std::string::npos) return std::nullopt;
  auto f = from_file("/etc/group", 0, name);
  if (!f && !parse_int(name)) f = from_getent("group", name);
  if (!f || f->size() < 3) return std::nullopt;
  auto gid = parse_int((*f)[2]);
  if (!gid) return std::nullopt;
  return static_cast<gid_t>(*gid);
}

std::optional<gid_t> group_by_name_or_gid(const std::string& text) {
  if (auto g = group_by_name(text)) return g;
  auto n = parse_int(text);
  if (!n || *n < 0 || *n > UINT32_MAX || !group_name(static_cast<gid_t>(*n))) return std::nullopt;
  return static_cast<gid_t>(*n);
}

std::optional<std::string> group_name(gid_t gid) {
  auto f = lookup("/etc/group", "group", 2, std::to_string(gid));
  if (!f || f->empty()) return std::nullopt;
  return (*f)[0];
}

}  // namespace drover
