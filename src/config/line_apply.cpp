#include "config/line_apply.hpp"

#include <algorithm>

namespace drover::config {

void PassiveSeen::add(const std::string& name, const SourceLoc& loc) {
  for (const auto& [k, l] : keys) {
    if (k == name) return;
  }
  keys.emplace_back(name, loc);
}

void report_bad_value(Diagnostics& diags, const Word& w, const std::string& key, const std::string& expected) {
  diags.add(Severity::kError, "bad-value", w.value_loc, key,
            "invalid value \"" + w.value + "\" for " + key + ": " + expected);
}

std::optional<std::string> nearest_key(const std::string& word, const std::vector<std::string>& spellings) {
  // A guess for a very long word is never useful. Candidates whose length
  // differs more than nearest() would accept are dropped first (it is costly).
  if (word.size() > 64) return std::nullopt;
  std::size_t slack = std::max<std::size_t>(2, word.size() / 3);
  std::vector<std::string> close;
  for (const auto& s : spellings) {
    std::size_t diff = s.size() > word.size() ? s.size() - word.size() : word.size() - s.size();
    if (diff <= slack) close.push_back(s);
  }
  return nearest(word, close);
}

void report_unknown_key(Diagnostics& diags, const Word& w, const std::string& where,
                        const std::vector<std::string>& spellings) {
  auto guess = nearest_key(w.key, spellings);
  std::string shown = w.key.size() <= 64 ? w.key : w.key.substr(0, 64) + "...";
  std::string msg = "unknown key \"" + shown + "\" " + where + " (ignored)";
  if (guess) msg += "; did you mean " + *guess + "?";
  diags.add(Severity::kWarning, "unknown-key", w.key_loc, w.key, msg,
            guess ? "write " + *guess + "=..., or remove the key"
                  : "remove the key; `drover config reference` lists every key Drover reads");
}

void report_wrong_section(Diagnostics& diags, const Word& w, const std::string& where, const OtherSection& other) {
  diags.add(Severity::kWarning, "key-wrong-section", w.key_loc, w.key,
            w.key + " is " + other.line_kind + "; " + where + " it has no effect", other.fix);
}

void report_syntax(Diagnostics& diags, const Word& w) {
  diags.add(Severity::kError, "bad-syntax", w.key_loc, w.key,
            "expected Key=Value, found \"" + w.key + "\" (ignored)",
            "a setting is written Key=Value; remove the word or give it a key");
}

void report_passive(Diagnostics& diags, const PassiveSeen& seen) {
  if (seen.keys.empty()) return;
  std::string names;
  for (const auto& [k, l] : seen.keys) names += (names.empty() ? "" : ", ") + k;
  diags.add(Severity::kInfo, "key-no-effect", seen.keys.front().second, seen.keys.front().first,
            "accepted, no effect in Drover: " + names);
}

}  // namespace drover::config
