#include "ctld/mail.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/duration.hpp"
#include "common/hostlist.hpp"
#include "common/site_script.hpp"
#include "common/strings.hpp"
#include "ctld/job_model.hpp"

namespace drover::ctld {
namespace {

// Slurm mails FAIL for the states past CANCELLED: FAILED, TIMEOUT,
// NODE_FAIL, OUT_OF_MEMORY, DEADLINE, BOOT_FAIL, PREEMPTED.
bool failed_state(v1::JobState s) { return s >= v1::FAILED && s <= v1::PREEMPTED; }

std::string recipient(const v1::JobRecord& r, const MailContext& ctx) {
  std::string to = r.desc().mail_user().empty() ? r.user() : r.desc().mail_user();
  if (!ctx.domain.empty() && to.find('@') == std::string::npos) to += "@" + ctx.domain;
  return to;
}

// "Job_id=12", "Array Task Job_id=20_3 (22)" (an element with ARRAY_TASKS).
std::string job_words(const v1::JobRecord& r) {
  if (r.array_job_id() > 0) {
    return fmt::format("Array Task Job_id={}_{} ({})", r.array_job_id(), r.array_task_id(), r.job_id());
  }
  return fmt::format("Job_id={}", r.job_id());
}

std::string node_list(const v1::JobRecord& r) {
  std::vector<std::string> names;
  for (const auto& n : r.alloc().nodes()) names.push_back(n.node());
  return hostlist_compress(names);
}

std::vector<std::string> job_env(const v1::JobRecord& r, const std::string& type, const MailContext& ctx) {
  std::vector<std::string> env{
      "SLURM_CLUSTER_NAME=" + ctx.cluster,
      fmt::format("SLURM_JOBID={}", r.job_id()),
      fmt::format("SLURM_JOB_ID={}", r.job_id()),
      "SLURM_JOB_ACCOUNT=" + r.account(),
      fmt::format("SLURM_JOB_GID={}", r.gid()),
      "SLURM_JOB_GROUP=" + r.group(),
      "SLURM_JOB_MAIL_TYPE=" + type,
      "SLURM_JOB_NAME=" + r.desc().name(),
      "SLURM_JOB_NODELIST=" + node_list(r),
      fmt::format("SLURM_JOB_NUM_NODES={}", r.alloc().nodes_size()),
      "SLURM_JOB_PARTITION=" + r.partition(),
      fmt::format("SLURM_JOB_RESTART_COUNT={}", r.restart_count()),
      std::string("SLURM_JOB_STATE=") + state_name(r.state()),
      fmt::format("SLURM_JOB_UID={}", r.uid()),
      "SLURM_JOB_USER=" + r.user(),
      "SLURM_JOB_WORK_DIR=" + r.desc().work_dir(),
  };
  if (r.array_job_id() > 0) {
    env.push_back(fmt::format("SLURM_ARRAY_JOB_ID={}", r.array_job_id()));
    env.push_back(fmt::format("SLURM_ARRAY_TASK_ID={}", r.array_task_id()));
  }
  return env;
}

}  // namespace

unsigned mail_bits(const std::string& mail_type) { return parse_mail_type(mail_type).value_or(kMailNone); }

std::vector<Mail> job_mail(const v1::JobRecord& r, unsigned event, int64_t now, const MailContext& ctx) {
  const unsigned bits = mail_bits(r.desc().mail_type());
  std::string type, tail;
  const std::string run = format_duration_hms(run_seconds(r, now));
  switch (event) {
    case kMailBegin:
      if (!(bits & kMailBegin)) return {};
      type = "Began";
      tail = "Began, Queued time " + format_duration_hms(std::max<int64_t>(0, r.start_time() - r.submit_time()));
      break;
    case kMailEnd: {
      // A job that failed mails only for FAIL: with END alone, Slurm 22.05
      // sent nothing for a TIMEOUT (checked on the anchor cluster).
      if (failed_state(r.state())) {
        if (!(bits & kMailFail)) return {};
        type = "Failed";
      } else {
        if (!(bits & kMailEnd)) return {};
        type = "Ended";
      }
      tail = fmt::format("{}, Run time {}, {}, ExitCode {}", type, run, state_name(r.state()), r.exit_code());
      break;
    }
    case kMailRequeue:
      if (!(bits & kMailRequeue)) return {};
      type = "Requeued";
      tail = "Requeued, Run time " + run;
      break;
    case kMailTimeLimit50:
    case kMailTimeLimit80:
    case kMailTimeLimit90:
    case kMailTimeLimit: {
      if (!(bits & event)) return {};
      const int pct = event == kMailTimeLimit50 ? 50 : event == kMailTimeLimit80 ? 80 : event == kMailTimeLimit90 ? 90 : 100;
      type = pct == 100 ? "Reached time limit" : fmt::format("Reached {}% of time limit", pct);
      tail = type + ", Run time " + run;
      break;
    }
    default: return {};
  }
  Mail m;
  m.recipient = recipient(r, ctx);
  m.subject = fmt::format("Slurm {} Name={} {}", job_words(r), r.desc().name(), tail);
  m.env = job_env(r, type, ctx);
  if (event == kMailBegin) {
    m.env.push_back("SLURM_JOB_QUEUED_TIME=" + tail.substr(tail.rfind(' ') + 1));
  } else {
    m.env.push_back("SLURM_JOB_RUN_TIME=" + run);
  }
  if (event == kMailEnd) {
    m.env.push_back(fmt::format("SLURM_JOB_EXIT_CODE2={}:{}", r.exit_code(), r.exit_signal()));
    m.env.push_back(fmt::format("SLURM_JOB_EXIT_CODE_MAX={}", r.exit_code()));
  }
  std::sort(m.env.begin(), m.env.end());
  return {m};
}

std::vector<Mail> array_summary_mail(const std::vector<const v1::JobRecord*>& elements, unsigned event,
                                     const MailContext& ctx) {
  if (elements.empty()) return {};
  const v1::JobRecord& first = *elements.front();
  const unsigned bits = mail_bits(first.desc().mail_type());
  const std::string head =
      fmt::format("Slurm Array Summary Job_id={}_* ({}) Name={}", first.array_job_id(), first.array_job_id(),
                  first.desc().name());
  Mail m;
  m.recipient = recipient(first, ctx);
  std::string type;
  if (event == kMailBegin) {
    if (!(bits & kMailBegin)) return {};
    type = "Began";
    m.subject = head + " Began";
  } else if (event == kMailEnd) {
    bool any_failed = false, same = true;
    int32_t lo = INT32_MAX, hi = INT32_MIN;
    for (const auto* e : elements) {
      any_failed = any_failed || failed_state(e->state());
      same = same && e->state() == first.state();
      lo = std::min(lo, e->exit_code());
      hi = std::max(hi, e->exit_code());
    }
    if (any_failed && (bits & kMailFail)) {
      type = "Failed";
    } else if (bits & kMailEnd) {
      type = "Ended";
    } else {
      return {};
    }
    m.subject = fmt::format("{} {}, {}, ExitCode [{}-{}]", head, type, same ? state_name(first.state()) : "Mixed",
                            lo, hi);
  } else {
    return {};
  }
  m.env = job_env(first, type, ctx);
  std::sort(m.env.begin(), m.env.end());
  return {m};
}

Mailer::Mailer(Log log) : log_(std::move(log)) {
  thread_ = std::thread([this] { run(); });
}

Mailer::~Mailer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Mailer::send(const std::string& program, std::vector<Mail> mails) {
  if (mails.empty()) return;
  {
    std::lock_guard lock(mu_);
    for (auto& m : mails) queue_.emplace_back(program, std::move(m));
  }
  cv_.notify_one();
}

void Mailer::run() {
  for (;;) {
    std::pair<std::string, Mail> next;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued went
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    deliver(next.first, next.second);
  }
}

void Mailer::deliver(const std::string& program, const Mail& m) {
  ScriptOptions so;
  so.argv = {"-s", m.subject, m.recipient};
  so.env = m.env;
  so.env.push_back("PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
  so.timeout_s = 60;
  so.keep_output = false;  // the body: empty, as Slurm's
  so.cwd.clear();
  const ScriptRun run = run_script(program, so);
  std::string error;
  if (!run.started) {
    error = "MailProg " + run.error;
  } else if (run.timed_out) {
    error = fmt::format("MailProg {} did not finish within a minute and was killed", program);
  } else if (!run.ok()) {
    error = fmt::format("MailProg {} failed ({})", program,
                        run.signal ? fmt::format("signal {}", run.signal) : fmt::format("exit {}", run.exit_code));
  }
  if (error.empty()) return;
  if (error != last_error_) log_(error + "; the mail \"" + m.subject + "\" to " + m.recipient + " was not sent");
  last_error_ = error;
}

}  // namespace drover::ctld
