// A daemon's log file and pid file, as Slurm's keep theirs
// (SlurmctldLogFile, SlurmdLogFile, SlurmctldPidFile, SlurmdPidFile):
// the log lines go where stderr goes, so the log file replaces stderr
// (appended to, created 0640), and `logrotate` has the daemon reopen it
// with SIGUSR2. Without a log file the lines stay on stderr.
#pragma once

#include <string>
#include <string_view>

#include "common/result.hpp"

namespace drover {

// A path of SlurmdLogFile/SlurmdPidFile with `%n` the node's name and `%h`
// this host's short name (`%%` a percent sign).
std::string expand_daemon_path(std::string_view pattern, std::string_view node);

// Points stdout and stderr at `path` (appended, created 0640 and its
// directory with it if missing). The error names the path and why.
Status log_to_file(const std::string& path);

// The stderr a daemon was started with (a terminal, systemd's journal),
// kept before log_to_file replaces it: a failure to start is said on
// stderr, and there too when that is another file.
class StartStderr {
 public:
  StartStderr();
  ~StartStderr();
  StartStderr(const StartStderr&) = delete;
  StartStderr& operator=(const StartStderr&) = delete;
  void say(const std::string& line) const;  // `line` ends with a newline

 private:
  int fd_ = -1;
};

// Writes this process's pid and a newline to `path` (created 0644).
Status write_pid_file(const std::string& path);

}  // namespace drover
