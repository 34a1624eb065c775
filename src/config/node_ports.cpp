#include "config/node_ports.hpp"

#include "common/strings.hpp"

namespace drover::config {

namespace {
const char* const kExpected = "expected a port from 1 to 65535, or a list such as [17001-17004]";

std::optional<int> port_of(std::string_view s) {
  auto v = parse_int(s);
  if (!v || *v < 1 || *v > 65535) return std::nullopt;
  return static_cast<int>(*v);
}
}  // namespace

Result<std::vector<int>> expand_ports(std::string_view s) {
  std::vector<int> out;
  bool bracketed = s.size() >= 2 && s.front() == '[' && s.back() == ']';
  std::string_view body = bracketed ? s.substr(1, s.size() - 2) : s;
  for (const auto& item : split(body, ',')) {
    auto dash = item.find('-');
    auto lo = port_of(std::string_view(item).substr(0, dash));
    auto hi = dash == std::string::npos ? lo : port_of(std::string_view(item).substr(dash + 1));
    if (!lo || !hi || *hi < *lo || (!bracketed && (dash != std::string::npos || body.find(',') != std::string_view::npos))) {
      return make_error(kExpected);
    }
    for (int p = *lo; p <= *hi; ++p) out.push_back(p);
    if (out.size() > kMaxPortsPerLine) return make_error(kExpected);
  }
  if (out.empty()) return make_error(kExpected);
  return out;
}

}  // namespace drover::config
