#include "agent/proc.hpp"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace drover::agent {
namespace {

struct StatFields {
  char state = '?';
  pid_t ppid = 0;
  uint64_t start_ticks = 0;
};

// /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and ')'.
std::optional<StatFields> read_stat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 2));
  StatFields f;
  rest >> f.state >> f.ppid;
  std::string skip;
  for (int field = 5; field < 22 && rest >> skip; ++field) {
  }
  rest >> f.start_ticks;
  if (!rest) return std::nullopt;
  return f;
}

}  // namespace

std::optional<uint64_t> process_start_ticks(pid_t pid) {
  auto f = read_stat(pid);
  if (!f) return std::nullopt;
  return f->start_ticks;
}

bool process_alive(pid_t pid, uint64_t start_ticks) {
  auto f = read_stat(pid);
  if (!f || f->state == 'Z' || f->state == 'X') return false;
  return start_ticks == 0 || f->start_ticks == start_ticks;
}

namespace {

// The children the kernel lists for each thread of `pid`
// (/proc/PID/task/TID/children, Linux 3.5+ with CONFIG_PROC_CHILDREN);
// nullopt when this kernel has no such file. A process that is gone has none.
std::optional<std::vector<pid_t>> listed_children(pid_t pid) {
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(task.c_str());
  if (!d) return std::vector<pid_t>{};
  std::vector<pid_t> out;
  bool any_file = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(task + "/" + e->d_name + "/children");
    if (!in) continue;
    any_file = true;
    long c = 0;
    while (in >> c) out.push_back(static_cast<pid_t>(c));
  }
  closedir(d);
  if (!any_file) {
    // Gone meanwhile, or no children files on this kernel: tell them apart.
    if (access(task.c_str(), F_OK) != 0) return std::vector<pid_t>{};
    return std::nullopt;
  }
  return out;
}

// Every process whose parent chain reaches root, from one pass over /proc.
std::vector<pid_t> descendants_by_scan(pid_t root) {
  std::multimap<pid_t, pid_t> children;  // ppid -> pid
  DIR* d = opendir("/proc");
  if (!d) return {};
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (!end || *end || pid <= 0) continue;
    if (auto f = read_stat(static_cast<pid_t>(pid)); f && f->state != 'Z' && f->state != 'X') {
      children.emplace(f->ppid, static_cast<pid_t>(pid));
    }
  }
  closedir(d);
  std::vector<pid_t> out, frontier{root};
  while (!frontier.empty()) {
    pid_t p = frontier.back();
    frontier.pop_back();
    auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) {
      out.push_back(it->second);
      frontier.push_back(it->second);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

// The kernel's children lists cost a few reads per descendant; a pass over
// /proc reads every process on the host (what it falls back to).
std::vector<pid_t> process_descendants(pid_t root) {
  std::vector<pid_t> out, frontier{root};
  while (!frontier.empty()) {
    pid_t p = frontier.back();
    frontier.pop_back();
    auto kids = listed_children(p);
    if (!kids) return descendants_by_scan(root);
    for (pid_t k : *kids) {
      auto f = read_stat(k);
      if (!f || f->state == 'Z' || f->state == 'X') continue;  // as the scan: live processes only
      out.push_back(k);
      frontier.push_back(k);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

int send_signal(int pidfd, pid_t pid, int sig) {
#ifdef SYS_pidfd_send_signal
  if (pidfd >= 0) return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
#endif
  return ::kill(pid, sig);
}

bool wait_pidfd(int pidfd, int timeout_ms) {
  pollfd p{pidfd, POLLIN, 0};
  for (;;) {
    int rc = poll(&p, 1, timeout_ms);
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace drover::agent
