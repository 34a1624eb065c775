#include "config/key_values.hpp"

#include <cmath>
#include <cstdio>

#include "common/strings.hpp"
#include "common/units.hpp"

namespace drover::config {

namespace {
bool is_unlimited_word(std::string_view s) { return iequals(s, "UNLIMITED") || iequals(s, "INFINITE"); }
}  // namespace

std::string int_range_text(int64_t min, int64_t max, bool unlimited_ok) {
  std::string out = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (unlimited_ok) out += ", or UNLIMITED";
  return out;
}

std::string choices_text(const std::vector<std::string>& choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i) out += i + 1 == choices.size() ? " or " : ", ";
    out += choices[i];
  }
  return out;
}

Result<int64_t> parse_int_value(std::string_view s, int64_t min, int64_t max, bool unlimited_ok) {
  if (unlimited_ok && (is_unlimited_word(s) || s == "-1")) return kUnlimited;
  auto v = parse_int(s, min < 0);
  if (!v || *v < min || *v > max) return make_error("expected " + int_range_text(min, max, unlimited_ok));
  return *v;
}

Result<double> parse_real_value(std::string_view s, double min, double max) {
  auto v = parse_double(s);
  if (!v || !std::isfinite(*v) || *v < min || *v > max) {
    return make_error("expected a number from " + show_real(min) + " to " + show_real(max));
  }
  return *v;
}

Result<bool> parse_yes_no(std::string_view s) {
  if (iequals(s, "YES") || iequals(s, "TRUE") || s == "1") return true;
  if (iequals(s, "NO") || iequals(s, "FALSE") || s == "0") return false;
  return make_error("expected YES or NO");
}

Result<std::string> parse_choice(std::string_view s, const std::vector<std::string>& choices) {
  for (const auto& c : choices) {
    if (iequals(s, c)) return c;
  }
  return make_error("expected " + choices_text(choices));
}

Result<Seconds> parse_time_value(std::string_view s) {
  auto v = parse_duration(s);
  if (!v) return make_error("expected a time such as 60 (minutes), 04:00:00, 7-00:00:00 or INFINITE");
  return *v;
}

Result<int64_t> parse_memory_value(std::string_view s) {
  auto v = parse_memory_mb(s);
  if (!v) return make_error("expected a memory size in megabytes such as 1000000, or with a unit such as 64G or 1T");
  return *v;
}

Result<std::vector<std::string>> parse_name_list(std::string_view s, bool all_ok) {
  if (all_ok && iequals(s, "ALL")) return std::vector<std::string>{};
  auto parts = split(s, ',');
  for (const auto& p : parts) {
    if (p.empty()) {
      return make_error(all_ok ? "expected comma-separated names without empty items, or ALL"
                               : "expected comma-separated names without empty items");
    }
  }
  return parts;
}

Result<TresMap> parse_tres_value(std::string_view s) {
  auto v = parse_tres(s);
  if (!v) return make_error("expected a TRES list such as cpu=16000,gres/gpu=256 (" + v.error().message + ")");
  return *v;
}

Result<std::string> parse_text(std::string_view s) {
  if (s.empty()) return make_error("expected a value");
  return std::string(s);
}

Result<std::vector<std::string>> parse_choice_list(std::string_view s, const std::vector<std::string>& choices,
                                                   const std::string& noun) {
  std::vector<std::string> out;
  for (const auto& item : split(s, ',')) {
    auto v = parse_choice(item, choices);
    if (!v) return make_error("expected comma-separated " + noun + " from " + choices_text(choices));
    out.push_back(*v);
  }
  return out;
}

std::string show_int(int64_t v) { return v == kUnlimited ? "UNLIMITED" : std::to_string(v); }

std::string show_time(Seconds s) { return s == kInfinite ? "INFINITE" : format_duration_hms(s); }

std::string show_yes_no(bool b) { return b ? "YES" : "NO"; }

std::string show_real(double d) {
  if (d == std::floor(d) && std::fabs(d) < 1e15) return std::to_string(static_cast<int64_t>(d));
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  return buf;
}

}  // namespace drover::config
