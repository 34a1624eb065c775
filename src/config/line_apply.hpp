// Applying the words of one config line to a model entity through its key
// table, with the diagnostics every parser reports the same way: bad values,
// unknown keys (with the nearest known key), keys of another kind of line,
// keys given twice, keys accepted with no effect.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/diagnostic.hpp"
#include "common/strings.hpp"
#include "config/key_table.hpp"
#include "config/lexer.hpp"

namespace drover::config {

// A key another kind of line knows: "MaxNodes" found on a global line.
struct OtherSection {
  std::string line_kind;  // "a PartitionName option"
  std::string fix;        // "move it onto the PartitionName line it should limit, or delete it"
};

// Collects keys accepted without effect, to report once per file.
struct PassiveSeen {
  std::vector<std::pair<std::string, SourceLoc>> keys;  // canonical name, first place seen
  void add(const std::string& name, const SourceLoc& loc);
};

// The known spelling closest to `word` (nearest() with its cheap pre-filter).
std::optional<std::string> nearest_key(const std::string& word, const std::vector<std::string>& spellings);

void report_bad_value(Diagnostics& diags, const Word& w, const std::string& key, const std::string& expected);
void report_unknown_key(Diagnostics& diags, const Word& w, const std::string& where,
                        const std::vector<std::string>& spellings);
void report_wrong_section(Diagnostics& diags, const Word& w, const std::string& where, const OtherSection& other);
void report_syntax(Diagnostics& diags, const Word& w);
// One info per file listing the keys in `seen` (no finding when empty).
void report_passive(Diagnostics& diags, const PassiveSeen& seen);

// Lexes `text`, hands each line to `handle(line, passive)`, then reports the
// file's keys accepted with no effect.
template <class Handle>
void for_each_line(std::string_view text, std::string_view file, Diagnostics& diags, Handle handle) {
  PassiveSeen passive;
  for (const auto& line : lex_config(text, file, diags)) handle(line, passive);
  report_passive(diags, passive);
}

// Outcome of applying one word.
enum class Applied { kStored, kPassive, kRejected };

// Applies `w` to `target`. `where` names the line kind for messages ("on a
// NodeName line", "in qos.conf"). `seen_on_line` detects a key given twice on
// one line. `other` finds the key in other tables (nullopt: unknown).
template <class T, class OtherFn>
Applied apply_word(const KeyTable<T>& table, T& target, const Word& w, const std::string& where,
                   std::set<std::string>& seen_on_line, Diagnostics& diags, PassiveSeen& passive,
                   OtherFn other, const KeyDef<T>** def_out = nullptr) {
  if (!w.has_value) {
    report_syntax(diags, w);
    return Applied::kRejected;
  }
  const KeyDef<T>* def = table.find(w.key);
  if (!def) {
    if (const auto* p = table.find_passive(w.key)) {
      if (p->daemons.empty()) passive.add(p->name, w.key_loc);  // reported as having no effect
      return Applied::kPassive;
    }
    if (auto o = other(w.key)) {
      report_wrong_section(diags, w, where, *o);
    } else {
      report_unknown_key(diags, w, where, table.spellings());
    }
    return Applied::kRejected;
  }
  if (!seen_on_line.insert(def->name).second && !def->repeatable) {
    diags.add(Severity::kWarning, "duplicate-key", w.key_loc, def->name,
              def->name + " is given twice " + where + "; the last value is used",
              "remove one of them");
  }
  ValueContext ctx{diags, w.value_loc, def->name};
  if (auto st = def->parse(target, w.value, ctx); !st) {
    report_bad_value(diags, w, def->name, st.error().message);
    return Applied::kRejected;
  }
  if (def_out) *def_out = def;
  return Applied::kStored;
}

}  // namespace drover::config
