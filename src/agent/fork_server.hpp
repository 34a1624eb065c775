// The step daemons' fork server: one small single-threaded process that the
// agent starts once (`drover-stepd --fork-server`) and that forks a step
// daemon for each launch. The agent would otherwise execute drover-stepd at
// every job's start; a fork of a process that is already loaded skips the
// exec, the dynamic loader, the C library's CPU probing (trapped by the
// hypervisor on virtual machines) and the static initialisers.
//
//   auto fs = ForkServer::start({"/path/drover-stepd"});  // the server runs
//   Result<pid_t> pid = (*fs)->spawn(step_dir, log_fd, notify_fd);
//
// The step daemon it forks is the same code as an executed one: a session of
// its own, stdin /dev/null, stdout and stderr the step's log, fd 3 the pipe
// it reports on. It is the server's child, not the agent's: the server reaps
// it, and the agent follows it by pidfd as it follows adopted steps.
//
// On the wire (a SOCK_SEQPACKET pair; the server's end is its fd 3): the
// agent sends the step's spool directory with two descriptors (SCM_RIGHTS),
// the log and the notify pipe; the server answers with the pid (int32), or
// minus the errno of a failed fork. The server exits when the agent's end
// closes; the step daemons it started keep running.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace drover::agent {

class ForkServer {
 public:
  // Starts `command` + "--fork-server" and checks that it answers.
  static Result<std::unique_ptr<ForkServer>> start(const std::vector<std::string>& command);
  ~ForkServer();  // closes the socket, collects the server; step daemons keep running
  ForkServer(const ForkServer&) = delete;
  ForkServer& operator=(const ForkServer&) = delete;

  // Forks a step daemon for `dir`. Thread-safe (one request at a time). An
  // Error when the server is gone or the fork failed. `*sent` says whether
  // the request reached the server: if it did and no pid came back, a daemon
  // may have been forked all the same (the server died or hung just then),
  // so the caller must not start another without finding out.
  Result<pid_t> spawn(const std::string& dir, int log_fd, int notify_fd, bool* sent);
  pid_t pid() const { return pid_; }

 private:
  ForkServer(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  pid_t pid_;
  int fd_;
  std::mutex mu_;
};

// The server's side, run by `drover-stepd --fork-server`: serves requests on
// `fd` until the agent's end closes. `run` is the step daemon's body, called
// in each forked child with the step's directory; its result is the child's
// exit status.
int serve_fork_requests(int fd, int (*run)(const std::string& dir));

}  // namespace drover::agent
