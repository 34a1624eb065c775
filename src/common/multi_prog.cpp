// srun --multi-prog configuration files (see multi_prog.hpp).
#include "common/multi_prog.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/strings.hpp"

namespace drover {
namespace {

Error line_error(const std::string& why, int line, const std::string& file) {
  std::string msg = why.empty() ? "" : why + "\n";
  return make_error(msg + "Line " + std::to_string(line) + " of configuration file " + file + " invalid");
}

// "0,2-3" -> {0, 2, 3} (and the highest end of a range into `top`); nullopt when unreadable.
std::optional<std::vector<int32_t>> parse_ranks(const std::string& spec, int32_t& top) {
  std::vector<int32_t> out;
  for (const auto& part : split(spec, ',')) {
    auto dash = part.find('-');
    auto lo = parse_int(part.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : parse_int(part.substr(dash + 1));
    if (!lo || !hi || *lo > *hi || *hi > INT32_MAX) return std::nullopt;
    top = std::max(top, static_cast<int32_t>(*hi));
    for (int64_t r = *lo; r <= *hi; ++r) out.push_back(static_cast<int32_t>(r));
  }
  if (out.empty()) return std::nullopt;
  return out;
}

// Splits a record into words: blanks separate them, single quotes keep
// blanks and turn substitution off inside them.
std::optional<std::vector<std::vector<MultiProgLine::Word>>> split_words(const std::string& record) {
  std::vector<std::vector<MultiProgLine::Word>> words;
  std::vector<MultiProgLine::Word> cur;
  bool in_word = false;
  for (size_t i = 0; i < record.size(); ++i) {
    char c = record[i];
    if (c == '\'') {
      auto close = record.find('\'', i + 1);
      if (close == std::string::npos) return std::nullopt;
      cur.push_back({record.substr(i + 1, close - i - 1), true});
      in_word = true;
      i = close;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else {
      if (cur.empty() || cur.back().literal) cur.push_back({"", false});
      cur.back().text += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

std::string substitute(const MultiProgLine::Word& w, int32_t rank, int32_t offset) {
  if (w.literal) return w.text;
  std::string out;
  for (size_t i = 0; i < w.text.size(); ++i) {
    if (w.text[i] == '%' && i + 1 < w.text.size() && (w.text[i + 1] == 't' || w.text[i + 1] == 'o')) {
      out += std::to_string(w.text[i + 1] == 't' ? rank : offset);
      ++i;
    } else {
      out += w.text[i];
    }
  }
  return out;
}

}  // namespace

Result<MultiProg> parse_multi_prog(std::string_view text, const std::string& file) {
  MultiProg mp;
  std::set<int32_t> seen;
  bool star_seen = false;
  auto lines = split(std::string(text), '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const int first_line = static_cast<int>(i) + 1;
    std::string record = lines[i];
    while (!record.empty() && record.back() == '\r') record.pop_back();
    while (!record.empty() && record.back() == '\\' && i + 1 < lines.size()) {
      record.back() = ' ';
      record += lines[++i];
    }
    auto hash = record.find('#');
    if (hash != std::string::npos) record.erase(hash);
    auto words = split_words(record);
    if (!words) return line_error("Unmatched quote", first_line, file);
    if (words->empty()) continue;
    if (star_seen) return line_error("Task range specification with asterisk must be last", first_line, file);
    MultiProgLine l;
    l.line = first_line;
    std::string spec;
    for (const auto& piece : words->front()) spec += piece.text;
    if (words->size() < 2) return line_error("", first_line, file);
    if (spec == "*") {
      l.any = star_seen = true;
    } else {
      auto ranks = parse_ranks(spec, l.range_top);
      if (!ranks) return line_error("Invalid task range specification (" + spec + ")", first_line, file);
      for (int32_t r : *ranks) {
        if (!seen.insert(r).second) {
          return line_error("Duplicate record for task " + std::to_string(r), first_line, file);
        }
      }
      l.ranks = std::move(*ranks);
    }
    l.words.assign(words->begin() + 1, words->end());
    mp.lines.push_back(std::move(l));
  }
  return mp;
}

std::optional<int32_t> multi_prog_tasks(const MultiProg& mp) {
  int32_t top = -1;
  for (const auto& l : mp.lines) top = std::max(top, l.range_top);
  return top < 0 ? std::nullopt : std::optional<int32_t>(top + 1);
}

Status check_multi_prog_ranks(const MultiProg& mp, const std::string& file, int32_t ntasks) {
  std::set<int32_t> named;
  bool any = false;
  for (const auto& l : mp.lines) {
    any = any || l.any;
    if (l.range_top >= ntasks) {
      return line_error("Invalid task id, " + std::to_string(l.range_top) + " >= ntasks", l.line, file);
    }
    named.insert(l.ranks.begin(), l.ranks.end());
  }
  if (any) return {};
  for (int32_t r = 0; r < ntasks; ++r) {
    if (!named.count(r)) {
      return make_error("Configuration file " + file + " invalid, no record for task id " + std::to_string(r));
    }
  }
  return {};
}

Result<std::vector<std::string>> multi_prog_argv(const MultiProg& mp, int32_t rank,
                                                 const std::vector<std::string>& extra) {
  for (const auto& l : mp.lines) {
    int32_t offset = rank;
    if (!l.any) {
      auto it = std::find(l.ranks.begin(), l.ranks.end(), rank);
      if (it == l.ranks.end()) continue;
      offset = static_cast<int32_t>(it - l.ranks.begin());
    }
    std::vector<std::string> argv;
    for (const auto& word : l.words) {
      std::string w;
      for (const auto& piece : word) w += substitute(piece, rank, offset);
      argv.push_back(std::move(w));
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  return make_error("the --multi-prog configuration has no record for task id " + std::to_string(rank));
}

}  // namespace drover
