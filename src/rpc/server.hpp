// RpcServer: serves a set of gRPC services on a Unix socket and/or a TCP
// address, with authentication (see identity.hpp for the handler side).
//
//   rpc::ServerOptions opts;
//   opts.unix_socket_path = state_dir + "/ctld.sock";
//   opts.tcp_address = "0.0.0.0:6817";
//   opts.key_paths = {"/etc/drover/drover.key"};
//   rpc::RpcServer server(opts);
//   MyService svc(server.authenticator());     // a grpc::Service (sync or callback)
//   server.add_service(&svc);
//   if (auto st = server.start(); !st) { print st.error().message; exit 1; }
//   ... server.shutdown();
//
// This header does not include grpcpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "rpc/identity.hpp"
#include "rpc/token.hpp"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace drover::rpc {

class ServerAuthenticator;
class UnixListener;

// Owns a service where grpc::Service is an incomplete type (the deleter is
// defined in server.cpp), so files without grpcpp can hold one.
struct ServiceDeleter {
  void operator()(grpc::Service* service) const;
};
using ServicePtr = std::unique_ptr<grpc::Service, ServiceDeleter>;

struct ServerOptions {
  // Unix socket to serve on; empty: none. Mode 0666: every local user may
  // connect, and the kernel tells the server who they are.
  std::string unix_socket_path;
  // Lock file that makes a second daemon refuse to start; default
  // unix_socket_path + ".lock".
  std::string unix_lock_path;
  // "host:port", "[v6addr]:port" or "0.0.0.0:port"; empty: no TCP. Port 0
  // lets the kernel pick a free port (read it back with tcp_port()).
  std::string tcp_address;
  // Cluster key files whose tokens are accepted over TCP (more than one
  // during a key rotation). Required when tcp_address is set.
  std::vector<std::string> key_paths;
  // Owners besides root and the effective uid that a key file may have (SlurmUser).
  std::vector<uint32_t> key_owner_uids;
  TokenPolicy token_policy;
  // Largest request accepted, in bytes.
  int max_receive_message_bytes = 16 << 20;
};

class RpcServer {
 public:
  explicit RpcServer(ServerOptions options);
  ~RpcServer();
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // What handlers identify callers with; valid for the server's lifetime,
  // usable before start().
  const CallAuthenticator& authenticator() const;
  // Registers a service (not owned; must outlive the server). Before start().
  void add_service(grpc::Service* service);
  // Registers a service the server owns. Before start().
  void add_service(ServicePtr service);

  // Loads keys, takes the socket lock, binds TCP then the Unix socket, and
  // starts serving. Every failure says what and where; nothing is left bound.
  Status start();
  // The bound TCP port (after start; 0 when no TCP).
  int tcp_port() const { return tcp_port_; }
  const ServerOptions& options() const { return options_; }
  // Connections accepted on the Unix socket so far.
  uint64_t unix_connections() const;

  // Stops accepting, lets calls in progress finish for up to `grace`, then
  // cancels the rest and removes the socket file. Idempotent. Returns once
  // every call has ended, so every handler must eventually Finish its calls
  // (one that replies from a store completion does: completions always run).
  // Shut the server down before closing the store it replies from.
  void shutdown(std::chrono::milliseconds grace = std::chrono::seconds(2));

 private:
  Status load_keys();
  Status build_grpc_server();

  ServerOptions options_;
  std::unique_ptr<ServerAuthenticator> auth_;
  std::vector<grpc::Service*> services_;
  std::vector<ServicePtr> owned_services_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<UnixListener> listener_;
  int tcp_port_ = 0;
  bool started_ = false;
  bool shut_down_ = false;
};

// Splits "host:port" / "[v6]:port"; the error says what is wrong with the text.
struct HostPort {
  std::string host;
  int port = 0;
};
Result<HostPort> parse_host_port(std::string_view address);

}  // namespace drover::rpc
