#include "common/user_db.hpp"

#include <unistd.h>

#include <fstream>
#include <vector>

#include "common/site_script.hpp"
#include "common/strings.hpp"

namespace drover {
namespace {

// One passwd or group line's fields ("name:x:uid:gid:..."), split on ':'.
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (;;) {
    std::size_t colon = line.find(':', at);
    out.push_back(line.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (colon == std::string::npos) return out;
    at = colon + 1;
  }
}

std::optional<unsigned long> number(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 10) return std::nullopt;
  return std::stoul(s);
}

// The first line of `file` whose field `field` is `key`.
std::optional<std::vector<std::string>> from_file(const char* file, std::size_t field, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '+' || line[0] == '-') continue;
    auto f = fields_of(line);
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
    so.discard_stderr = true;
    so.timeout_s = 10;
    const ScriptRun run = run_script(program, so);
    if (!run.ok()) return std::nullopt;  // exit 2: no such entry
    std::string line = run.output.substr(0, run.output.find('\n'));
    if (line.empty()) return std::nullopt;
    return fields_of(line);
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
  auto uid = number((*f)[2]);
  auto gid = number((*f)[3]);
  if (!uid || !gid) return std::nullopt;
  return UserEntry{(*f)[0], static_cast<uid_t>(*uid), static_cast<gid_t>(*gid), (*f)[5], (*f)[6]};
}

}  // namespace

std::optional<UserEntry> user_by_uid(uid_t uid) {
  return user_of(lookup("/etc/passwd", "passwd", 2, std::to_string(uid)));
}

std::optional<UserEntry> user_by_name(const std::string& name) {
  if (name.empty() || name.find(':') != std::string::npos) return std::nullopt;
  auto f = from_file("/etc/passwd", 0, name);
  if (!f && !number(name)) f = from_getent("passwd", name);  // getent takes a number for a uid
  return user_of(f);
}

std::optional<std::string> group_name(gid_t gid) {
  auto f = lookup("/etc/group", "group", 2, std::to_string(gid));
  if (!f || f->empty()) return std::nullopt;
  return (*f)[0];
}

}  // namespace drover
