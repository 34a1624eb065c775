// Timestamps: display in local time, and Slurm's --begin / sacct -S forms.
#include <fmt/format.h>

#include <cctype>
#include <ctime>
#include <limits>
#include <optional>

#include "common/duration.hpp"
#include "common/strings.hpp"

namespace drover {
namespace {

constexpr UnixTime kLastTime = 253402300799;  // 9999-12-31T23:59:59 UTC

constexpr std::string_view kTimeForms =
    "expected now[+count[seconds|minutes|hours|days|weeks]], today, tomorrow, midnight, noon, fika, teatime, "
    "HH:MM[:SS][AM|PM], YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], MM.DD[.YY] or MMDD[YY], each date with an optional "
    "-HH:MM[:SS]";

Error bad_time(std::string_view s, std::string_view why = {}) {
  return make_error(why.empty() ? fmt::format("bad time \"{}\": {}", s, kTimeForms)
                                : fmt::format("bad time \"{}\": {}", s, why));
}

struct Date {
  int year = 0, month = 0, day = 0;  // month 1-12
};

struct Clock {
  int hour = 0, minute = 0, second = 0;
};

std::tm local_tm(UnixTime t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  return tm;
}

Date date_of(UnixTime t) {
  std::tm tm = local_tm(t);
  return {tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday};
}

// Local time of a date and clock; `add_days` and `add_years` roll over as mktime does.
UnixTime local_time(Date d, Clock c, int add_days = 0, int add_years = 0) {
  std::tm tm{};
  tm.tm_year = d.year + add_years - 1900;
  tm.tm_mon = d.month - 1;
  tm.tm_mday = d.day + add_days;
  tm.tm_hour = c.hour;
  tm.tm_min = c.minute;
  tm.tm_sec = c.second;
  tm.tm_isdst = -1;
  return static_cast<UnixTime>(std::mktime(&tm));
}

int days_in_month(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// Exactly `n` digits.
std::optional<int> fixed_digits(std::string_view s, std::size_t n) {
  if (s.size() != n) return std::nullopt;
  auto v = parse_int(s);
  if (!v || s[0] == '+') return std::nullopt;
  return static_cast<int>(*v);
}

Result<Date> checked_date(std::string_view s, int year, int month, int day) {
  if (year < 1970 || year > 9999) return bad_time(s, fmt::format("year {} is out of range (1970-9999)", year));
  if (month < 1 || month > 12) return bad_time(s, fmt::format("month {} is out of range (1-12)", month));
  int last = days_in_month(year, month);
  if (day < 1 || day > last) {
    return bad_time(s, fmt::format("day {} is out of range: {:04}-{:02} has {} days", day, year, month, last));
  }
  return Date{year, month, day};
}

// "HH:MM[:SS]" with an optional AM/PM suffix (any case, a space allowed before it).
Result<Clock> parse_clock(std::string_view s, std::string_view text) {
  std::string_view t = text;
  int ampm = 0;  // 1: AM, 2: PM
  if (t.size() > 2 && (iequals(t.substr(t.size() - 2), "AM") || iequals(t.substr(t.size() - 2), "PM"))) {
    ampm = iequals(t.substr(t.size() - 2), "AM") ? 1 : 2;
    t = trim(t.substr(0, t.size() - 2));
  }
  std::vector<std::string> f = split(t, ':');
  if (f.size() < 2 || f.size() > 3) return bad_time(s);
  std::optional<int> v[3] = {fixed_digits(f[0], f[0].size() == 1 ? 1 : 2), fixed_digits(f[1], 2),
                             f.size() == 3 ? fixed_digits(f[2], 2) : std::optional<int>(0)};
  if (!v[0] || !v[1] || !v[2]) return bad_time(s);
  Clock c{*v[0], *v[1], *v[2]};
  if (ampm != 0) {
    if (c.hour < 1 || c.hour > 12) return bad_time(s, fmt::format("hour {} is out of range (1-12 with AM/PM)", c.hour));
    c.hour = c.hour % 12 + (ampm == 2 ? 12 : 0);
  }
  if (c.hour > 23) return bad_time(s, fmt::format("hour {} is out of range (0-23)", c.hour));
  if (c.minute > 59) return bad_time(s, fmt::format("minute {} is out of range (0-59)", c.minute));
  if (c.second > 59) return bad_time(s, fmt::format("second {} is out of range (0-59)", c.second));
  return c;
}

// A time of day: today, or (looking ahead) tomorrow when already past.
UnixTime at_clock(Clock c, UnixTime now, TimeBias bias) {
  UnixTime t = local_time(date_of(now), c);
  return bias == TimeBias::kFuture && t < now ? local_time(date_of(now), c, 1) : t;
}

// A date without a year: this year, or the next/last one by the bias.
// Looking ahead (--begin), a moment already past is next year's; looking back
// (sacct -S/-E), Slurm 22.05 goes to last year only for a later month: on
// 2026-12-05, "12/05" was 2027-12-05 for sbatch, "12/31" 2026-12-31 for
// sacct, and on 2026-11-29 "12/01" was 2025-12-01 for sacct.
UnixTime yearless(Date d, Clock c, UnixTime now, TimeBias bias) {
  UnixTime t = local_time(d, c);
  if (bias == TimeBias::kFuture && t < now) return local_time(d, c, 0, 1);
  if (bias == TimeBias::kPast && d.month > date_of(now).month) return local_time(d, c, 0, -1);
  return t;
}

std::optional<int64_t> unit_seconds(std::string_view unit) {
  std::string u = to_lower(unit);
  if (!u.empty() && u.back() == 's') u.pop_back();
  if (u.empty() || u == "second") return 1;
  if (u == "minute") return 60;
  if (u == "hour") return 3600;
  if (u == "day") return 86400;
  if (u == "week") return 7 * 86400;
  return std::nullopt;
}

// "now", "now+1hour", "now - 30 minutes".
Result<UnixTime> parse_now(std::string_view s, std::string_view rest, UnixTime now) {
  rest = trim(rest);
  if (rest.empty()) return now;
  if (rest[0] != '+' && rest[0] != '-') return bad_time(s);
  int sign = rest[0] == '+' ? 1 : -1;
  rest = trim(rest.substr(1));
  std::size_t n = 0;
  while (n < rest.size() && std::isdigit(static_cast<unsigned char>(rest[n]))) ++n;
  auto count = parse_int(rest.substr(0, n));
  auto unit = unit_seconds(trim(rest.substr(n)));
  if (!count || !unit) return bad_time(s);
  constexpr int64_t kLimit = int64_t{1} << 40;  // about 35,000 years of seconds
  if (*count > kLimit / *unit) return bad_time(s, "the offset is too large");
  UnixTime t = now + sign * *count * *unit;
  if (t <= kNoTime || t > kLastTime) return bad_time(s, "the result falls outside the years 1970-9999");
  return t;
}

// "YYYY-MM-DD", then "THH:MM[:SS]" or " HH:MM[:SS]" ("YYYY-MM-DDT" is midnight).
Result<UnixTime> parse_iso(std::string_view s, std::string_view t) {
  std::string_view date = t.substr(0, t.find_first_of("T "));
  std::vector<std::string> f = split(date, '-');
  if (f.size() != 3) return bad_time(s);
  auto y = fixed_digits(f[0], 4), m = fixed_digits(f[1], 2), d = fixed_digits(f[2], 2);
  if (!y || !m || !d) return bad_time(s);
  auto day = checked_date(s, *y, *m, *d);
  if (!day) return day.error();
  Clock c;
  if (date.size() + 1 < t.size()) {
    auto clock = parse_clock(s, t.substr(date.size() + 1));
    if (!clock) return clock.error();
    c = *clock;
  }
  return local_time(*day, c);
}

// "MM/DD", "MM/DD/YY", "MM/DD/YYYY", "MM.DD[.YY]", "MMDD", "MMDDYY", each
// optionally followed by "-HH:MM[:SS]" or "THH:MM[:SS]".
Result<UnixTime> parse_us_date(std::string_view s, std::string_view t, UnixTime now, TimeBias bias) {
  Clock c;
  if (auto at = t.find_first_of("-T"); at != std::string_view::npos) {
    auto clock = parse_clock(s, t.substr(at + 1));
    if (!clock) return clock.error();
    c = *clock;
    t = t.substr(0, at);
  }
  std::vector<std::string> f = split(t, t.find('.') != std::string_view::npos ? '.' : '/');
  if (f.size() == 1 && (t.size() == 4 || t.size() == 6)) {
    f = {std::string(t.substr(0, 2)), std::string(t.substr(2, 2))};
    if (t.size() == 6) f.emplace_back(t.substr(4));
  }
  if (f.size() < 2 || f.size() > 3) return bad_time(s);
  auto m = fixed_digits(f[0], 2), d = fixed_digits(f[1], 2);
  std::optional<int> y = date_of(now).year;
  if (f.size() == 3) y = fixed_digits(f[2], f[2].size() == 2 ? 2 : 4);
  if (f.size() == 3 && y && f[2].size() == 2) *y += 2000;  // "27" is 2027, as Slurm reads it
  if (!m || !d || !y) return bad_time(s);
  auto day = checked_date(s, *y, *m, *d);
  if (!day) return day.error();
  return f.size() == 3 ? local_time(*day, c) : yearless(*day, c, now, bias);
}

std::optional<Clock> named_clock(std::string_view word) {
  if (iequals(word, "midnight")) return Clock{0, 0, 0};
  if (iequals(word, "noon")) return Clock{12, 0, 0};
  if (iequals(word, "fika")) return Clock{15, 0, 0};
  if (iequals(word, "teatime")) return Clock{16, 0, 0};
  return std::nullopt;
}

}  // namespace

namespace {

std::string& timestamp_spec() {
  static std::string spec;  // "": standard
  return spec;
}

std::string strftime_text(const char* format, const std::tm& tm) {
  char buf[256];
  std::size_t n = std::strftime(buf, sizeof buf, format, &tm);
  return std::string(buf, n);  // 0: empty, or longer than Slurm's own buffer would take
}

// SLURM_TIME_FORMAT=relative, as squeue(1) describes it.
std::string relative_text(const std::tm& tm, UnixTime now) {
  std::tm today = local_tm(now);
  if (tm.tm_year != today.tm_year) return fmt::format("{} {}", tm.tm_mday, strftime_text("%b %Y", tm));
  const int days = tm.tm_yday - today.tm_yday;
  if (days == 0) return strftime_text("%H:%M:%S", tm);
  if (days == 1) return strftime_text("Tomorr %H:%M", tm);
  if (days == -1) return strftime_text("Ystday %H:%M", tm);
  if (days > 1 && days < 7) return strftime_text("%a %H:%M", tm);
  return fmt::format("{} {}", tm.tm_mday, strftime_text("%b %H:%M", tm));
}

}  // namespace

void set_timestamp_format(std::string_view spec) { timestamp_spec() = std::string(spec); }

std::string format_timestamp(UnixTime t, std::string_view spec, UnixTime now) {
  if (t == kNoTime) return "Unknown";
  std::tm tm = local_tm(t);
  if (spec.empty() || spec == "standard") {
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                       tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  if (spec == "relative") return relative_text(tm, now);
  return strftime_text(std::string(spec).c_str(), tm);
}

std::string format_timestamp(UnixTime t) {
  const std::string& spec = timestamp_spec();
  return format_timestamp(t, spec, spec.empty() ? 0 : static_cast<UnixTime>(std::time(nullptr)));
}

Result<UnixTime> parse_timestamp(std::string_view s, UnixTime now, TimeBias bias) {
  std::string_view t = trim(s);
  if (t.empty()) return bad_time(s, std::string("the time is empty; ") + std::string(kTimeForms));
  if (istarts_with(t, "now")) return parse_now(s, t.substr(3), now);
  if (iequals(t, "today")) return local_time(date_of(now), {});
  if (iequals(t, "tomorrow")) return local_time(date_of(now), {}, 1);
  if (auto c = named_clock(t)) return at_clock(*c, now, bias);
  if (t.size() >= 10 && t[4] == '-' && t[7] == '-') return parse_iso(s, t);
  if (t.find(':') != std::string_view::npos && t.find_first_of("-T") == std::string_view::npos) {
    auto c = parse_clock(s, t);
    if (!c) return c.error();
    return at_clock(*c, now, bias);
  }
  if (std::isdigit(static_cast<unsigned char>(t[0]))) return parse_us_date(s, t, now, bias);
  return bad_time(s);
}

UnixTime local_midnight(UnixTime t, int days_before) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_mday -= days_before;
  tm.tm_isdst = -1;
  return static_cast<UnixTime>(std::mktime(&tm));
}

}  // namespace drover
