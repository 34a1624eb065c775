#include "rpc/wire.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace drover::rpc {
namespace {

Status write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return make_error(std::string("write: ") + std::strerror(errno));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return {};
}

// false at end of stream; `got` says how many bytes came before it.
Result<bool> read_all(int fd, char* p, std::size_t n, std::size_t& got) {
  got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return make_error(std::string("read: ") + std::strerror(errno));
    if (r == 0) return false;
    got += static_cast<std::size_t>(r);
  }
  return true;
}

void put_u32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

}  // namespace

std::string encode_frame(uint16_t kind, const std::string& payload) {
  std::string buf;
  buf.reserve(8 + payload.size());
  buf.resize(8, '\0');
  put_u32(buf.data(), static_cast<uint32_t>(payload.size() + 4));
  buf[4] = static_cast<char>(kind & 0xff);
  buf[5] = static_cast<char>(kind >> 8);
  buf += payload;
  return buf;
}

Status write_frame(int fd, uint16_t kind, const std::string& payload) {
  std::string buf = encode_frame(kind, payload);
  return write_all(fd, buf.data(), buf.size());
}

std::size_t send_now(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t w = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    sent += static_cast<std::size_t>(w);
  }
  return sent;
}

Status send_rest(int fd, const std::string& bytes, std::size_t from) {
  if (from >= bytes.size()) return {};
  return write_all(fd, bytes.data() + from, bytes.size() - from);
}

Result<WireFrame> read_frame(int fd, std::size_t max_bytes) {
  char head[8];
  std::size_t got = 0;
  auto r = read_all(fd, head, sizeof head, got);
  if (!r) return r.error();
  if (!*r) return make_error(got == 0 ? "closed" : "connection closed in the middle of a frame");
  uint32_t len = get_u32(head);
  if (len < 4 || len - 4 > max_bytes) return make_error("frame of " + std::to_string(len) + " bytes refused");
  WireFrame f;
  f.kind = static_cast<uint16_t>(static_cast<unsigned char>(head[4]) | (static_cast<unsigned char>(head[5]) << 8));
  f.payload.resize(len - 4);
  r = read_all(fd, f.payload.data(), f.payload.size(), got);
  if (!r) return r.error();
  if (!*r) return make_error("connection closed in the middle of a frame");
  return f;
}

Result<int> connect_unix(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return make_error("Unix socket path " + path + " is too long");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    ::close(fd);
    return make_error("cannot connect to " + path + ": " + std::strerror(e));
  }
  return fd;
}

}  // namespace drover::rpc
