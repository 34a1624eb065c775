// The daemons' way of stopping: SIGTERM and SIGINT are blocked in every
// thread (call this before starting any) and taken by sigwait on the set
// returned; SIGPIPE is ignored (a peer that went away is an error return).
// SIGHUP and SIGUSR2 are in the set too, which the daemons take as Slurm's
// take them (reread slurm.conf; reopen the log file for logrotate) instead
// of dying of them.
#pragma once

#include <signal.h>

#include <functional>

namespace drover {

sigset_t block_stop_signals();

// Waits on `set` until SIGTERM or SIGINT, which it returns; SIGHUP and
// SIGUSR2 meanwhile go to `other` (may be empty: then they are ignored).
int wait_for_stop(const sigset_t& set, const std::function<void(int)>& other);

}  // namespace drover
