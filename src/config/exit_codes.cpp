#include "config/exit_codes.hpp"

#include <string>

#include "common/strings.hpp"

namespace drover::config {

Result<ExitCodes> parse_exit_codes(std::string_view list) {
  ExitCodes out;
  for (const auto& item : split(list, ',')) {
    const auto dash = item.find('-');
    auto lo = parse_int(item.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : parse_int(item.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi > 255 || *hi < *lo) {
      return make_error("'" + item + "' is not an exit code (0-255) or a range of them (lo-hi)");
    }
    for (int64_t c = *lo; c <= *hi; ++c) out.set(static_cast<std::size_t>(c));
  }
  return out;
}

}  // namespace drover::config
