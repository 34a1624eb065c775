// Writing all of a buffer to a file descriptor (a pipe, a file, a socket a
// peer reads): write(2) again after a short write or EINTR.
#pragma once

#include <cstddef>
#include <string_view>

namespace drover {

// false (errno set) when a write failed; what went before it was written.
bool write_all(int fd, const char* p, std::size_t n);
inline bool write_all(int fd, std::string_view s) { return write_all(fd, s.data(), s.size()); }

}  // namespace drover
