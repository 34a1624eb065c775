// Small value formatters shared by the output commands, each matching how
// Slurm's tools print that kind of value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/duration.hpp"
#include "common/tres.hpp"

namespace drover::cli {

// `s`, or `missing` when s is empty ("(null)", "N/A", ...).
std::string or_text(std::string_view s, std::string_view missing);
// Timestamp "2026-11-29T21:51:38"; `missing` for kNoTime ("N/A" in squeue, "Unknown" in scontrol/sacct).
std::string time_or(UnixTime t, std::string_view missing);
// squeue/sinfo durations: "UNLIMITED" (or `infinite`), "NOT_SET" for kNotSet, else "M:SS", "H:MM:SS", "D-HH:MM:SS".
std::string limit_text(Seconds s, std::string_view infinite = "UNLIMITED");
// scontrol/sacct durations: "UNLIMITED", "HH:MM:SS", "D-HH:MM:SS".
std::string limit_text_hms(Seconds s);
// Memory in MB as Slurm prints request sizes: "4G", "1000000M", "0".
std::string memory_text(int64_t mb);
// A count, or "*" when not asked (0): squeue's %z, scontrol's Socks/Node.
std::string star_or(int64_t v);
// "%a %b %d %H:%M:%S %Y" in local time: the banner of squeue -l / sinfo -l.
std::string banner_time(UnixTime t);
// "CLUSTER: NAME\n", the line that heads squeue's, sinfo's and sshare's
// listings when -M/--clusters names the cluster; "" for an empty name.
std::string cluster_banner(const std::string& cluster);
// "%.14f" of priority / 2^32-1 (squeue %p).
std::string priority_fraction(int64_t priority);

}  // namespace drover::cli
