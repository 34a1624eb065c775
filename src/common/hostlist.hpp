// Slurm host lists: "gpu[01-32]", "a[1-3,5],b[08-10]", "rack[1-2]-n[01-04]",
// "/dev/nvidia[0-7]". Zero padding is significant ("01" and "1" differ).
// Several bracket groups in one word expand as a cartesian product, leftmost
// group varying slowest ("r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover {

inline constexpr std::size_t kMaxHostlistSize = 1u << 22;  // refuse to expand more than this

// Expand in order, keeping duplicates (as `scontrol show hostnames` does).
// Errors name the offending text: unbalanced brackets, bad range "5-3",
// empty element, more than kMaxHostlistSize hosts.
Result<std::vector<std::string>> hostlist_expand(std::string_view expr,
                                                 std::size_t max_hosts = kMaxHostlistSize);

// Compress keeping the given order; consecutive hosts that differ only in a
// numeric suffix of equal padding are merged into ranges. This is what
// `scontrol show hostlist` prints for a list it is given.
std::string hostlist_compress(const std::vector<std::string>& hosts);

// Sort (by prefix, then numerically, padding-aware), remove duplicates and
// compress to the shortest canonical form, folding several dimensions where
// possible. Must agree with ClusterShell's `nodeset -f`.
std::string hostlist_compress_sorted(const std::vector<std::string>& hosts);

// Convenience: expand then compress_sorted (errors as hostlist_expand).
Result<std::string> hostlist_canonical(std::string_view expr);

}  // namespace drover
