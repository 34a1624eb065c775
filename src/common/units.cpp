#include "common/units.hpp"

#include <cctype>
#include <charconv>
#include <limits>

#include "common/strings.hpp"

namespace drover {
namespace {

// Powers of 1024 for K, M, G, T, P; -1 when `c` is not one of them.
int unit_power(char c) {
  switch (std::toupper(static_cast<unsigned char>(c))) {
    case 'K': return 1;
    case 'M': return 2;
    case 'G': return 3;
    case 'T': return 4;
    case 'P': return 5;
    default: return -1;
  }
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

struct Number {
  int64_t value = 0;
  int power = 0;  // of 1024 given by the suffix; 0: no suffix
};

// Digits, then at most one unit letter, then (when allow_b) an optional 'B'.
// `noun` completes "<what> "<s>" is not ..." ("a valid size", "a number").
Result<Number> split_number(std::string_view s, std::string_view what, std::string_view noun,
                            std::string_view forms, bool allow_b) {
  std::string_view t = trim(s);
  std::size_t n = 0;
  while (n < t.size() && std::isdigit(static_cast<unsigned char>(t[n]))) ++n;
  std::string_view digits = t.substr(0, n), rest = t.substr(n);
  if (allow_b && rest.size() == 2 && (rest[1] == 'B' || rest[1] == 'b')) rest.remove_suffix(1);
  if (!rest.empty() && rest[0] == '.' && !digits.empty()) {
    return make_error(std::string(what) + " " + quoted(s) + " is not a whole number; Slurm takes no fractions (" +
                      std::string(forms) + ")");
  }
  if (digits.empty() || rest.size() > 1 || (rest.size() == 1 && unit_power(rest[0]) < 0)) {
    return make_error(std::string(what) + " " + quoted(s) + " is not " + std::string(noun) + ": expected " +
                      std::string(forms));
  }
  Number num;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), num.value);
  if (ec != std::errc()) return make_error(std::string(what) + " " + quoted(s) + " is too large");
  num.power = rest.empty() ? 0 : unit_power(rest[0]);
  return num;
}

bool scale(int64_t& v, int power) {
  for (int i = 0; i < power; ++i) {
    if (v > std::numeric_limits<int64_t>::max() / 1024) return false;
    v *= 1024;
  }
  return true;
}

}  // namespace

Result<int64_t> parse_memory_mb(std::string_view s) {
  constexpr std::string_view kForms = "a whole number of megabytes, or one with a suffix K, M, G, T or P, e.g. 64G";
  auto num = split_number(s, "memory size", "a valid size", kForms, true);
  if (!num) return num.error();
  if (num->power == 0) return num->value;  // plain numbers are megabytes
  if (num->power == 1) return num->value / 1024 + (num->value % 1024 != 0 ? 1 : 0);  // K: round up
  int64_t v = num->value;
  if (!scale(v, num->power - 2)) return make_error("memory size " + quoted(s) + " is too large");
  return v;
}

std::string format_memory_mb(int64_t mb) {
  if (mb <= 0) return std::to_string(mb);
  static constexpr char kUnits[] = {'M', 'G', 'T', 'P'};
  int unit = 0;
  while (unit < 3 && mb % 1024 == 0) {
    mb /= 1024;
    ++unit;
  }
  return std::to_string(mb) + kUnits[unit];
}

Result<int64_t> parse_count(std::string_view s, std::string_view what) {
  constexpr std::string_view kForms = "a whole number, optionally with K, M, G, T or P (multiples of 1024)";
  auto num = split_number(s, what, "a number", kForms, false);
  if (!num) return num.error();
  int64_t v = num->value;
  if (!scale(v, num->power)) return make_error(std::string(what) + " " + quoted(s) + " is too large");
  return v;
}

}  // namespace drover
