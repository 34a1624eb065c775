#include "config/debug_levels.hpp"

#include <array>

#include "common/strings.hpp"

namespace drover::config {
namespace {

constexpr std::array<std::string_view, 10> kLevels = {"quiet", "fatal", "error",  "info",   "verbose",
                                                      "debug", "debug2", "debug3", "debug4", "debug5"};

// The subsystems of DebugFlags, in `man slurm.conf`'s order.
constexpr std::array<std::string_view, 39> kFlags = {
    "Accrue",      "Agent",        "Backfill",    "BackfillMap", "BurstBuffer",      "Cgroup",       "CPU_Bind",
    "CpuFrequency", "Data",        "Dependency",  "Elasticsearch", "Energy",         "ExtSensors",   "Federation",
    "FrontEnd",    "Gres",         "Hetjob",      "Gang",        "JobAccountGather", "JobContainer", "License",
    "Network",     "NetworkRaw",   "NodeFeatures", "NO_CONF_HASH", "Power",          "Priority",     "Profile",
    "Protocol",    "Reservation",  "Route",       "Script",      "SelectType",       "Steps",        "Switch",
    "TimeCray",    "TraceJobs",    "Triggers",    "WorkQueue",
};
static_assert(kFlags.size() <= 64);

DebugFlag named(std::string_view name) { return *find_debug_flag(name); }

}  // namespace

std::optional<int> parse_debug_level(std::string_view text) {
  std::string_view t = trim(text);
  if (t.size() == 1 && t[0] >= '0' && t[0] <= '9') return t[0] - '0';
  for (std::size_t i = 0; i < kLevels.size(); ++i) {
    if (iequals(t, kLevels[i])) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::string_view debug_level_name(int level) {
  if (level < 0 || level >= static_cast<int>(kLevels.size())) return kLevels[kLogInfo];
  return kLevels[static_cast<std::size_t>(level)];
}

std::optional<DebugFlag> find_debug_flag(std::string_view name) {
  for (std::size_t i = 0; i < kFlags.size(); ++i) {
    if (iequals(trim(name), kFlags[i])) return static_cast<DebugFlag>(i);
  }
  return std::nullopt;
}

DebugFlag flag_backfill() { return named("Backfill"); }
DebugFlag flag_protocol() { return named("Protocol"); }
DebugFlag flag_trace_jobs() { return named("TraceJobs"); }

Result<DebugFlags> parse_debug_flags(std::string_view list) {
  DebugFlags out = 0;
  for (const auto& word : split(list, ',')) {
    if (trim(word).empty()) continue;
    auto f = find_debug_flag(word);
    if (!f) return Error{"Invalid DebugFlag: " + std::string(trim(word))};
    out |= bit(*f);
  }
  return out;
}

std::string debug_flags_text(DebugFlags flags) {
  std::string out;
  for (std::size_t i = 0; i < kFlags.size(); ++i) {
    if (!(flags & (DebugFlags{1} << i))) continue;
    if (!out.empty()) out += ',';
    out += kFlags[i];
  }
  return out;
}

}  // namespace drover::config
