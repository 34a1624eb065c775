// Host names as addresses.
#pragma once

#include <string>

namespace drover {

// The first IPv4 address `host` resolves to, in dotted form ("127.0.0.1"),
// or "" when it resolves to none.
std::string ipv4_address(const std::string& host);

}  // namespace drover
