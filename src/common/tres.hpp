// Trackable resources (TRES): named counts such as cpu, mem (MB), node,
// billing, energy, gres/gpu, gres/gpu:h100, license/fsbw.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace drover {

// Canonical names: category lower-cased ("cpu", "mem", "node", "billing",
// "energy", "gres/<name>[:<type>]", "license/<name>", "fs/disk", "bb/<name>");
// gres and license names keep their own spelling.
using TresMap = std::map<std::string, int64_t>;

// "cpu=16000,gres/gpu=256,mem=1T,node=4,gres/gpu:h100=64,license/fsbw=10".
// mem takes memory suffixes (result in MB); other counts take K/M/G as
// 1024 multiples, as Slurm does. Names are case-insensitive ("CPU", "GRES/gpu").
// Errors name the bad item and why.
Result<TresMap> parse_tres(std::string_view s);

// Canonicalise one name ("CPU" -> "cpu", "GRES/gpu" -> "gres/gpu"); empty if invalid.
std::string canonical_tres_name(std::string_view name);

// Slurm's order: cpu, mem, energy, node, billing, fs/disk, vmem, pages, then
// gres/..., license/..., bb/... alphabetically; mem printed with format_memory_mb
// ("mem=1000000M", "mem=250G").
std::string format_tres(const TresMap& tres);

}  // namespace drover
