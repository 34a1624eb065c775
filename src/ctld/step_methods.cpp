#include "ctld/step_methods.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "ctld/agent_link.hpp"
#include "ctld/controller.hpp"

namespace drover::ctld::methods {
namespace {

constexpr int kInvalidArgument = 3;
constexpr int kInternal = 13;

template <class Req, class Rep>
void header(const Req& req, Rep* rep) {
  rep->mutable_header()->set_request_id(req.header().request_id());
  rep->mutable_header()->set_server(kServerName);
}

void commit_then(Controller& c, Effects fx, Done done) {
  c.commit(std::move(fx), [done = std::move(done)](const Status& st) {
    if (st) {
      done(0, "");
    } else {
      done(kInternal, st.error().message);
    }
  });
}

}  // namespace

void create_step(Controller& c, const Caller& who, const v1::CreateStepRequest& req, v1::CreateStepReply* rep,
                 Done done) {
  Effects fx;
  auto r = c.state().create_step(who, req, c.now(), fx);
  if (!r) return done(kInvalidArgument, r.error().message);
  *rep = std::move(*r);
  header(req, rep);
  commit_then(c, std::move(fx), std::move(done));
}

void get_step(Controller& c, const Caller& who, const v1::GetStepRequest& req, v1::GetStepReply* rep, Done done) {
  if (req.allocator()) c.state().allocator_heard(who, req.job_id(), c.now());
  auto r = c.state().get_step(who, req);
  if (!r) return done(kInvalidArgument, r.error().message);
  *rep = std::move(*r);
  header(req, rep);
  done(0, "");
}

void get_steps(Controller& c, const Caller& who, const v1::GetStepsRequest& req, v1::GetStepsReply* rep, Done done) {
  *rep = c.state().get_steps(req, c.now());
  auto* steps = rep->mutable_steps();  // PrivateData=jobs: only the caller's jobs' steps
  steps->erase(std::remove_if(steps->begin(), steps->end(),
                              [&](const v1::StepInfo& s) { return !c.state().may_see(who, s.job_id()); }),
               steps->end());
  header(req, rep);
  done(0, "");
}

void get_step_usage(Controller& c, const Caller& who, const v1::GetStepUsageRequest& req, v1::GetStepUsageReply* rep,
                    Done done) {
  auto targets = c.state().step_usage_targets(who, req);
  if (!targets) return done(kInvalidArgument, targets.error().message);
  header(req, rep);
  for (const auto& t : *targets) {
    v1::StepUsage* s = rep->add_steps();
    s->set_job_id(t.job_id);
    s->set_step_id(t.step_id);
  }
  AgentLink* agents = c.agents();
  if (!agents) return done(0, "");
  // Every node of every step is asked at once; the last answer (on a gRPC
  // thread) completes the reply, which nothing else touches meanwhile.
  struct Pending {
    std::mutex mu;
    std::atomic<int> left{1};  // +1: this loop's own
    v1::GetStepUsageReply* rep;
    Done done;
  };
  auto p = std::make_shared<Pending>();
  p->rep = rep;
  p->done = std::move(done);
  auto one_done = [p] {
    if (--p->left == 0) p->done(0, "");
  };
  for (std::size_t i = 0; i < targets->size(); ++i) {
    const UsageTarget& t = (*targets)[i];
    for (const auto& node : t.nodes) {
      ++p->left;
      agents->step_usage(node, t.job_id, t.step_id,
                         [p, i, node, one_done](std::optional<v1::StepUsageReply> r, std::string error) {
                           {
                             std::lock_guard lock(p->mu);
                             v1::StepUsage* s = p->rep->mutable_steps(static_cast<int>(i));
                             if (r) {
                               for (const auto& u : r->usage()) {
                                 v1::TaskUsage* x = s->add_usage();
                                 *x = u;
                                 x->set_node(node);
                               }
                               for (int32_t pid : r->pids()) s->add_pids(pid);
                             } else {
                               s->add_errors(node + ": " + error);
                             }
                           }
                           one_done();
                         });
    }
  }
  one_done();
}

void broadcast_file(Controller& c, const Caller& who, const v1::BroadcastFileRequest& req,
                    v1::BroadcastFileReply* rep, Done done) {
  auto target = c.state().bcast_target(who, req.job_id(),
                                       req.has_step_id() ? std::optional<int64_t>(req.step_id()) : std::nullopt);
  if (!target) return done(kInvalidArgument, target.error().message);
  if (req.block().path().empty() || req.block().path()[0] != '/') {
    return done(kInvalidArgument, "the destination must be an absolute path, not \"" + req.block().path() + "\"");
  }
  header(req, rep);
  AgentLink* agents = c.agents();
  std::vector<std::string> nodes;
  for (const auto& n : target->nodes) {
    if (std::find(req.skip_nodes().begin(), req.skip_nodes().end(), n) == req.skip_nodes().end()) nodes.push_back(n);
  }
  for (const auto& n : nodes) rep->add_nodes(n);
  if (!agents || nodes.empty()) return done(0, "");
  // Every node is written at once; the last answer (on a gRPC thread)
  // completes the reply, which nothing else touches meanwhile.
  struct Pending {
    std::mutex mu;
    std::atomic<int> left;
    v1::BroadcastFileReply* rep;
    Done done;
  };
  auto p = std::make_shared<Pending>();
  p->left = static_cast<int>(nodes.size());
  p->rep = rep;
  p->done = std::move(done);
  v1::WriteFileRequest w;
  w.set_job_id(req.job_id());
  *w.mutable_block() = req.block();
  w.set_user(target->user);
  w.set_uid(target->uid);
  w.set_gid(target->gid);
  for (const auto& node : nodes) {
    agents->write_file(node, w, [p, node](std::optional<v1::WriteFileReply> r, std::string error) {
      if (!r || r->error_number() != 0) {
        std::lock_guard lock(p->mu);
        v1::BroadcastNodeError* e = p->rep->add_errors();
        e->set_node(node);
        e->set_error_number(r ? r->error_number() : 0);
        e->set_error(r ? r->error() : error);
      }
      if (--p->left == 0) p->done(0, "");
    });
  }
}

void signal_step(Controller& c, const Caller& who, const v1::SignalStepRequest& req, v1::SignalStepReply* rep,
                 Done done) {
  Effects fx;
  if (auto st = c.state().signal_step(who, req, c.now(), fx); !st) return done(kInvalidArgument, st.error().message);
  header(req, rep);
  commit_then(c, std::move(fx), std::move(done));
}

void complete_job(Controller& c, const Caller& who, const v1::CompleteJobRequest& req, v1::CompleteJobReply* rep,
                  Done done) {
  Effects fx;
  if (auto st = c.state().complete_job(who, req, c.now(), fx); !st) return done(kInvalidArgument, st.error().message);
  header(req, rep);
  commit_then(c, std::move(fx), std::move(done));
}

}  // namespace drover::ctld::methods
