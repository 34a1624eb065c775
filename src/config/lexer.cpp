#include "config/lexer.hpp"

#include <cctype>

namespace drover::config {
namespace {

// One character of a logical line and where it came from.
struct Char {
  char c;
  int line;
  int column;
};

// std::isspace in the "C" locale, without a library call per character.
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::vector<std::string_view> physical_lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t nl = text.find('\n', start);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return out;
}

// Appends one physical line (comment removed) to `out`. Returns true when the
// line ends in a continuation backslash (which is dropped).
bool append_physical(std::string_view line, int line_no, std::vector<Char>& out) {
  bool in_quote = false;
  std::size_t first = out.size();
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    int col = static_cast<int>(i) + 1;
    if (c == '\\' && i + 1 < line.size() && line[i + 1] == '#') {
      out.push_back({'#', line_no, col + 1});
      ++i;
      continue;
    }
    if (c == '"') in_quote = !in_quote;
    if (c == '#' && !in_quote) break;
    out.push_back({c, line_no, col});
  }
  while (out.size() > first && is_space(out.back().c)) out.pop_back();
  if (out.size() > first && out.back().c == '\\') {
    out.pop_back();
    out.push_back({' ', line_no, 0});  // keeps words on either side apart
    return true;
  }
  return false;
}

SourceLoc loc_of(std::string_view file, const Char& ch) { return SourceLoc{std::string(file), ch.line, ch.column}; }

class WordReader {
 public:
  WordReader(const std::vector<Char>& chars, std::string_view file, Diagnostics& diags)
      : chars_(chars), file_(file), diags_(diags) {}

  std::vector<Word> read_all() {
    std::vector<Word> words;
    for (;;) {
      while (pos_ < chars_.size() && is_space(chars_[pos_].c)) ++pos_;
      if (pos_ >= chars_.size()) break;
      words.push_back(read_word());
    }
    return words;
  }

 private:
  Word read_word() {
    Word w;
    w.key_loc = loc_of(file_, chars_[pos_]);
    while (pos_ < chars_.size() && !is_space(chars_[pos_].c) && chars_[pos_].c != '=') {
      w.key += chars_[pos_].c;
      ++pos_;
    }
    if (pos_ < chars_.size() && chars_[pos_].c == '=') {
      w.has_value = true;
      ++pos_;
      w.value_loc = pos_ < chars_.size() && chars_[pos_].column > 0 ? loc_of(file_, chars_[pos_])
                                                                     : after(chars_[pos_ - 1]);
      read_value(w);
    }
    return w;
  }

  SourceLoc after(const Char& ch) const { return SourceLoc{std::string(file_), ch.line, ch.column + 1}; }

  // A value runs to the next unquoted whitespace; quotes group and are removed.
  void read_value(Word& w) {
    bool in_quote = false;
    const Char* quote_start = nullptr;
    while (pos_ < chars_.size()) {
      const Char& ch = chars_[pos_];
      if (!in_quote && is_space(ch.c)) break;
      ++pos_;
      if (ch.c == '"') {
        in_quote = !in_quote;
        quote_start = &ch;
        continue;
      }
      w.value += ch.c;
    }
    if (in_quote) {
      diags_.add(Severity::kError, "bad-syntax", loc_of(file_, *quote_start), w.key,
                 "unterminated quote in the value of " + w.key,
                 "close the quote with \" before the end of the line");
    }
  }

  const std::vector<Char>& chars_;
  std::string_view file_;
  Diagnostics& diags_;
  std::size_t pos_ = 0;
};

}  // namespace

std::vector<LogicalLine> lex_config(std::string_view text, std::string_view file, Diagnostics& diags) {
  std::vector<LogicalLine> out;
  auto lines = physical_lines(text);
  std::vector<Char> chars;
  chars.reserve(256);
  int start_line = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (chars.empty()) start_line = static_cast<int>(i) + 1;
    bool more = append_physical(lines[i], static_cast<int>(i) + 1, chars);
    if (chars.size() > kMaxLogicalLine) {
      diags.add(Severity::kError, "bad-syntax", SourceLoc{std::string(file), start_line, 1}, "",
                "line is longer than " + std::to_string(kMaxLogicalLine) + " characters; it was ignored",
                "split it into several lines");
      chars.clear();
      continue;
    }
    if (more && i + 1 < lines.size()) continue;
    WordReader reader(chars, file, diags);
    auto words = reader.read_all();
    if (!words.empty()) out.push_back(LogicalLine{words.front().key_loc, std::move(words)});
    chars.clear();
  }
  return out;
}

}  // namespace drover::config
