#include "agentd/job_scripts.hpp"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "agent/spool.hpp"
#include "common/site_script.hpp"

namespace drover::agentd {
namespace {

constexpr std::size_t kShownOutput = 500;

bool exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }

}  // namespace

struct JobScripts::Prolog {
  std::condition_variable cv;
  bool done = false;
  std::string failure;
};

JobScripts::JobScripts(JobScriptOptions opts, agent::Supervisor& sup)
    : opts_(std::move(opts)), sup_(sup), dir_(opts_.spool_dir + "/scripts") {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  // Epilogs of an earlier agent: ended ones are reported, the others run again.
  std::vector<Key> again;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    unsigned long long job = 0;
    int restarts = 0;
    if (std::sscanf(name.c_str(), "epilog-%llu.%d.json", &job, &restarts) != 2) continue;
    auto doc = agent::read_json_file(entry.path().string());
    if (!doc) continue;
    Epilog e;
    e.order.set_job_id(static_cast<int64_t>(job));
    e.order.set_restart_count(restarts);
    for (const auto& v : doc->value("env", std::vector<std::string>{})) e.order.add_env(v);
    e.ended = doc->value("ended", false);
    e.failed = doc->value("failed", false);
    e.message = doc->value("message", std::string());
    Key k{job, restarts};
    if (!e.ended) again.push_back(k);
    epilogs_.emplace(k, std::move(e));
  }
  std::lock_guard lock(mu_);
  for (const auto& k : again) start(k);
}

JobScripts::~JobScripts() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  for (auto& w : workers_) w.thread.join();
}

std::string JobScripts::path(const char* kind, const Key& k) const {
  return dir_ + "/" + kind + "-" + std::to_string(k.first) + "." + std::to_string(k.second) +
         (std::string(kind) == "epilog" ? ".json" : "");
}

void JobScripts::save(const Key& k, const Epilog& e) const {
  nlohmann::json doc;
  doc["env"] = std::vector<std::string>(e.order.env().begin(), e.order.env().end());
  doc["ended"] = e.ended;
  doc["failed"] = e.failed;
  doc["message"] = e.message;
  if (auto st = agent::write_file_atomic(path("epilog", k), doc.dump()); !st && opts_.log) {
    opts_.log("epilog of job " + std::to_string(k.first) + ": " + st.error().message);
  }
}

std::string JobScripts::run_all(const std::string& spec, const char* what,
                                const std::vector<std::string>& env) const {
  for (const auto& program : script_programs(spec)) {
    ScriptOptions so;
    so.env = env;
    so.timeout_s = opts_.timeout_s;
    const ScriptRun run = run_script(program, so);
    if (run.ok()) continue;
    std::string failure = std::string(what) + " " + program + " failed: " + run.describe();
    if (run.timed_out) failure += " (PrologEpilogTimeout=" + std::to_string(opts_.timeout_s) + ")";
    return failure + run.output_suffix(kShownOutput);
  }
  return "";
}

Status JobScripts::prolog(const v1::LaunchRequest& launch) {
  if (opts_.prolog.empty()) return {};
  const uint64_t job_id = static_cast<uint64_t>(launch.step().job_id());
  const Key k{job_id, launch.restart_count()};
  const std::string marker = path("prolog", k);
  std::shared_ptr<Prolog> p;
  bool mine = false;
  {
    std::unique_lock lock(mu_);
    if (exists(marker)) return {};  // it ran here for this run of the job
    auto it = prologs_.find(k);
    if (it == prologs_.end()) {
      p = std::make_shared<Prolog>();
      prologs_.emplace(k, p);
      mine = true;
    } else {
      p = it->second;
      p->cv.wait(lock, [&] { return p->done; });
    }
  }
  if (mine) {
    const std::vector<std::string> env(launch.prolog_env().begin(), launch.prolog_env().end());
    std::string failure = run_all(opts_.prolog, "prolog", env);
    if (failure.empty()) {
      if (auto st = agent::write_file_atomic(marker, "ok\n"); !st && opts_.log) opts_.log(st.error().message);
    } else if (opts_.log) {
      opts_.log("job " + std::to_string(job_id) + ": " + failure);
    }
    std::lock_guard lock(mu_);
    p->done = true;
    p->failure = std::move(failure);
    prologs_.erase(k);  // later launches find the marker; after a failure the job comes back as a new run
    p->cv.notify_all();
  }
  if (p->failure.empty()) return {};
  return make_error(p->failure);
}

void JobScripts::order(const v1::EpilogOrder& o) {
  const Key k{static_cast<uint64_t>(o.job_id()), o.restart_count()};
  std::lock_guard lock(mu_);
  if (stopping_ || epilogs_.count(k)) return;
  Epilog e;
  e.order = o;
  save(k, e);
  epilogs_.emplace(k, std::move(e));
  start(k);
}

void JobScripts::start(const Key& k) {
  for (auto it = workers_.begin(); it != workers_.end();) {  // those done: one thread per job otherwise piles up
    if (*it->over) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
  auto over = std::make_shared<std::atomic<bool>>(false);
  workers_.push_back(Worker{std::thread([this, k, over] {
                              run_epilog(k);
                              *over = true;
                            }),
                            over});
}

void JobScripts::run_epilog(Key k) {
  // Every step of the job here ends first (a cancel's or a time limit's
  // ending may still be under way; anything left is ended now).
  bool asked = false;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;  // the next agent runs it
    }
    bool live = false;
    for (const auto& s : sup_.steps()) live = live || (s.key.job_id == k.first && !s.ended());
    if (!live) break;
    if (!asked) (void)sup_.terminate_job(k.first, agent::JobState::kCancelled, "the job is over");
    asked = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<std::string> env;
  {
    std::lock_guard lock(mu_);
    const auto& o = epilogs_.at(k).order;
    env.assign(o.env().begin(), o.env().end());
  }
  const std::string failure = run_all(opts_.epilog, "epilog", env);
  if (!failure.empty() && opts_.log) opts_.log("job " + std::to_string(k.first) + ": " + failure);
  std::error_code ec;
  for (int32_t r = 0; r <= k.second; ++r) std::filesystem::remove(path("prolog", {k.first, r}), ec);
  {
    std::lock_guard lock(mu_);
    Epilog& e = epilogs_.at(k);
    e.ended = true;
    e.failed = !failure.empty();
    e.message = failure;
    save(k, e);
  }
  if (opts_.ended) opts_.ended();
}

void JobScripts::fill(v1::NodeReport& report) const {
  std::lock_guard lock(mu_);
  for (const auto& [k, e] : epilogs_) {
    if (!e.ended) continue;
    v1::EpilogDone* d = report.add_epilogs();
    d->set_job_id(static_cast<int64_t>(k.first));
    d->set_restart_count(k.second);
    d->set_failed(e.failed);
    d->set_message(e.message);
  }
}

void JobScripts::acknowledge(const v1::EpilogDone& done) {
  const Key k{static_cast<uint64_t>(done.job_id()), done.restart_count()};
  std::lock_guard lock(mu_);
  auto it = epilogs_.find(k);
  if (it == epilogs_.end() || !it->second.ended) return;
  epilogs_.erase(it);
  std::error_code ec;
  std::filesystem::remove(path("epilog", k), ec);
}

}  // namespace drover::agentd
