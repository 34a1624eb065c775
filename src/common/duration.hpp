// Slurm time strings and timestamps.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace drover {

// Durations are whole seconds; kInfinite stands for INFINITE/UNLIMITED.
using Seconds = int64_t;
inline constexpr Seconds kInfinite = INT64_MAX;

// Slurm's time-limit syntax: "minutes", "minutes:seconds", "hours:minutes:seconds",
// "days-hours", "days-hours:minutes", "days-hours:minutes:seconds";
// "INFINITE"/"UNLIMITED" (any case) and "-1" are kInfinite. Errors say which
// form was expected.
Result<Seconds> parse_duration(std::string_view s);

// Slurm's display form: "UNLIMITED" for kInfinite, "D-HH:MM:SS" with days,
// "H:MM:SS" with hours, "M:SS" otherwise (as squeue's TIME column).
std::string format_duration(Seconds s);
// Always with hours: "D-HH:MM:SS" or "HH:MM:SS" (sacct's Elapsed/Timelimit, scontrol RunTime).
std::string format_duration_hms(Seconds s);

// Unix time stamps (seconds since the epoch, UTC-agnostic: local time is used
// for display as Slurm does). kNoTime is "Unknown"/"None".
using UnixTime = int64_t;
inline constexpr UnixTime kNoTime = 0;

// "2026-11-29T21:27:35" in local time; "Unknown" for kNoTime.
std::string format_timestamp(UnixTime t);
// Slurm's --begin/-S forms: "now", "now+1hour", "now+30" (seconds), "today",
// "tomorrow", "midnight", "noon", "YYYY-MM-DD[THH:MM[:SS]]", "HH:MM[:SS]",
// "MM/DD[/YY]". `now` anchors the relative forms.
Result<UnixTime> parse_timestamp(std::string_view s, UnixTime now);

}  // namespace drover
