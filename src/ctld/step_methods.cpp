#include "ctld/step_methods.hpp"

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
  auto r = c.state().get_step(who, req);
  if (!r) return done(kInvalidArgument, r.error().message);
  *rep = std::move(*r);
  header(req, rep);
  done(0, "");
}

void get_steps(Controller& c, const Caller&, const v1::GetStepsRequest& req, v1::GetStepsReply* rep, Done done) {
  *rep = c.state().get_steps(req, c.now());
  header(req, rep);
  done(0, "");
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
