// AgentLink against a recording NodeAgentService over a real, signed TCP
// connection: a suspend's SIGSTOP and time limit and a resume's SIGCONT and
// time limit reach the agent in the order the controller gave them, even
// when the agent is slow to answer the first (before, each went as its own
// concurrent call, and the resume could be applied before the suspend).
#include "ctld/agent_link.hpp"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "config/parse.hpp"
#include "drover/v1/agent.grpc.pb.h"
#include "rpc/cluster_key.hpp"
#include "rpc/server.hpp"
#include "rpc/testing.hpp"

namespace drover::ctld {
namespace {

using namespace std::chrono_literals;

class RecordingAgent final : public v1::NodeAgentService::Service {
 public:
  grpc::Status Signal(grpc::ServerContext*, const v1::SignalRequest* req, v1::SignalReply*) override {
    if (req->signal() == SIGSTOP) std::this_thread::sleep_for(300ms);  // a slow node
    add("signal " + std::to_string(req->signal()) + " job " + std::to_string(req->step().job_id()));
    return grpc::Status::OK;
  }
  grpc::Status SetTimeLimit(grpc::ServerContext*, const v1::SetTimeLimitRequest* req,
                            v1::SetTimeLimitReply*) override {
    add("limit " + std::to_string(req->time_limit_s()) + " job " + std::to_string(req->job_id()));
    return grpc::Status::OK;
  }
  std::vector<std::string> wait_for(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, 10s, [&] { return seen_.size() >= n; });
    return seen_;
  }

 private:
  void add(std::string what) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(std::move(what));
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> seen_;
};

AgentCommand signal(int64_t job, int sig) {
  AgentCommand c;
  c.kind = AgentCommand::kSignal;
  c.node = "n1";
  c.job_id = job;
  c.signal = sig;
  c.every_step = true;
  return c;
}

AgentCommand limit(int64_t job, int64_t seconds) {
  AgentCommand c;
  c.kind = AgentCommand::kSetTimeLimit;
  c.node = "n1";
  c.job_id = job;
  c.time_limit_s = seconds;
  return c;
}

TEST(AgentLink, SuspendAndResumeReachTheAgentInTheirOrder) {
  auto dir = rpc::testing::TempDir::create("drover-link");
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  const std::string key = dir->file("drover.key");
  ASSERT_TRUE(rpc::create_cluster_key(key).ok());
  rpc::ServerOptions o;
  o.tcp_address = "127.0.0.1:0";
  o.key_paths = {key};
  rpc::RpcServer server(o);
  RecordingAgent agent;
  server.add_service(&agent);
  ASSERT_TRUE(server.start().ok());
  auto cfg = config::parse_slurm_conf_text("ClusterName=t\nSlurmctldHost=localhost\nNodeName=n1 NodeAddr=127.0.0.1 Port=" +
                                               std::to_string(server.tcp_port()) + " CPUs=1\nPartitionName=p Nodes=n1\n",
                                           "t.conf");
  AgentLink link(cfg, key, [](int64_t, int64_t, const std::string&, int32_t, std::optional<v1::LaunchReply>,
                              std::string) {}, [](const std::string&) {});
  link.send(signal(7, SIGSTOP));
  link.send(limit(7, 0));
  link.send(signal(8, SIGCONT));  // another job's goes at once, not behind job 7's
  link.send(signal(7, SIGCONT));
  link.send(limit(7, 900));
  auto seen = agent.wait_for(5);
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen.front(), "signal " + std::to_string(SIGCONT) + " job 8");
  std::vector<std::string> job7;
  for (const auto& s : seen) {
    if (s.find("job 7") != std::string::npos) job7.push_back(s);
  }
  EXPECT_EQ(job7, (std::vector<std::string>{"signal " + std::to_string(SIGSTOP) + " job 7", "limit 0 job 7",
                                            "signal " + std::to_string(SIGCONT) + " job 7", "limit 900 job 7"}));
  server.shutdown();
}

}  // namespace
}  // namespace drover::ctld
