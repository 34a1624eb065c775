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
// "INFINITE"/"UNLIMITED" (any case) and "-1" are kInfinite. Fields are not
// range-checked ("90" is 1:30:00, as in Slurm). "0" is 0: sbatch --time=0
// means no limit, which is the caller's to decide. Errors say which form was
// expected.
Result<Seconds> parse_duration(std::string_view s);

// scontrol update TimeLimit=: a duration as above (sign 0), or one after
// "+" or "-" (sign +1 or -1) that lengthens or shortens the current limit.
struct LimitChange {
  int sign = 0;
  Seconds amount = 0;
};
Result<LimitChange> parse_limit_change(std::string_view s);

// Slurm's display form: "UNLIMITED" for kInfinite, "D-HH:MM:SS" with days,
// "H:MM:SS" with hours, "M:SS" otherwise (as squeue's TIME column);
// "INVALID" for a negative value.
std::string format_duration(Seconds s);
// Always with hours: "D-HH:MM:SS" or "HH:MM:SS" (sacct's Elapsed/Timelimit,
// scontrol RunTime/TimeLimit); "UNLIMITED" and "INVALID" as above.
std::string format_duration_hms(Seconds s);

// Unix time stamps (seconds since the epoch, UTC-agnostic: local time is used
// for display as Slurm does). kNoTime is "Unknown"/"None".
using UnixTime = int64_t;
inline constexpr UnixTime kNoTime = 0;

// Local midnight of the day `t` falls in, or of the day `days_before` that
// one (sacct's, sreport's and sacctmgr's default windows).
UnixTime local_midnight(UnixTime t, int days_before = 0);

// "2026-11-29T21:27:35" in local time; "Unknown" for kNoTime. A command
// that has called set_timestamp_format shows it the way that chose.
std::string format_timestamp(UnixTime t);
// Slurm's SLURM_TIME_FORMAT, which the commands read from their environment:
// "standard" (also empty) is the form above; "relative" is "HH:MM:SS" today,
// "Tomorr HH:MM", "Ystday HH:MM", the weekday and "HH:MM" within the coming
// week, "D Mon HH:MM" for other days of this year and "D Mon YYYY" for other
// years; anything else is a strftime() format. For this process, from now on.
void set_timestamp_format(std::string_view spec);
// The same with the format and the present time given (for tests).
std::string format_timestamp(UnixTime t, std::string_view spec, UnixTime now);

// Which way an incomplete time points. sbatch --begin looks ahead: a time of
// day already past today means tomorrow, a date without a year already past
// means next year. sacct -S/-E looks back: a time of day is today, a date
// without a year still to come means last year.
enum class TimeBias { kFuture, kPast };

// Slurm's --begin and sacct -S/-E forms (read in local time):
//   now[{+|-}count[seconds|minutes|hours|days|weeks]]  (count alone: seconds;
//                                                        spaces allowed)
//   today, tomorrow (midnight of that day); midnight, noon, fika (15:00),
//   teatime (16:00) (times of day)
//   HH:MM[:SS][AM|PM]
//   YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY[YY]], MMDD, MMDDYY
// `now` anchors the relative forms. Out-of-range fields are refused ("25:00",
// "2026-02-30"), unlike Slurm which rolls them over. Errors name the text and
// list the forms.
Result<UnixTime> parse_timestamp(std::string_view s, UnixTime now, TimeBias bias = TimeBias::kFuture);

}  // namespace drover
