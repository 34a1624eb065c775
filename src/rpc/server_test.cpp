// End-to-end tests of RpcServer/RpcClient over real sockets: identity from
// the kernel on the Unix socket, signed tokens over TCP, and the refusals.
#include "rpc/server.hpp"

#include <fcntl.h>
#include <grp.h>
#include <grpcpp/create_channel_posix.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <future>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "drover/testing/v1/bench.grpc.pb.h"
#include "drover/v1/ping.grpc.pb.h"
#include "rpc/authenticator.hpp"
#include "rpc/call.hpp"
#include "rpc/client.hpp"
#include "rpc/cluster_key.hpp"
#include "rpc/ping_service.hpp"
#include "rpc/testing.hpp"
#include "rpc/user_names.hpp"

extern char** environ;

namespace drover::rpc {
namespace {

namespace bench = ::drover::testing::v1;
using namespace std::chrono_literals;

ClientOptions client_options(std::string target, std::string key_path = "",
                             std::optional<uint32_t> uid = {}, std::optional<uint32_t> gid = {}) {
  ClientOptions o;
  o.target = std::move(target);
  o.key_path = std::move(key_path);
  o.uid = uid;
  o.gid = gid;
  return o;
}

grpc::Status ping(const std::shared_ptr<grpc::Channel>& channel, v1::PingReply* reply,
                  const std::string* token = nullptr) {
  auto stub = v1::PingService::NewStub(channel);
  grpc::ClientContext ctx;
  set_timeout(ctx, 10s);
  if (token != nullptr) ctx.AddMetadata(kTokenMetadataKey, *token);
  v1::PingRequest request;
  fill_request_header("server_test", request.mutable_header());
  return stub->Ping(&ctx, request, reply);
}

class RpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = testing::TempDir::create("drover-rpc");
    ASSERT_TRUE(d.ok()) << d.error().message;
    dir_ = std::make_unique<testing::TempDir>(std::move(*d));
    key_path_ = dir_->file("drover.key");
    ASSERT_TRUE(create_cluster_key(key_path_).ok());
  }

  ServerOptions options(bool unix_socket, bool tcp) const {
    ServerOptions o;
    if (unix_socket) o.unix_socket_path = dir_->file("ctld.sock");
    if (tcp) {
      o.tcp_address = "127.0.0.1:0";
      o.key_paths = {key_path_};
    }
    return o;
  }

  // Starts a server with a Ping service; fails the test if it cannot.
  std::unique_ptr<RpcServer> start(ServerOptions o) {
    auto server = std::make_unique<RpcServer>(std::move(o));
    server->add_service(make_ping_service(server->authenticator(), "drover-test"));
    Status st = server->start();
    EXPECT_TRUE(st.ok()) << st.error().message;
    return st.ok() ? std::move(server) : nullptr;
  }

  std::string tcp_target(const RpcServer& server) const {
    return "127.0.0.1:" + std::to_string(server.tcp_port());
  }

  std::unique_ptr<testing::TempDir> dir_;
  std::string key_path_;
};

TEST_F(RpcServerTest, UnixSocketIdentifiesTheCallerFromTheKernel) {
  auto server = start(options(true, false));
  ASSERT_TRUE(server);
  auto client = RpcClient::connect(client_options(dir_->file("ctld.sock")));
  ASSERT_TRUE(client.ok());
  v1::PingReply reply;
  grpc::Status st = ping(client->channel(), &reply);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(reply.caller().uid(), ::geteuid());
  EXPECT_EQ(reply.caller().gid(), ::getegid());
  EXPECT_EQ(reply.caller().user_name(), user_name_of(::geteuid()));
  EXPECT_EQ(reply.caller().transport(), "unix");
  EXPECT_EQ(reply.header().server(), "drover-test");
  EXPECT_EQ(server->unix_connections(), 1u);
}

TEST_F(RpcServerTest, UnixSocketIsOpenToEveryLocalUserAndRemovedAtShutdown) {
  auto server = start(options(true, false));
  ASSERT_TRUE(server);
  struct stat st {};
  ASSERT_EQ(::stat(dir_->file("ctld.sock").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  server->shutdown();
  EXPECT_FALSE(std::filesystem::exists(dir_->file("ctld.sock")));
}

// Run by the test below in a child process as another user.
TEST(UnixPeerHelper, PingAndPrintCaller) {
  const char* socket = std::getenv("DROVER_TEST_PING_SOCKET");
  if (socket == nullptr) GTEST_SKIP() << "helper for UnixSocketReportsAnotherUsersUid";
  auto client = RpcClient::connect(client_options(socket));
  ASSERT_TRUE(client.ok());
  v1::PingReply reply;
  grpc::Status st = ping(client->channel(), &reply);
  ASSERT_TRUE(st.ok()) << st.error_message();
  std::printf("caller uid=%u gid=%u transport=%s\n", reply.caller().uid(), reply.caller().gid(),
              reply.caller().transport().c_str());
  std::fflush(stdout);
}

TEST_F(RpcServerTest, UnixSocketReportsAnotherUsersUid) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another user";
  ASSERT_EQ(::chmod(dir_->path().c_str(), 0755), 0);
  auto server = start(options(true, false));
  ASSERT_TRUE(server);
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> env_strings{"DROVER_TEST_PING_SOCKET=" + dir_->file("ctld.sock")};
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=UnixPeerHelper.*";
  char* argv[] = {const_cast<char*>(exe.c_str()), filter.data(), nullptr};
  int out[2];
  ASSERT_EQ(::pipe(out), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::dup2(out[1], 1);
    if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(90);
    ::execve(exe.c_str(), argv, envp.data());
    ::_exit(91);
  }
  ::close(out[1]);
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) output.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "helper failed (90: setuid, 91: exec):\n" << output;
  EXPECT_NE(output.find("caller uid=65534 gid=65534 transport=unix"), std::string::npos) << output;
}

TEST_F(RpcServerTest, TcpTokenIdentifiesTheSignedUid) {
  auto server = start(options(false, true));
  ASSERT_TRUE(server);
  ASSERT_GT(server->tcp_port(), 0);
  auto client = RpcClient::connect(client_options(tcp_target(*server), key_path_, 4242, 4343));
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->signs_requests()) << client->unsigned_reason();
  for (int i = 0; i < 3; ++i) {  // a fresh token every call: no replay refusal
    v1::PingReply reply;
    grpc::Status st = ping(client->channel(), &reply);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(reply.caller().uid(), 4242u);
    EXPECT_EQ(reply.caller().gid(), 4343u);
    EXPECT_EQ(reply.caller().transport(), "tcp");
  }
}

TEST_F(RpcServerTest, TcpWithoutAReadableKeyIsRefusedAndExplained) {
  auto server = start(options(false, true));
  ASSERT_TRUE(server);
  auto client = RpcClient::connect(client_options(tcp_target(*server), dir_->file("no-such.key")));
  ASSERT_TRUE(client.ok());
  EXPECT_FALSE(client->signs_requests());
  v1::PingReply reply;
  grpc::Status st = ping(client->channel(), &reply);
  ASSERT_EQ(st.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(st.error_message().find("missing authentication token"), std::string::npos) << st.error_message();
  std::string explained = client->explain_failure(st.error_code(), st.error_message());
  EXPECT_NE(explained.find("this client sends unsigned requests: cannot read cluster key " + dir_->file("no-such.key")),
            std::string::npos)
      << explained;
}

struct TcpRefusal {
  std::string name;
  std::function<std::vector<std::string>(const ClusterKey& key, const ClusterKey& other)> tokens;
  grpc::StatusCode last_code;
  std::string last_message;
};

TEST_F(RpcServerTest, TcpRefusalsAreClearStatuses) {
  ServerOptions o = options(false, true);
  o.token_policy.replay_cache_entries = 3;
  auto server = start(o);
  ASSERT_TRUE(server);
  auto key = load_cluster_key(key_path_);
  ASSERT_TRUE(key.ok());
  ClusterKey other{"", std::string(64, 'z'), key_id(std::string(64, 'z'))};
  const int64_t now = unix_now_s();
  std::vector<TcpRefusal> cases = {
      {"replayed",
       [&](const ClusterKey& k, const ClusterKey&) {
         std::string t = sign_token(k, new_claims(0, 0, now, 60));
         return std::vector<std::string>{t, t};
       },
       grpc::StatusCode::UNAUTHENTICATED, "replayed token"},
      {"expired", [&](const ClusterKey& k, const ClusterKey&) {
         return std::vector<std::string>{sign_token(k, new_claims(0, 0, now - 600, 60))}; },
       grpc::StatusCode::UNAUTHENTICATED, "token expired"},
      {"unknown key", [&](const ClusterKey&, const ClusterKey& o) {
         return std::vector<std::string>{sign_token(o, new_claims(0, 0, now, 60))}; },
       grpc::StatusCode::UNAUTHENTICATED, "unknown key id " + other.id},
      {"forged", [&](const ClusterKey& k, const ClusterKey&) {
         std::string t = sign_token(k, new_claims(0, 0, now, 60));
         t.back() = t.back() == '0' ? '1' : '0';
         return std::vector<std::string>{t}; },
       grpc::StatusCode::UNAUTHENTICATED, "bad token signature"},
      {"replay cache full", [&](const ClusterKey& k, const ClusterKey&) {
         std::vector<std::string> ts;
         for (int i = 0; i < 3; ++i) ts.push_back(sign_token(k, new_claims(0, 0, now, 60)));
         return ts; },
       grpc::StatusCode::UNAVAILABLE, "server busy"},
  };
  auto channel = grpc::CreateChannel(tcp_target(*server), grpc::InsecureChannelCredentials());
  for (const auto& c : cases) {
    auto tokens = c.tokens(*key, other);
    grpc::Status st;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      v1::PingReply reply;
      st = ping(channel, &reply, &tokens[i]);
      if (i + 1 < tokens.size()) {
        ASSERT_TRUE(st.ok()) << c.name << " call " << i << ": " << st.error_message();
      }
    }
    EXPECT_EQ(st.error_code(), c.last_code) << c.name << ": " << st.error_message();
    EXPECT_NE(st.error_message().find(c.last_message), std::string::npos) << c.name << ": " << st.error_message();
  }
}

TEST_F(RpcServerTest, SecondServerOnTheSameSocketRefusesAndTheFirstKeepsServing) {
  auto first = start(options(true, false));
  ASSERT_TRUE(first);
  RpcServer second(options(true, false));
  Status st = second.start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("the Unix socket " + dir_->file("ctld.sock") + " is in use: lock file " +
                                    dir_->file("ctld.sock.lock") + " is held by pid"),
            std::string::npos)
      << st.error().message;
  auto client = RpcClient::connect(client_options(dir_->file("ctld.sock")));
  v1::PingReply reply;
  EXPECT_TRUE(ping(client->channel(), &reply).ok());
}

TEST_F(RpcServerTest, SecondServerOnTheSameTcpPortRefuses) {
  auto first = start(options(false, true));
  ASSERT_TRUE(first);
  ServerOptions o = options(false, true);
  o.tcp_address = tcp_target(*first);
  RpcServer second(o);
  Status st = second.start();
  ASSERT_FALSE(st.ok());
  const std::string port = std::to_string(first->tcp_port());
  EXPECT_NE(st.error().message.find("cannot listen on TCP " + o.tcp_address + ": port " + port + " is already in use"),
            std::string::npos)
      << st.error().message;
}

struct StartRefusal {
  std::string name;
  std::function<void(ServerOptions&, const testing::TempDir&)> setup;
  std::string expected;
};

TEST_F(RpcServerTest, StartRefusalsSayWhatToFix) {
  std::vector<StartRefusal> cases = {
      {"group-readable key",
       [](ServerOptions&, const testing::TempDir& d) { ::chmod(d.file("drover.key").c_str(), 0640); },
       "has mode 0640: group or others may read or write it"},
      {"tcp without key", [](ServerOptions& o, const testing::TempDir&) { o.key_paths.clear(); },
       "cannot serve TCP on 127.0.0.1:0 without a cluster key"},
      {"bad address", [](ServerOptions& o, const testing::TempDir&) { o.tcp_address = "localhost"; },
       "address 'localhost' must look like host:port"},
      {"foreign address", [](ServerOptions& o, const testing::TempDir&) { o.tcp_address = "192.0.2.1:0"; },
       "address 192.0.2.1 does not belong to this host"},
      {"not a socket",
       [](ServerOptions&, const testing::TempDir& d) { std::ofstream(d.file("ctld.sock")) << "x"; },
       "exists and is not a socket; refusing to replace it"},
      {"long path",
       [](ServerOptions& o, const testing::TempDir& d) { o.unix_socket_path = d.file(std::string(120, 's')); },
       "the kernel allows at most 107"},
      {"nothing to serve", [](ServerOptions& o, const testing::TempDir&) { o = ServerOptions{}; },
       "neither a Unix socket path nor a TCP address"},
  };
  for (const auto& c : cases) {
    auto d = testing::TempDir::create("drover-rpc");
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE(create_cluster_key(d->file("drover.key")).ok());
    ServerOptions o;
    o.unix_socket_path = d->file("ctld.sock");
    o.tcp_address = "127.0.0.1:0";
    o.key_paths = {d->file("drover.key")};
    c.setup(o, *d);
    RpcServer server(o);
    Status st = server.start();
    ASSERT_FALSE(st.ok()) << c.name;
    EXPECT_NE(st.error().message.find(c.expected), std::string::npos) << c.name << ": " << st.error().message;
    if (c.name != "not a socket" && c.name != "long path") {
      EXPECT_FALSE(std::filesystem::exists(o.unix_socket_path)) << c.name << ": left a socket behind";
    }
  }
}

TEST_F(RpcServerTest, StaleSocketOfADeadDaemonIsReplaced) {
  {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, dir_->file("ctld.sock").c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);  // the file stays, nobody listens: what a kill -9 leaves
  }
  auto server = start(options(true, false));
  ASSERT_TRUE(server);
  auto client = RpcClient::connect(client_options("unix:" + dir_->file("ctld.sock")));
  v1::PingReply reply;
  EXPECT_TRUE(ping(client->channel(), &reply).ok());
}

TEST_F(RpcServerTest, BadRequestHeaderIsInvalidArgument) {
  auto server = start(options(true, false));
  ASSERT_TRUE(server);
  auto client = RpcClient::connect(client_options(dir_->file("ctld.sock")));
  auto stub = v1::PingService::NewStub(client->channel());
  grpc::ClientContext ctx;
  v1::PingRequest request;
  request.mutable_header()->set_request_id("not-hex");
  v1::PingReply reply;
  grpc::Status st = stub->Ping(&ctx, request, &reply);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(), "request_id 'not-hex' must be empty or 32 hex digits (16 random bytes)");
}

// A service whose "block" calls stay open until the test finishes them, to
// observe what happens to a connection's descriptor while a call is live.
class HoldingBench final : public bench::BenchService::CallbackService {
 public:
  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* ctx, const bench::SubmitRequest* request,
                                   bench::SubmitReply*) override {
    auto* reactor = ctx->DefaultReactor();
    std::lock_guard lock(mu_);
    peers_.push_back(ctx->peer());
    if (request->name() == "block") {
      held_ctx_ = ctx;
      held_ = reactor;
      cv_.notify_all();
    } else {
      reactor->Finish(grpc::Status::OK);
    }
    return reactor;
  }
  grpc::CallbackServerContext* wait_held() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 10s, [&] { return held_ != nullptr; });
    return held_ctx_;
  }
  void finish_held() {
    std::lock_guard lock(mu_);
    held_->Finish(grpc::Status::OK);
  }
  std::vector<std::string> peers() {
    std::lock_guard lock(mu_);
    return peers_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> peers_;
  grpc::CallbackServerContext* held_ctx_ = nullptr;
  grpc::ServerUnaryReactor* held_ = nullptr;
};

int connect_unix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

ino_t inode_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

// The Unix identity is keyed by descriptor number ("fd:N"); this checks the
// property that makes that sound: gRPC keeps a connection's descriptor open
// while a call on it is live, even after the client has gone, so the number
// cannot be reused by another connection (another user) under that call.
TEST_F(RpcServerTest, LiveCallKeepsItsDescriptorAfterTheClientLeaves) {
  HoldingBench service;
  RpcServer server(options(true, false));
  server.add_service(&service);
  ASSERT_TRUE(server.start().ok());
  const std::string path = dir_->file("ctld.sock");

  int client_fd = connect_unix(path);
  ASSERT_GE(client_fd, 0);
  const ino_t client_inode = inode_of(client_fd);
  auto channel = grpc::CreateInsecureChannelFromFd("held", client_fd);
  auto stub = bench::BenchService::NewStub(channel);
  auto ctx = std::make_unique<grpc::ClientContext>();
  bench::SubmitRequest request;
  request.set_name("block");
  bench::SubmitReply reply;
  std::promise<grpc::Status> done;
  stub->async()->Submit(ctx.get(), &request, &reply, [&](grpc::Status st) { done.set_value(st); });
  grpc::CallbackServerContext* held = service.wait_held();
  ASSERT_NE(held, nullptr);
  // Whatever happens below, the held call must end or the server cannot shut down.
  std::shared_ptr<void> finish_at_exit(nullptr, [&](void*) { service.finish_held(); });
  const std::string held_peer = service.peers().front();

  // The client cancels and closes its connection.
  ctx->TryCancel();
  EXPECT_EQ(done.get_future().get().error_code(), grpc::StatusCode::CANCELLED);
  ctx.reset();
  stub.reset();
  channel.reset();
  for (int i = 0; i < 500 && inode_of(client_fd) == client_inode; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_NE(inode_of(client_fd), client_inode) << "the client never closed its connection";

  for (int i = 0; i < 20; ++i) {
    auto c = RpcClient::connect(client_options(path));
    auto s = bench::BenchService::NewStub(c->channel());
    grpc::ClientContext cctx;
    bench::SubmitRequest r;
    bench::SubmitReply rep;
    ASSERT_TRUE(s->Submit(&cctx, r, &rep).ok());
  }
  auto peers = service.peers();
  ASSERT_EQ(peers.size(), 21u);
  for (std::size_t i = 1; i < peers.size(); ++i) {
    EXPECT_NE(peers[i], held_peer) << "descriptor reused while a call on it was live";
  }
  AuthResult who = server.authenticator().authenticate(*held);
  ASSERT_TRUE(who.ok()) << who.message();
  EXPECT_EQ(who.identity().uid, ::geteuid());
}

TEST(ServerAuthenticator, UnidentifiablePeersAreRefused) {
  ServerAuthenticator auth;
  auth.add_unix_connection(7, PeerCredentials{123, 1000, 1000});
  AuthResult known = auth.authenticate_peer("fd:7", "");
  ASSERT_TRUE(known.ok());
  EXPECT_EQ(known.identity().uid, 1000u);
  EXPECT_EQ(known.identity().pid, 123);
  struct Case {
    std::string peer;
    std::string message;
  };
  std::vector<Case> cases = {
      {"fd:8", "no peer credentials recorded for connection fd:8"},
      {"unix:/x", "connection from unix:/x did not come through Drover's Unix socket listener"},
      {"ipv4:127.0.0.1:5555", "this server has no cluster key and accepts no TCP requests"},
  };
  for (const auto& c : cases) {
    AuthResult r = auth.authenticate_peer(c.peer, "");
    ASSERT_FALSE(r.ok()) << c.peer;
    EXPECT_EQ(r.code(), AuthCode::kUnauthenticated);
    EXPECT_NE(r.message().find(c.message), std::string::npos) << r.message();
  }
}

TEST(HostPort, ParsesAndExplains) {
  struct Case {
    std::string text;
    std::string host;
    int port;
    std::string error;
  };
  std::vector<Case> cases = {
      {"127.0.1.3:6818", "127.0.1.3", 6818, ""},
      {"ctl.example.org:6817", "ctl.example.org", 6817, ""},
      {"[::1]:0", "::1", 0, ""},
      {"ctl", "", 0, "address 'ctl' must look like host:port"},
      {"::1:80", "", 0, "must look like host:port (IPv6 as [addr]:port)"},
      {"ctl:http", "", 0, "needs a host and a port from 0 to 65535"},
      {"ctl:70000", "", 0, "needs a host and a port from 0 to 65535"},
      {"[::1", "", 0, "must look like [v6addr]:port"},
  };
  for (const auto& c : cases) {
    auto hp = parse_host_port(c.text);
    if (c.error.empty()) {
      ASSERT_TRUE(hp.ok()) << c.text << ": " << hp.error().message;
      EXPECT_EQ(hp->host, c.host);
      EXPECT_EQ(hp->port, c.port);
    } else {
      ASSERT_FALSE(hp.ok()) << c.text;
      EXPECT_NE(hp.error().message.find(c.error), std::string::npos) << hp.error().message;
    }
  }
}

TEST(RpcClient, RefusesAnUnusableTarget) {
  auto client = RpcClient::connect(client_options("controller"));
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.error().message.find("must look like host:port"), std::string::npos);
}

}  // namespace
}  // namespace drover::rpc
