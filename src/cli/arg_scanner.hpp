// A command-line scanner with the grammar of glibc's getopt_long, which every
// Slurm command uses: "--name=value", "--name value", unique abbreviations of
// long names ("--parti=compute"), "-p value", "-pvalue", bundled flags
// ("-Hv"), optional arguments only in the attached form ("--exclusive=user",
// "-I5"), and "--" ending the options. Errors are worded as getopt words them,
// prefixed with the program name, so scripts that match them keep working.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover::cli {

enum class ArgKind {
  kNone,      // a flag: "--hold"; "--hold=3" is an error
  kRequired,  // "--time=5", "--time 5", "-t5", "-t 5"
  kOptional,  // "--exclusive", "--exclusive=user", "-I", "-I5" (never the next word)
};

// One accepted option. Several specs may share an id (aliases such as
// --cpu-bind and --cpu_bind); an abbreviation matching only aliases of one id
// is not ambiguous.
struct OptionSpec {
  int id = 0;                  // the caller's identifier, returned in ScannedOption
  std::string_view long_name;  // without the leading "--"; empty when there is none
  char short_name = 0;         // 0 when there is none
  ArgKind arg = ArgKind::kNone;
};

struct ScannedOption {
  int id = 0;
  std::string spelling;              // as the option is named in messages: "--partition" or "-p"
  std::optional<std::string> value;  // absent for flags and omitted optional arguments
};

struct ScanResult {
  std::vector<ScannedOption> options;  // in command-line order
  std::vector<std::string> operands;   // non-option words, in order
};

enum class OperandMode {
  kPermute,          // operands may be mixed with options (squeue, sinfo, sacct)
  kStopAtFirst,      // the first operand and everything after it are operands
                     // (sbatch script + its arguments, srun/salloc command)
};

// Scans `args` (without the program name). On error the message is exactly
// what getopt prints, e.g. "sbatch: unrecognized option '--bogus'"; callers
// add Slurm's second line (see getopt_error_text).
Result<ScanResult> scan_args(const std::vector<std::string>& args, std::span<const OptionSpec> specs,
                             OperandMode mode, std::string_view program);

// The two lines Slurm prints for a scanning error (message plus
// `Try "<program> --help" for more information`), newline-terminated.
std::string getopt_error_text(const Error& error, std::string_view program);

}  // namespace drover::cli
