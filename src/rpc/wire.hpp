// Frames of the local fast path (proto/drover/v1/wire.proto): a length, a
// 16-bit kind (the method in a request, the gRPC status code in a reply) and
// the bytes. Blocking I/O on a connected Unix socket. No grpcpp here.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.hpp"

namespace drover::rpc {

struct WireFrame {
  uint16_t kind = 0;
  std::string payload;
};

inline constexpr std::size_t kMaxWireFrame = 64u << 20;

Status write_frame(int fd, uint16_t kind, const std::string& payload);
// A frame's bytes, as write_frame sends them.
std::string encode_frame(uint16_t kind, const std::string& payload);
// Sends what the socket takes now without waiting (MSG_DONTWAIT); how many
// bytes went (0 when none could, or on an error, which the next blocking
// write reports).
std::size_t send_now(int fd, const std::string& bytes);
// Sends bytes[from..] with blocking writes.
Status send_rest(int fd, const std::string& bytes, std::size_t from);
// An error "closed" at a clean end of stream before any byte of a frame.
Result<WireFrame> read_frame(int fd, std::size_t max_bytes = kMaxWireFrame);
// Connects to the Unix socket at `path` (blocking); the descriptor, or why not.
Result<int> connect_unix(const std::string& path);

}  // namespace drover::rpc
