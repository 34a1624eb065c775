// The cluster key: a secret file shared by the controller, the agents and
// root on every host; whoever can read it can sign a token for any uid, so
// it must be readable only by root and SlurmUser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover::rpc {

inline constexpr std::size_t kMinKeyBytes = 32;
inline constexpr std::size_t kMaxKeyBytes = 4096;

struct ClusterKey {
  std::string path;
  std::string secret;  // the file's bytes, exactly (a trailing newline is part of the key)
  std::string id;      // 8 hex digits derived from the secret; safe to show and log
};

// The public id of a secret: first 4 bytes of SHA-256("drover-key-id\0" + secret), hex.
std::string key_id(std::string_view secret);

// Reads and checks a key file. Refuses (with the fix in the message) a file
// that is not regular, that group or others may read or write, that is owned
// by someone other than root, the effective uid or one of `extra_owner_uids`
// (SlurmUser), or whose size is outside [kMinKeyBytes, kMaxKeyBytes].
Result<ClusterKey> load_cluster_key(const std::string& path,
                                    const std::vector<uint32_t>& extra_owner_uids = {});

// Creates a new key file with 64 random bytes and mode 0600. Refuses to
// overwrite an existing file.
Status create_cluster_key(const std::string& path);

}  // namespace drover::rpc
