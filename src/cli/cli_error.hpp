// What a Slurm-compatible command prints and returns when it refuses its
// input. Slurm's scripts and wrappers match both the text and the exit
// status, so each failure carries the exact stderr lines and the status.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"

namespace drover::cli {

// Exit statuses Slurm's commands use: 1 for most errors (SLURM_EXIT_ERROR's
// default), 255 where Slurm calls exit(-1) (option values it cannot parse,
// getopt errors in sbatch/srun/salloc).
inline constexpr int kExitError = 1;
inline constexpr int kExitBadOption = 255;

struct CliError {
  std::string text;           // complete stderr text, newline-terminated lines
  int exit_code = kExitError;
};

// Builds "<program>: error: <message>\n".
inline CliError cli_error(std::string_view program, std::string_view message, int exit_code = kExitError) {
  std::string text(program);
  text += ": error: ";
  text += message;
  text += '\n';
  return CliError{std::move(text), exit_code};
}

// The version line Slurm tools print for --version/-V; PRRTE and Open MPI
// parse the text after "slurm " as major.minor.
inline constexpr const char* kSlurmVersionLine = "slurm 22.05.8";

// What a command prints and returns.
struct CommandOutput {
  std::string out;  // stdout
  std::string err;  // stderr (warnings such as an invalid format letter)
  int exit_code = 0;
};

// The common answer to -V/--version (Slurm's version line) and --help/--usage
// (`usage`); nullopt when neither was asked for.
std::optional<CommandOutput> version_or_usage(bool version, bool help, std::string_view usage);

// A comma-separated list without empty items ("a,,b" -> {"a", "b"}).
std::vector<std::string> comma_list(std::string_view s);

// Result of a command-line step: a value, or the refusal to print.
template <class T>
using CliResult = Result<T, CliError>;

// -i/--iterate N of squeue and sinfo: whole seconds, 1 to 86400.
CliResult<int> parse_iterate(std::string_view program, std::string_view value);

// -w/--nodelist of squeue and -N/--nodelist of sacct: the hosts of a range
// expression ("Invalid node list: ..." when it does not expand).
CliResult<std::vector<std::string>> parse_node_list(std::string_view program, std::string_view value);

}  // namespace drover::cli
