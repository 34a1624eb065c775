// Memory sizes and counts in Slurm's syntax. Drover keeps memory in MiB ("MB" in Slurm's words).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace drover {

// "64G", "1000000" (= MB), "512M", "1T", "2048K" (rounded up to whole MB);
// suffixes K/M/G/T/P, any case, optional trailing "B" ("64GB"). Whole numbers
// only ("1.5G" is refused with a hint to write "1536M"). Errors name the text
// and the accepted forms.
Result<int64_t> parse_memory_mb(std::string_view s);

// Slurm's compact display: the largest unit that divides exactly, e.g.
// 1048576 -> "1T", 65536 -> "64G", 1000000 -> "1000000M", 0 -> "0".
std::string format_memory_mb(int64_t mb);

// A count with an optional K/M/G/T/P suffix meaning multiples of 1024
// ("4K" = 4096), as Slurm takes for gres and TRES counts. Whole, >= 0.
// `what` names the value in errors ("count", "gres count").
Result<int64_t> parse_count(std::string_view s, std::string_view what = "count");

}  // namespace drover
