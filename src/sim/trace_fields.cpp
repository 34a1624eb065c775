#include "sim/trace_fields.hpp"

#include <fmt/format.h>

#include "common/dependency.hpp"
#include "common/strings.hpp"

namespace drover::sim {

Error field_error(const std::string& name, int64_t line, std::string_view field, std::string_view message) {
  return make_error(fmt::format("{}:{}: field {}: {}", name, line, field, message));
}

std::string csv_quote(std::string_view v) {
  if (v.find_first_of(",\"\n") == std::string_view::npos) return std::string(v);
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

Result<Seconds> parse_seconds(std::string_view s) {
  s = trim(s);
  if (auto n = parse_int(s)) return *n;
  if (s.find(':') == std::string_view::npos && s.find('-') == std::string_view::npos && !iequals(s, "INFINITE") &&
      !iequals(s, "UNLIMITED")) {
    return make_error(fmt::format("\"{}\" is not seconds (a whole number) or a Slurm duration (D-HH:MM:SS)", s));
  }
  return parse_duration(s);
}

Result<bool> parse_flag(std::string_view s) {
  s = trim(s);
  if (s.empty() || iequals(s, "no") || iequals(s, "false") || s == "0") return false;
  if (iequals(s, "yes") || iequals(s, "true") || s == "1") return true;
  return make_error(fmt::format("\"{}\" is not yes/no, true/false or 1/0", s));
}

Result<core::Dependency> parse_dependency(std::string_view s) {
  s = trim(s);
  if (s.empty()) return core::Dependency{};
  auto spec = drover::parse_dependency(s);
  if (!spec) return spec.error();
  return core::dependency_from(*spec);
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil, written out here).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

Result<int64_t> parse_iso_utc(std::string_view s) {
  s = trim(s);
  auto bad = [&] { return make_error(fmt::format("\"{}\" is not a time stamp YYYY-MM-DDTHH:MM:SS", s)); };
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return bad();
  auto num = [&](std::size_t pos, std::size_t len) { return parse_int(s.substr(pos, len)); };
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), sec = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !sec) return bad();
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *sec > 60) return bad();
  return days_from_civil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *sec;
}

}  // namespace drover::sim
