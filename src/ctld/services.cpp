#include "ctld/services.hpp"

#include <grpcpp/grpcpp.h>

#include "ctld/controller.hpp"
#include "drover/v1/agent.grpc.pb.h"
#include "drover/v1/cluster.grpc.pb.h"
#include "drover/v1/jobs.grpc.pb.h"
#include "rpc/call.hpp"
#include "rpc/ping_service.hpp"

namespace drover::ctld {
namespace {

constexpr const char* kServerName = "drover-controller 0.1.0";

grpc::Status status(grpc::StatusCode code, const std::string& message) { return grpc::Status(code, message); }

// Authenticates, checks the envelope, then runs `work(caller)` on the state
// thread. `work` finishes the reactor (at once, or from a store completion).
template <class Req, class Work>
grpc::ServerUnaryReactor* handle(Controller& ctl, grpc::CallbackServerContext* ctx, const Req* req, Work work,
                                 bool privileged_only = false) {
  auto* reactor = ctx->DefaultReactor();
  int code = 0;
  auto who = ctl.identify(*ctx, &code);
  if (!who) {
    reactor->Finish(status(static_cast<grpc::StatusCode>(code), who.error().message));
    return reactor;
  }
  if (privileged_only && !who->privileged) {
    reactor->Finish(status(grpc::StatusCode::PERMISSION_DENIED,
                           "only root, SlurmUser or an operator may call this; you are " + who->describe()));
    return reactor;
  }
  if (auto ok = rpc::check_request_header(req->header()); !ok) {
    reactor->Finish(status(grpc::StatusCode::INVALID_ARGUMENT, ok.error().message));
    return reactor;
  }
  ctl.post([reactor, who = *who, work = std::move(work)]() mutable { work(reactor, who); });
  return reactor;
}

// Commits `fx`; OK only once it is durable.
void finish_after(Controller& ctl, grpc::ServerUnaryReactor* reactor, Effects fx) {
  ctl.commit(std::move(fx), [reactor](const Status& st) {
    reactor->Finish(st ? grpc::Status::OK : status(grpc::StatusCode::INTERNAL, st.error().message));
  });
}

template <class Req, class Rep>
void header(const Req* req, Rep* rep) {
  rpc::fill_reply_header(req->header(), kServerName, rep->mutable_header());
}

class JobServiceImpl final : public v1::JobService::CallbackService {
 public:
  explicit JobServiceImpl(Controller& ctl) : ctl_(ctl) {}

  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* ctx, const v1::SubmitRequest* req,
                                   v1::SubmitReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller& who) {
      Effects fx;
      auto result = ctl_.state().submit(who, req->job(), req->test_only(), ctl_.now(), fx);
      if (!result) {
        r->Finish(status(grpc::StatusCode::INVALID_ARGUMENT, result.error().message));
        return;
      }
      *rep = std::move(*result);
      header(req, rep);
      finish_after(ctl_, r, std::move(fx));
    });
  }

  grpc::ServerUnaryReactor* GetJobs(grpc::CallbackServerContext* ctx, const v1::GetJobsRequest* req,
                                    v1::GetJobsReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller&) {
      int64_t now = ctl_.now();
      const auto& jobs = ctl_.state().jobs();
      auto add = [&](const Job& j) { *rep->add_jobs() = ctl_.state().job_for_display(j, req->detail(), now); };
      if (req->job_ids().empty()) {
        for (const auto& [id, j] : jobs) add(j);
      } else {
        for (int64_t id : req->job_ids()) {
          auto it = jobs.find(id);
          if (it != jobs.end()) add(it->second);
        }
      }
      rep->set_now(now);
      header(req, rep);
      r->Finish(grpc::Status::OK);
    });
  }

  grpc::ServerUnaryReactor* Cancel(grpc::CallbackServerContext* ctx, const v1::CancelRequest* req,
                                   v1::CancelReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller& who) {
      Effects fx;
      for (auto& res : ctl_.state().cancel(who, *req, ctl_.now(), fx)) *rep->add_results() = std::move(res);
      header(req, rep);
      finish_after(ctl_, r, std::move(fx));
    });
  }

  grpc::ServerUnaryReactor* Control(grpc::CallbackServerContext* ctx, const v1::ControlRequest* req,
                                    v1::ControlReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller& who) {
      Effects fx;
      for (auto& res : ctl_.state().control(who, *req, ctl_.now(), fx)) *rep->add_results() = std::move(res);
      header(req, rep);
      finish_after(ctl_, r, std::move(fx));
    });
  }

  grpc::ServerUnaryReactor* Update(grpc::CallbackServerContext* ctx, const v1::UpdateJobRequest* req,
                                   v1::UpdateJobReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller& who) {
      Effects fx;
      for (auto& res : ctl_.state().update(who, *req, ctl_.now(), fx)) *rep->add_results() = std::move(res);
      header(req, rep);
      finish_after(ctl_, r, std::move(fx));
    });
  }

 private:
  Controller& ctl_;
};

class ClusterServiceImpl final : public v1::ClusterService::CallbackService {
 public:
  explicit ClusterServiceImpl(Controller& ctl) : ctl_(ctl) {}

  grpc::ServerUnaryReactor* GetNodes(grpc::CallbackServerContext* ctx, const v1::GetNodesRequest* req,
                                     v1::GetNodesReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller&) {
      int64_t now = ctl_.now();
      std::set<std::string> wanted(req->names().begin(), req->names().end());
      for (auto& n : ctl_.state().node_infos(now)) {
        if (wanted.empty() || wanted.count(n.name())) *rep->add_nodes() = std::move(n);
      }
      rep->set_now(now);
      header(req, rep);
      r->Finish(grpc::Status::OK);
    });
  }

  grpc::ServerUnaryReactor* GetPartitions(grpc::CallbackServerContext* ctx, const v1::GetPartitionsRequest* req,
                                          v1::GetPartitionsReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller&) {
      for (auto& p : ctl_.state().partitions()) *rep->add_partitions() = std::move(p);
      header(req, rep);
      r->Finish(grpc::Status::OK);
    });
  }

  grpc::ServerUnaryReactor* UpdateNode(grpc::CallbackServerContext* ctx, const v1::UpdateNodeRequest* req,
                                       v1::UpdateNodeReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller& who) {
      Effects fx;
      auto done = ctl_.state().update_node(who, *req, ctl_.now(), fx);
      if (!done) {
        auto code = who.privileged ? grpc::StatusCode::INVALID_ARGUMENT : grpc::StatusCode::PERMISSION_DENIED;
        r->Finish(status(code, done.error().message));
        return;
      }
      for (const auto& n : *done) rep->add_updated(n);
      header(req, rep);
      finish_after(ctl_, r, std::move(fx));
    });
  }

  grpc::ServerUnaryReactor* GetConfig(grpc::CallbackServerContext* ctx, const v1::GetConfigRequest* req,
                                      v1::GetConfigReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller&) {
      for (auto& e : ctl_.state().config_entries()) *rep->add_entries() = std::move(e);
      rep->set_as_of(ctl_.state().start_time());
      rep->set_controller_host(ctl_.settings().host);
      rep->set_slurm_conf_path(ctl_.settings().conf_path);
      header(req, rep);
      r->Finish(grpc::Status::OK);
    });
  }

  grpc::ServerUnaryReactor* Reconfigure(grpc::CallbackServerContext* ctx, const v1::ReconfigureRequest* req,
                                        v1::ReconfigureReply* rep) override {
    return handle(
        ctl_, ctx, req,
        [this, req, rep](grpc::ServerUnaryReactor* r, const Caller&) {
          auto done = ctl_.reconfigure();
          if (!done) {
            r->Finish(status(grpc::StatusCode::FAILED_PRECONDITION, done.error().message));
            return;
          }
          for (const auto& m : *done) rep->add_messages(m);
          header(req, rep);
          r->Finish(grpc::Status::OK);
        },
        true);
  }

  grpc::ServerUnaryReactor* Status(grpc::CallbackServerContext* ctx, const v1::StatusRequest* req,
                                   v1::StatusReply* rep) override {
    return handle(ctl_, ctx, req, [this, req, rep](grpc::ServerUnaryReactor* r, const Caller&) {
      *rep = ctl_.state().status(ctl_.now());
      header(req, rep);
      r->Finish(grpc::Status::OK);
    });
  }

 private:
  Controller& ctl_;
};

class AgentServiceImpl final : public v1::AgentService::CallbackService {
 public:
  explicit AgentServiceImpl(Controller& ctl) : ctl_(ctl) {}

  grpc::ServerUnaryReactor* Register(grpc::CallbackServerContext* ctx, const v1::NodeReport* req,
                                     v1::NodeReportReply* rep) override {
    return report(ctx, req, rep, true);
  }
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx, const v1::NodeReport* req,
                                      v1::NodeReportReply* rep) override {
    return report(ctx, req, rep, false);
  }

 private:
  grpc::ServerUnaryReactor* report(grpc::CallbackServerContext* ctx, const v1::NodeReport* req,
                                   v1::NodeReportReply* rep, bool registering) {
    return handle(
        ctl_, ctx, req,
        [this, req, rep, registering](grpc::ServerUnaryReactor* r, const Caller&) {
          Effects fx;
          auto reply = ctl_.state().node_report(*req, registering, ctl_.now(), fx);
          if (!reply) {
            r->Finish(status(grpc::StatusCode::NOT_FOUND, reply.error().message));
            return;
          }
          *rep = std::move(*reply);
          header(req, rep);
          finish_after(ctl_, r, std::move(fx));
        },
        true);
  }

  Controller& ctl_;
};

}  // namespace

std::vector<rpc::ServicePtr> make_services(Controller& ctl, const rpc::CallAuthenticator& auth) {
  std::vector<rpc::ServicePtr> out;
  out.emplace_back(new JobServiceImpl(ctl));
  out.emplace_back(new ClusterServiceImpl(ctl));
  out.emplace_back(new AgentServiceImpl(ctl));
  out.push_back(rpc::make_ping_service(auth, kServerName));
  return out;
}

}  // namespace drover::ctld
