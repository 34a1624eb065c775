// The local signer (munge's role in Slurm): a Unix socket on a host, served
// by a holder of the cluster key (every agent offers it; `drover authd` on a
// login node with no agent), that hands whoever connects one request token
// (token.hpp) for their own uid and gid, which the kernel tells it
// (SO_PEERCRED). Plain users cannot read the key, so this is how their
// commands on a host other than the controller's reach it over TCP.
//
//   auto s = LocalSigner::start("/run/drover/auth.sock", key, &elsewhere);  // server
//   Result<std::string> token = fetch_local_token("/run/drover/auth.sock");  // client
//
// On the wire: the server writes the token and a newline, then closes.
// Where the socket is: slurm.conf AuthInfo=socket=PATH (as Slurm's
// auth/munge names munged's socket), default /run/drover/auth.sock
// (config::ClusterConfig::auth_socket_path).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "common/result.hpp"
#include "rpc/cluster_key.hpp"

namespace drover::rpc {

class LocalSigner {
 public:
  // Serves at `path` (mode 0666; its directory is made if missing). When a
  // signer already answers there (another agent on this host), returns
  // nullptr and sets *served_elsewhere; a socket nobody answers on is replaced.
  static Result<std::unique_ptr<LocalSigner>> start(const std::string& path, ClusterKey key,
                                                    bool* served_elsewhere, int64_t token_lifetime_s = 60);
  ~LocalSigner();  // stops serving and removes the socket
  LocalSigner(const LocalSigner&) = delete;
  LocalSigner& operator=(const LocalSigner&) = delete;

  const std::string& path() const { return path_; }
  uint64_t tokens_given() const { return given_; }

 private:
  struct Impl;
  LocalSigner(std::string path, ClusterKey key, int64_t lifetime_s);

  std::string path_;
  ClusterKey key_;
  int64_t lifetime_s_;
  std::atomic<uint64_t> given_{0};
  std::unique_ptr<Impl> impl_;  // the listener (unix_listener.hpp)
};

// A token for this process's uid and gid from the signer at `path`.
Result<std::string> fetch_local_token(const std::string& path);

}  // namespace drover::rpc
