// The lexical layer shared by slurm.conf, gres.conf and qos.conf: physical
// lines joined at a trailing backslash, '#' comments (a '#' inside quotes or
// written "\#" is literal), and whitespace-separated Key=Value words whose
// values may be quoted. Every key and value keeps the file:line:column where
// it starts, so diagnostics can point at it. Never throws; a malformed word is
// reported and skipped.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.hpp"

namespace drover::config {

struct Word {
  std::string key;        // text before '=' (or the whole word when there is no '=')
  SourceLoc key_loc;
  bool has_value = false; // the word contained '='
  std::string value;      // after '=', quotes removed
  SourceLoc value_loc;    // the first character after '='
};

struct LogicalLine {
  SourceLoc loc;            // where the line starts
  std::vector<Word> words;  // never empty
};

// Longest logical line accepted (a guard against pathological input).
inline constexpr std::size_t kMaxLogicalLine = 1u << 20;

// Splits `text` into logical lines; blank and comment-only lines are dropped.
// Problems (unterminated quote, over-long line) go to `diags` as errors with
// code "bad-syntax".
//
// `skip_kinds`: logical lines whose first word is one of these keys with a
// value ("NodeName=..." for "NodeName") are dropped unread, continuations
// included, and nothing is reported about them. A reader that needs only the
// global options (the commands) passes the kinds of line it ignores.
std::vector<LogicalLine> lex_config(std::string_view text, std::string_view file, Diagnostics& diags,
                                    std::span<const std::string_view> skip_kinds = {});

}  // namespace drover::config
