#include "ctld/ctld_scripts.hpp"

namespace drover::ctld {

CtldScripts::CtldScripts(Done done) : shared_(std::make_shared<Shared>()) { shared_->done = std::move(done); }

CtldScripts::~CtldScripts() {
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->alive = false;
}

void CtldScripts::start(CtldScript s) {
  std::thread([shared = shared_, s = std::move(s)] {
    ScriptOptions so;
    so.env = s.env;  // exactly the job's variables: no PATH, as for the nodes' Prolog
    so.keep_output = false;
    ScriptRun run = run_script(s.program, so);
    std::lock_guard<std::mutex> lock(shared->mu);
    if (shared->alive) shared->done(s, run);
  }).detach();
}

}  // namespace drover::ctld
