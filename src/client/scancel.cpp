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
#include "common/strings.hpp"
#include "common/user_db.hpp"

namespace drover::client {
namespace {

constexpr int kAccessDeniedExit = 2002 % 256;  // ESLURM_ACCESS_DENIED, as scancel's exit status

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
  if (job.find('_') != std::string::npos) {
    return cli::cli_error("scancel", "Invalid job id " + text + " (a step of an array element: give the element's "
                                                                "own job id, squeue -o %A, e.g. 124.0)");
  }
  auto id = parse_int(job);
  auto sid = step == "batch" ? std::optional<int64_t>(-2) : parse_int(step);
  if (!id || *id <= 0 || !sid || *sid < -2 || *sid == -1) {
    return cli::cli_error("scancel", "Invalid job id " + text + " (a step is JOBID.STEPID, e.g. 123.0 or 123.batch)");
  }
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

cli::CliResult<bool> apply(v1::CancelRequest& req, bool& quiet, bool& version, bool& help, const cli::ScannedOption& o) {
  const std::string v = o.value.value_or("");
  switch (o.id) {
    case kUser: req.set_user(v); break;
    case kPartition: req.set_partition(v); break;
    case kName: req.set_name(v); break;
    case kAccount: req.set_account(v); break;
    case kQos: req.set_qos(v); break;
    case kNodes: req.set_nodelist(v); break;
    case kBatch: req.set_batch_only(true); break;
    case kFull: req.set_full(true); break;
    case kQuiet: quiet = true; break;
    case kVersion: version = true; break;
    case kHelp: help = true; break;
    case kMe: {
      auto u = user_by_uid(getuid());
      req.set_user(u ? u->name : std::to_string(getuid()));
      break;
    }
    case kInteractive: return cli::cli_error("scancel", "--interactive is not supported by Drover's scancel; name the jobs");
    case kSignal: {
      int sig = cli::signal_number(v);
      if (sig <= 0) return cli::cli_error("scancel", "Invalid signal name: " + v);
      req.set_signal(sig);
      break;
    }
    case kState:
      for (const auto& s : split(v, ',')) {
        auto st = cli::parse_job_state(s);
        if (!st || (*st != cli::JobState::kPending && *st != cli::JobState::kRunning &&
                    *st != cli::JobState::kSuspended)) {
          return cli::CliError{"scancel: error: Invalid job state specified: " + s +
                                   "\nscancel: error: Valid job states are PENDING, RUNNING, and SUSPENDED\n",
                               1};
        }
        req.add_states(*st == cli::JobState::kPending   ? v1::PENDING
                       : *st == cli::JobState::kRunning ? v1::RUNNING
                                                        : v1::SUSPENDED);
      }
      break;
    default: break;  // -v, -H, -M, -R, --wckey: accepted
  }
  return true;
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
  bool quiet = false, version = false, help = false;
  for (const auto& o : scan->options) {
    auto r = apply(req, quiet, version, help, o);
    if (!r) {
      write_out(r.error().text, stderr);
      return r.error().exit_code;
    }
  }
  if (version) return std::puts(cli::kSlurmVersionLine), 0;
  if (help) return write_out(kUsage, stdout), 0;
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
  // step is cancelled (SIGTERM, then SIGKILL after KillWait) and the job runs on.
  for (const auto& st : steps) {
    auto r = api->signal_step(st.job_id, st.step_id, req.signal(), req.signal() == 0);
    if (r) continue;
    if (r.error().unreachable) return report_failure(inv, *api, r.error());
    rc = 1;
    std::string first = r.error().message.substr(0, r.error().message.find('\n'));
    if (!quiet || first != "Job/step already completing or completed") {
      std::fprintf(stderr, "scancel: error: Kill job error on job step id %s: %s\n", st.text.c_str(), first.c_str());
    }
  }
  if (req.targets().empty() && !filtered) return rc;
  auto reply = api->cancel(req);
  if (!reply) return report_failure(inv, *api, reply.error());
  const bool verbose = std::any_of(scan->options.begin(), scan->options.end(),
                                   [](const cli::ScannedOption& o) { return o.id == kVerbose; });
  for (const auto& r : reply->results()) {
    if (r.ok()) continue;
    // Slurm 22.05's scancel (on the anchor cluster): cancelling a job that
    // is unknown or already over is no error; only -v says so. A signal
    // (--signal) to such a job is one.
    const bool done = r.error() == "Job/step already completing or completed";
    const bool failed = req.signal() != 0 || !(done || r.error() == "Invalid job id specified");
    // Its exit status is Slurm's error number, modulo 256: 210 for ESLURM_ACCESS_DENIED.
    if (failed) rc = std::max(rc, r.error() == "Access/permission denied" ? kAccessDeniedExit : 1);
    if (failed ? !quiet || !done : verbose) {
      std::fprintf(stderr, "scancel: error: Kill job error on job id %s: %s\n", r.target().c_str(), r.error().c_str());
    }
  }
  return rc;
}

}  // namespace drover::client
