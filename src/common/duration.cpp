// Durations: Slurm's time-limit syntax and its two display forms.
// Timestamps (declared in duration.hpp too) live in timestamp.cpp.
#include "common/duration.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "common/strings.hpp"

namespace drover {
namespace {

constexpr std::string_view kDurationForms =
    "expected minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes, "
    "days-hours:minutes:seconds, or UNLIMITED";

Error bad_duration(std::string_view s, std::string_view why) {
  return make_error(fmt::format("time \"{}\" {}: {}", s, why, kDurationForms));
}

// a * m + b, or nullopt on overflow.
std::optional<int64_t> mul_add(int64_t a, int64_t m, int64_t b) {
  if (a > (std::numeric_limits<int64_t>::max() - b) / m) return std::nullopt;
  return a * m + b;
}

}  // namespace

Result<Seconds> parse_duration(std::string_view s) {
  std::string_view t = trim(s);
  if (iequals(t, "INFINITE") || iequals(t, "UNLIMITED") || t == "-1") return kInfinite;
  if (t.empty()) return bad_duration(s, "is empty");
  std::size_t dash = t.find('-');
  bool has_days = dash != std::string_view::npos;
  std::string_view after = has_days ? t.substr(dash + 1) : t;
  // "D-" alone is D days, as Slurm 22.05's sbatch took `-t 1-` (TimeLimit=1-00:00:00).
  std::vector<std::string> fields = has_days && after.empty() ? std::vector<std::string>{"0"} : split(after, ':');
  if (fields.size() > 3) return bad_duration(s, "has too many ':' fields");
  std::vector<int64_t> v;
  if (has_days) fields.insert(fields.begin(), std::string(t.substr(0, dash)));
  for (const auto& f : fields) {
    auto n = parse_int(f);
    if (!n || f.empty() || f[0] == '+') return bad_duration(s, fmt::format("has \"{}\" where a number belongs", f));
    v.push_back(*n);
  }
  // Weights of the fields, from the right: seconds, minutes, hours, days.
  std::vector<int64_t> units;
  if (has_days) {
    units = {86400, 3600, 60, 1};
  } else if (v.size() == 3) {
    units = {3600, 60, 1};
  } else {
    units = {60, 1};  // "minutes" or "minutes:seconds"
  }
  std::optional<int64_t> total = 0;
  for (std::size_t i = 0; i < v.size() && total; ++i) total = mul_add(v[i], units[i], *total);
  if (!total || *total == kInfinite) return bad_duration(s, "is too long");
  return *total;
}

Result<LimitChange> parse_limit_change(std::string_view s) {
  LimitChange c;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    c.sign = s.front() == '+' ? 1 : -1;
    s.remove_prefix(1);
  }
  auto d = parse_duration(s);
  if (!d) return d.error();
  c.amount = *d;
  return c;
}

std::string format_duration(Seconds s) {
  if (s == kInfinite) return "UNLIMITED";
  if (s < 0) return "INVALID";
  int64_t days = s / 86400, hours = s / 3600 % 24, minutes = s / 60 % 60, seconds = s % 60;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, seconds);
  if (hours > 0) return fmt::format("{}:{:02}:{:02}", hours, minutes, seconds);
  return fmt::format("{}:{:02}", minutes, seconds);
}

std::string format_duration_hms(Seconds s) {
  if (s == kInfinite) return "UNLIMITED";
  if (s < 0) return "INVALID";
  int64_t days = s / 86400, hours = s / 3600 % 24, minutes = s / 60 % 60, seconds = s % 60;
  if (days > 0) return fmt::format("{}-{:02}:{:02}:{:02}", days, hours, minutes, seconds);
  return fmt::format("{:02}:{:02}:{:02}", hours, minutes, seconds);
}

}  // namespace drover
