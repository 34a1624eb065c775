#include "agentd/node_service.hpp"

#include <grpcpp/grpcpp.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <thread>

#include "agent/file_bcast.hpp"
#include "agent/spool.hpp"
#include "agent/user_info.hpp"
#include "agentd/convert.hpp"
#include "agentd/daemon.hpp"
#include "drover/v1/agent.grpc.pb.h"
#include "rpc/call.hpp"

namespace drover::agentd {
namespace {

constexpr const char* kServer = "drover-agent 0.1.0";

// The restart count of the run recorded in the spool for `key`; -1 when unreadable.
int recorded_restart_count(const std::string& spool, const agent::StepKey& key) {
  auto doc = agent::read_json_file(spool + "/" + agent::step_dir_name(key) + "/" + agent::kSpecFile);
  if (!doc || !doc->contains("request")) return -1;
  auto req = agent::launch_request_from_json((*doc)["request"]);
  return req ? req->job.restart_count : -1;
}

class NodeAgentServiceImpl final : public v1::NodeAgentService::Service {
 public:
  NodeAgentServiceImpl(AgentDaemon& d, const rpc::CallAuthenticator& auth) : d_(d), auth_(auth) {}

  grpc::Status Launch(grpc::ServerContext* ctx, const v1::LaunchRequest* req, v1::LaunchReply* rep) override {
    if (auto st = check(*ctx); !st.ok()) return st;
    rpc::fill_reply_header(req->header(), kServer, rep->mutable_header());
    // slurm.conf's Prolog, before the job's first step here (once per run).
    // A prolog_only order (PrologFlags=Alloc: at the job's start) launches nothing.
    Status pro = d_.scripts().prolog(*req);
    if (!pro || req->prolog_only()) {
      rep->set_started(static_cast<bool>(pro));
      rep->set_prolog_failed(!pro);
      if (!pro) rep->set_failure(pro.error().message);
      return grpc::Status::OK;
    }
    agent::StepKey key = key_from_proto(req->step());
    forget_older_run(key, req->restart_count());
    agent::LaunchRequest lr = launch_from_proto(*req, d_.node(), d_.gpu_files());
    auto r = d_.supervisor().launch(lr);
    if (!r) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, r.error().message);
    rep->set_started(r->started);
    rep->set_already_known(r->already_known);
    rep->set_failure(r->failure);
    if (!r->started && !r->already_known) {
      if (auto st = d_.supervisor().status(key)) *rep->mutable_status() = report_from_status(*st);
    }
    d_.poke();
    return grpc::Status::OK;
  }

  grpc::Status Terminate(grpc::ServerContext* ctx, const v1::TerminateRequest* req, v1::TerminateReply* rep) override {
    if (auto st = check(*ctx); !st.ok()) return st;
    auto state = agent::parse_state(req->state()).value_or(agent::JobState::kCancelled);
    const uint64_t job = static_cast<uint64_t>(req->job_id());
    // One srun step (scancel N.S), else every step of the job.
    const bool one = req->has_step() && req->step().step_id() >= 0;
    agent::StepKey watched{job, agent::kBatchStep};
    if (one) watched.step_id = req->step().step_id();
    using Ending = agent::Supervisor::Ending;
    const Ending how = req->kill_now()  ? Ending::kKillNow
                       : req->preempt() ? Ending::kPreempt
                       : req->requeue() ? Ending::kRequeue
                                        : Ending::kNotice;
    auto end = [&] {
      return one ? d_.supervisor().terminate(watched, state, req->reason(), how)
                 : d_.supervisor().terminate_job(job, state, req->reason(), how);
    };
    // A step still inside launch() cannot be ended yet: retry briefly (the
    // controller also repeats the request with the next heartbeat's reply,
    // but not with the step's "CANCELLED AT" notice). For the whole job,
    // while any of its steps here has not ended (an salloc job has no batch
    // step to watch).
    Status st = end();
    auto launching = [&] {
      if (one) {
        auto s = d_.supervisor().status(watched);
        return s && !s->ended();
      }
      for (const auto& s : d_.supervisor().steps()) {
        if (s.key.job_id == job && !s.ended()) return true;
      }
      return false;
    };
    for (int i = 0; i < 30 && !st && launching(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      st = end();
    }
    rep->set_found(static_cast<bool>(st));
    rpc::fill_reply_header(req->header(), kServer, rep->mutable_header());
    d_.poke();
    return grpc::Status::OK;
  }

  grpc::Status Signal(grpc::ServerContext* ctx, const v1::SignalRequest* req, v1::SignalReply* rep) override {
    if (auto st = check(*ctx); !st.ok()) return st;
    agent::StepKey key{static_cast<uint64_t>(req->step().job_id()), agent::kBatchStep};
    if (req->step().step_id() >= 0) key.step_id = req->step().step_id();
    auto scope = req->batch_shell_only() ? agent::SignalScope::kBatchShell : agent::SignalScope::kAllProcesses;
    // every_step: each step of the job here (suspend, resume), at once: the
    // controller repeats a suspension the launch confirms afterwards.
    Status st = req->every_step() ? d_.supervisor().signal_job(key.job_id, req->signal())
                                  : d_.supervisor().signal(key, req->signal(), scope);
    // A step still being launched (srun -K on another node, a Ctrl-C right
    // after the start, scancel -b as the job starts) cannot be signalled
    // yet: retry briefly, as Terminate does.
    auto ended = [&] {
      auto s = d_.supervisor().status(key);
      return s && s->ended();
    };
    for (int i = 0; i < 30 && !st && !req->every_step() && !ended(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      st = d_.supervisor().signal(key, req->signal(), scope);
    }
    if (!st) return grpc::Status(grpc::StatusCode::NOT_FOUND, st.error().message);
    rep->set_found(true);
    rpc::fill_reply_header(req->header(), kServer, rep->mutable_header());
    return grpc::Status::OK;
  }

  grpc::Status StepUsage(grpc::ServerContext* ctx, const v1::StepUsageRequest* req, v1::StepUsageReply* rep) override {
    if (auto st = check(*ctx); !st.ok()) return st;
    agent::StepKey key{static_cast<uint64_t>(req->step().job_id()), agent::kBatchStep};
    if (req->step().step_id() >= 0) key.step_id = req->step().step_id();
    auto s = d_.supervisor().sample(key, 2000);
    if (!s) return grpc::Status(grpc::StatusCode::NOT_FOUND, s.error().message);
    *rep->mutable_usage() = report_from_status(*s).usage();
    for (pid_t p : s->pids) rep->add_pids(p);
    rpc::fill_reply_header(req->header(), kServer, rep->mutable_header());
    return grpc::Status::OK;
  }

  grpc::Status SetTimeLimit(grpc::ServerContext* ctx, const v1::SetTimeLimitRequest* req,
                            v1::SetTimeLimitReply* rep) override {
    if (auto st = check(*ctx); !st.ok()) return st;
    agent::StepKey key{static_cast<uint64_t>(req->job_id()),
                       req->has_step_id() ? static_cast<int64_t>(req->step_id()) : agent::kBatchStep};
    Status st = d_.supervisor().set_time_limit(key, req->time_limit_s());
    if (!st) return grpc::Status(grpc::StatusCode::NOT_FOUND, st.error().message);
    rpc::fill_reply_header(req->header(), kServer, rep->mutable_header());
    return grpc::Status::OK;
  }

  grpc::Status Epilog(grpc::ServerContext* ctx, const v1::EpilogRequest* req, v1::EpilogReply* rep) override {
    if (auto st = check(*ctx); !st.ok()) return st;
    for (const auto& o : req->orders()) d_.scripts().order(o);
    rpc::fill_reply_header(req->header(), kServer, rep->mutable_header());
    return grpc::Status::OK;
  }

  grpc::Status WriteFile(grpc::ServerContext* ctx, const v1::WriteFileRequest* req, v1::WriteFileReply* rep) override {
    if (auto st = check(*ctx); !st.ok()) return st;
    rpc::fill_reply_header(req->header(), kServer, rep->mutable_header());
    auto user = agent::lookup_user(req->user(), req->uid(), req->gid());
    if (!user) {
      rep->set_error_number(EINVAL);
      rep->set_error(user.error().message);
      return grpc::Status::OK;
    }
    const v1::FileBlock& in = req->block();
    agent::FileBlock b;
    b.path = in.path();
    b.offset = in.offset();
    b.data = in.data();
    b.first = in.first();
    b.last = in.last();
    b.force = in.force();
    b.mode = static_cast<mode_t>(in.mode());
    b.preserve = in.preserve();
    b.atime = in.atime();
    b.mtime = in.mtime();
    agent::BlockWritten w = agent::write_file_block(b, *user);
    rep->set_error_number(w.error_number);
    rep->set_error(w.error);
    return grpc::Status::OK;
  }

  grpc::Status Shutdown(grpc::ServerContext* ctx, const v1::AgentShutdownRequest* req,
                        v1::AgentShutdownReply* rep) override {
    if (auto st = check(*ctx); !st.ok()) return st;
    d_.request_shutdown();
    rpc::fill_reply_header(req->header(), kServer, rep->mutable_header());
    return grpc::Status::OK;
  }

 private:
  grpc::Status check(const grpc::ServerContext& ctx) const {
    rpc::AuthResult who = auth_.authenticate(ctx);
    if (!who.ok()) return rpc::to_status(who);
    if (!d_.privileged(who.identity().uid)) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          "only the controller (root, SlurmUser or the agent's own uid) may command agent " +
                              d_.node() + "; you are " + who.identity().describe());
    }
    return grpc::Status::OK;
  }

  // A Launch for a step whose earlier run has ended: the controller relaunches
  // only after it has recorded that end (a requeue raises the restart count),
  // so the old record can go. The same restart count is a repeated Launch:
  // the Supervisor answers already_known and nothing runs twice.
  void forget_older_run(const agent::StepKey& key, int restart_count) {
    auto st = d_.supervisor().status(key);
    if (!st || !st->ended()) return;
    int recorded = recorded_restart_count(d_.spool_dir(), key);
    if (recorded >= 0 && recorded < restart_count) (void)d_.supervisor().acknowledge(key);
  }

  AgentDaemon& d_;
  const rpc::CallAuthenticator& auth_;
};

}  // namespace

rpc::ServicePtr make_node_service(AgentDaemon& daemon, const rpc::CallAuthenticator& auth) {
  return rpc::ServicePtr(new NodeAgentServiceImpl(daemon, auth));
}

}  // namespace drover::agentd
