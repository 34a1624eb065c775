#include "ctld/agent_link.hpp"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <mutex>

#include "drover/v1/agent.grpc.pb.h"
#include "rpc/call.hpp"
#include "rpc/client.hpp"

namespace drover::ctld {

namespace {

// One asynchronous call: owns its context and messages until the callback.
template <class Req, class Rep>
struct Call {
  grpc::ClientContext ctx;
  Req req;
  Rep rep;
};

// Commands whose order on the node decides the outcome: a suspend's SIGSTOP
// and a resume's SIGCONT, the time limits that go with them. Two of them for
// one job and node go one after the other (the next once the agent has
// answered the one before); every other command goes at once.
bool ordered(const AgentCommand& cmd) {
  return (cmd.kind == AgentCommand::kSignal && cmd.every_step) || cmd.kind == AgentCommand::kSetTimeLimit;
}

}  // namespace

struct AgentLink::Impl {
  std::map<std::string, std::string> targets;  // node -> host:port
  std::string key_path;
  LaunchDone on_launch;
  Log log;
  std::mutex mu;
  std::map<std::string, std::unique_ptr<v1::NodeAgentService::Stub>> stubs;
  std::mutex queue_mu;
  std::map<std::pair<std::string, int64_t>, std::deque<AgentCommand>> queues;  // ordered commands per (node, job)

  v1::NodeAgentService::Stub* stub(const std::string& node) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = stubs.find(node);
    if (it != stubs.end()) return it->second.get();
    auto t = targets.find(node);
    if (t == targets.end()) return nullptr;
    rpc::ClientOptions o;
    o.target = t->second;
    o.key_path = key_path;
    auto client = rpc::RpcClient::connect(o);
    if (!client) {
      log("agent " + node + ": " + client.error().message);
      return nullptr;
    }
    auto s = v1::NodeAgentService::NewStub(client->channel());
    auto* raw = s.get();
    stubs.emplace(node, std::move(s));
    return raw;
  }

  // An ordered command was answered (or could not be sent): the next one of its queue goes.
  void answered(const std::pair<std::string, int64_t>& key) {
    AgentCommand next;
    {
      std::lock_guard<std::mutex> lock(queue_mu);
      auto q = queues.find(key);
      if (q == queues.end()) return;
      q->second.pop_front();
      if (q->second.empty()) {
        queues.erase(q);
        return;
      }
      next = q->second.front();
    }
    dispatch(next, [this, key] { answered(key); });
  }

  // Sends one command; `after` (may be empty) runs once it is answered or has failed.
  void dispatch(const AgentCommand& cmd, std::function<void()> after);

  // Calls whose callbacks have not ended yet: the link outlives them, since
  // they use it (its stubs, its queues, the callbacks it was given).
  // The contexts of those not answered yet, which the link's end cancels.
  std::mutex calls_mu;
  std::condition_variable calls_cv;
  int64_t calls = 0;
  std::set<grpc::ClientContext*> live;
  void begin_call(grpc::ClientContext* ctx) {
    std::lock_guard<std::mutex> lock(calls_mu);
    ++calls;
    live.insert(ctx);
  }
  // First in a callback: its context is about to go.
  void settled(grpc::ClientContext* ctx) {
    std::lock_guard<std::mutex> lock(calls_mu);
    live.erase(ctx);
  }
  // Last in a callback: nothing of it uses the link any more.
  void end_call() {
    std::lock_guard<std::mutex> lock(calls_mu);
    if (--calls == 0) calls_cv.notify_all();
  }
};

AgentLink::AgentLink(const config::ClusterConfig& cfg, std::string key_path, LaunchDone on_launch, Log log)
    : impl_(std::make_unique<Impl>()) {
  for (const auto& n : cfg.nodes) impl_->targets[n.name] = n.addr + ":" + std::to_string(cfg.node_port(n));
  impl_->key_path = std::move(key_path);
  impl_->on_launch = std::move(on_launch);
  impl_->log = std::move(log);
}

// Cancels the calls still out and waits for their callbacks (which use the link).
AgentLink::~AgentLink() {
  std::unique_lock<std::mutex> lock(impl_->calls_mu);
  for (grpc::ClientContext* ctx : impl_->live) ctx->TryCancel();
  impl_->calls_cv.wait_for(lock, std::chrono::seconds(45), [this] { return impl_->calls == 0; });
}

void AgentLink::send(const AgentCommand& cmd) {
  Impl* impl = impl_.get();
  if (!ordered(cmd)) return impl->dispatch(cmd, nullptr);
  auto key = std::make_pair(cmd.node, cmd.job_id);
  {
    std::lock_guard<std::mutex> lock(impl->queue_mu);
    auto& q = impl->queues[key];
    q.push_back(cmd);
    if (q.size() > 1) return;  // goes when the one before it is answered
  }
  impl->dispatch(cmd, [impl, key] { impl->answered(key); });
}

void AgentLink::shutdown_agents(const std::vector<std::string>& nodes, std::function<void()> answered) {
  Impl* impl = impl_.get();
  auto left = std::make_shared<std::atomic<size_t>>(nodes.size() + 1);  // +1: this loop's own
  auto one_done = [left, answered] {
    if (--*left == 0) answered();
  };
  for (const auto& node : nodes) {
    AgentCommand cmd;
    cmd.kind = AgentCommand::kShutdown;
    cmd.node = node;
    impl->dispatch(cmd, one_done);  // answered, failed or no route: one_done all the same
  }
  one_done();
}

// One question to one node's agent: `answered` runs once, on a gRPC
// thread, with the reply or with why there is none.
template <class Rep, class Req, class Start>
void ask_agent(AgentLink::Impl* impl, const std::string& node, Req req, std::chrono::seconds timeout, Start start,
               std::function<void(std::optional<Rep>, std::string)> answered) {
  v1::NodeAgentService::Stub* stub = impl->stub(node);
  if (!stub) return answered(std::nullopt, "no route to node " + node);
  auto* c = new Call<Req, Rep>;
  c->req = std::move(req);
  rpc::fill_request_header("drover-controller", c->req.mutable_header());
  rpc::set_timeout(c->ctx, timeout);
  impl->begin_call(&c->ctx);
  start(stub->async(), &c->ctx, &c->req, &c->rep, [impl, c, answered = std::move(answered)](grpc::Status st) {
    impl->settled(&c->ctx);
    if (st.ok()) {
      answered(std::move(c->rep), "");
    } else {
      answered(std::nullopt, st.error_message());
    }
    delete c;
    impl->end_call();
  });
}

void AgentLink::step_usage(const std::string& node, int64_t job_id, int64_t step_id, UsageDone answered) {
  v1::StepUsageRequest req;
  req.mutable_step()->set_job_id(job_id);
  req.mutable_step()->set_step_id(step_id);
  ask_agent<v1::StepUsageReply>(
      impl_.get(), node, std::move(req), std::chrono::seconds(10),
      [](auto* async, auto* ctx, auto* rq, auto* rp, auto cb) { async->StepUsage(ctx, rq, rp, std::move(cb)); },
      std::move(answered));
}

void AgentLink::write_file(const std::string& node, v1::WriteFileRequest req, WriteDone answered) {
  ask_agent<v1::WriteFileReply>(
      impl_.get(), node, std::move(req), std::chrono::seconds(60),
      [](auto* async, auto* ctx, auto* rq, auto* rp, auto cb) { async->WriteFile(ctx, rq, rp, std::move(cb)); },
      std::move(answered));
}

void AgentLink::Impl::dispatch(const AgentCommand& cmd, std::function<void()> after) {
  Impl* impl = this;
  v1::NodeAgentService::Stub* stub = impl->stub(cmd.node);
  if (!stub) {
    if (cmd.kind == AgentCommand::kLaunch) {
      impl->on_launch(cmd.job_id, cmd.launch.step().step_id(), cmd.node, cmd.launch.restart_count(), std::nullopt,
                      "no route to node " + cmd.node);
    }
    if (after) after();
    return;
  }
  const std::string client = "drover-controller";
  switch (cmd.kind) {
    case AgentCommand::kLaunch: {
      auto* c = new Call<v1::LaunchRequest, v1::LaunchReply>;
      c->req = cmd.launch;
      rpc::fill_request_header(client, c->req.mutable_header());
      rpc::set_timeout(c->ctx, std::chrono::seconds(40));
      int64_t job = cmd.job_id;
      int64_t step = cmd.launch.step().step_id();
      int32_t restarts = cmd.launch.restart_count();
      std::string node = cmd.node;
      impl->begin_call(&c->ctx);
      stub->async()->Launch(&c->ctx, &c->req, &c->rep, [impl, c, job, step, node, restarts](grpc::Status st) {
        impl->settled(&c->ctx);
        if (st.ok()) {
          impl->on_launch(job, step, node, restarts, c->rep, "");
        } else {
          impl->on_launch(job, step, node, restarts, std::nullopt, st.error_message());
        }
        delete c;
        impl->end_call();
      });
      return;
    }
    case AgentCommand::kTerminate: {
      auto* c = new Call<v1::TerminateRequest, v1::TerminateReply>;
      rpc::fill_request_header(client, c->req.mutable_header());
      c->req.set_job_id(cmd.job_id);
      c->req.set_state(cmd.state);
      c->req.set_reason(cmd.reason);
      c->req.set_kill_now(cmd.kill_now);
      c->req.set_requeue(cmd.requeue);
      c->req.set_preempt(cmd.preempt);
      if (cmd.step_id >= 0) {
        c->req.mutable_step()->set_job_id(cmd.job_id);
        c->req.mutable_step()->set_step_id(cmd.step_id);
      }
      rpc::set_timeout(c->ctx, std::chrono::seconds(20));
      std::string node = cmd.node;
      impl->begin_call(&c->ctx);
      stub->async()->Terminate(&c->ctx, &c->req, &c->rep, [impl, c, node](grpc::Status st) {
        impl->settled(&c->ctx);
        if (!st.ok()) impl->log("terminate job " + std::to_string(c->req.job_id()) + " on " + node + ": " + st.error_message());
        delete c;
        impl->end_call();
      });
      return;
    }
    case AgentCommand::kSignal: {
      auto* c = new Call<v1::SignalRequest, v1::SignalReply>;
      rpc::fill_request_header(client, c->req.mutable_header());
      c->req.mutable_step()->set_job_id(cmd.job_id);
      c->req.mutable_step()->set_step_id(cmd.step_id);
      c->req.set_signal(cmd.signal);
      c->req.set_batch_shell_only(cmd.batch_only);
      c->req.set_every_step(cmd.every_step);
      rpc::set_timeout(c->ctx, std::chrono::seconds(10));
      std::string node = cmd.node;
      impl->begin_call(&c->ctx);
      stub->async()->Signal(&c->ctx, &c->req, &c->rep, [impl, c, node, after](grpc::Status st) {
        impl->settled(&c->ctx);
        if (!st.ok()) impl->log("signal job " + std::to_string(c->req.step().job_id()) + " on " + node + ": " + st.error_message());
        delete c;
        if (after) after();
        impl->end_call();
      });
      return;
    }
    case AgentCommand::kSetTimeLimit: {
      auto* c = new Call<v1::SetTimeLimitRequest, v1::SetTimeLimitReply>;
      rpc::fill_request_header(client, c->req.mutable_header());
      c->req.set_job_id(cmd.job_id);
      c->req.set_time_limit_s(cmd.time_limit_s);
      if (cmd.step_id >= 0) c->req.set_step_id(cmd.step_id);
      rpc::set_timeout(c->ctx, std::chrono::seconds(10));
      std::string node = cmd.node;
      impl->begin_call(&c->ctx);
      stub->async()->SetTimeLimit(&c->ctx, &c->req, &c->rep, [impl, c, node, after](grpc::Status st) {
        impl->settled(&c->ctx);
        if (!st.ok()) impl->log("time limit of job " + std::to_string(c->req.job_id()) + " on " + node + ": " + st.error_message());
        delete c;
        if (after) after();
        impl->end_call();
      });
      return;
    }
    case AgentCommand::kEpilog: {
      auto* c = new Call<v1::EpilogRequest, v1::EpilogReply>;
      rpc::fill_request_header(client, c->req.mutable_header());
      *c->req.add_orders() = cmd.epilog;
      rpc::set_timeout(c->ctx, std::chrono::seconds(10));
      std::string node = cmd.node;
      // Unanswered, the order comes again with the reply to the node's next
      // registration; a node that stays silent is lost and not waited for.
      impl->begin_call(&c->ctx);
      stub->async()->Epilog(&c->ctx, &c->req, &c->rep, [impl, c, node, after](grpc::Status st) {
        impl->settled(&c->ctx);
        if (!st.ok()) impl->log("epilog of job " + std::to_string(c->req.orders(0).job_id()) + " on " + node + ": " + st.error_message());
        delete c;
        if (after) after();
        impl->end_call();
      });
      return;
    }
    case AgentCommand::kShutdown: {
      auto* c = new Call<v1::AgentShutdownRequest, v1::AgentShutdownReply>;
      rpc::fill_request_header(client, c->req.mutable_header());
      rpc::set_timeout(c->ctx, std::chrono::seconds(5));
      std::string node = cmd.node;
      impl->begin_call(&c->ctx);
      stub->async()->Shutdown(&c->ctx, &c->req, &c->rep, [impl, c, node, after](grpc::Status st) {
        impl->settled(&c->ctx);
        if (!st.ok()) impl->log("shutdown of the agent on " + node + ": " + st.error_message());
        delete c;
        if (after) after();
        impl->end_call();
      });
      return;
    }
  }
}

}  // namespace drover::ctld
