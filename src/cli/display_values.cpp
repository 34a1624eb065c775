#include "cli/display_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <vector>

#include "cli/cli_error.hpp"
#include "cli/views.hpp"
#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "common/units.hpp"

namespace drover::cli {

std::string or_text(std::string_view s, std::string_view missing) { return std::string(s.empty() ? missing : s); }

std::string time_or(UnixTime t, std::string_view missing) {
  return t == kNoTime ? std::string(missing) : format_timestamp(t);
}

std::string limit_text(Seconds s, std::string_view infinite) {
  if (s == kInfinite) return std::string(infinite);
  if (s == kNotSet) return "NOT_SET";
  return format_duration(s);
}

std::string limit_text_hms(Seconds s) {
  if (s == kInfinite) return "UNLIMITED";
  if (s == kNotSet) return "NONE";
  return format_duration_hms(s);
}

std::string memory_text(int64_t mb) { return format_memory_mb(mb); }

std::string star_or(int64_t v) { return v > 0 ? std::to_string(v) : "*"; }

std::string cluster_banner(const std::string& cluster) {
  return cluster.empty() ? std::string() : "CLUSTER: " + cluster + "\n";
}

std::string banner_time(UnixTime t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", &tm);
  return buf;
}

std::string priority_fraction(int64_t priority) {
  return fmt::format("{:.14f}", static_cast<double>(priority) / 4294967295.0);
}

std::optional<CommandOutput> version_or_usage(bool version, bool help, std::string_view usage) {
  if (version) return CommandOutput{std::string(kSlurmVersionLine) + "\n", "", 0};
  if (help) return CommandOutput{std::string(usage), "", 0};
  return std::nullopt;
}

CliResult<int> parse_iterate(std::string_view program, std::string_view value) {
  auto n = parse_int(value);
  if (!n || *n <= 0 || *n > 86400) {
    return cli_error(program,
                     fmt::format("Invalid --iterate value: {} (seconds between listings, 1 or more)", value));
  }
  return static_cast<int>(*n);
}

CliResult<std::vector<std::string>> parse_node_list(std::string_view program, std::string_view value) {
  auto hosts = hostlist_expand(value);
  if (!hosts) return cli_error(program, fmt::format("Invalid node list: {} ({})", value, hosts.error().message));
  return std::move(*hosts);
}

std::vector<std::string> comma_list(std::string_view s) {
  std::vector<std::string> out;
  for (auto& item : split(s, ','))
    if (!item.empty()) out.push_back(std::move(item));
  return out;
}

}  // namespace drover::cli
