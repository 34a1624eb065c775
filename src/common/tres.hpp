// Trackable resources (TRES): named counts such as cpu, mem (MB), node,
// billing, energy, gres/gpu, gres/gpu:h100, license/fsbw.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover {

// Canonical names: category lower-cased ("cpu", "mem", "node", "billing",
// "energy", "vmem", "pages", "gres/<name>[:<type>]", "license/<name>",
// "bb/<name>", "fs/<name>" (disk, lustre), "ic/<name>" (ofed)); the name
// after the category keeps its own spelling.
using TresMap = std::map<std::string, int64_t>;

// "cpu=16000,gres/gpu=256,mem=1T,node=4,gres/gpu:h100=64,license/fsbw=10".
// mem takes memory suffixes (result in MB); other counts take K/M/G/T/P as
// 1024 multiples, as Slurm does. Names are case-insensitive ("CPU", "GRES/gpu").
// Counts are whole and >= 0; a name given twice is an error. "" is empty.
// Errors name the bad item and why (with a suggestion for a misspelt name).
Result<TresMap> parse_tres(std::string_view s);

// Canonicalise one name ("CPU" -> "cpu", "GRES/gpu" -> "gres/gpu"); empty if invalid.
std::string canonical_tres_name(std::string_view name);

// Slurm's order: cpu, mem, energy, node, billing, fs/disk, vmem, pages, then
// gres/..., license/..., bb/... alphabetically (then fs/..., ic/...); mem
// printed with format_memory_mb ("mem=1000000M", "mem=250G"). As scontrol
// prints TRES= and CfgTRES=.
std::string format_tres(const TresMap& tres);

// The TRES without a name, in Slurm's order (its ids 1-8): cpu, mem, energy,
// node, billing, fs/disk, vmem, pages.
const std::vector<std::string>& plain_tres_names();

// Every TRES in `names` with its count in `tres` (0 when absent), in that
// order and as plain numbers: "cpu=0,mem=0,energy=0,...", as sshare prints
// TRESRunMins.
std::string format_tres_counts(const std::vector<std::string>& names, const TresMap& tres);

// sacct's order (AllocTRES, ReqTRES): the "name=value" items sorted as text,
// so "gres/gpu:h100=2" comes before "gres/gpu=2".
// `mem_unit` ('K', 'M', 'G', 'T', 'P'): memory in that unit, as sacct --units prints it ("mem=16384M";
// two decimals when not whole).
std::string format_tres_sacct(const TresMap& tres, std::optional<char> mem_unit = std::nullopt);
// `value` counted in unit `from` re-counted in unit `to`, both one of "KMGTP"
// (1024 apart): 16384 'M' to 'G' is 16. An unknown unit leaves it as it is.
double in_unit(double value, char from, char to);
// Megabytes in `unit` ("16384M", "16G", "0.98G").
std::string mb_in_unit(int64_t mb, char unit);
// A size in `from` units shown in `unit` as Slurm's sacct --units shows it:
// whole numbers bare ("70476K", "1G"), others with two decimals ("0.07G").
std::string size_in_unit(double value, char from, char unit);

}  // namespace drover
