#include "rpc/cluster_key.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/fd_io.hpp"
#include "rpc/crypto.hpp"

namespace drover::rpc {
namespace {

Status check_key_file(const std::string& path, const struct stat& st,
                      const std::vector<uint32_t>& extra_owner_uids) {
  if (!S_ISREG(st.st_mode)) {
    return make_error(fmt::format("cluster key {} is not a regular file", path));
  }
  if ((st.st_mode & 077) != 0) {
    return make_error(fmt::format(
        "cluster key {} has mode {:04o}: group or others may read or write it, and whoever reads "
        "it can act as any user, root included; refusing to use it. Fix: chmod 600 {}",
        path, st.st_mode & 07777, path));
  }
  const uint32_t owner = st.st_uid;
  const bool trusted = owner == 0 || owner == ::geteuid() ||
      std::find(extra_owner_uids.begin(), extra_owner_uids.end(), owner) != extra_owner_uids.end();
  if (!trusted) {
    return make_error(fmt::format(
        "cluster key {} is owned by uid {}; it must be owned by root or SlurmUser. Fix: chown root {}",
        path, owner, path));
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size < kMinKeyBytes || size > kMaxKeyBytes) {
    return make_error(fmt::format(
        "cluster key {} holds {} bytes; it needs {} to {}. Create one with: "
        "(umask 077; head -c 64 /dev/urandom > {})",
        path, size, kMinKeyBytes, kMaxKeyBytes, path));
  }
  return {};
}

Result<std::string> read_all(int fd, const std::string& path) {
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(fmt::format("cannot read cluster key {}: {}", path, std::strerror(errno)));
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > kMaxKeyBytes) return make_error(fmt::format("cluster key {} grew while being read", path));
  }
}

}  // namespace

std::string key_id(std::string_view secret) {
  std::string message("drover-key-id");
  message.push_back('\0');
  message.append(secret);
  auto digest = sha256(message);
  return to_hex(std::string_view(reinterpret_cast<const char*>(digest.data()), 4));
}

Result<ClusterKey> load_cluster_key(const std::string& path,
                                    const std::vector<uint32_t>& extra_owner_uids) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    std::string hint;
    if (err == EACCES) {
      hint = " (the key is readable only by root and SlurmUser; see docs/rpc.md \"Users over TCP\")";
    } else if (err == ENOENT) {
      hint = fmt::format(" (make one with: (umask 077; head -c 64 /dev/urandom > {}), the same file on every host "
                         "of the cluster; or name another with AuthInfo=key=PATH in slurm.conf)",
                         path);
    }
    return make_error(fmt::format("cannot read cluster key {}: {}{}", path, std::strerror(err), hint));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return make_error(fmt::format("cannot stat cluster key {}: {}", path, std::strerror(errno)));
  }
  if (auto ok = check_key_file(path, st, extra_owner_uids); !ok) return ok.error();
  auto secret = read_all(fd.get(), path);
  if (!secret) return secret.error();
  if (secret->size() < kMinKeyBytes) {
    return make_error(fmt::format("cluster key {} shrank while being read", path));
  }
  ClusterKey key;
  key.path = path;
  key.id = key_id(*secret);
  key.secret = std::move(*secret);
  return key;
}

Status create_cluster_key(const std::string& path) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (fd.get() < 0) {
    return make_error(fmt::format("cannot create cluster key {}: {}", path, std::strerror(errno)));
  }
  // The umask may have removed bits but never adds any; make the mode exact anyway.
  if (::fchmod(fd.get(), 0600) != 0) {
    return make_error(fmt::format("cannot chmod cluster key {}: {}", path, std::strerror(errno)));
  }
  const std::string secret = random_bytes(64);
  if (::write(fd.get(), secret.data(), secret.size()) != static_cast<ssize_t>(secret.size()) ||
      ::fsync(fd.get()) != 0) {
    return make_error(fmt::format("cannot write cluster key {}: {}", path, std::strerror(errno)));
  }
  return {};
}

}  // namespace drover::rpc
