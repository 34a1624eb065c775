#include "config/lexer.hpp"

#include "common/strings.hpp"

namespace drover::config {
namespace {

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

// A logical line's text (comments, escapes and continuation backslashes
// removed) and where each of its characters came from, as runs: the
// characters from `at` on come from `line`, columns `column`, `column + 1`,
// ... up to the next run. A run with column 0 is the one space that stands
// for a continuation backslash (no column of its own).
struct Run {
  std::size_t at;
  int line;
  int column;
};

struct Logical {
  std::string text;
  std::vector<Run> runs;

  void clear() {
    text.clear();
    runs.clear();
  }
  void start_run(int line, int column) {
    if (!runs.empty() && runs.back().at == text.size()) runs.pop_back();  // an empty run
    runs.push_back({text.size(), line, column});
  }
  // Drops characters from the end, and the runs left with none.
  void truncate(std::size_t size) {
    text.resize(size);
    while (!runs.empty() && runs.back().at >= size) runs.pop_back();
  }
  const Run& run_of(std::size_t pos) const {
    for (std::size_t i = runs.size(); i-- > 1;) {
      if (runs[i].at <= pos) return runs[i];
    }
    return runs.front();
  }
  int line_of(std::size_t pos) const { return run_of(pos).line; }
  int column_of(std::size_t pos) const {
    const Run& r = run_of(pos);
    return r.column == 0 ? 0 : r.column + static_cast<int>(pos - r.at);
  }
};

// Where a physical line's comment starts (its size when it has none): the
// first '#' outside quotes that is not written "\#".
std::size_t comment_at(std::string_view line) {
  bool in_quote = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\\' && i + 1 < line.size() && line[i + 1] == '#') {
      ++i;
      continue;
    }
    if (c == '"') in_quote = !in_quote;
    if (c == '#' && !in_quote) return i;
  }
  return line.size();
}

// Appends one physical line (comment removed) to `out`. Returns true when the
// line ends in a continuation backslash (which is dropped).
bool append_physical(std::string_view line, int line_no, Logical& out) {
  std::size_t first = out.text.size();
  const std::size_t cut = comment_at(line);
  out.start_run(line_no, 1);
  for (std::size_t i = 0; i < cut; ++i) {
    if (line[i] == '\\' && i + 1 < cut && line[i + 1] == '#') {
      out.start_run(line_no, static_cast<int>(i) + 2);  // the '#' stands where it was written
      out.text += '#';
      out.start_run(line_no, static_cast<int>(i) + 3);
      ++i;
      continue;
    }
    out.text += line[i];
  }
  std::size_t end = out.text.size();
  while (end > first && is_space(out.text[end - 1])) --end;
  bool more = end > first && out.text[end - 1] == '\\';
  if (more) --end;
  out.truncate(end);
  if (more) {
    out.start_run(line_no, 0);
    out.text += ' ';  // keeps words on either side apart
  }
  return more;
}

class WordReader {
 public:
  WordReader(const Logical& line, std::string_view file, Diagnostics& diags)
      : line_(line), text_(line.text), file_(file), diags_(diags) {}

  std::vector<Word> read_all() {
    std::vector<Word> words;
    for (;;) {
      while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
      if (pos_ >= text_.size()) break;
      words.push_back(read_word());
    }
    return words;
  }

 private:
  std::size_t skip_blanks(std::size_t pos) const {
    while (pos < text_.size() && is_space(text_[pos])) ++pos;
    return pos;
  }

  SourceLoc loc_of(std::size_t pos) const { return SourceLoc{std::string(file_), line_.line_of(pos), line_.column_of(pos)}; }

  Word read_word() {
    Word w;
    w.key_loc = loc_of(pos_);
    std::size_t start = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_]) && text_[pos_] != '=') ++pos_;
    w.key.assign(text_, start, pos_ - start);
    // Slurm allows blanks around the '=' ("KillWait = 30", "PriorityWeightAge= 1000"): a key followed by
    // blanks and '=' takes the value after it, and blanks after an '=' lead to the value when one follows.
    std::size_t eq = skip_blanks(pos_);
    if (!w.key.empty() && eq < text_.size() && text_[eq] == '=') pos_ = eq;
    if (pos_ < text_.size() && text_[pos_] == '=') {
      w.has_value = true;
      ++pos_;
      bool spaced = false;
      if (std::size_t value = skip_blanks(pos_); value > pos_ && value < text_.size()) {
        pos_ = value;
        spaced = true;
      }
      if (pos_ < text_.size() && line_.column_of(pos_) > 0) {
        w.value_loc = loc_of(pos_);
      } else {  // just after the '='
        w.value_loc = SourceLoc{std::string(file_), line_.line_of(pos_ - 1), line_.column_of(pos_ - 1) + 1};
      }
      const std::size_t value_start = pos_;
      read_value(w);
      if (spaced && text_[value_start] != '"' && w.value.find('=') != std::string::npos) {
        diags_.add(Severity::kWarning, "spaced-value", w.value_loc, w.key,
                   "the value of " + w.key + " is \"" + w.value + "\": a blank after '=' makes the next word the value (Slurm reads it so too)",
                   "write " + w.key + "=VALUE, or remove " + w.key + " if it should be empty");
      }
    }
    return w;
  }

  // A value runs to the next unquoted whitespace; quotes group and are removed.
  void read_value(Word& w) {
    bool in_quote = false;
    std::size_t quote_at = 0;
    std::size_t piece = pos_;  // start of the text not yet copied
    for (; pos_ < text_.size(); ++pos_) {
      char c = text_[pos_];
      if (!in_quote && is_space(c)) break;
      if (c == '"') {
        w.value.append(text_, piece, pos_ - piece);
        piece = pos_ + 1;
        in_quote = !in_quote;
        quote_at = pos_;
      }
    }
    w.value.append(text_, piece, pos_ - piece);
    if (in_quote) {
      diags_.add(Severity::kError, "bad-syntax", loc_of(quote_at), w.key,
                 "unterminated quote in the value of " + w.key,
                 "close the quote with \" before the end of the line");
    }
  }

  const Logical& line_;
  const std::string& text_;
  std::string_view file_;
  Diagnostics& diags_;
  std::size_t pos_ = 0;
};

// Whether a physical line ends in a continuation backslash once its comment
// and trailing whitespace are removed (append_physical's rules, nothing kept).
bool continues(std::string_view line) {
  std::size_t end = comment_at(line);
  while (end > 0 && is_space(line[end - 1])) --end;
  return end > 0 && line[end - 1] == '\\';
}

// Whether a physical line starts a logical line of one of `kinds`:
// optional whitespace, the kind in any case, then '=' (blanks before it allowed).
bool starts_kind(std::string_view line, std::span<const std::string_view> kinds) {
  std::size_t i = 0;
  while (i < line.size() && is_space(line[i])) ++i;
  std::string_view rest = line.substr(i);
  for (std::string_view k : kinds) {
    if (rest.size() <= k.size() || !iequals(rest.substr(0, k.size()), k)) continue;
    std::size_t eq = k.size();
    while (eq < rest.size() && is_space(rest[eq])) ++eq;  // "NodeName = n1", as Slurm allows
    if (eq < rest.size() && rest[eq] == '=') return true;
  }
  return false;
}

}  // namespace

std::vector<LogicalLine> lex_config(std::string_view text, std::string_view file, Diagnostics& diags,
                                    std::span<const std::string_view> skip_kinds) {
  std::vector<LogicalLine> out;
  auto lines = physical_lines(text);
  Logical logical;
  logical.text.reserve(256);
  int start_line = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (logical.text.empty() && !skip_kinds.empty() && starts_kind(lines[i], skip_kinds)) {
      while (i + 1 < lines.size() && continues(lines[i])) ++i;
      continue;
    }
    if (logical.text.empty()) start_line = static_cast<int>(i) + 1;
    bool more = append_physical(lines[i], static_cast<int>(i) + 1, logical);
    if (logical.text.size() > kMaxLogicalLine) {
      diags.add(Severity::kError, "bad-syntax", SourceLoc{std::string(file), start_line, 1}, "",
                "line is longer than " + std::to_string(kMaxLogicalLine) + " characters; it was ignored",
                "split it into several lines");
      logical.clear();
      continue;
    }
    if (more && i + 1 < lines.size()) continue;
    WordReader reader(logical, file, diags);
    auto words = reader.read_all();
    if (!words.empty()) out.push_back(LogicalLine{words.front().key_loc, std::move(words)});
    logical.clear();
  }
  return out;
}

}  // namespace drover::config
