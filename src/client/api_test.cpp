// The commands' calls to a controller that is restarting or that loses a
// reply: a fake controller on the local socket, which drops connections as
// told.
#include "client/api.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "drover/v1/wire.pb.h"
#include "rpc/testing.hpp"
#include "rpc/wire.hpp"

namespace drover::client {
namespace {

using namespace std::chrono_literals;

int listen_at(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, 8) != 0) {
    ADD_FAILURE() << "cannot listen at " << path << ": " << std::strerror(errno);
    return -1;
  }
  return fd;
}

// A fake controller: accepts connections one at a time and hands each
// request to `serve`, which returns the reply's bytes, or nullopt to close
// the connection without answering (a reply lost).
class FakeController {
 public:
  using Serve = std::function<std::optional<std::string>(const rpc::WireFrame&)>;
  FakeController(std::string path, Serve serve, std::chrono::milliseconds start_after = 0ms)
      : path_(std::move(path)), serve_(std::move(serve)) {
    thread_ = std::thread([this, start_after] {
      std::this_thread::sleep_for(start_after);
      listen_fd_ = listen_at(path_);
      started_ = std::chrono::steady_clock::now();
      ready_ = true;
      while (!stop_) {
        int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) break;
        while (true) {
          auto req = rpc::read_frame(c);
          if (!req) break;
          {
            std::lock_guard<std::mutex> lock(mu_);
            requests_.push_back(*req);
          }
          auto reply = serve_(*req);
          if (!reply) break;
          if (!rpc::write_frame(c, 0, *reply)) break;
        }
        ::close(c);
      }
    });
    if (start_after == 0ms) {
      while (!ready_) std::this_thread::sleep_for(1ms);
    }
  }
  ~FakeController() {
    stop_ = true;
    while (!ready_) std::this_thread::sleep_for(10ms);
    ::shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    ::close(listen_fd_);
  }
  std::vector<rpc::WireFrame> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  std::chrono::steady_clock::time_point started() const { return started_; }

 private:
  std::string path_;
  Serve serve_;
  std::thread thread_;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false}, ready_{false};
  std::chrono::steady_clock::time_point started_{};
  std::mutex mu_;
  std::vector<rpc::WireFrame> requests_;
};

std::string request_id_of(const rpc::WireFrame& f) {
  v1::SubmitRequest r;  // every request has its header as field 1
  r.ParseFromString(f.payload);
  return r.header().request_id();
}

std::unique_ptr<ControllerApi> api_for(const std::string& socket, int retry_s) {
  Endpoint ep;
  ep.conf_path = "test.conf";
  ep.wire_path = socket;
  ep.retry_s = retry_s;
  auto api = ControllerApi::connect(ep, "sbatch 0.1.0");
  EXPECT_TRUE(api);
  return std::move(*api);
}

TEST(ControllerCalls, ACommandWaitsForAControllerThatIsStartingAsSlurmsCommandsDo) {
  auto dir = rpc::testing::TempDir::create("api");
  ASSERT_TRUE(dir);
  std::string sock = dir->file("ctld.wire.sock");
  FakeController ctld(
      sock, [](const rpc::WireFrame&) { return std::optional<std::string>(v1::StatusReply{}.SerializeAsString()); },
      1200ms);
  auto api = api_for(sock, 10);
  auto t0 = std::chrono::steady_clock::now();
  auto st = api->status();
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(ctld.requests().size(), 1u);
}

TEST(ControllerCalls, AControllerThatStaysAwayIsReportedAfterMessageTimeout) {
  auto dir = rpc::testing::TempDir::create("api");
  ASSERT_TRUE(dir);
  // MessageTimeout=3: three attempts a second apart (Slurm's commands, with
  // its default of 10, give up after 9 s).
  auto api = api_for(dir->file("none.sock"), 3);
  auto t0 = std::chrono::steady_clock::now();
  auto st = api->status();
  auto waited = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(st);
  EXPECT_TRUE(st.error().unreachable);
  EXPECT_FALSE(st.error().maybe_sent);
  EXPECT_NE(st.error().message.find("(tried for 2 s)"), std::string::npos) << st.error().message;
  EXPECT_GE(waited, 2s);
  EXPECT_LT(waited, 3s);
  // MessageTimeout=0: one attempt.
  auto once = api_for(dir->file("none.sock"), 0);
  t0 = std::chrono::steady_clock::now();
  ASSERT_FALSE(once->status());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}

TEST(ControllerCalls, ASubmissionWhoseReplyWasLostIsSentAgainWithItsRequestId) {
  auto dir = rpc::testing::TempDir::create("api");
  ASSERT_TRUE(dir);
  std::string sock = dir->file("ctld.wire.sock");
  std::atomic<int> seen{0};
  FakeController ctld(sock, [&](const rpc::WireFrame&) -> std::optional<std::string> {
    if (seen++ == 0) return std::nullopt;  // the reply is lost
    v1::SubmitReply rep;
    rep.set_job_id(7);
    return rep.SerializeAsString();
  });
  auto api = api_for(sock, 10);
  auto rep = api->submit(v1::JobDescriptor{}, false);
  ASSERT_TRUE(rep) << rep.error().message;
  EXPECT_EQ(rep->job_id(), 7);
  auto reqs = ctld.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].kind, v1::WIRE_SUBMIT);
  EXPECT_EQ(request_id_of(reqs[0]).size(), 32u);
  EXPECT_EQ(request_id_of(reqs[0]), request_id_of(reqs[1]));
}

TEST(ControllerCalls, ACancelWhoseReplyWasLostIsNotSentAgain) {
  auto dir = rpc::testing::TempDir::create("api");
  ASSERT_TRUE(dir);
  std::string sock = dir->file("ctld.wire.sock");
  FakeController ctld(sock, [](const rpc::WireFrame&) { return std::optional<std::string>(); });
  auto api = api_for(sock, 10);
  auto t0 = std::chrono::steady_clock::now();
  auto rep = api->cancel(v1::CancelRequest{});
  ASSERT_FALSE(rep);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_TRUE(rep.error().unreachable);
  EXPECT_TRUE(rep.error().maybe_sent);
  EXPECT_NE(rep.error().message.find("may have been carried out"), std::string::npos) << rep.error().message;
  EXPECT_EQ(ctld.requests().size(), 1u);
}

}  // namespace
}  // namespace drover::client
