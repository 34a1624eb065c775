#include "rpc/testing.hpp"

#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "rpc/cluster_key.hpp"

namespace drover::rpc::testing {

Result<TempDir> TempDir::create(std::string_view prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/{}-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return make_error(fmt::format("cannot create temporary directory {}: {}", pattern, std::strerror(errno)));
  }
  return TempDir(std::string(buf.data()));
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

// A socket bound to a free port on `host` (reusable when `reuse`), or why not.
Result<std::pair<int, int>> bind_free_port(const std::string& host, bool reuse) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return make_error(fmt::format("'{}' is not an IPv4 address", host));
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(fmt::format("socket: {}", std::strerror(errno)));
  int one = 1;
  if (reuse) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Error e = make_error(fmt::format("cannot bind a free port on {}: {}", host, std::strerror(errno)));
    ::close(fd);
    return e;
  }
  return std::pair<int, int>{fd, static_cast<int>(ntohs(addr.sin_port))};
}

}  // namespace

Result<int> reserve_tcp_port(const std::string& host) {
  auto bound = bind_free_port(host, false);
  if (!bound) return bound.error();
  ::close(bound->first);
  return bound->second;
}

Result<HeldPort> HeldPort::take(const std::string& host) {
  auto bound = bind_free_port(host, true);
  if (!bound) return bound.error();
  return HeldPort(bound->first, bound->second);
}

HeldPort::~HeldPort() {
  if (fd_ >= 0) ::close(fd_);
}

Status write_test_key(const std::string& path) { return create_cluster_key(path); }

}  // namespace drover::rpc::testing
