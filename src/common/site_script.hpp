// Running an administrator's program (slurm.conf's Prolog and Epilog on the
// agents, MailProg on the controller): in its own session, stdin from
// /dev/null, with exactly the environment given (Slurm sets no PATH for
// them), its stdout and stderr kept for the log, ended with its process
// group when it outlives its time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace drover {

struct ScriptRun {
  bool started = false;       // false: it could not be run (error says why)
  int exit_code = 0;
  int signal = 0;             // it was killed by this signal
  bool timed_out = false;     // killed (SIGKILL) when its time ran out
  std::string output;         // what it printed (ScriptOptions: which streams, how much)
  std::string error;
  bool ok() const { return started && !timed_out && exit_code == 0 && signal == 0; }
  // "exit 3", "signal 9", "timed out and was killed", or the error: for messages.
  std::string describe() const;
  // "; output: a|b" (its output trimmed, on one line with newlines as '|',
  // cut to `max` characters and "..."), or "" when it printed nothing: for logs.
  std::string output_suffix(std::size_t max = std::string::npos) const;
};

// Who a script runs as, when not as the caller (the caller must be root).
struct ScriptUser {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

// Where a program's stderr goes (ScriptOptions::stderr_fd), besides a
// descriptor of the caller's (a task's TaskEpilog writes to the task's stderr).
inline constexpr int kStderrWithStdout = -2;  // wherever stdout goes
inline constexpr int kStderrDiscard = -1;     // /dev/null

struct ScriptOptions {
  std::vector<std::string> argv;  // argv[1..]; argv[0] is the program
  std::vector<std::string> env;   // NAME=value, exactly these
  int64_t timeout_s = 0;          // 0: wait as long as it runs
  bool keep_output = true;        // stdout kept in ScriptRun::output; false: stdout_fd
  int stdout_fd = -1;             // without keep_output: a descriptor of the caller's for stdout (-1: /dev/null)
  int stderr_fd = kStderrWithStdout;
  std::size_t keep_bytes = 4096;  // how much of the output is kept
  std::string cwd = "/";
  std::optional<ScriptUser> user; // run as this user (the caller is root)
};

// Runs `program` and waits for it. Safe to call from any thread of a
// multi-threaded daemon (posix_spawn; waits for this child only). With
// `user` set it forks instead (a single-threaded caller: the step daemon).
ScriptRun run_script(const std::string& program, const ScriptOptions& opts);

// What slurm.conf's Prolog=/Epilog= name: one program, or a glob(7) pattern
// ("/etc/slurm/epilog.d/*") whose matches run one after another in name
// order. A pattern that matches nothing names no program.
std::vector<std::string> script_programs(const std::string& spec);

}  // namespace drover
