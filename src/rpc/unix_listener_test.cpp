#include "rpc/unix_listener.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "rpc/testing.hpp"
#include "rpc/wire.hpp"

namespace drover::rpc {
namespace {

using namespace std::chrono_literals;

// Threads that take connections themselves (the controller's wire socket):
// one connection goes to one of them, with the caller's credentials; a wait
// without a connection ends as idle; interrupt() ends every wait at once.
TEST(UnixListener, CallersTakeConnectionsThemselves) {
  auto dir = testing::TempDir::create();
  ASSERT_TRUE(dir.ok());
  const std::string path = dir->file("w.sock");
  UnixListenerOptions o;
  o.path = path;
  auto listener = UnixListener::open(o);
  ASSERT_TRUE(listener.ok()) << listener.error().message;
  UnixListener& l = **listener;
  l.accept_in_callers(150ms);

  UnixListener::Connection c;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(l.accept_one(c), UnixListener::Taken::kIdle);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 100ms);

  std::atomic<int> taken{0}, stopped{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.emplace_back([&] {
      for (;;) {
        UnixListener::Connection got;
        auto r = l.accept_one(got);
        if (r == UnixListener::Taken::kStopped) {
          ++stopped;
          return;
        }
        if (r != UnixListener::Taken::kConnection) continue;
        EXPECT_EQ(got.peer.uid, ::getuid());
        EXPECT_EQ(got.peer.pid, ::getpid());
        auto frame = read_frame(got.fd);
        ++taken;  // before the reply, which the client waits for before it counts
        if (frame) (void)write_frame(got.fd, 0, "echo " + frame->payload);
        ::close(got.fd);
      }
    });
  }
  for (int i = 0; i < 5; ++i) {
    auto fd = connect_unix(path);
    ASSERT_TRUE(fd.ok()) << fd.error().message;
    ASSERT_TRUE(write_frame(*fd, 1, "hi " + std::to_string(i)).ok());
    auto reply = read_frame(*fd);
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    EXPECT_EQ(reply->payload, "echo hi " + std::to_string(i));
    ::close(*fd);
  }
  EXPECT_EQ(taken.load(), 5);
  t0 = std::chrono::steady_clock::now();
  l.interrupt();
  for (auto& t : waiters) t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s) << "interrupt() did not wake the waiting threads";
  EXPECT_EQ(stopped.load(), 3);
  EXPECT_EQ(l.accept_one(c), UnixListener::Taken::kStopped);
  EXPECT_FALSE(connect_unix(path).ok()) << "a connection after interrupt() was accepted";
  l.stop();
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "the socket file is removed";
}

// A reply sent in part without waiting is finished by a blocking send.
TEST(Wire, SendNowThenTheRest) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  std::string big(4 << 20, 'x');
  std::string frame = encode_frame(7, big);
  std::size_t sent = send_now(sv[0], frame);
  EXPECT_GT(sent, 0u);
  EXPECT_LT(sent, frame.size()) << "a 4 MiB frame does not fit a socket's buffer";
  std::thread reader([&] {
    auto f = read_frame(sv[1]);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->kind, 7);
    EXPECT_EQ(f->payload.size(), big.size());
    EXPECT_EQ(f->payload, big);
  });
  EXPECT_TRUE(send_rest(sv[0], frame, sent).ok());
  reader.join();
  ::close(sv[0]);
  ::close(sv[1]);
}

}  // namespace
}  // namespace drover::rpc
