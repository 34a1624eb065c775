// Option scanning shared by the display commands (squeue, sinfo, sacct,
// sprio, sshare): getopt grammar with operands anywhere, each option applied
// in order, and a stray operand refused.
#pragma once

#include <fmt/format.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/arg_scanner.hpp"
#include "cli/cli_error.hpp"

namespace drover::cli {

// -o/-O beside -l, in Slurm 22.05's words and status (squeue, sinfo, sacct).
inline CliError format_and_long_refusal(std::string_view program) {
  return CliError{fmt::format("{}: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove "
                              "one and retry.\n",
                              program),
                  kExitError};
}

// `apply(options, scanned)` returns CliResult<bool>. Getopt errors exit 1, as
// these commands do. Operands are refused unless `operands` takes them.
template <class Options, class Apply>
CliResult<Options> scan_display_options(const std::vector<std::string>& args, std::span<const OptionSpec> specs,
                                        std::string_view program, Options options, Apply apply,
                                        std::vector<std::string>* operands = nullptr) {
  auto scan = scan_args(args, specs, OperandMode::kPermute, program);
  if (!scan) return CliError{getopt_error_text(scan.error(), program), kExitError};
  for (const auto& opt : scan->options) {
    CliResult<bool> r = apply(options, opt);
    if (!r) return r.error();
  }
  if (operands) {
    *operands = std::move(scan->operands);
  } else if (!scan->operands.empty()) {
    return cli_error(program, fmt::format("unrecognized argument \"{}\"; options start with '-'", scan->operands[0]));
  }
  return options;
}

}  // namespace drover::cli
