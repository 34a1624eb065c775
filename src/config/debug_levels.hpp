// slurm.conf's SlurmctldDebug/SlurmdDebug levels and DebugFlags names, as
// `man slurm.conf` (22.05) lists them; also what `scontrol setdebug` and
// `scontrol setdebugflags` accept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace drover::config {

// quiet(0) fatal(1) error(2) info(3) verbose(4) debug(5) debug2(6) .. debug5(9).
inline constexpr int kLogQuiet = 0, kLogError = 2, kLogInfo = 3, kLogVerbose = 4, kLogDebug = 5, kLogDebug2 = 6;

// A level by name (any case) or by number 0-9; nullopt for anything else.
std::optional<int> parse_debug_level(std::string_view text);
// The level's name ("debug2"); "info" for a number out of range.
std::string_view debug_level_name(int level);

// DebugFlags as a bit set: bit i is the i-th subsystem of `man slurm.conf`'s list.
using DebugFlags = uint64_t;
enum class DebugFlag : int {};  // an index into that list
// The flag of `name` (any case), if it is one.
std::optional<DebugFlag> find_debug_flag(std::string_view name);
inline DebugFlags bit(DebugFlag f) { return DebugFlags{1} << static_cast<int>(f); }
// Flags Drover's controller writes lines for (docs/cluster.md "The controller's log").
DebugFlag flag_backfill();
DebugFlag flag_protocol();
DebugFlag flag_trace_jobs();

// A comma-separated list of names; the error names the first that is none.
Result<DebugFlags> parse_debug_flags(std::string_view list);
// The set's names, comma-separated in the manual's order ("" for none).
std::string debug_flags_text(DebugFlags flags);

}  // namespace drover::config
