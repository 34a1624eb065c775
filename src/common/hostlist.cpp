// Host-list parsing and expansion. Slurm's compressions live in
// hostlist_slurm.cpp, ClusterShell's canonical folding in hostlist_fold.cpp.
#include "common/hostlist.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

#include "common/hostlist_internal.hpp"

namespace drover {

namespace hostlist_detail {

bool is_successor(std::string_view prev, std::string_view next) {
  auto strip = [](std::string_view s) {
    while (s.size() > 1 && s[0] == '0') s.remove_prefix(1);
    return s;
  };
  std::string inc(strip(prev));
  std::size_t i = inc.size();
  while (i > 0 && inc[i - 1] == '9') inc[--i] = '0';
  if (i == 0) {
    inc.insert(inc.begin(), '1');
  } else {
    ++inc[i - 1];
  }
  return inc == strip(next);
}

namespace {
std::size_t digit_run(std::string_view s, std::size_t from) {
  std::size_t end = from;
  while (end < s.size() && is_digit(s[end])) ++end;
  return end - from;
}

// Both runs are known to be non-empty.
int compare_runs(std::string_view a, std::string_view b) {
  if (a[0] == '0' || b[0] == '0') {  // compare left-aligned: first difference wins
    std::size_t n = std::min(a.size(), b.size());
    int c = a.substr(0, n).compare(b.substr(0, n));
    if (c != 0) return c < 0 ? -1 : 1;
    return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
  }
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c == 0 ? 0 : (c < 0 ? -1 : 1);
}
}  // namespace

int natural_compare(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t la = digit_run(a, i), lb = digit_run(b, j);
      int c = compare_runs(a.substr(i, la), b.substr(j, lb));
      if (c != 0) return c;
      i += la;
      j += lb;
      continue;
    }
    auto ca = static_cast<unsigned char>(a[i]), cb = static_cast<unsigned char>(b[j]);
    if (ca != cb) return ca < cb ? -1 : 1;
    ++i;
    ++j;
  }
  if (i == a.size()) return j == b.size() ? 0 : -1;
  return 1;
}

std::size_t trailing_digits(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && is_digit(s[s.size() - 1 - n])) ++n;
  return n;
}

}  // namespace hostlist_detail

using hostlist_detail::is_digit;

namespace {

// ---------------------------------------------------------------- parsing --

constexpr std::size_t kMaxDigits = 19;  // every 19-digit number fits in uint64_t

struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  int width = 1;  // numbers are zero-padded to this many digits (the width of "lo")
};

struct Group {
  std::vector<Range> ranges;
  uint64_t count = 0;
};

// One word of a host list: texts[0] group[0] texts[1] ... group[n-1] texts[n].
struct Word {
  std::vector<std::string> texts{std::string()};
  std::vector<Group> groups;
};

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

Result<uint64_t> parse_number(std::string_view digits, std::string_view elem, std::string_view word) {
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit)) {
    return make_error("bad range " + quoted(elem) + " in " + quoted(word) +
                      ": expected a number or a range lo-hi such as 1-4");
  }
  if (digits.size() > kMaxDigits) {
    return make_error("bad range " + quoted(elem) + " in " + quoted(word) + ": number " +
                      quoted(digits) + " is too large (at most 19 digits)");
  }
  uint64_t v = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), v);
  return v;
}

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

Result<Range> parse_range(std::string_view elem, std::string_view word) {
  elem = trim_spaces(elem);
  if (elem.empty()) {
    return make_error("empty range element in " + quoted(word) +
                      ": expected a number or a range lo-hi between the commas");
  }
  auto dash = elem.find('-');
  std::string_view lo_text = trim_spaces(elem.substr(0, dash));
  std::string_view hi_text = dash == std::string_view::npos ? lo_text : trim_spaces(elem.substr(dash + 1));
  auto lo = parse_number(lo_text, elem, word);
  if (!lo) return lo.error();
  auto hi = parse_number(hi_text, elem, word);
  if (!hi) return hi.error();
  if (*hi < *lo) {
    return make_error("bad range " + quoted(elem) + " in " + quoted(word) +
                      ": the end is below the start (write the lower number first)");
  }
  return Range{*lo, *hi, static_cast<int>(lo_text.size())};
}

Result<Group> parse_group(std::string_view inside, std::string_view word) {
  if (trim_spaces(inside).empty()) {
    return make_error("empty brackets in " + quoted(word) + ": expected numbers or ranges such as [1-4,7]");
  }
  Group g;
  std::size_t start = 0;
  while (start <= inside.size()) {
    std::size_t comma = std::min(inside.find(',', start), inside.size());
    auto r = parse_range(inside.substr(start, comma - start), word);
    if (!r) return r.error();
    g.ranges.push_back(*r);
    uint64_t n = r->hi - r->lo;
    g.count = (n == UINT64_MAX || g.count > UINT64_MAX - n - 1) ? UINT64_MAX : g.count + n + 1;
    start = comma + 1;
  }
  return g;
}

Result<Word> parse_word(std::string_view word) {
  Word w;
  std::size_t i = 0;
  while (i < word.size()) {
    char c = word[i];
    if (c == ']') {
      return make_error("unbalanced brackets in " + quoted(word) + ": \"]\" without a \"[\" before it");
    }
    if (c != '[') {
      w.texts.back() += c;
      ++i;
      continue;
    }
    std::size_t close = word.find_first_of("[]", i + 1);
    if (close == std::string_view::npos) {
      return make_error("unbalanced brackets in " + quoted(word) + ": \"[\" is never closed (expected \"]\")");
    }
    if (word[close] == '[') {
      return make_error("unbalanced brackets in " + quoted(word) + ": \"[\" inside another bracket");
    }
    auto g = parse_group(word.substr(i + 1, close - i - 1), word);
    if (!g) return g.error();
    w.groups.push_back(std::move(*g));
    w.texts.emplace_back();
    i = close + 1;
  }
  return w;
}

// Words of an expression: split at separators outside brackets.
std::vector<std::string_view> split_words(std::string_view expr) {
  std::vector<std::string_view> words;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= expr.size(); ++i) {
    if (i < expr.size()) {
      if (expr[i] == '[') ++depth;
      if (expr[i] == ']' && depth > 0) --depth;
      if (depth > 0 || !is_separator(expr[i])) continue;
    }
    if (i > start) words.push_back(expr.substr(start, i - start));
    start = i + 1;
  }
  return words;
}

// -------------------------------------------------------------- expansion --

uint64_t word_count(const Word& w) {
  uint64_t n = 1;
  for (const auto& g : w.groups) {
    if (g.count != 0 && n > UINT64_MAX / g.count) return UINT64_MAX;
    n *= g.count;
  }
  return n;
}

std::string format_number(uint64_t v, int width) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string digits(buf, end);
  if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

std::vector<std::string> group_values(const Group& g) {
  std::vector<std::string> out;
  out.reserve(g.count);
  for (const auto& r : g.ranges) {
    for (uint64_t v = r.lo;; ++v) {
      out.push_back(format_number(v, r.width));
      if (v == r.hi) break;
    }
  }
  return out;
}

// Slurm's order: the last group varies fastest, then the first, second, ...,
// and the second-to-last group varies slowest.
std::vector<std::size_t> slowest_first(std::size_t k) {
  std::vector<std::size_t> order;
  for (std::size_t d = k - 1; d-- > 0;) order.push_back(d);
  order.push_back(k - 1);
  return order;
}

// Appends the names of a word. When `splits` is given, also appends where
// each name's number starts, as Slurm's host list keeps it: at the value of
// the last bracket when the word ends with it ("a0[21-32]" -> "a0" + "21"),
// else at the name's trailing digits.
void expand_word(const Word& w, std::vector<std::string>& out, std::vector<std::size_t>* splits) {
  if (w.groups.empty()) {
    out.push_back(w.texts[0]);
    if (splits) splits->push_back(w.texts[0].size() - hostlist_detail::trailing_digits(w.texts[0]));
    return;
  }
  std::vector<std::vector<std::string>> values;
  for (const auto& g : w.groups) values.push_back(group_values(g));
  std::vector<std::size_t> order = slowest_first(w.groups.size());
  std::vector<std::size_t> pos(w.groups.size(), 0);
  bool ends_with_group = w.texts.back().empty();
  while (true) {
    std::string name = w.texts[0];
    for (std::size_t d = 0; d < pos.size(); ++d) name += values[d][pos[d]] + w.texts[d + 1];
    if (splits) {
      splits->push_back(ends_with_group ? name.size() - values.back()[pos.back()].size()
                                        : name.size() - hostlist_detail::trailing_digits(name));
    }
    out.push_back(std::move(name));
    std::size_t k = order.size();
    while (k > 0 && ++pos[order[k - 1]] == values[order[k - 1]].size()) pos[order[--k]] = 0;
    if (k == 0) return;
  }
}

}  // namespace

Result<std::vector<std::string>> hostlist_detail::expand(std::string_view expr, std::size_t max_hosts,
                                                         std::vector<std::size_t>* splits) {
  std::vector<Word> words;
  uint64_t total = 0;
  for (std::string_view text : split_words(expr)) {
    auto w = parse_word(text);
    if (!w) return w.error();
    uint64_t n = word_count(*w);
    total = (n > UINT64_MAX - total) ? UINT64_MAX : total + n;
    if (total > max_hosts) {
      std::string shown = expr.size() > 200 ? std::string(expr.substr(0, 200)) + "..." : std::string(expr);
      return make_error("host list " + quoted(shown) + " names more than " + std::to_string(max_hosts) +
                        " hosts (the limit)");
    }
    words.push_back(std::move(*w));
  }
  std::vector<std::string> out;
  out.reserve(total);
  if (splits) splits->reserve(total);
  for (const auto& w : words) expand_word(w, out, splits);
  return out;
}


Result<std::vector<std::string>> hostlist_expand(std::string_view expr, std::size_t max_hosts) {
  return hostlist_detail::expand(expr, max_hosts, nullptr);
}

Result<std::string> hostlist_canonical(std::string_view expr) {
  auto hosts = hostlist_expand(expr);
  if (!hosts) return hosts.error();
  return hostlist_compress_sorted(*hosts);
}

}  // namespace drover
