#include "rpc/local_signer.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "rpc/token.hpp"
#include "rpc/unix_listener.hpp"
#include "rpc/wire.hpp"

namespace drover::rpc {

struct LocalSigner::Impl {
  std::unique_ptr<UnixListener> listener;
};

Result<std::unique_ptr<LocalSigner>> LocalSigner::start(const std::string& path, ClusterKey key,
                                                       bool* served_elsewhere, int64_t token_lifetime_s) {
  *served_elsewhere = false;
  if (auto fd = connect_unix(path)) {  // a live signer answers there
    ::close(*fd);
    *served_elsewhere = true;
    return std::unique_ptr<LocalSigner>();
  }
  std::error_code ec;
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return make_error("cannot create " + dir.string() + " for the local signer's socket: " + ec.message());
    ::chmod(dir.c_str(), 0755);
  }
  UnixListenerOptions o;
  o.path = path;
  o.mode = 0666;  // every local user may ask; the kernel says who they are
  auto listener = UnixListener::open(o);
  if (!listener) {
    if (listener.error().message.find(" is held") != std::string::npos) {  // another signer is starting there
      *served_elsewhere = true;
      return std::unique_ptr<LocalSigner>();
    }
    return make_error("local signer: " + listener.error().message);
  }
  std::unique_ptr<LocalSigner> s(new LocalSigner(path, std::move(key), token_lifetime_s));
  s->impl_->listener = std::move(*listener);
  LocalSigner* self = s.get();
  s->impl_->listener->start([self](int fd, const PeerCredentials& peer) {
    // One token for the peer's own uid and gid; the connection is closed after it.
    std::string token = sign_token(self->key_, new_claims(peer.uid, peer.gid, unix_now_s(), self->lifetime_s_)) + "\n";
    self->given_.fetch_add(1);
    (void)send_now(fd, token);  // a token is ~150 bytes: the socket buffer takes it at once
    ::close(fd);
  });
  return s;
}

LocalSigner::LocalSigner(std::string path, ClusterKey key, int64_t lifetime_s)
    : path_(std::move(path)), key_(std::move(key)), lifetime_s_(lifetime_s), impl_(std::make_unique<Impl>()) {}

LocalSigner::~LocalSigner() {
  if (impl_->listener) impl_->listener->stop();
}

Result<std::string> fetch_local_token(const std::string& path) {
  auto fd = connect_unix(path);
  if (!fd) return make_error("the local signer " + fd.error().message);
  std::string out;
  char buf[512];
  for (;;) {
    ssize_t n = ::read(*fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
      if (out.size() > 4096) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  ::close(*fd);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  if (out.empty() || out.find('\n') != std::string::npos || out.size() > 1024) {
    return make_error("the local signer at " + path + " gave no token");
  }
  return out;
}

}  // namespace drover::rpc
