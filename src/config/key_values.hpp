// Value kinds for key tables: a parser that says what it expected, a printer
// for the effective value, and builders that bind a kind to a model field.
// Error texts are part of Drover's stable diagnostics (golden files quote
// them): change them only on purpose.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/duration.hpp"
#include "common/result.hpp"
#include "common/strings.hpp"
#include "common/tres.hpp"
#include "config/key_table.hpp"
#include "config/model.hpp"

namespace drover::config {

// --- parsers: Error::message is the expectation, e.g. "expected YES or NO" ---
Result<int64_t> parse_int_value(std::string_view s, int64_t min, int64_t max, bool unlimited_ok);
Result<double> parse_real_value(std::string_view s, double min, double max);
Result<bool> parse_yes_no(std::string_view s);
// Case-insensitive match; returns the choice's own spelling.
Result<std::string> parse_choice(std::string_view s, const std::vector<std::string>& choices);
Result<Seconds> parse_time_value(std::string_view s);
Result<int64_t> parse_memory_value(std::string_view s);
// Comma list of non-empty names; "ALL" (any case) gives an empty list when all_ok.
Result<std::vector<std::string>> parse_name_list(std::string_view s, bool all_ok);
Result<TresMap> parse_tres_value(std::string_view s);
Result<std::string> parse_text(std::string_view s);  // any non-empty text
// Comma list, each item one of `choices`; returns the choices' spellings.
// `noun` names the items in the error ("flags", "options").
Result<std::vector<std::string>> parse_choice_list(std::string_view s, const std::vector<std::string>& choices,
                                                   const std::string& noun);

// --- printers (config-file syntax) ---
std::string show_int(int64_t v);           // kUnlimited -> "UNLIMITED"
std::string show_time(Seconds s);          // kInfinite -> "INFINITE", else [D-]HH:MM:SS
std::string show_yes_no(bool b);           // "YES" / "NO"
std::string show_real(double d);           // shortest round-trip form

std::string int_range_text(int64_t min, int64_t max, bool unlimited_ok);
std::string choices_text(const std::vector<std::string>& choices);  // "A, B or C"

// --- builders binding a kind to a field of T ---
namespace keys {

// The one way a key is bound to a field: `parse_fn` turns the text into a
// value (or an Error saying what was expected), `show_fn` prints the field.
template <class T, class M, class ParseFn, class ShowFn>
KeyDef<T> bind_field(std::string name, std::string values, std::string doc, M T::*field, ParseFn parse_fn, ShowFn show_fn) {
  KeyDef<T> d;
  d.name = std::move(name);
  d.values = std::move(values);
  d.doc = std::move(doc);
  d.parse = [=](T& t, std::string_view s, ValueContext&) -> Status {
    auto v = parse_fn(s);
    if (!v) return v.error();
    t.*field = static_cast<M>(std::move(*v));
    return {};
  };
  d.show = [=](const T& t) { return show_fn(t.*field); };
  return d;
}

template <class T, class M>
KeyDef<T> integer(std::string name, M T::*field, int64_t min, int64_t max, std::string doc,
                  bool unlimited_ok = false) {
  return bind_field<T>(std::move(name), int_range_text(min, max, unlimited_ok), std::move(doc), field,
              [=](std::string_view s) { return parse_int_value(s, min, max, unlimited_ok); },
              [](const M& v) { return show_int(static_cast<int64_t>(v)); });
}

// An integer a config may leave unset (shown empty then).
template <class T>
KeyDef<T> optional_integer(std::string name, std::optional<int64_t> T::*field, int64_t min, int64_t max,
                           std::string doc, bool unlimited_ok = false) {
  return bind_field<T>(std::move(name), int_range_text(min, max, unlimited_ok), std::move(doc), field,
              [=](std::string_view s) { return parse_int_value(s, min, max, unlimited_ok); },
              [](const std::optional<int64_t>& v) { return v ? show_int(*v) : std::string(); });
}

template <class T>
KeyDef<T> yes_no(std::string name, bool T::*field, std::string doc) {
  return bind_field<T>(std::move(name), "YES or NO", std::move(doc), field, parse_yes_no, show_yes_no);
}

template <class T>
KeyDef<T> text(std::string name, std::string T::*field, std::string doc, std::string values = "text") {
  return bind_field<T>(std::move(name), std::move(values), std::move(doc), field, parse_text,
              [](const std::string& v) { return v; });
}

template <class T>
KeyDef<T> choice(std::string name, std::string T::*field, std::vector<std::string> choices, std::string doc) {
  std::string values = choices_text(choices);
  return bind_field<T>(std::move(name), std::move(values), std::move(doc), field,
              [choices](std::string_view s) { return parse_choice(s, choices); },
              [](const std::string& v) { return v; });
}

inline const char* const kTimeValues = "time: minutes, HH:MM:SS, D-HH:MM:SS or INFINITE";

template <class T>
KeyDef<T> time_limit(std::string name, Seconds T::*field, std::string doc) {
  return bind_field<T>(std::move(name), kTimeValues, std::move(doc), field, parse_time_value, show_time);
}

template <class T>
KeyDef<T> time_limit_opt(std::string name, std::optional<Seconds> T::*field, std::string doc) {
  return bind_field<T>(std::move(name), kTimeValues, std::move(doc), field, parse_time_value,
              [](const std::optional<Seconds>& v) { return v ? show_time(*v) : std::string(); });
}

template <class T, class M>
KeyDef<T> memory_mb(std::string name, M T::*field, std::string doc) {
  return bind_field<T>(std::move(name), "memory in MB, or with a unit: 64G, 1T", std::move(doc), field, parse_memory_value,
              [](const M& v) {
                if constexpr (std::is_same_v<M, std::optional<int64_t>>) {
                  return v ? std::to_string(*v) : std::string();
                } else {
                  return std::to_string(v);
                }
              });
}

template <class T>
KeyDef<T> name_list(std::string name, std::vector<std::string> T::*field, std::string doc, bool all_ok = false) {
  return bind_field<T>(std::move(name), all_ok ? "comma-separated names, or ALL" : "comma-separated names", std::move(doc),
              field, [all_ok](std::string_view s) { return parse_name_list(s, all_ok); },
              [all_ok](const std::vector<std::string>& v) {
                std::string out;
                for (const auto& x : v) out += (out.empty() ? "" : ",") + x;
                return out.empty() && all_ok ? std::string("ALL") : out;
              });
}

// Comma-separated flags, each one of `choices` (stored in the choices' spelling).
template <class T, class M>
KeyDef<T> flag_list(std::string name, M T::*field, std::vector<std::string> choices, std::string doc,
                    std::string noun = "flags") {
  std::string values = "comma-separated: " + choices_text(choices);
  return bind_field<T>(std::move(name), std::move(values), std::move(doc), field,
              [choices, noun](std::string_view s) -> Result<M> {
                auto v = parse_choice_list(s, choices, noun);
                if (!v) return v.error();
                if constexpr (std::is_same_v<M, std::string>) {
                  return join(*v, ",");
                } else {
                  return *v;
                }
              },
              [](const M& v) {
                if constexpr (std::is_same_v<M, std::string>) {
                  return v;
                } else {
                  return join(v, ",");
                }
              });
}

// PreemptMode: a comma list of OFF, CANCEL, REQUEUE, SUSPEND, GANG and
// WITHIN, stored upper case; where `cluster_ok` (a QOS), CLUSTER clears it
// (the cluster's mode applies), as sacctmgr shows an unset one.
template <class T>
KeyDef<T> preempt_mode(std::string T::*field, std::string doc, bool cluster_ok) {
  std::vector<std::string> modes = {"OFF", "CANCEL", "REQUEUE", "SUSPEND", "GANG", "WITHIN"};
  if (cluster_ok) modes.push_back("CLUSTER");
  std::string values = "comma-separated: " + choices_text(modes);
  return bind_field<T>("PreemptMode", std::move(values), std::move(doc), field,
                       [modes](std::string_view s) -> Result<std::string> {
                         auto v = parse_choice_list(s, modes, "modes");
                         if (!v) return v.error();
                         if (v->size() == 1 && v->front() == "CLUSTER") return std::string();
                         return join(*v, ",");
                       },
                       [](const std::string& v) { return v; });
}

// GraceTime: seconds as a plain number (Slurm's unit here), or [D-]HH:MM:SS.
template <class T>
KeyDef<T> grace_time(Seconds T::*field, std::string doc) {
  return bind_field<T>("GraceTime", "seconds, or [D-]HH:MM:SS", std::move(doc), field,
                       [](std::string_view s) -> Result<Seconds> {
                         if (!s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos) {
                           return parse_int_value(s, 0, 365LL * 86400, false);
                         }
                         auto t = parse_time_value(s);
                         if (!t || *t == kInfinite) return make_error("expected seconds, or [D-]HH:MM:SS");
                         return *t;
                       },
                       [](Seconds v) { return v > 0 ? show_time(v) : std::string(); });
}

template <class T>
KeyDef<T> tres(std::string name, TresMap T::*field, std::string doc) {
  return bind_field<T>(std::move(name), "TRES list: cpu=N,mem=SIZE,node=N,gres/gpu[:type]=N,license/NAME=N", std::move(doc),
              field, parse_tres_value, [](const TresMap& v) { return v.empty() ? std::string() : format_tres(v); });
}

// The key that starts a kind of line (NodeName, PartitionName, qos.conf's
// Name): listed for the reference and "did you mean"; the line parser reads
// its value itself, so applying it through the table stores nothing.
template <class T>
KeyDef<T> line_head(std::string name, std::string values, std::string doc) {
  KeyDef<T> d;
  d.name = std::move(name);
  d.values = std::move(values);
  d.doc = std::move(doc);
  d.parse = [](T&, std::string_view, ValueContext&) -> Status { return {}; };
  d.show = [](const T& t) { return t.name; };
  return d;
}

template <class T>
KeyDef<T> aka(KeyDef<T> d, std::vector<std::string> aliases) {
  d.aliases = std::move(aliases);
  return d;
}

template <class T>
KeyDef<T> defaults_to(KeyDef<T> d, std::string default_text) {
  d.default_text = std::move(default_text);
  return d;
}

}  // namespace keys
}  // namespace drover::config
