#include "rpc/identity.hpp"

#include <fmt/format.h>

namespace drover::rpc {

std::string_view transport_name(Transport transport) {
  switch (transport) {
    case Transport::kUnixSocket: return "unix";
    case Transport::kTcp: return "tcp";
  }
  return "unknown";
}

std::string Identity::describe() const {
  if (user_name.empty()) return fmt::format("uid {}", uid);
  return fmt::format("{}({})", user_name, uid);
}

}  // namespace drover::rpc
