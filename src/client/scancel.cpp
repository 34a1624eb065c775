// scancel: job ids ("123", "123_4", "123_[1-3]") and filters (-u -p -t -n
// -A -q -w), --signal, -b/--batch, -f/--full. The controller selects and
// checks who may cancel what; this prints Slurm's error lines.
#include <unistd.h>

#include <csignal>
#include <optional>

#include "cli/arg_scanner.hpp"
#include "cli/cli_error.hpp"
#include "cli/job_state.hpp"
#include "cli/job_values.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "common/job_errors.hpp"
#include "common/strings.hpp"
#include "common/user_db.hpp"

namespace drover::client {
namespace {

constexpr int kAccessDeniedExit = 2002 % 256;  // ESLURM_ACCESS_DENIED, as scancel's exit status
constexpr int kPendingSignalExit = 2020 % 256;  // ESLURM_JOB_PENDING, with Slurm 22.05's kCannotAlterNow

// scancel's exit status for a refusal, as Slurm 22.05's on the anchor cluster.
int refusal_exit(const std::string& error) {
  if (error == kAccessDenied) return kAccessDeniedExit;
  return error == kCannotAlterNow ? kPendingSignalExit : 1;
}
constexpr int kInvalidJobIdExit = 2017 % 256;  // ESLURM_INVALID_JOB_ID

enum Opt { kUser, kPartition, kState, kName, kAccount, kQos, kNodes, kSignal, kBatch, kFull, kQuiet, kVerbose,
           kMe, kHurry, kInteractive, kVersion, kHelp, kClusters, kReservation, kWckey, kCtld };

const cli::OptionSpec kSpecs[] = {
    {kUser, "user", 'u', cli::ArgKind::kRequired},      {kPartition, "partition", 'p', cli::ArgKind::kRequired},
    {kState, "state", 't', cli::ArgKind::kRequired},    {kName, "name", 'n', cli::ArgKind::kRequired},
    {kName, "jobname", 0, cli::ArgKind::kRequired},     {kAccount, "account", 'A', cli::ArgKind::kRequired},
    {kQos, "qos", 'q', cli::ArgKind::kRequired},        {kNodes, "nodelist", 'w', cli::ArgKind::kRequired},
    {kSignal, "signal", 's', cli::ArgKind::kRequired},  {kBatch, "batch", 'b', cli::ArgKind::kNone},
    {kFull, "full", 'f', cli::ArgKind::kNone},          {kQuiet, "quiet", 'Q', cli::ArgKind::kNone},
    {kVerbose, "verbose", 'v', cli::ArgKind::kNone},    {kMe, "me", 0, cli::ArgKind::kNone},
    {kHurry, "hurry", 'H', cli::ArgKind::kNone},        {kInteractive, "interactive", 'i', cli::ArgKind::kNone},
    {kVersion, "version", 'V', cli::ArgKind::kNone},    {kHelp, "help", 0, cli::ArgKind::kNone},
    {kHelp, "usage", 0, cli::ArgKind::kNone},           {kClusters, "clusters", 'M', cli::ArgKind::kRequired},
    {kReservation, "reservation", 'R', cli::ArgKind::kRequired}, {kWckey, "wckey", 0, cli::ArgKind::kRequired},
    {kCtld, "ctld", 0, cli::ArgKind::kNone},  // every request goes through the controller anyway
};

constexpr const char* kUsage =
    "Usage: scancel [-A account] [--batch] [--full] [--interactive] [-n job_name]\n"
    "               [-p partition] [-Q] [-q qos] [-R reservation] [-s signal | integer]\n"
    "               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]\n"
    "               [--hurry] [-V] [-v] [-w hosts...] [--wckey=wckey]\n"
    "               [job_id[_array_id][.step_id]]\n";

// "123.0", "123.batch": one step of a job.
struct StepTarget {
  int64_t job_id = 0;
  int64_t step_id = 0;  // -2: batch
  std::string text;
};

cli::CliResult<StepTarget> parse_step_target(const std::string& text) {
  auto dot = text.find('.');
  std::string job = text.substr(0, dot), step = text.substr(dot + 1);
  // Slurm 22.05's line, then Drover's.
  auto bad = [&](const char* why) {
    cli::CliError e = cli::cli_error("scancel", "Invalid job id " + text);
    e.text += std::string("scancel: error: drover: ") + why + "\n";
    return e;
  };
  if (job.find('_') != std::string::npos) {
    return bad("a step of an array element is named by the element's own job id (squeue -o %A), e.g. 124.0");
  }
  auto id = parse_int(job);
  auto sid = step == "batch" ? std::optional<int64_t>(-2) : parse_int(step);
  if (!id || *id <= 0 || !sid || *sid < -2 || *sid == -1) return bad("a step is JOBID.STEPID, e.g. 123.0 or 123.batch");
  return StepTarget{*id, *sid, text};
}

// "123", "123_4", "123_[1-3,5]": Slurm's forms (a throttle "%N" is refused, as Slurm does).
cli::CliResult<v1::JobTarget> parse_target(const std::string& text) {
  v1::JobTarget t;
  t.set_text(text);
  auto bad = [&] { return cli::cli_error("scancel", "Invalid job id " + text); };
  auto us = text.find('_');
  auto id = parse_int(text.substr(0, us));
  if (!id || *id <= 0) return bad();
  t.set_job_id(*id);
  if (us == std::string::npos) return t;
  std::string rest = text.substr(us + 1);
  if (rest.size() >= 2 && rest.front() == '[' && rest.back() == ']') rest = rest.substr(1, rest.size() - 2);
  if (rest.find('%') != std::string::npos) {
    return cli::CliError{"scancel: error: _parse_single_range: Invalid range: '" + rest + "'\nscancel: error: Invalid job id " +
                             text + "\n",
                         1};
  }
  auto spec = cli::parse_array_spec(rest);
  if (!spec) return bad();
  for (int64_t i : spec->task_ids()) t.add_array_tasks(i);
  return t;
}

struct Flags {
  bool quiet = false, verbose = false, interactive = false, version = false, help = false;
};

cli::CliResult<bool> apply(v1::CancelRequest& req, Flags& f, const cli::ScannedOption& o) {
  const std::string v = o.value.value_or("");
  switch (o.id) {
    case kUser: {
      // A user this host does not know is Slurm 22.05's error (`scancel -u testuser` on the anchor).
      if (!user_by_name_or_uid(v)) {
        return cli::cli_error("scancel", "Invalid user name: " + v);
      }
      req.set_user(v);
      break;
    }
    case kPartition: req.set_partition(v); break;
    case kName: req.set_name(v); break;
    case kAccount: req.set_account(v); break;
    case kQos: req.set_qos(v); break;
    case kNodes: req.set_nodelist(v); break;
    case kBatch: req.set_batch_only(true); break;
    case kFull: req.set_full(true); break;
    case kQuiet: f.quiet = true; break;
    case kVerbose: f.verbose = true; break;
    case kInteractive: f.interactive = true; break;
    case kVersion: f.version = true; break;
    case kHelp: f.help = true; break;
    case kMe: {
      auto u = user_by_uid(getuid());
      req.set_user(u ? u->name : std::to_string(getuid()));
      break;
    }
    case kSignal: {
      int sig = cli::signal_number(v);
      if (sig <= 0) return cli::CliError{"Unknown job signal: " + v + "\n", 1};  // Slurm 22.05's words
      req.set_signal(sig);
      break;
    }
    case kState:
      for (const auto& s : split(v, ',')) {
        auto st = cli::parse_job_state(s);
        if (!st || (*st != cli::JobState::kPending && *st != cli::JobState::kRunning &&
                    *st != cli::JobState::kSuspended)) {
          // Slurm 22.05's two lines, without its usual "scancel: error: " (anchor cluster).
          return cli::CliError{"Invalid job state specified: " + s +
                                   "\nValid job states are PENDING, RUNNING, and SUSPENDED\n",
                               1};
        }
        req.add_states(*st == cli::JobState::kPending   ? v1::PENDING
                       : *st == cli::JobState::kRunning ? v1::RUNNING
                                                        : v1::SUSPENDED);
      }
      break;
    default: break;  // -H, -M, -R, --wckey: accepted
  }
  return true;
}

// scancel -v with filters that matched nothing, in Slurm 22.05's words.
std::string filters_text(const v1::CancelRequest& req) {
  std::string out;
  auto add = [&](const char* key, const std::string& v) {
    if (!v.empty()) out += std::string(key) + "=" + v + " ";
  };
  // In Slurm 22.05's order (anchor cluster): by name.
  add("account", req.account());
  add("job_name", req.name());
  add("nodelist", req.nodelist());
  add("partition", req.partition());
  add("qos", req.qos());
  add("reservation", req.reservation());
  std::string states;
  for (int s : req.states()) states += (states.empty() ? "" : ",") + std::string(v1::JobState_Name(s));
  add("state", states);
  add("user_name", req.user());
  return out;
}

// scancel -i: "Cancel job_id=N name=X partition=P [y/n]? " until y or n;
// the end of the input answers no.
bool confirmed(const std::string& what) {
  for (;;) {
    std::fputs(what.c_str(), stdout);
    std::fputs(" [y/n]? ", stdout);
    std::fflush(stdout);
    char line[256];
    if (!std::fgets(line, sizeof line, stdin)) {
      std::fputc('\n', stdout);
      return false;
    }
    if (line[0] == 'y' || line[0] == 'Y') return true;
    if (line[0] == 'n' || line[0] == 'N') return false;
  }
}

// The jobs scancel -i confirmed, by id, with the request's signal and shell
// flags; the filters have done their work in the dry run.
std::optional<v1::CancelRequest> ask_each(const v1::CancelRequest& req, const v1::CancelReply& plan) {
  v1::CancelRequest out;
  out.set_signal(req.signal());
  out.set_batch_only(req.batch_only());
  out.set_full(req.full());
  for (const auto& r : plan.results()) {
    if (!r.ok()) continue;
    if (!confirmed("Cancel job_id=" + r.target() + " name=" + r.name() + " partition=" + r.partition())) continue;
    auto t = parse_target(r.target());
    if (t) *out.add_targets() = *t;
  }
  if (out.targets().empty()) return std::nullopt;
  return out;
}

// Each target's outcome in Slurm 22.05's lines (anchor cluster): cancelling
// a job that is unknown or already over is no error, only -v says so; a
// signal (--signal) to such a job is one. -v names each job as it goes
// (a dry run's jobs are named when they are really cancelled). The exit
// status is Slurm's error number modulo 256: 210 for ESLURM_ACCESS_DENIED.
int report_results(const v1::CancelRequest& req, const v1::CancelReply& reply, const Flags& flags) {
  int rc = 0;
  for (const auto& r : reply.results()) {
    if (flags.verbose && !req.dry_run()) {
      if (req.signal()) {
        const char* which = req.full() ? "full job" : req.batch_only() ? "batch job" : "job";  // Slurm 22.05's words
        std::fprintf(stderr, "scancel: Signal %d to %s %s\n", req.signal(), which, r.target().c_str());
      } else {
        std::fprintf(stderr, "scancel: Terminating job %s\n", r.target().c_str());
      }
    }
    if (r.ok()) continue;
    const bool done = r.error() == kAlreadyDone;
    const bool failed = req.signal() != 0 || !(done || r.error() == kInvalidJobId);
    if (failed) rc = std::max(rc, refusal_exit(r.error()));
    if (failed ? !flags.quiet || !done : flags.verbose) {
      std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n", r.target().c_str(), r.error().c_str());
    }
  }
  return rc;
}

}  // namespace

int scancel_main(const Args& args) {
  Invocation inv = invocation("scancel", args);
  auto scan = cli::scan_args(inv.args, kSpecs, cli::OperandMode::kPermute, "scancel");
  if (!scan) {
    write_out(cli::getopt_error_text(scan.error(), "scancel"), stderr);
    return 1;
  }
  v1::CancelRequest req;
  Flags flags;
  for (const auto& o : scan->options) {
    auto r = apply(req, flags, o);
    if (!r) {
      write_out(r.error().text, stderr);
      return r.error().exit_code;
    }
  }
  if (flags.version) return std::puts(cli::kSlurmVersionLine), 0;
  if (flags.help) return write_out(kUsage, stdout), 0;
  const bool quiet = flags.quiet;
  std::optional<std::string> clusters;
  bool selects_none = false;
  for (const auto& o : scan->options) {
    if (o.id == kClusters) clusters = o.value.value_or("");
    // --wckey: no Drover job has a wckey (not recorded), so it selects no job at all.
    if (o.id == kWckey) selects_none = true;
    if (o.id == kReservation) req.set_reservation(o.value.value_or(""));
  }
  std::vector<StepTarget> steps;
  for (const auto& w : scan->operands) {
    for (const auto& word : split(w, ',')) {
      if (word.empty()) continue;
      if (word.find('.') != std::string::npos) {
        auto st = parse_step_target(word);
        if (!st) {
          write_out(st.error().text, stderr);
          return st.error().exit_code;
        }
        steps.push_back(*st);
        continue;
      }
      auto t = parse_target(word);
      if (!t) {
        write_out(t.error().text, stderr);
        return t.error().exit_code;
      }
      *req.add_targets() = *t;
    }
  }
  bool filtered = !req.user().empty() || !req.partition().empty() || !req.states().empty() || !req.name().empty() ||
                  !req.account().empty() || !req.qos().empty() || !req.nodelist().empty() || !req.reservation().empty() ||
                  selects_none;
  if (req.targets().empty() && steps.empty() && !filtered) {
    std::fputs("scancel: error: No job identification provided\n", stderr);
    return 1;
  }
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (clusters && !names_this_cluster("scancel", *clusters, *api)) return 1;
  if (selects_none) return 0;
  int rc = 0;
  // Steps: --signal sends that signal to the step's tasks; without it the
  // step is cancelled (SIGKILL to its tasks) and the job runs on. Failures
  // are worded and numbered as Slurm 22.05's scancel did on the anchor
  // cluster: a step of a job that is unknown or over names the step, exit
  // 1 (-Q: silent); a running job without that step names only the job,
  // exit 225 (ESLURM_INVALID_JOB_ID modulo 256), even with -Q, and a
  // signal to it is silently no error; a pending job's step is no error.
  for (const auto& st : steps) {
    if (flags.interactive && !confirmed("Cancel step_id=" + st.text)) continue;
    if (flags.verbose) {
      if (req.signal()) {
        std::fprintf(stderr, "scancel: Signal %d to step %s\n", req.signal(), st.text.c_str());
      } else {
        std::fprintf(stderr, "scancel: Terminating step %s\n", st.text.c_str());
      }
    }
    auto r = api->signal_step(st.job_id, st.step_id, req.signal(), req.signal() == 0);
    if (r) continue;
    if (r.error().unreachable) return report_failure(inv, *api, r.error());
    const std::string first = r.error().headline();
    if (first == kNoSuchStep) {
      if (req.signal() != 0) continue;
      rc = std::max(rc, kInvalidJobIdExit);
      std::fprintf(stderr, "scancel: error: Kill job error on job step id %s: Invalid job id specified\n",
                   st.text.substr(0, st.text.find('.')).c_str());
      continue;
    }
    rc = std::max(rc, refusal_exit(first));
    if (!quiet || first != kInvalidJobId) {
      std::fprintf(stderr, "scancel: error: Kill job error on job step id %s: %s\n", st.text.c_str(), first.c_str());
    }
  }
  if (req.targets().empty() && !filtered) return rc;
  req.set_dry_run(flags.interactive);  // -i: which jobs, then ask about each
  auto reply = api->cancel(req);
  if (!reply) return report_failure(inv, *api, reply.error());
  if (flags.verbose && filtered && reply->results().empty()) {
    std::fprintf(stderr, "scancel: error: No active jobs match ALL job filters, including: %s\n",
                 filters_text(req).c_str());
  }
  rc = std::max(rc, report_results(req, *reply, flags));
  if (!flags.interactive) return rc;
  auto chosen = ask_each(req, *reply);
  if (!chosen) return rc;
  auto done = api->cancel(*chosen);
  if (!done) return report_failure(inv, *api, done.error());
  return std::max(rc, report_results(*chosen, *done, flags));
}

}  // namespace drover::client
