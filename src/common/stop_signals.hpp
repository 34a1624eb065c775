// The daemons' way of stopping: SIGTERM and SIGINT are blocked in every
// thread (call this before starting any) and taken by sigwait on the set
// returned; SIGPIPE is ignored (a peer that went away is an error return).
#pragma once

#include <signal.h>

namespace drover {

sigset_t block_stop_signals();

}  // namespace drover
