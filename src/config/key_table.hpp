// Configuration keys declared as data. One KeyTable per kind of line
// (slurm.conf globals, NodeName, PartitionName, gres.conf, qos.conf,
// SchedulerParameters items) says, for every key Drover knows: its canonical
// spelling and aliases, what values it takes, how to store a value into the
// model, how to print the effective value, and one line of documentation.
// The same table drives parsing, defaults (a default-constructed model entity
// printed through the table), range checks, `drover config show` and the
// generated docs/config-reference.md.
#pragma once

#include <algorithm>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.hpp"
#include "common/result.hpp"
#include "common/strings.hpp"

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

// A key Slurm documents that the configuration model does not act on: kept
// as written (ClusterConfig::passive_values). Most have no effect in Drover;
// those with `daemons` set are read by the controller or the agents.
struct PassiveKey {
  std::string name;
  std::string note;     // why / what Drover does instead (may be empty)
  std::string daemons;  // non-empty: what the controller or the agents do with it
};

// PassiveKeys from a plain list of names.
template <std::size_t N>
std::vector<PassiveKey> passive_keys(const char* const (&names)[N]) {
  std::vector<PassiveKey> out;
  for (const char* n : names) out.push_back(PassiveKey{n, {}, {}});
  return out;
}

// A table's keys, moved into place (a braced list would copy every KeyDef,
// its strings and functions, once more).
template <class T, class... K>
std::vector<KeyDef<T>> key_defs(K&&... keys) {
  std::vector<KeyDef<T>> out;
  out.reserve(sizeof...(keys));
  (out.push_back(std::forward<K>(keys)), ...);
  return out;
}

template <class T>
class KeyTable {
 public:
  KeyTable(std::string kind, std::vector<KeyDef<T>> keys, std::vector<PassiveKey> passive = {})
      : kind_(std::move(kind)), keys_(std::move(keys)), passive_(std::move(passive)) {
    for (std::size_t i = 0; i < keys_.size(); ++i) {
      index_.push_back({keys_[i].name, i});
      for (const auto& a : keys_[i].aliases) index_.push_back({a, i});
    }
    for (std::size_t i = 0; i < passive_.size(); ++i) passive_index_.push_back({passive_[i].name, i});
    for (auto* index : {&index_, &passive_index_}) {
      std::stable_sort(index->begin(), index->end(), [](const Entry& a, const Entry& b) { return iless(a.name, b.name); });
    }
  }

  // The index points into the table's own strings.
  KeyTable(const KeyTable&) = delete;
  KeyTable& operator=(const KeyTable&) = delete;

  const std::string& kind() const { return kind_; }
  const std::vector<KeyDef<T>>& keys() const { return keys_; }
  const std::vector<PassiveKey>& passive() const { return passive_; }

  // Case-insensitive lookup of a key or alias.
  const KeyDef<T>* find(std::string_view key) const {
    const std::size_t* i = lookup(index_, key);
    return i ? &keys_[*i] : nullptr;
  }
  const PassiveKey* find_passive(std::string_view key) const {
    const std::size_t* i = lookup(passive_index_, key);
    return i ? &passive_[*i] : nullptr;
  }
  // Every spelling this table accepts (for "did you mean"); listed the first
  // time it is asked for, which only a mistake in a file does.
  const std::vector<std::string>& spellings() const {
    std::call_once(spellings_once_, [this] {
      for (const auto& k : keys_) {
        spellings_.push_back(k.name);
        spellings_.insert(spellings_.end(), k.aliases.begin(), k.aliases.end());
      }
      for (const auto& p : passive_) spellings_.push_back(p.name);
    });
    return spellings_;
  }
  std::string default_of(const KeyDef<T>& def) const {
    if (!def.default_text.empty()) return def.default_text;
    return def.show(T{});
  }

 private:
  // A spelling (pointing into keys_ or passive_, which never change) and
  // what it names; sorted without regard to case.
  struct Entry {
    std::string_view name;
    std::size_t index;
  };
  static char lower(char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); }
  static bool iless(std::string_view a, std::string_view b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                        [](char x, char y) { return lower(x) < lower(y); });
  }
  // The last entry spelt `key` in any case (a later key overrides an earlier one).
  static const std::size_t* lookup(const std::vector<Entry>& index, std::string_view key) {
    auto it = std::upper_bound(index.begin(), index.end(), key,
                               [](std::string_view k, const Entry& e) { return iless(k, e.name); });
    if (it == index.begin() || !iequals((it - 1)->name, key)) return nullptr;
    return &(it - 1)->index;
  }

  std::string kind_;
  std::vector<KeyDef<T>> keys_;
  std::vector<PassiveKey> passive_;
  std::vector<Entry> index_;
  std::vector<Entry> passive_index_;
  mutable std::once_flag spellings_once_;
  mutable std::vector<std::string> spellings_;
};

}  // namespace drover::config
