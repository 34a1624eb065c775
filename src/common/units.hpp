// Memory sizes in Slurm's syntax. Drover keeps memory in MiB ("MB" in Slurm's words).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace drover {

// "64G", "1000000" (= MB), "512M", "1T", "2048K" (rounded up to whole MB);
// suffixes K/M/G/T/P, any case, optional trailing "B" ("64GB").
Result<int64_t> parse_memory_mb(std::string_view s);

// Slurm's compact display: the largest unit that divides exactly, e.g.
// 1048576 -> "1T", 65536 -> "64G", 1000000 -> "1000000M", 0 -> "0".
std::string format_memory_mb(int64_t mb);

}  // namespace drover
