// Daemon log lines: "2026-12-01T10:00:00.123 drover-controller: message" on
// stderr (drover up points stderr at DIR/logs/controller.log).
//
// How much is written follows SlurmctldDebug (quiet, fatal, error, info,
// verbose, debug .. debug5; `scontrol setdebug` changes it until the next
// restart or reconfigure), and DebugFlags adds the lines of the subsystems
// it names (`scontrol setdebugflags`). Any thread may log.
#pragma once

#include <string>

#include "config/debug_levels.hpp"

namespace drover::ctld {

// A line at info level (the default: written unless the level is below info).
void log_line(const std::string& message);
// A failure: written down to the `error` level.
void log_error(const std::string& message);
// A line at `level` (config::kLogVerbose, kLogDebug, ...).
void log_at(int level, const std::string& message);
// Whether a line at `level` would be written: test before building a costly one.
bool log_enabled(int level);
// Whether DebugFlags names `flag` and the level lets info lines through
// (Slurm writes a flag's lines at verbose level, so that they need
// SlurmctldDebug=verbose too; Drover's need only the flag).
bool log_flag(config::DebugFlag flag);

void set_log_level(int level);
int log_level();
void set_log_flags(config::DebugFlags flags);
config::DebugFlags log_flags();

}  // namespace drover::ctld
