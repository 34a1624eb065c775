// Port= on a NodeName line: one port, or a bracketed list/range giving one
// port per node of the line ("[17001-17002]", "[17001,17005-17006]").
#pragma once

#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover::config {

inline constexpr std::size_t kMaxPortsPerLine = 65535;

// Errors say what was expected. Never returns an empty list.
Result<std::vector<int>> expand_ports(std::string_view s);

}  // namespace drover::config
