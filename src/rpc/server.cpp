#include "rpc/server.hpp"

#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/service_type.h>
#include <grpcpp/server_posix.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/strings.hpp"
#include "rpc/authenticator.hpp"
#include "rpc/cluster_key.hpp"
#include "rpc/unix_listener.hpp"

namespace drover::rpc {

Result<HostPort> parse_host_port(std::string_view address) {
  std::string_view host;
  std::string_view port;
  if (address.starts_with("[")) {
    auto close = address.find(']');
    if (close == std::string_view::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return make_error(fmt::format("address '{}' must look like [v6addr]:port", address));
    }
    host = address.substr(1, close - 1);
    port = address.substr(close + 2);
  } else {
    auto colon = address.rfind(':');
    if (colon == std::string_view::npos || address.find(':') != colon) {
      return make_error(fmt::format("address '{}' must look like host:port (IPv6 as [addr]:port)", address));
    }
    host = address.substr(0, colon);
    port = address.substr(colon + 1);
  }
  auto number = parse_int(port);
  if (host.empty() || !number || *number > 65535) {
    return make_error(fmt::format("address '{}' needs a host and a port from 0 to 65535", address));
  }
  return HostPort{std::string(host), static_cast<int>(*number)};
}

namespace {

// gRPC only logs why a port could not be bound; find out ourselves so the
// message can say what to do.
std::string diagnose_tcp_bind(const std::string& address) {
  auto hp = parse_host_port(address);
  if (!hp) return hp.error().message;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(hp->port);
  if (int rc = ::getaddrinfo(hp->host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return fmt::format("cannot resolve host '{}': {}", hp->host, ::gai_strerror(rc));
  }
  std::string why = "gRPC could not listen there (no reason found; run with GRPC_VERBOSITY=debug)";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const bool bound = ::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    const int err = errno;
    ::close(fd);
    if (bound) continue;
    if (err == EADDRINUSE) {
      why = fmt::format("port {} is already in use (another daemon, or another program: see "
                        "`ss -ltnp 'sport = :{}'`); stop it or configure another port",
                        hp->port, hp->port);
    } else if (err == EADDRNOTAVAIL) {
      why = fmt::format("address {} does not belong to this host", hp->host);
    } else if (err == EACCES) {
      why = fmt::format("port {} needs privileges (ports below 1024 are for root)", hp->port);
    } else {
      why = std::strerror(err);
    }
    break;
  }
  ::freeaddrinfo(found);
  return why;
}

}  // namespace

RpcServer::RpcServer(ServerOptions options)
    : options_(std::move(options)), auth_(std::make_unique<ServerAuthenticator>()) {}

RpcServer::~RpcServer() { shutdown(std::chrono::milliseconds(0)); }

const CallAuthenticator& RpcServer::authenticator() const { return *auth_; }

void ServiceDeleter::operator()(grpc::Service* service) const { delete service; }

void RpcServer::add_service(grpc::Service* service) { services_.push_back(service); }

void RpcServer::add_service(ServicePtr service) {
  services_.push_back(service.get());
  owned_services_.push_back(std::move(service));
}

uint64_t RpcServer::unix_connections() const { return listener_ ? listener_->accepted() : 0; }

Status RpcServer::load_keys() {
  if (options_.key_paths.empty()) {
    if (options_.tcp_address.empty()) return {};
    return make_error(fmt::format(
        "cannot serve TCP on {} without a cluster key: configure the key file (see docs/rpc.md)",
        options_.tcp_address));
  }
  std::vector<ClusterKey> keys;
  for (const auto& path : options_.key_paths) {
    auto key = load_cluster_key(path, options_.key_owner_uids);
    if (!key) return key.error();
    keys.push_back(std::move(*key));
  }
  auth_->set_token_verifier(std::make_unique<TokenVerifier>(std::move(keys), options_.token_policy));
  return {};
}

Status RpcServer::build_grpc_server() {
  grpc::ServerBuilder builder;
  // Without this, a second server binds the same port and steals connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options_.max_receive_message_bytes);
  // gRPC's sync server ends a thread that finds more than MAX_POLLERS (2 by
  // default) others waiting, and starts one when none is: with calls that
  // overlap (an agent's Launch waits for its step daemon) that is a thread
  // made and destroyed for nearly every call. Keep up to 8 waiting.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 8);
  if (!options_.tcp_address.empty()) {
    builder.AddListeningPort(options_.tcp_address, grpc::InsecureServerCredentials(), &tcp_port_);
  }
  for (grpc::Service* service : services_) builder.RegisterService(service);
  server_ = builder.BuildAndStart();
  if (!server_) {
    if (!options_.tcp_address.empty()) {
      return make_error(fmt::format("cannot listen on TCP {}: {}", options_.tcp_address,
                                    diagnose_tcp_bind(options_.tcp_address)));
    }
    return make_error("gRPC could not start the server (run with GRPC_VERBOSITY=debug for details)");
  }
  return {};
}

Status RpcServer::start() {
  if (started_) return make_error("RPC server already started");
  // Debian builds Abseil without NDEBUG, which leaves absl::Mutex's deadlock
  // detection on: every lock gRPC takes in a daemon updated a global lock
  // graph (GraphCycles, ~0.5% of the machine's CPU in a sequential sbatch
  // loop). Abseil's own release builds have it off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (options_.unix_socket_path.empty() && options_.tcp_address.empty()) {
    return make_error("RPC server has neither a Unix socket path nor a TCP address to serve on");
  }
  if (!options_.tcp_address.empty()) {
    if (auto hp = parse_host_port(options_.tcp_address); !hp) return hp.error();
  }
  if (auto ok = load_keys(); !ok) return ok;
  if (!options_.unix_socket_path.empty()) {
    auto listener = UnixListener::open({options_.unix_socket_path, options_.unix_lock_path});
    if (!listener) return listener.error();
    listener_ = std::move(*listener);
  }
  if (auto ok = build_grpc_server(); !ok) {
    listener_.reset();
    return ok;
  }
  if (listener_) {
    listener_->start([this](int fd, const PeerCredentials& peer) {
      auth_->add_unix_connection(fd, peer);  // before gRPC can see a call on it
      grpc::AddInsecureChannelFromFd(server_.get(), fd);
    });
  }
  started_ = true;
  return {};
}

void RpcServer::shutdown(std::chrono::milliseconds grace) {
  if (!started_ || shut_down_) return;
  shut_down_ = true;
  if (listener_) listener_->stop();
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
}

}  // namespace drover::rpc
