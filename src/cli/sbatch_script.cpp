#include "cli/sbatch_script.hpp"

#include <fmt/format.h>

#include "common/strings.hpp"

namespace drover::cli {

CliResult<bool> check_batch_script(std::string_view script, std::string_view program) {
  if (script.empty()) return cli_error(program, "Batch script is empty!");
  if (script.substr(0, 2) != "#!") {
    std::string text;
    for (const char* line : {"This does not look like a batch script.  The first",
                             "line must start with #! followed by the path to an interpreter.",
                             "For instance: #!/bin/sh"})
      text += fmt::format("{}: error: {}\n", program, line);
    return CliError{text, kExitError};
  }
  if (script.find("\r\n") != std::string_view::npos) {
    return CliError{fmt::format("{0}: error: Batch script contains DOS line breaks (\\r\\n)\n"
                                "{0}: error: instead of expected UNIX line breaks (\\n).\n",
                                program),
                    kExitError};
  }
  return true;
}

std::vector<std::string> split_directive_words(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool escapable = i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == '"' || text[i + 1] == '\'');
    if (c == '\\' && escapable) {
      word += text[++i];
      in_word = true;
    } else if (quote) {
      if (c == quote) quote = 0; else word += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == '#') {
      break;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

std::vector<ScriptDirective> extract_directives(std::string_view script, std::string_view prefix) {
  std::vector<ScriptDirective> out;
  int line_no = 0;
  for (const auto& line : split(script, '\n')) {
    ++line_no;
    if (std::string_view(line).substr(0, prefix.size()) == prefix) {
      auto words = split_directive_words(std::string_view(line).substr(prefix.size()));
      if (!words.empty()) out.push_back({line_no, std::move(words)});
      continue;
    }
    std::string_view body = trim(line);
    if (body.empty() || body.front() == '#') continue;
    break;  // the first command ends the directives
  }
  return out;
}

std::string wrap_script(std::string_view command) {
  return fmt::format("#!/bin/sh\n# This script was created by sbatch --wrap.\n\n{}\n", command);
}

}  // namespace drover::cli
