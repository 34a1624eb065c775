// Processes by pid, through /proc and pidfds: identity (pid + start time, so
// a recycled pid is never mistaken for the old process), the process tree,
// and signalling that is safe against pid reuse.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace drover::agent {

// Field 22 of /proc/PID/stat (clock ticks after boot); nullopt when gone.
std::optional<uint64_t> process_start_ticks(pid_t pid);

// True when `pid` exists, is not a zombie, and (when start_ticks != 0) started
// at that time.
bool process_alive(pid_t pid, uint64_t start_ticks);

// Every live descendant of `root` (children, grandchildren, ...), sorted.
std::vector<pid_t> process_descendants(pid_t root);

// pidfd_open(2); -1 with errno set where the kernel lacks it.
int open_pidfd(pid_t pid);
// pidfd_send_signal(2); falls back to kill(2) when pidfd < 0.
int send_signal(int pidfd, pid_t pid, int sig);

// Waits until `pidfd` is readable (the process exited) or `timeout_ms` passes
// (-1: forever). Returns true when it exited.
bool wait_pidfd(int pidfd, int timeout_ms);

}  // namespace drover::agent
