// Internal to the host-list code (hostlist.cpp, hostlist_slurm.cpp,
// hostlist_fold.cpp): digit strings compared and stepped without converting
// them to integers, so any length works and padding is never lost; and the
// expansion that also reports where each name's number starts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover::hostlist_detail {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "01" is zero-padded; "0" and "10" are not.
inline bool is_padded(std::string_view digits) { return digits.size() > 1 && digits[0] == '0'; }

// Order of digit strings used by both Slurm and ClusterShell: shorter first,
// then by value ("9" < "10", "2" < "01", "01" < "10").
inline bool digits_less(std::string_view a, std::string_view b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// True when the value of `next` is the value of `prev` plus one (padding ignored).
bool is_successor(std::string_view prev, std::string_view next);

// Two neighbours in a range must print alike: the same width, or both unpadded
// ("9","10" and "09","10" chain; "8","09" do not).
inline bool same_width_class(std::string_view a, std::string_view b) {
  return a.size() == b.size() || (!is_padded(a) && !is_padded(b));
}

// Natural order of two texts: digit runs compare by value ("r9n" < "r10n"),
// except that a run starting with '0' compares digit by digit ("a01b" < "a1b").
int natural_compare(std::string_view a, std::string_view b);

// Length of the run of digits that ends `s` (0 when `s` does not end in a digit).
std::size_t trailing_digits(std::string_view s);

// hostlist_expand, and when `splits` is given, where each name's number
// starts as Slurm's host list keeps it: at the value of the last bracket when
// the word ends with it ("a0[21-32]" -> "a0" + "21"), else at the name's
// trailing digits (name.size() when it has none).
Result<std::vector<std::string>> expand(std::string_view expr, std::size_t max_hosts,
                                        std::vector<std::size_t>* splits);

}  // namespace drover::hostlist_detail
