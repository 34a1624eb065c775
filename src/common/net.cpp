#include "common/net.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

namespace drover {

std::string ipv4_address(const std::string& host) {
  if (host.empty()) return "";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found) return "";
  char ip[INET_ADDRSTRLEN] = {};
  const auto* a = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
  std::string out = inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip) ? ip : "";
  freeaddrinfo(found);
  return out;
}

}  // namespace drover
