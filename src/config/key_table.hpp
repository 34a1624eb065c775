// Configuration keys declared as data. One KeyTable per kind of line
// (slurm.conf globals, NodeName, PartitionName, gres.conf, qos.conf,
// SchedulerParameters items) says, for every key Drover knows: its canonical
// spelling and aliases, what values it takes, how to store a value into the
// model, how to print the effective value, and one line of documentation.
// The same table drives parsing, defaults (a default-constructed model entity
// printed through the table), range checks, `drover config show` and the
// generated docs/config-reference.md.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.hpp"
#include "common/result.hpp"

namespace drover::config {

// What a value parser may use beyond the text: where the value is, and a sink
// for warnings about a value that is accepted anyway (e.g. an unknown
// SchedulerParameters item).
struct ValueContext {
  Diagnostics& diags;
  SourceLoc value_loc;
  std::string key;  // canonical key name
};

template <class T>
struct KeyDef {
  std::string name;                  // canonical spelling, e.g. "RealMemory"
  std::vector<std::string> aliases;  // other accepted spellings, e.g. "Feature"
  std::string values;                // what it takes, for docs and errors: "integer 1..65535"
  std::string doc;                   // one sentence: what Drover does with it
  // Stores `text` into `target`; on failure the Error says what was expected.
  std::function<Status(T& target, std::string_view text, ValueContext& ctx)> parse;
  // The effective value in config-file syntax ("" when unset).
  std::function<std::string(const T& target)> show;
  std::string default_text;          // documented default when show(T{}) would mislead
  bool repeatable = false;           // may appear several times without a warning
};

// A key Slurm documents that Drover accepts without acting on it.
struct PassiveKey {
  std::string name;
  std::string note;  // why / what Drover does instead (may be empty)
};

// PassiveKeys from a plain list of names.
template <std::size_t N>
std::vector<PassiveKey> passive_keys(const char* const (&names)[N]) {
  std::vector<PassiveKey> out;
  for (const char* n : names) out.push_back(PassiveKey{n, {}});
  return out;
}

template <class T>
class KeyTable {
 public:
  KeyTable(std::string kind, std::vector<KeyDef<T>> keys, std::vector<PassiveKey> passive = {})
      : kind_(std::move(kind)), keys_(std::move(keys)), passive_(std::move(passive)) {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      index_[lower(keys_[i].name)] = i;
      for (const auto& a : keys_[i].aliases) index_[lower(a)] = i;
    }
    for (std::size_t i = 0; i < passive_.size(); ++i) passive_index_[lower(passive_[i].name)] = i;
    for (const auto& k : keys_) {
      spellings_.push_back(k.name);
      spellings_.insert(spellings_.end(), k.aliases.begin(), k.aliases.end());
    }
    for (const auto& p : passive_) spellings_.push_back(p.name);
  }

  const std::string& kind() const { return kind_; }
  const std::vector<KeyDef<T>>& keys() const { return keys_; }
  const std::vector<PassiveKey>& passive() const { return passive_; }

  // Case-insensitive lookup of a key or alias.
  const KeyDef<T>* find(std::string_view key) const {
    auto it = index_.find(lower(key));
    return it == index_.end() ? nullptr : &keys_[it->second];
  }
  const PassiveKey* find_passive(std::string_view key) const {
    auto it = passive_index_.find(lower(key));
    return it == passive_index_.end() ? nullptr : &passive_[it->second];
  }
  // Every spelling this table accepts (for "did you mean").
  const std::vector<std::string>& spellings() const { return spellings_; }
  std::string default_of(const KeyDef<T>& def) const {
    if (!def.default_text.empty()) return def.default_text;
    return def.show(T{});
  }

 private:
  static std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;
  }

  std::string kind_;
  std::vector<KeyDef<T>> keys_;
  std::vector<PassiveKey> passive_;
  std::map<std::string, std::size_t> index_;
  std::map<std::string, std::size_t> passive_index_;
  std::vector<std::string> spellings_;
};

}  // namespace drover::config
