#include "agent/usage.hpp"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/cgroup.hpp"
#include "common/strings.hpp"

namespace drover::agent {
namespace {

// A /proc file of `pid`; "" when it cannot be read (the process is gone, or not ours to read).
std::string proc_file(pid_t pid, const char* name) {
  return read_text("/proc/" + std::to_string(pid) + "/" + name).value_or("");
}

int64_t ticks_to_us(int64_t ticks) {
  static const int64_t hz = std::max<long>(sysconf(_SC_CLK_TCK), 1);
  return ticks * 1000000 / hz;
}

int64_t timeval_us(const timeval& t) { return static_cast<int64_t>(t.tv_sec) * 1000000 + t.tv_usec; }

// "rchar: N" and "wchar: N" of /proc/PID/io.
void read_io(pid_t pid, ProcessUse& u) {
  const std::string io = proc_file(pid, "io");
  for (const auto& line : split(io, '\n')) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string_view key(line.data(), colon);
    auto value = parse_int(trim(std::string_view(line).substr(colon + 1)));
    if (!value) continue;
    if (key == "rchar") u.read_bytes = *value;
    if (key == "wchar") u.write_bytes = *value;
  }
}

}  // namespace

ProcessUse& ProcessUse::operator+=(const ProcessUse& o) {
  user_us += o.user_us;
  system_us += o.system_us;
  rss_kb += o.rss_kb;
  vmsize_kb += o.vmsize_kb;
  pages += o.pages;
  read_bytes += o.read_bytes;
  write_bytes += o.write_bytes;
  return *this;
}

std::optional<ProcessUse> read_process_use(pid_t pid) {
  const std::string stat = proc_file(pid, "stat");
  // "pid (comm) state ppid ...": comm may hold spaces and ')'; the fields
  // after it are numbered from 3 (state).
  auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return std::nullopt;
  std::vector<std::string> f = split(std::string_view(stat).substr(paren + 2), ' ');
  if (f.size() < 22) return std::nullopt;
  auto field = [&](int n) { return parse_int(f[static_cast<std::size_t>(n - 3)], true).value_or(0); };
  ProcessUse u;
  u.pages = field(12) + field(13);  // majflt, cmajflt
  u.user_us = ticks_to_us(field(14) + field(16));  // utime + cutime
  u.system_us = ticks_to_us(field(15) + field(17));  // stime + cstime
  u.vmsize_kb = field(23) / 1024;
  static const int64_t page_kb = std::max<long>(sysconf(_SC_PAGESIZE), 1024) / 1024;
  u.rss_kb = std::max<int64_t>(field(24), 0) * page_kb;
  read_io(pid, u);
  return u;
}

ProcessUse sum_process_use(const std::vector<pid_t>& pids) {
  ProcessUse sum;
  for (pid_t p : pids) {
    if (auto u = read_process_use(p)) sum += *u;
  }
  return sum;
}

void add_sample(TaskUsage& u, const ProcessUse& now) {
  u.max_rss_kb = std::max(u.max_rss_kb, now.rss_kb);
  u.max_vmsize_kb = std::max(u.max_vmsize_kb, now.vmsize_kb);
  // What ended processes did stays counted with those that waited for them;
  // one that exits unwaited takes its share away until the step daemon
  // reaps it, so these only grow.
  u.user_cpu_us = std::max(u.user_cpu_us, now.user_us);
  u.system_cpu_us = std::max(u.system_cpu_us, now.system_us);
  u.pages = std::max(u.pages, now.pages);
  u.disk_read = std::max(u.disk_read, now.read_bytes);
  u.disk_write = std::max(u.disk_write, now.write_bytes);
}

void add_exit(TaskUsage& u, const rusage& ru, const std::optional<ProcessUse>& last) {
  u.user_cpu_us = std::max(u.user_cpu_us, timeval_us(ru.ru_utime));
  u.system_cpu_us = std::max(u.system_cpu_us, timeval_us(ru.ru_stime));
  u.pages = std::max<int64_t>(u.pages, ru.ru_majflt);
  u.max_rss_kb = std::max<int64_t>(u.max_rss_kb, ru.ru_maxrss);  // kilobytes on Linux
  if (last) {
    u.disk_read = std::max(u.disk_read, last->read_bytes);
    u.disk_write = std::max(u.disk_write, last->write_bytes);
  }
}

void add_orphan(TaskUsage& u, const rusage& ru, const std::optional<ProcessUse>& last) {
  u.user_cpu_us += timeval_us(ru.ru_utime);
  u.system_cpu_us += timeval_us(ru.ru_stime);
  u.pages += ru.ru_majflt;
  u.max_rss_kb = std::max<int64_t>(u.max_rss_kb, ru.ru_maxrss);
  if (last) {
    u.disk_read += last->read_bytes;
    u.disk_write += last->write_bytes;
  }
}

void merge_orphans(TaskUsage& u, const TaskUsage& orphans) {
  u.user_cpu_us += orphans.user_cpu_us;
  u.system_cpu_us += orphans.system_cpu_us;
  u.pages += orphans.pages;
  u.disk_read += orphans.disk_read;
  u.disk_write += orphans.disk_write;
  u.max_rss_kb = std::max(u.max_rss_kb, orphans.max_rss_kb);
  u.max_vmsize_kb = std::max(u.max_vmsize_kb, orphans.max_vmsize_kb);
}

nlohmann::json to_json(const TaskUsage& u) {
  return {{"user_cpu_us", u.user_cpu_us}, {"system_cpu_us", u.system_cpu_us}, {"max_rss_kb", u.max_rss_kb},
          {"max_vmsize_kb", u.max_vmsize_kb}, {"pages", u.pages},           {"disk_read", u.disk_read},
          {"disk_write", u.disk_write}};
}

TaskUsage task_usage_from_json(const nlohmann::json& j) {
  TaskUsage u;
  u.user_cpu_us = j.value("user_cpu_us", int64_t{0});
  u.system_cpu_us = j.value("system_cpu_us", int64_t{0});
  u.max_rss_kb = j.value("max_rss_kb", int64_t{0});
  u.max_vmsize_kb = j.value("max_vmsize_kb", int64_t{0});
  u.pages = j.value("pages", int64_t{0});
  u.disk_read = j.value("disk_read", int64_t{0});
  u.disk_write = j.value("disk_write", int64_t{0});
  return u;
}

}  // namespace drover::agent
