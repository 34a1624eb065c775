// Running an administrator's program (slurm.conf's Prolog and Epilog on the
// agents, MailProg on the controller): in its own session, stdin from
// /dev/null, with exactly the environment given (Slurm sets no PATH for
// them), its stdout and stderr kept for the log, ended with its process
// group when it outlives its time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace drover {

struct ScriptRun {
  bool started = false;       // false: it could not be run (error says why)
  int exit_code = 0;
  int signal = 0;             // it was killed by this signal
  bool timed_out = false;     // killed (SIGKILL) when its time ran out
  std::string output;         // stdout and stderr together, the first 4 KiB
  std::string error;
  bool ok() const { return started && !timed_out && exit_code == 0 && signal == 0; }
  // "exit 3", "signal 9", "timed out and was killed", or the error: for messages.
  std::string describe() const;
  // "; output: a|b" (its output trimmed, on one line with newlines as '|',
  // cut to `max` characters and "..."), or "" when it printed nothing: for logs.
  std::string output_suffix(std::size_t max = std::string::npos) const;
};

struct ScriptOptions {
  std::vector<std::string> argv;  // argv[1..]; argv[0] is the program
  std::vector<std::string> env;   // NAME=value, exactly these
  int64_t timeout_s = 0;          // 0: wait as long as it runs
  bool keep_output = true;        // false: stdout and stderr go to /dev/null
  std::string cwd = "/";
};

// Runs `program` and waits for it. Safe to call from any thread of a
// multi-threaded daemon (posix_spawn; waits for this child only).
ScriptRun run_script(const std::string& program, const ScriptOptions& opts);

// What slurm.conf's Prolog=/Epilog= name: one program, or a glob(7) pattern
// ("/etc/slurm/epilog.d/*") whose matches run one after another in name
// order. A pattern that matches nothing names no program.
std::vector<std::string> script_programs(const std::string& spec);

}  // namespace drover
