#include "config/line_apply.hpp"

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

void report_unknown_key(Diagnostics& diags, const Word& w, const std::string& where,
                        const std::vector<std::string>& spellings) {
  auto guess = nearest(w.key, spellings);
  std::string msg = "unknown key \"" + w.key + "\" " + where + " (ignored)";
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
            "write the key and its value joined by '=' with no spaces around it");
}

void report_passive(Diagnostics& diags, const PassiveSeen& seen) {
  if (seen.keys.empty()) return;
  std::string names;
  for (const auto& [k, l] : seen.keys) names += (names.empty() ? "" : ", ") + k;
  diags.add(Severity::kInfo, "key-no-effect", seen.keys.front().second, seen.keys.front().first,
            "accepted, no effect in Drover: " + names);
}

}  // namespace drover::config
