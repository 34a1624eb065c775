// Batch scripts: the checks sbatch makes on a script and the extraction of
// its "#SBATCH" directives.
//
// Directive rules (as Slurm 22.05's sbatch, checked against it):
//  - only lines that start with "#SBATCH" in column 1 are directives (case
//    matters; "#SBATCH--nice=5" and "#SBATCH<TAB>-J x" count);
//  - processing stops at the first line that is neither blank nor a comment
//    (a comment may be indented); "#SBATCH" lines after it are ignored;
//  - a directive's text is split into words like a shell would, simply:
//    whitespace separates words, '...' and "..." quote (and may be glued to
//    other text: "x y"z is one word), a backslash escapes \ " and ', and an
//    unquoted '#' ends the line — so "#SBATCH --gres=gpu:8 # 8 GPUs" is
//    exactly "--gres=gpu:8".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_error.hpp"

namespace drover::cli {

struct ScriptDirective {
  int line = 0;                    // 1-based line number in the script
  std::vector<std::string> words;  // the directive's words, quotes removed
};

// Slurm's refusals of a script, worded as sbatch words them (exit status 1):
// empty script, no "#!" first line, DOS line breaks.
CliResult<bool> check_batch_script(std::string_view script, std::string_view program = "sbatch");

// Directives in order; `prefix` is "#SBATCH" (other prefixes, e.g. "#PBS",
// are not interpreted by Drover).
std::vector<ScriptDirective> extract_directives(std::string_view script, std::string_view prefix = "#SBATCH");

// Splits one directive's text into words by the rules above.
std::vector<std::string> split_directive_words(std::string_view text);

// The script sbatch builds for --wrap="<command>".
std::string wrap_script(std::string_view command);

}  // namespace drover::cli
