// sbcast on the node: one block of a file written as the job's user. The
// agent runs as root; the block is written by a child that has become the
// user (groups, gid, uid), so the file is theirs and the kernel checks their
// rights to the directory, as it would for the job itself.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "agent/user_info.hpp"

namespace drover::agent {

struct FileBlock {
  std::string path;         // absolute
  int64_t offset = 0;
  std::string_view data;
  bool first = false;       // create the file (O_EXCL unless force; truncated with force)
  bool last = false;        // set the mode (and with preserve the times)
  bool force = false;
  mode_t mode = 0644;       // the source's permission bits
  bool preserve = false;
  int64_t atime = 0, mtime = 0;
};

struct BlockWritten {
  int error_number = 0;     // 0: written; else errno
  std::string error;        // "open /x/y: File exists"
};

// Writes `b` as `user` (as the agent itself when `user` is the agent's own
// uid or the agent is not root; an agent that is not root refuses any other
// uid with EPERM).
BlockWritten write_file_block(const FileBlock& b, const UserInfo& user);

}  // namespace drover::agent
