#include "cli/sacct_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "cli/display_options.hpp"
#include "cli/job_options.hpp"
#include "cli/job_values.hpp"
#include "cli/json_output.hpp"
#include "cli/sacct_internal.hpp"
#include "common/duration.hpp"
#include "common/hostlist.hpp"
#include "common/strings.hpp"

namespace drover::cli {

std::string sacct_job_id(const AccountingRecord& r) {
  std::string id;
  if (r.array_job_id == 0 || r.whole_array) {
    id = std::to_string(r.array_job_id ? r.array_job_id : r.job_id);
  } else if (r.array_task_id) {
    id = fmt::format("{}_{}", r.array_job_id, *r.array_task_id);
  } else {
    std::string tasks = compress_ranges(r.array_pending_tasks);
    if (r.array_max_running > 0) tasks += fmt::format("%{}", r.array_max_running);
    id = fmt::format("{}_[{}]", r.array_job_id, tasks);
  }
  return r.step.empty() ? id : id + "." + r.step;
}

std::string sacct_state(const AccountingRecord& r) {
  if (r.state == JobState::kCancelled && r.cancelled_by_uid)
    return fmt::format("CANCELLED by {}", *r.cancelled_by_uid);
  return job_state_long(r.state);
}

namespace {

enum SaOpt {
  kAllUsers, kAccounts, kBrief, kDelimiter, kEndTime, kHelpFormat, kJobs, kLong, kAllClusters, kClusters,
  kNoHeader, kName, kNodeList, kNoConvert, kFormat, kParsable, kParsable2, kQos, kPartition, kState, kStartTime,
  kTruncate, kUser, kUnits, kUsage, kHelp, kVerbose, kVersion, kAllocations, kDuplicates, kLocal, kFederation,
  kWholeHetjob, kArray, kJson, kYaml, kGroup, kWckeys, kReason, kConstraints, kNcpus, kNnodes, kTimeMin,
  kTimeMax, kUseLocalUid, kFlags, kBatchScript, kEnvVars, kAssociations, kCompletion, kFile,
};

const std::vector<OptionSpec>& sacct_specs() {
  static const std::vector<OptionSpec> specs = {
      {kAllUsers, "allusers", 'a', ArgKind::kNone},   {kAccounts, "accounts", 'A', ArgKind::kRequired},
      {kArray, "array", 0, ArgKind::kNone},           {kBrief, "brief", 'b', ArgKind::kNone},
      {kDelimiter, "delimiter", 0, ArgKind::kRequired}, {kDuplicates, "duplicates", 'D', ArgKind::kNone},
      {kEndTime, "endtime", 'E', ArgKind::kRequired}, {kHelpFormat, "helpformat", 'e', ArgKind::kNone},
      {kFederation, "federation", 0, ArgKind::kNone}, {kFormat, "format", 'o', ArgKind::kRequired},
      {kHelp, "help", 'h', ArgKind::kNone},           {kJobs, "jobs", 'j', ArgKind::kRequired},
      {kLong, "long", 'l', ArgKind::kNone},           {kAllClusters, "allclusters", 'L', ArgKind::kNone},
      {kLocal, "local", 0, ArgKind::kNone},           {kClusters, "clusters", 'M', ArgKind::kRequired},
      {kNoHeader, "noheader", 'n', ArgKind::kNone},   {kName, "name", 0, ArgKind::kRequired},
      {kNodeList, "nodelist", 'N', ArgKind::kRequired}, {kNoConvert, "noconvert", 0, ArgKind::kNone},
      {kParsable, "parsable", 'p', ArgKind::kNone},   {kParsable2, "parsable2", 'P', ArgKind::kNone},
      {kQos, "qos", 'q', ArgKind::kRequired},         {kPartition, "partition", 'r', ArgKind::kRequired},
      {kState, "state", 's', ArgKind::kRequired},     {kStartTime, "starttime", 'S', ArgKind::kRequired},
      {kTruncate, "truncate", 'T', ArgKind::kNone},   {kUser, "user", 'u', ArgKind::kRequired},
      {kUser, "uid", 0, ArgKind::kRequired},          {kUnits, "units", 0, ArgKind::kRequired},
      {kUsage, "usage", 0, ArgKind::kNone},           {kVerbose, "verbose", 'v', ArgKind::kNone},
      {kVersion, "version", 'V', ArgKind::kNone},     {kAllocations, "allocations", 'X', ArgKind::kNone},
      {kWholeHetjob, "whole-hetjob", 0, ArgKind::kOptional},
      {kJson, "json", 0, ArgKind::kNone},           {kYaml, "yaml", 0, ArgKind::kNone},
      {kGroup, "gid", 'g', ArgKind::kRequired},       {kGroup, "group", 0, ArgKind::kRequired},
      {kWckeys, "wckeys", 'W', ArgKind::kRequired},   {kReason, "reason", 'R', ArgKind::kRequired},
      {kConstraints, "constraints", 'C', ArgKind::kRequired}, {kNcpus, "ncpus", 'I', ArgKind::kRequired},
      {kNnodes, "nnodes", 'i', ArgKind::kRequired},   {kTimeMin, "timelimit-min", 'k', ArgKind::kRequired},
      {kTimeMax, "timelimit-max", 'K', ArgKind::kRequired}, {kUseLocalUid, "use-local-uid", 0, ArgKind::kNone},
      {kFlags, "flags", 'F', ArgKind::kRequired},     {kBatchScript, "batch-script", 'B', ArgKind::kNone},
      {kEnvVars, "env-vars", 0, ArgKind::kNone},      {kAssociations, "associations", 'x', ArgKind::kRequired},
      {kCompletion, "completion", 'c', ArgKind::kNone}, {kFile, "file", 'f', ArgKind::kRequired},
  };
  return specs;
}

// "4", "2-8", "2-": a count range for -I/-i.
CliResult<std::pair<int64_t, int64_t>> count_range(const std::string& v, const char* what) {
  auto dash = v.find('-');
  auto lo = parse_count(std::string_view(v).substr(0, dash), true);
  std::optional<int64_t> hi = lo;
  if (dash != std::string::npos) hi = dash + 1 == v.size() ? INT64_MAX : parse_count(std::string_view(v).substr(dash + 1), true);
  if (!lo || !hi || *hi < *lo) return cli_error("sacct", fmt::format("Invalid {} range: {} (MIN or MIN-MAX)", what, v));
  return std::make_pair(*lo, *hi);
}

// Options that read what Drover does not keep: said, not ignored.
CliResult<bool> not_kept(const char* option, const char* why) {
  return cli_error("sacct", fmt::format("{} is not built in Drover: {}", option, why));
}

// -j JOB[_TASK][+COMPONENT][.STEP],...: checked as Slurm 22.05's sacct checks
// them, in its words (on the anchor cluster: `12_ab` is "Bad job array
// element specified: 12", `1.x` "Bad step specified: 1", `abc` "Bad
// job/step specified: abc"). A heterogeneous job's +COMPONENT names the
// job itself here (Drover has no heterogeneous jobs).
CliResult<bool> set_job_ids(SacctOptions& o, const std::string& v) {
  auto fatal = [](const std::string& what, const std::string& which) -> CliResult<bool> {
    return CliError{fmt::format("sacct: fatal: Bad {} specified: {}\n", what, which), kExitError};
  };
  o.job_ids.clear();
  for (std::string id : comma_list(v)) {
    const auto dot = id.find('.');
    std::string step = dot == std::string::npos ? "" : id.substr(dot + 1);
    std::string job = id.substr(0, dot);
    if (auto plus = job.find('+'); plus != std::string::npos) {
      if (!parse_count(std::string_view(job).substr(plus + 1), true)) return fatal("job/step", id);
      job.erase(plus);
    }
    const auto us = job.find('_');
    const std::string number = job.substr(0, us);
    if (!parse_count(number, true)) return fatal("job/step", id);
    if (us != std::string::npos && !parse_count(std::string_view(job).substr(us + 1), true)) {
      return fatal("job array element", number);
    }
    if (dot != std::string::npos && step != "batch" && step != "extern" && !parse_count(step, true)) {
      return fatal("step", number);
    }
    o.job_ids.push_back(dot == std::string::npos ? job : job + "." + step);
  }
  return true;
}

// The states sacct -s takes (sacct(1)); the others are never in the accounting.
bool accounted_state(JobState s) {
  switch (s) {
    case JobState::kBootFail: case JobState::kCancelled: case JobState::kCompleted: case JobState::kDeadline:
    case JobState::kFailed: case JobState::kNodeFail: case JobState::kOutOfMemory: case JobState::kPending:
    case JobState::kPreempted: case JobState::kRunning: case JobState::kRequeued: case JobState::kResizing:
    case JobState::kRevoked: case JobState::kSuspended: case JobState::kTimeout:
      return true;
    default:
      return false;
  }
}

CliResult<bool> apply_option(SacctOptions& o, const ScannedOption& opt) {
  const std::string v = opt.value.value_or("");
  switch (opt.id) {
    case kGroup: o.groups = comma_list(v); break;
    case kWckeys: o.wckeys = comma_list(v); break;
    case kReason: o.reasons = comma_list(v); break;
    case kConstraints: o.constraints = comma_list(v); break;
    case kNodeList: {
      auto hosts = parse_node_list("sacct", v);
      if (!hosts) return hosts.error();
      o.nodes = std::move(*hosts);
      break;
    }
    case kNcpus:
    case kNnodes: {
      auto r = count_range(v, opt.id == kNcpus ? "CPU count" : "node count");
      if (!r) return r.error();
      (opt.id == kNcpus ? o.ncpus : o.nnodes) = *r;
      break;
    }
    case kTimeMin:
    case kTimeMax: {
      // Slurm counts whole minutes (a part of one is one), and calls a
      // limit that is not one, or is zero, fatal (22.05, anchor cluster).
      auto t = parse_duration(v);
      if (!t || *t == 0) return CliError{"sacct: fatal: Invalid time limit specification\n", kExitError};
      (opt.id == kTimeMin ? o.timelimit_min : o.timelimit_max) = *t == kInfinite ? *t : (*t + 59) / 60 * 60;
      break;
    }
    case kUseLocalUid: break;  // the store keeps user names, looked up here anyway
    case kFlags:
      for (const auto& f : comma_list(v)) {
        static const char* const kFlagNames[] = {"SchedSubmit", "SchedMain", "SchedBackfill", "StartRecieved"};
        if (std::none_of(std::begin(kFlagNames), std::end(kFlagNames), [&](const char* n) { return iequals(f, n); })) {
          return cli_error("sacct", fmt::format("str_2_job_flags: Invalid job flag {}", f));
        }
        o.flags.push_back(f);
      }
      break;
    case kBatchScript: o.batch_script = true; break;
    case kEnvVars: o.env_vars = true; break;
    case kAssociations: return not_kept("-x/--associations", "associations have no ids; use -A and -u");
    case kCompletion:
    case kFile: return not_kept(opt.id == kCompletion ? "-c/--completion" : "-f/--file",
                                "there is no job completion plugin; sacct reads the controller's history");
    case kAllUsers: o.all_users = true; break;
    case kAccounts: o.accounts = comma_list(v); break;
    case kBrief: o.format = kSacctBriefFormat; break;
    case kDelimiter: o.delimiter = v; break;
    case kEndTime: o.end_time = v; break;
    case kHelpFormat: o.print_fields = true; break;
    case kJobs: return set_job_ids(o, v);
    case kLong: o.format = kSacctLongFormat; o.long_given = true; break;
    case kClusters: o.clusters = v; break;
    case kNoHeader: o.noheader = true; break;
    case kName: o.names = comma_list(v); break;
    case kNoConvert: o.noconvert = true; break;
    case kFormat: o.format = v; o.format_given = true; break;
    case kParsable: o.parsable = true; break;
    case kParsable2: o.parsable2 = true; break;
    case kQos: o.qos = comma_list(v); break;
    case kPartition: o.partitions = comma_list(v); break;
    case kState:
      for (const auto& name : comma_list(v)) {
        auto st = parse_job_state(name);
        // Slurm 22.05's words: a word it does not know, and a state its
        // accounting does not keep (COMPLETING, CONFIGURING, ...).
        if (!st) return CliError{fmt::format("sacct: fatal: unrecognized job state value '{}'\n", name), kExitError};
        if (!accounted_state(*st)) {
          return CliError{fmt::format("sacct: fatal: job state {} is not supported / accounted\n", name), kExitError};
        }
        o.states.push_back(*st);
      }
      break;
    case kStartTime: o.start_time = v; break;
    case kUser: o.users = comma_list(v); break;
    case kUnits: {
      std::string u = to_upper(v);
      if (u.size() != 1 || std::string_view("KMGTP").find(u[0]) == std::string_view::npos)
        return CliError{fmt::format("sacct: error: Invalid unit type '{}'. Possible options are 'KMGTP'\n"
                                    "sacct: fatal: Invalid unit type\n", v),
                        kExitError};
      o.units = u[0];
      break;
    }
    case kHelp: case kUsage: o.print_help = true; break;
    case kVersion: o.print_version = true; break;
    case kAllocations: o.allocations = true; break;
    case kDuplicates: o.duplicates = true; break;
    case kJson: o.json = true; break;
    case kYaml: return CliError{yaml_not_built("sacct"), kExitError};
    default: break;  // accepted; no effect on one local cluster
  }
  return true;
}

bool in_list(const std::vector<std::string>& list, const std::string& v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

// -j matching: "N" (job or whole array), "N_T" (array element), "N.step".
// With check_step, an id naming a step admits only that step's row.
bool id_selected(const SacctOptions& o, const AccountingRecord& r, bool check_step) {
  if (o.job_ids.empty()) return true;
  for (const auto& id : o.job_ids) {
    auto dot = id.find('.');
    std::string job = id.substr(0, dot);
    if (check_step && dot != std::string::npos && r.step != id.substr(dot + 1)) continue;
    auto us = job.find('_');
    auto jid = parse_int(std::string_view(job).substr(0, us));
    if (!jid) continue;
    if (us == std::string::npos) {
      if (r.job_id == *jid || r.array_job_id == *jid) return true;
      continue;
    }
    auto task = parse_int(std::string_view(job).substr(us + 1));
    if (!task || r.array_job_id != *jid) continue;
    const auto& p = r.array_pending_tasks;
    if (r.array_task_id == *task || std::find(p.begin(), p.end(), *task) != p.end()) return true;
  }
  return false;
}

struct Window {
  UnixTime start = 0;
  UnixTime end = INT64_MAX;
  UnixTime eligible_by = INT64_MAX;  // a job is listed (without -j) once eligible by then
};

// Slurm 22.05's sacct line (bare, as it prints it), then which option and what it takes.
CliError bad_time(const char* option, const std::string& value, const std::string& why) {
  return CliError{fmt::format("Invalid time specification (pos=0): {}\nsacct: error: {}: {}\n", value, option, why), 1};
}

// sacct(1)'s default window: from midnight (epoch with -j; now with -s and
// no -j) to now; with -s, the end defaults to the start when -S is given.
// (An open end stands for now: nothing was submitted or ended after it, and
// a controller's clock a second ahead of this host's loses no new job.)
CliResult<Window> time_window(const SacctOptions& o, UnixTime now) {
  Window w;
  if (!o.job_ids.empty()) {
    w.start = 0;
  } else {
    w.start = o.states.empty() ? local_midnight(now) : now;  // midnight today: sacct's default start
  }
  if (o.start_time) {
    auto t = parse_timestamp(*o.start_time, now, TimeBias::kPast);
    if (!t) return bad_time("--starttime", *o.start_time, t.error().message);
    w.start = *t;
    if (!o.states.empty()) w.end = w.start;
  }
  if (o.end_time) {
    auto t = parse_timestamp(*o.end_time, now, TimeBias::kPast);
    if (!t) return bad_time("--endtime", *o.end_time, t.error().message);
    w.end = *t;
  }
  // The end is now unless given (or, with -s and -S, the start itself).
  const UnixTime end = o.end_time ? w.end : !o.states.empty() && o.start_time ? w.start : now;
  // Without -j, Slurm 22.05 lists a job (with no -s) or a pending one (-s
  // PD) only once it became eligible by the window's end: never one still
  // held, waiting on a dependency or for its --begin time, nor one
  // cancelled so, unless -s names its final state. (A few seconds' grace
  // for an open end: the controller's clock may run ahead of this host's.)
  constexpr Seconds kClockGrace = 10;
  w.eligible_by = end == now && w.end == INT64_MAX ? now + kClockGrace : end;
  if (w.start > end) {  // Slurm 22.05's words
    return CliError{fmt::format("sacct: error: Start time ({}) requested is after end time ({}).\n",
                                format_timestamp(w.start), format_timestamp(end)),
                    kExitError};
  }
  return w;
}

bool eligible_in_window(const AccountingRecord& r, const Window& w) {
  return r.eligible != kNoTime && r.eligible <= w.eligible_by;
}

// With -s, a job is listed when it was in its state within the window:
// pending from when it became eligible (`by_eligible`; else its submission)
// to its start, running (or suspended) from its start to its end, and in a
// final state when it reached it in the window.
bool state_in_window(const AccountingRecord& r, const Window& w, bool by_eligible) {
  switch (r.state) {
    case JobState::kPending:
    case JobState::kRequeueHold:
    case JobState::kResvDelHold: {
      if (by_eligible && !eligible_in_window(r, w)) return false;
      UnixTime left = r.start != kNoTime ? r.start : r.end;
      return (r.submit == kNoTime || r.submit <= w.end) && (left == kNoTime || left >= w.start);
    }
    case JobState::kRunning:
    case JobState::kSuspended:
    case JobState::kCompleting:
    case JobState::kConfiguring:
    case JobState::kSignaling:
    case JobState::kStageOut:
    case JobState::kStopped:
    case JobState::kResizing:
      return (r.start == kNoTime || r.start <= w.end) && (r.end == kNoTime || r.end >= w.start);
    default:
      return r.end != kNoTime && r.end >= w.start && r.end <= w.end;
  }
}

bool in_range(const std::optional<std::pair<int64_t, int64_t>>& range, int64_t v) {
  return !range || (v >= range->first && v <= range->second);
}

// -C: every feature named appears in the job's constraint expression.
bool has_constraints(const std::vector<std::string>& wanted, const std::string& expr) {
  std::vector<std::string> words;
  std::string cur;
  for (char ch : expr + "&") {
    if (std::string_view("&|,()[]*").find(ch) != std::string_view::npos) {
      if (!cur.empty()) words.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  for (const auto& w : wanted) {
    if (std::find(words.begin(), words.end(), w) == words.end()) return false;
  }
  return true;
}

// -g -W -R -C -N -I -i -k -K.
bool more_selected(const SacctOptions& o, const AccountingRecord& r) {
  if (!o.groups.empty() && !in_list(o.groups, r.group) && !in_list(o.groups, std::to_string(r.gid))) return false;
  if (!in_list(o.wckeys, r.wckey) || !has_constraints(o.constraints, r.constraints)) return false;
  if (!o.reasons.empty() && std::none_of(o.reasons.begin(), o.reasons.end(),
                                         [&](const std::string& x) { return iequals(x, r.reason); })) {
    return false;
  }
  if (!o.nodes.empty()) {
    auto ran = hostlist_expand(r.node_list);
    if (!ran || std::none_of(ran->begin(), ran->end(), [&](const std::string& n) { return in_list(o.nodes, n); }))
      return false;
  }
  if (!o.flags.empty()) {
    const auto mine = split(r.flags, ',');
    auto asked = [&](const std::string& f) {
      return std::any_of(o.flags.begin(), o.flags.end(), [&](const std::string& x) { return iequals(x, f); });
    };
    if (std::none_of(mine.begin(), mine.end(), asked)) return false;
  }
  if (!in_range(o.ncpus, r.alloc_cpus) || !in_range(o.nnodes, r.nnodes)) return false;
  const Seconds limit = r.time_limit == kInfinite ? INT64_MAX : r.time_limit;
  // -k alone asks for that limit exactly, -K alone for nothing; together they are a range (sacct(1)).
  if (o.timelimit_min) {
    if (r.time_limit == kNotSet) return false;
    if (!o.timelimit_max && limit != *o.timelimit_min) return false;
    if (o.timelimit_max && (limit < *o.timelimit_min || limit > *o.timelimit_max)) return false;
  }
  return true;
}

bool job_selected(const SacctOptions& o, const AccountingRecord& r, const std::string& caller, const Window& w) {
  // Named jobs are shown whoever ran them, as Slurm 22.05's sacct showed
  // root's job to alice (anchor cluster); PrivateData=jobs keeps them from her.
  bool everyone = o.all_users || caller == "root" || !o.job_ids.empty();
  bool user_ok = o.users.empty() ? (everyone || r.user == caller)
                                 : (in_list(o.users, r.user) || in_list(o.users, std::to_string(r.uid)));
  bool state_ok = o.states.empty() || std::find(o.states.begin(), o.states.end(), r.state) != o.states.end();
  const bool by_eligible = o.job_ids.empty();
  bool time_ok = o.states.empty() ? (r.submit == kNoTime || r.submit <= w.end) &&
                                        (r.end == kNoTime || r.end >= w.start) &&
                                        (!by_eligible || eligible_in_window(r, w))
                                  : state_in_window(r, w, by_eligible);
  return user_ok && state_ok && time_ok && id_selected(o, r, false) && in_list(o.accounts, r.account) &&
         in_list(o.partitions, r.partition) && in_list(o.qos, r.qos) && in_list(o.names, r.job_name) &&
         more_selected(o, r);
}

// sacct -B / --env-vars: for each named job the caller may see, a title, a
// rule and the script (the environment, a variable a line), then a blank
// line; "NONE" for a job without a script. As Slurm 22.05 prints them.
std::string render_scripts(const SacctOptions& o, const std::vector<AccountingRecord>& records) {
  std::string out;
  for (const auto& r : records) {
    if (!r.step.empty() || !id_selected(o, r, false)) continue;
    const std::string id = r.array_task_id ? fmt::format("{}_{}", r.array_job_id, *r.array_task_id)
                                           : std::to_string(r.job_id);
    const std::string rule(80, '-');
    if (o.batch_script) {
      if (!r.batch_script) continue;
      std::string text = *r.batch_script;
      if (text.empty() || text.back() != '\n') text += '\n';
      out += fmt::format("Batch Script for {}\n{}\n{}\n", id, rule, text);
    } else {
      if (!r.environment) continue;
      out += fmt::format("Environment used for {} (must be batch to display)\n{}\n", id, rule);
      for (const auto& kv : *r.environment) out += kv + "\n";
      out += "\n";
    }
  }
  return out;
}

// AllocGRES is asked for by name only (the Prometheus exporter reads it):
// Slurm 22.05 had removed it, and its --helpformat and --format=ALL list
// the fields without it.
bool listed_field(std::string_view name) { return name != "AllocGRES"; }

std::string field_list_text() {
  std::vector<std::string_view> names;
  for (const auto& f : sacct_fields()) {
    if (listed_field(f.column.name)) names.push_back(f.column.name);
  }
  return help_format_text(names);
}

// --format as Slurm 22.05's sacct reads it: blanks around a name are
// dropped, and the list ends at an empty name ("JobID,,State" is JobID).
// ReqGRES, which it had removed, is its fatal error.
CliResult<std::string> format_field_list(const std::string& format) {
  std::string out;
  for (const auto& raw : split(format, ',')) {
    std::string name(trim(raw));
    if (name.empty()) break;
    if (iequals(name.substr(0, name.find('%')), "ReqGRES")) {
      return CliError{"sacct: fatal: ReqGRES has been removed, please use ReqTRES\n", kExitError};
    }
    out += (out.empty() ? "" : ",") + name;
  }
  return out;
}

}  // namespace

std::string help_format_text(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += fmt::format("{:<19}", names[i]);
    out += (i % 4 == 3 || i + 1 == names.size()) ? "\n" : " ";
  }
  return out;
}

UnixTime sacct_window_start(const SacctOptions& opts, UnixTime now) {
  auto w = time_window(opts, now);
  return w ? w->start : 0;
}

CliResult<SacctOptions> parse_sacct_options(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& env) {
  SacctOptions o;
  if (auto it = env.find("SACCT_FORMAT"); it != env.end() && !it->second.empty()) o.format = it->second;
  auto parsed = scan_display_options(args, sacct_specs(), "sacct", std::move(o), apply_option);
  if (!parsed) return parsed;
  if (parsed->long_given && parsed->format_given) return format_and_long_refusal("sacct");
  // Slurm 22.05's words (checked on its sacct).
  if (parsed->batch_script && parsed->env_vars) {
    return CliError{"sacct: fatal: Options --batch-script and --env-vars are mutually exclusive\n", kExitError};
  }
  if ((parsed->batch_script || parsed->env_vars) && parsed->job_ids.empty()) {
    return CliError{fmt::format("sacct: fatal: When requesting job {} you must also request specific jobs with the "
                                "'-j' option.\n",
                                parsed->batch_script ? "scripts" : "environments"),
                    kExitError};
  }
  return parsed;
}

CommandOutput render_sacct(const SacctOptions& opts, const std::vector<AccountingRecord>& records,
                           const std::string& caller, UnixTime now) {
  if (auto early = version_or_usage(opts.print_version, opts.print_help, "Usage: sacct [options]\n"))
    return *early;
  if (opts.print_fields) return CommandOutput{field_list_text(), "", 0};
  CommandOutput result;
  std::vector<ColumnInfo> columns;
  for (const auto& f : sacct_fields()) columns.push_back(f.column);
  // --format=ALL: every field, in --helpformat's order (as Slurm 22.05's sacct).
  std::string all_names;
  if (iequals(trim(opts.format), "all")) {
    for (const auto& c : columns) {
      if (listed_field(c.name)) all_names += (all_names.empty() ? "" : ",") + std::string(c.name);
    }
  }
  auto format = format_field_list(all_names.empty() ? opts.format : all_names);
  if (!format) return CommandOutput{"", format.error().text, format.error().exit_code};
  auto items = parse_column_list(*format, columns);
  if (!items) return CommandOutput{"", fmt::format("sacct: error: {}\n", items.error().message), kExitError};
  auto window = time_window(opts, now);
  if (!window) return CommandOutput{"", window.error().text, window.error().exit_code};
  if (opts.batch_script || opts.env_vars) return CommandOutput{render_scripts(opts, records), "", 0};
  if (opts.json) {  // the selected jobs, each with its steps; the format options do not apply
    std::vector<AccountingRecord> picked;
    bool in = false;
    for (const auto& r : records) {
      if (r.step.empty()) in = job_selected(opts, r, caller, *window);
      if (in && id_selected(opts, r, true)) picked.push_back(r);
    }
    return CommandOutput{render_sacct_json(picked, now), "", 0};
  }

  SacctContext ctx{now, opts.units, opts.noconvert};
  std::vector<std::vector<std::string>> rows;
  bool job_in = false;
  for (const auto& r : records) {
    if (r.step.empty()) job_in = job_selected(opts, r, caller, *window);
    if (!job_in || (!r.step.empty() && opts.allocations)) continue;
    if (!id_selected(opts, r, true)) continue;
    // -X reads no steps: a job's CPU time (its steps') is 0, as Slurm's.
    const AccountingRecord* shown = &r;
    AccountingRecord alone;
    if (opts.allocations && r.has_cpu_usage) {
      alone = r;
      alone.has_cpu_usage = false;
      shown = &alone;
    }
    std::vector<std::string> row;
    for (const auto& item : *items) row.push_back(sacct_fields()[item.field].value(*shown, ctx));
    rows.push_back(std::move(row));
  }
  ColumnOptions copts;
  copts.mode = opts.parsable2 ? ColumnMode::kParsable2 : opts.parsable ? ColumnMode::kParsable : ColumnMode::kFixed;
  copts.delimiter = opts.delimiter;
  copts.header = !opts.noheader;
  result.out = render_columns(*items, columns, rows, copts);
  return result;
}

}  // namespace drover::cli
