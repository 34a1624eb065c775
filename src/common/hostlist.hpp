// Slurm host lists: "gpu[01-32]", "a[1-3,5],b[08-10]", "rack[1-2]-n[01-04]",
// "/dev/nvidia[0-7]". Zero padding is significant ("01" and "1" differ).
//
// Syntax accepted by hostlist_expand (Slurm's, plus two extensions):
// - items are separated by commas or white space; empty items are skipped
//   ("a,,b" is a,b), as Slurm does;
// - a bracket holds numbers and ranges "lo-hi" separated by commas; every
//   number of a range is printed with the width of "lo" ("[01-3]" is 01 02 03,
//   "[9-11]" is 9 10 11), as Slurm does;
// - a word may hold several bracket groups, adjacent ("a[1-2][3-4]") or apart
//   ("rack[1-2]-n[01-04]"); text after the last bracket ("n[1-4]-ib") is a
//   Drover extension (Slurm rejects it, ClusterShell accepts it).
//
// Expansion order is Slurm's (`scontrol show hostnames`): with one or two
// groups the leftmost varies slowest ("r[1-2]n[1-2]" -> r1n1 r1n2 r2n1 r2n2).
// With three or more groups the last group varies fastest and the others vary
// from the second-to-last (slowest) down to the first: "x[1-2]y[3-4]z[5-6]"
// -> x1y3z5 x1y3z6 x2y3z5 x2y3z6 x1y4z5 ... (measured on Slurm 22.05).
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
// empty range element ("a[1,,2]"), more than max_hosts hosts.
Result<std::vector<std::string>> hostlist_expand(std::string_view expr,
                                                 std::size_t max_hosts = kMaxHostlistSize);

// Compress keeping the given order; consecutive hosts that differ only in a
// numeric suffix of compatible padding are merged into ranges, and
// consecutive ranges of one prefix share a bracket ("gpu[03,01-02]"). This is
// what `scontrol show hostlist` prints for a list it is given. Duplicates are
// kept ("a[1-2,1]").
std::string hostlist_compress(const std::vector<std::string>& hosts);

// Slurm's host order, as `scontrol show hostlistsorted` uses it: by prefix
// (the text before the trailing digits) in natural order ("r9n" before
// "r10n"), a host without trailing digits before numbered ones of the same
// prefix, then by number, a shorter digit string first ("a2" before "a01").
// Stable; duplicates kept.
void hostlist_sort_slurm(std::vector<std::string>& hosts);

// What `scontrol show hostlistsorted` prints: hostlist_sort_slurm, then
// hostlist_compress. Not unique: "tux2,tux1,tux2" -> "tux[1-2,2]".
std::string hostlist_compress_slurm_sorted(std::vector<std::string> hosts);

enum class HostlistOrder { kAsGiven, kSorted };

// What `scontrol show hostlist EXPR` (kAsGiven) and `scontrol show
// hostlistsorted EXPR` (kSorted) print. As in Slurm, each host keeps the split
// between text and number that EXPR gave it: "a0[21-32]" prints back as
// "a0[21-32]" (where the names a021..a032 alone would print "a[021-032]"),
// and "a021,a0[22-23]" stays as it is. Errors as hostlist_expand.
Result<std::string> hostlist_ranged(std::string_view expr, HostlistOrder order,
                                    std::size_t max_hosts = kMaxHostlistSize);

// Sort, remove duplicates and compress to the shortest canonical form,
// folding several dimensions where possible ("r[1-2]n[1-2]"). Agrees exactly
// with ClusterShell's `nodeset -f` (checked by a differential test): every
// run of digits in a name is a dimension, names are grouped by the text
// around their digits, and several dimensions are folded as ClusterShell's
// RangeSetND does.
std::string hostlist_compress_sorted(const std::vector<std::string>& hosts);

// Convenience: expand then compress_sorted (errors as hostlist_expand).
Result<std::string> hostlist_canonical(std::string_view expr);

}  // namespace drover
