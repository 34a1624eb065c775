// Small string helpers shared by every parser. No I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace drover {

std::string_view trim(std::string_view s);
std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
bool iequals(std::string_view a, std::string_view b);
bool istarts_with(std::string_view s, std::string_view prefix);
// Split on a single character; keeps empty fields ("a,,b" -> {"a","","b"}).
std::vector<std::string> split(std::string_view s, char sep);
// Split on `sep` but not inside [...] brackets ("a[1,2],b" -> {"a[1,2]","b"}).
std::vector<std::string> split_outside_brackets(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// Whether the comma list `list` names `item` (fields trimmed, case ignored):
// "task/affinity, task/cgroup" has "task/cgroup".
bool list_has(std::string_view list, std::string_view item);
// "4,4,4,2" -> "4(x3),2"; "1,1" -> "1(x2)"; "" -> "". Slurm's compressed
// per-node counts (SLURM_TASKS_PER_NODE, SLURM_JOB_CPUS_PER_NODE).
std::string compress_counts(const std::vector<int>& counts);
// 0,1,3: the numbers comma-separated, in the order given (GPU lists, task ids).
std::string join_ints(const std::vector<int>& v);
// Ascending ids as ranges: {0,1,2,5,7,8} -> "0-2,5,7-8"; {} -> "". Slurm's
// form for device indexes (IDX:0-1) and CPU ids (CPU_IDs=0-1,32).
std::string compress_ranges(const std::vector<int64_t>& sorted_ids);
// Strict decimal parse of the whole string (no sign unless allowed, no spaces).
std::optional<int64_t> parse_int(std::string_view s, bool allow_negative = false);
std::optional<double> parse_double(std::string_view s);
// Levenshtein distance, case-insensitive; for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` (case-insensitive), if within a useful distance.
std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates);

// Lowercase hex of `bytes`; from_hex returns false on odd length or a non-hex digit.
std::string to_hex(std::string_view bytes);
bool from_hex(std::string_view hex, std::string* bytes);

// True when any of args is --help or -h (`drover up --help`, `drover sim run -h`).
bool asks_help(const std::vector<std::string>& args);

// A daemon's flag value: `NAME=V` or `NAME V` at args[i] (the latter
// advances i past V). False when args[i] is not that flag.
bool take_flag_value(const std::vector<std::string>& args, std::size_t& i, const char* name, std::string& out);

}  // namespace drover
