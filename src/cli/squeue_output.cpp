#include "cli/squeue_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

#include "cli/display_options.hpp"
#include "cli/display_values.hpp"
#include "cli/job_options.hpp"
#include "cli/job_values.hpp"
#include "cli/squeue_internal.hpp"
#include "common/hostlist.hpp"
#include "cli/json_output.hpp"
#include "common/strings.hpp"

namespace drover::cli {

// ---- identities and times ------------------------------------------------------

std::string squeue_job_id(const JobView& j) {
  if (j.array_job_id == 0) return std::to_string(j.job_id);
  if (j.array_task_id) return fmt::format("{}_{}", j.array_job_id, *j.array_task_id);
  std::string tasks = compress_ranges(j.array_pending_tasks);
  if (j.array_max_running > 0) tasks += fmt::format("%{}", j.array_max_running);
  return fmt::format("{}_[{}]", j.array_job_id, tasks);
}

std::string squeue_array_task(const JobView& j) {
  if (j.array_job_id == 0) return "N/A";
  if (j.array_task_id) return std::to_string(*j.array_task_id);
  std::string tasks = compress_ranges(j.array_pending_tasks);
  if (j.array_max_running > 0) tasks += fmt::format("%{}", j.array_max_running);
  return tasks;
}

Seconds job_run_time(const JobView& j, UnixTime now) {
  if (j.start_time == kNoTime || j.state == JobState::kPending) return 0;
  if (j.state == JobState::kSuspended || j.state == JobState::kStopped) return j.pre_suspend_time;
  // Ended, or ending (COMPLETING): its run stopped at its end time.
  const bool over = job_state_is_final(j.state) || j.state == JobState::kCompleting;
  UnixTime until = over && j.end_time != kNoTime && j.end_time > 0 ? j.end_time : now;
  // Resumed (or ended) after a suspension: what it ran before, and since.
  Seconds t = j.suspend_time != kNoTime ? j.pre_suspend_time + (until - j.suspend_time) : until - j.start_time;
  return t > 0 ? t : 0;
}

// ---- options ----------------------------------------------------------------------

namespace {

enum SqOpt {
  kAccount, kAll, kArray, kClusters, kFormat, kFormatLong, kNoHeader, kHelp, kJobs, kLong, kName, kNoConvert,
  kNodeList, kPartition, kQos, kReservation, kSort, kStart, kStates, kSteps, kUser, kUsage, kVerbose, kVersion,
  kMe, kOnlyJobState, kLocal, kFederation, kArrayUnique, kHide, kIterate, kLicenses, kPriority, kSibling,
  kJson, kYaml,
};

const std::vector<OptionSpec>& squeue_specs() {
  static const std::vector<OptionSpec> specs = {
      {kAccount, "account", 'A', ArgKind::kRequired},   {kAll, "all", 'a', ArgKind::kNone},
      {kArray, "array", 'r', ArgKind::kNone},           {kArrayUnique, "array-unique", 0, ArgKind::kNone},
      {kClusters, "clusters", 'M', ArgKind::kRequired}, {kFederation, "federation", 0, ArgKind::kNone},
      {kFormat, "format", 'o', ArgKind::kRequired},     {kFormatLong, "Format", 'O', ArgKind::kRequired},
      {kHelp, "help", 0, ArgKind::kNone},               {kHide, "hide", 0, ArgKind::kNone},
      {kIterate, "iterate", 'i', ArgKind::kRequired},   {kJobs, "jobs", 'j', ArgKind::kOptional},
      {kLicenses, "licenses", 'L', ArgKind::kRequired}, {kLocal, "local", 0, ArgKind::kNone},
      {kLong, "long", 'l', ArgKind::kNone},             {kMe, "me", 0, ArgKind::kNone},
      {kName, "name", 'n', ArgKind::kRequired},         {kNoConvert, "noconvert", 0, ArgKind::kNone},
      {kNodeList, "node", 0, ArgKind::kRequired},       {kNodeList, "nodes", 0, ArgKind::kRequired},
      {kNodeList, "nodelist", 'w', ArgKind::kRequired}, {kNoHeader, "noheader", 'h', ArgKind::kNone},
      {kOnlyJobState, "only-job-state", 0, ArgKind::kNone}, {kPartition, "partition", 'p', ArgKind::kRequired},
      {kPriority, "priority", 'P', ArgKind::kNone},     {kQos, "qos", 'q', ArgKind::kRequired},
      {kReservation, "reservation", 'R', ArgKind::kRequired}, {kSibling, "sibling", 0, ArgKind::kNone},
      {kSort, "sort", 'S', ArgKind::kRequired},         {kStart, "start", 0, ArgKind::kNone},
      {kStates, "states", 't', ArgKind::kRequired},     {kSteps, "steps", 's', ArgKind::kOptional},
      {kUsage, "usage", 0, ArgKind::kNone},             {kUser, "user", 'u', ArgKind::kRequired},
      {kUser, "users", 0, ArgKind::kRequired},          {kVerbose, "verbose", 'v', ArgKind::kNone},
      {kVersion, "version", 'V', ArgKind::kNone},      {kJson, "json", 0, ArgKind::kNone},
      {kYaml, "yaml", 0, ArgKind::kNone},
  };
  return specs;
}

CliResult<bool> set_states(SqueueOptions& o, const std::string& text) {
  o.states.clear();
  o.all_states = false;
  for (const auto& name : comma_list(text)) {
    if (iequals(name, "all")) {
      o.all_states = true;
      continue;
    }
    auto st = parse_job_state(name);
    if (!st) {
      std::vector<std::string> names;
      for (JobState s : all_job_states()) names.push_back(job_state_long(s));
      return CliError{fmt::format("squeue: error: Invalid job state specified: {}\n"
                                  "squeue: error: Valid job states include: {}\n\n",
                                  name, join(names, ",")),
                      kExitError};
    }
    o.states.push_back(*st);
  }
  return true;
}

// -j 123,123_4. A job number that is no number is squeue's own error; a
// number with a bad rest (`12_ab`, `12.0`, `12+0`) is the controller's, as
// Slurm 22.05 words them (on the anchor cluster).
CliResult<bool> set_jobs(SqueueOptions& o, const std::string& text) {
  for (const auto& id : comma_list(text)) {
    const auto end = id.find_first_of("_.+");
    if (!parse_count(std::string_view(id).substr(0, end))) {
      return cli_error("squeue", fmt::format("Invalid job id: {}", id));
    }
    if (end != std::string::npos && (id[end] != '_' || !parse_count(std::string_view(id).substr(end + 1), true))) {
      return CliError{"slurm_load_jobs error: Invalid job id specified\n", kExitError};
    }
    o.job_ids.push_back(id);
  }
  return true;
}

// -s1008.0,1009_2.batch: each "JOB[_TASK].STEP", STEP a number or "batch".
CliResult<bool> set_steps(SqueueOptions& o, const std::string& text) {
  o.steps = true;
  for (const auto& id : comma_list(text)) {
    auto ref = parse_job_step_ref(id);
    if (!ref || !ref->step) {
      return cli_error("squeue", fmt::format("Invalid job step id: {} (-s/--steps takes JOBID.STEPID, e.g. "
                                             "-s1008.0 or -s1008.batch)", id));
    }
    o.step_ids.push_back(id);
  }
  return true;
}

// "-o %all": every letter's field, a to z then A to Z, each as it is and
// joined by "|", as Slurm 22.05's squeue prints it; %s (a plugin's data
// Slurm no longer fills) stays an empty column.
std::string percent_format(const std::string& v) {
  if (v != "%all") return v;
  std::string out;
  for (const char* letters : {"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}) {
    for (const char* c = letters; *c; ++c) {
      if (!out.empty()) out += '|';
      if (*c != 's') out += std::string("%") + *c;
    }
  }
  return out;
}

CliResult<bool> apply_env(SqueueOptions& o, const std::map<std::string, std::string>& env) {
  auto get = [&](const char* k) -> const std::string* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : &it->second;
  };
  if (auto v = get("SQUEUE_FORMAT")) o.format = percent_format(*v);
  if (auto v = get("SQUEUE_FORMAT2")) o.format_long = *v;
  if (auto v = get("SQUEUE_SORT")) o.sort = *v;
  if (auto v = get("SQUEUE_ACCOUNT")) o.accounts = comma_list(*v);
  if (auto v = get("SQUEUE_PARTITION")) o.partitions = comma_list(*v);
  if (auto v = get("SQUEUE_QOS")) o.qos = comma_list(*v);
  if (auto v = get("SQUEUE_NAMES")) o.names = comma_list(*v);
  if (auto v = get("SQUEUE_USERS")) o.users = comma_list(*v);
  if (get("SQUEUE_ALL")) o.all = true;
  if (get("SQUEUE_ARRAY")) o.expand_arrays = true;
  if (auto v = get("SQUEUE_STATES")) return set_states(o, *v);
  return true;
}

CliResult<bool> apply_option(SqueueOptions& o, const ScannedOption& opt, bool& format_given) {
  const std::string v = opt.value.value_or("");
  switch (opt.id) {
    case kAccount: o.accounts = comma_list(v); break;
    case kAll: o.all = true; break;
    case kArray: o.expand_arrays = true; break;
    case kClusters: o.clusters = v; break;
    case kIterate: {
      auto n = parse_iterate("squeue", v);
      if (!n) return n.error();
      o.iterate_s = *n;
      break;
    }
    case kFormat: o.format = percent_format(v); format_given = true; break;
    case kFormatLong: o.format_long = v; format_given = true; break;
    case kNoHeader: o.noheader = true; break;
    case kHelp: case kUsage: o.print_help = true; break;
    case kJobs:
      o.jobs_flag = true;
      return set_jobs(o, v);
    case kLong: o.long_format = true; break;
    case kName: o.names = comma_list(v); break;
    case kNodeList: {
      auto hosts = parse_node_list("squeue", v);
      if (!hosts) return hosts.error();
      o.nodelist = std::move(*hosts);
      break;
    }
    case kPartition: o.partitions = comma_list(v); break;
    case kQos: o.qos = comma_list(v); break;
    case kReservation: o.reservations = comma_list(v); break;
    case kSort: o.sort = v; break;
    case kStart: o.start = true; break;
    case kStates: return set_states(o, v);
    case kSteps: return set_steps(o, v);
    case kUser: o.users = comma_list(v); break;
    case kMe: o.me = true; break;
    case kLicenses: o.licenses = comma_list(v); break;
    case kVersion: o.print_version = true; break;
    case kOnlyJobState: o.only_job_state = true; break;
    case kJson: o.json = true; break;
    case kYaml: return CliError{yaml_not_built("squeue"), kExitError};
    default: break;  // accepted, no effect on one local cluster
  }
  return true;
}

}  // namespace

CliResult<SqueueOptions> parse_squeue_options(const std::vector<std::string>& args,
                                              const std::map<std::string, std::string>& env) {
  SqueueOptions o;
  auto env_ok = apply_env(o, env);
  if (!env_ok) return env_ok.error();
  bool format_given = false;
  std::vector<std::string> operands;
  auto parsed = scan_display_options(
      args, squeue_specs(), "squeue", std::move(o),
      [&](SqueueOptions& opts, const ScannedOption& opt) { return apply_option(opts, opt, format_given); },
      &operands);
  // -j and -s take their list as an operand too (getopt's optional
  // arguments must be attached): `squeue -j 123`, `squeue --steps 9.0`.
  // Only the first; any other operand is refused, as Slurm 22.05 does.
  std::size_t used = 0;
  if (parsed && !operands.empty() && (parsed->jobs_flag || parsed->steps)) {
    auto listed = parsed->jobs_flag ? set_jobs(*parsed, operands[0]) : set_steps(*parsed, operands[0]);
    if (!listed) return listed.error();
    used = 1;
  }
  if (parsed && operands.size() > used) {
    return CliError{fmt::format("squeue: error: Unrecognized option: {}\nTry \"squeue --help\" for more "
                                "information\n",
                                operands[used]),
                    kExitError};
  }
  if (parsed && parsed->long_format && format_given) return format_and_long_refusal("squeue");
  return parsed;
}

// ---- selection -------------------------------------------------------------------------

namespace {

bool any_of_list(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

bool state_selected(const SqueueOptions& o, JobState s) {
  if (o.all_states) return true;
  if (!o.states.empty()) return std::find(o.states.begin(), o.states.end(), s) != o.states.end();
  if (o.start) return s == JobState::kPending;
  return !job_state_is_final(s);
}

bool partition_selected(const SqueueOptions& o, const JobView& j) {
  if (o.partitions.empty()) return true;
  for (const auto& p : split(j.partition, ','))
    if (any_of_list(o.partitions, p)) return true;
  return false;
}

bool nodes_selected(const SqueueOptions& o, const JobView& j) {
  if (o.nodelist.empty()) return true;
  auto hosts = hostlist_expand(j.nodes);
  if (!hosts) return false;
  for (const auto& h : *hosts)
    if (any_of_list(o.nodelist, h)) return true;
  return false;
}

// -L: a job whose licenses ("fsbw:5,matlab") name one of those asked for.
bool licenses_selected(const SqueueOptions& o, const JobView& j) {
  if (o.licenses.empty()) return true;
  for (const auto& item : comma_list(j.licenses)) {
    if (any_of_list(o.licenses, item.substr(0, item.find(':')))) return true;
  }
  return false;
}

bool attributes_selected(const SqueueOptions& o, const JobView& j) {
  bool user_ok = o.users.empty() || any_of_list(o.users, j.user) || any_of_list(o.users, std::to_string(j.uid));
  return user_ok && state_selected(o, j.state) && partition_selected(o, j) && any_of_list(o.accounts, j.account) &&
         any_of_list(o.qos, j.qos) && any_of_list(o.names, j.name) && any_of_list(o.reservations, j.reservation) &&
         nodes_selected(o, j) && licenses_selected(o, j);
}

// A copy of a pending-array record standing for one of its tasks.
JobView single_task(const JobView& j, int64_t task) {
  JobView t = j;
  t.array_task_id = task;
  t.array_pending_tasks.clear();
  return t;
}

// Records matching -j, with "N_T" picking T out of a pending-array record.
void select_by_id(const SqueueOptions& o, const JobView& j, std::vector<JobView>& out) {
  if (o.job_ids.empty()) {
    out.push_back(j);
    return;
  }
  for (const auto& id : o.job_ids) {
    auto us = id.find('_');
    int64_t job = *parse_int(std::string_view(id).substr(0, us));
    if (us == std::string::npos) {
      if (j.job_id == job || j.array_job_id == job) {
        out.push_back(j);
        return;
      }
      continue;
    }
    int64_t task = *parse_int(std::string_view(id).substr(us + 1));
    if (j.array_job_id != job) continue;
    if (j.array_task_id == task) {
      out.push_back(j);
      return;
    }
    const auto& pending = j.array_pending_tasks;
    if (std::find(pending.begin(), pending.end(), task) != pending.end()) out.push_back(single_task(j, task));
  }
}

std::vector<JobView> select_jobs(const SqueueOptions& o, const std::vector<JobView>& jobs) {
  std::vector<JobView> picked;
  for (const auto& j : jobs) {
    if (attributes_selected(o, j)) select_by_id(o, j, picked);
  }
  if (!o.expand_arrays) return picked;
  std::vector<JobView> expanded;
  for (const auto& j : picked) {
    if (j.array_pending_tasks.empty() || j.array_task_id) {
      expanded.push_back(j);
      continue;
    }
    for (int64_t t : j.array_pending_tasks) expanded.push_back(single_task(j, t));
  }
  return expanded;
}

// ---- ordering ---------------------------------------------------------------------------

// Compares two jobs on one -S key letter: <0, 0, >0.
int compare_on(char key, const JobView& a, const JobView& b, UnixTime now) {
  auto cmp = [](const auto& x, const auto& y) { return x < y ? -1 : (y < x ? 1 : 0); };
  auto start = [](const JobView& j) { return j.start_time == kNoTime ? INT64_MAX : j.start_time; };
  switch (key) {
    case 'i': case 'A': case 'F':
      // An array's pending record comes after its tasks (Slurm 22.05: 48_1,
      // 48_2, 48_[3-5%2] with -S i, the reverse with -S -i).
      return cmp(std::pair(a.array_job_id ? a.array_job_id : a.job_id, a.array_task_id.value_or(INT64_MAX)),
                 std::pair(b.array_job_id ? b.array_job_id : b.job_id, b.array_task_id.value_or(INT64_MAX)));
    case 'P': return cmp(a.partition, b.partition);
    case 'j': return cmp(a.name, b.name);
    case 'u': return cmp(a.user, b.user);
    case 'U': return cmp(a.uid, b.uid);
    case 'a': return cmp(a.account, b.account);
    case 'q': return cmp(a.qos, b.qos);
    // By the state's name, as Slurm's squeue sorts it: a COMPLETING job
    // comes before the PENDING ones, which come before the RUNNING ones.
    case 't': case 'T': return cmp(std::string_view(job_state_long(a.state)), std::string_view(job_state_long(b.state)));
    case 'p': case 'Q': return cmp(a.priority, b.priority);
    case 'S': return cmp(start(a), start(b));
    case 'V': return cmp(a.submit_time, b.submit_time);
    case 'e': return cmp(a.end_time, b.end_time);
    case 'M': return cmp(job_run_time(a, now), job_run_time(b, now));
    case 'l': return cmp(a.time_limit, b.time_limit);
    case 'D': return cmp(a.num_nodes, b.num_nodes);
    case 'C': return cmp(a.num_cpus, b.num_cpus);
    case 'N': return cmp(a.nodes, b.nodes);
    case 'r': return cmp(a.reason, b.reason);
    default: return 0;
  }
}

// Slurm's sort list: "P,t,-p" — '-' descending, '+' or nothing ascending,
// for the letter after it; a word of several letters ("iP") is a key per
// letter, as Slurm 22.05's squeue read it. Says the last letter that is no
// sort key of Slurm's (its error names that one), and whether any but 'b'
// (which Slurm only remarks on) is among them.
struct BadSort {
  char last = 0;
  bool fatal = false;
};
BadSort sort_jobs(std::vector<JobView>& jobs, const std::string& spec, UnixTime now) {
  static constexpr std::string_view kNotKeys = "abkoqrswxyAEFKRWXYZ";  // checked on Slurm 22.05, letter by letter
  std::vector<std::pair<char, bool>> keys;  // letter, descending
  BadSort invalid;
  bool desc = false;
  for (char k : spec) {
    if (k == ',' || k == ' ') {
      desc = false;
    } else if (k == '-' || k == '+') {
      desc = k == '-';
    } else {
      if (kNotKeys.find(k) != std::string_view::npos || !std::isalpha(static_cast<unsigned char>(k))) {
        invalid.last = k;
        invalid.fatal = invalid.fatal || k != 'b';
      }
      keys.emplace_back(k, desc);
      desc = false;
    }
  }
  std::stable_sort(jobs.begin(), jobs.end(), [&](const JobView& a, const JobView& b) {
    for (auto [key, d] : keys) {
      int c = compare_on(key, a, b, now);
      if (c != 0) return d ? c > 0 : c < 0;
    }
    return false;
  });
  return invalid;
}

// `what`: "job", or "job step" for squeue -s (Slurm 22.05's words for each).
std::string invalid_lines(const std::vector<std::string>& invalid, std::string_view what = "job") {
  std::string err;
  for (const auto& spec : invalid) err += fmt::format("squeue: error: Invalid {} format specification: {}\n", what, spec);
  return err;
}

}  // namespace

std::string squeue_step_id(const StepView& s) {
  return squeue_job_id(s.job) + "." + step_id_text(s.step_id);
}

namespace {

bool step_selected(const SqueueOptions& o, const StepView& s) {
  const JobView& j = s.job;
  bool user_ok = o.users.empty() || any_of_list(o.users, j.user) || any_of_list(o.users, std::to_string(j.uid));
  if (!user_ok || !partition_selected(o, j)) return false;
  if (!o.nodelist.empty()) {
    auto hosts = hostlist_expand(s.nodes);
    if (!hosts || std::none_of(hosts->begin(), hosts->end(), [&](const std::string& h) { return any_of_list(o.nodelist, h); }))
      return false;
  }
  std::vector<JobView> by_job;
  select_by_id(o, j, by_job);
  if (by_job.empty()) return false;
  if (o.step_ids.empty()) return true;
  const std::string id = squeue_step_id(s);
  const std::string plain = std::to_string(j.job_id) + id.substr(id.find('.'));
  return any_of_list(o.step_ids, id) || any_of_list(o.step_ids, plain);
}

}  // namespace

CommandOutput render_squeue_steps(const SqueueOptions& opts, const std::vector<StepView>& steps, UnixTime now) {
  CommandOutput result;
  std::vector<const StepView*> picked;
  for (const auto& s : steps) {
    if (step_selected(opts, s)) picked.push_back(&s);
  }
  // Slurm's step order: partition, then step id (its batch step id sorts after the numbered ones).
  auto key = [](const StepView* s) {
    return std::tuple(s->job.partition, s->job.job_id, s->step_id < 0 ? INT64_MAX : s->step_id);
  };
  std::stable_sort(picked.begin(), picked.end(), [&](const StepView* a, const StepView* b) { return key(a) < key(b); });
  const auto& fields = squeue_step_fields();
  auto infos = field_infos(fields);
  ParsedFormat parsed = opts.format_long ? parse_long_format(*opts.format_long, infos)
                                         : parse_percent_format(opts.format.value_or(kSqueueStepFormat), infos);
  result.err = invalid_lines(parsed.invalid, "job step");
  std::vector<SqueueStepRow> rows;
  for (const StepView* s : picked) rows.push_back({s, now});
  if (!opts.noheader) result.out = cluster_banner(opts.cluster_banner);
  result.out += render_table(parsed.layout, fields, rows, !opts.noheader);
  return result;
}

std::string squeue_banners(const SqueueOptions& opts, UnixTime now) {
  if (opts.noheader) return "";
  // The time line of -l, and of every listing of -i (as Slurm prints them).
  std::string out = opts.long_format || opts.iterate_s > 0 ? banner_time(now) + "\n" : std::string();
  return out + cluster_banner(opts.cluster_banner);
}

CommandOutput render_squeue(const SqueueOptions& opts, const std::vector<JobView>& jobs, UnixTime now) {
  if (auto early = version_or_usage(
          opts.print_version, opts.print_help,
          "Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid] [--name jobname]\n"
          "              [-o format] [-O fields] [-p partitions] [--qos qos] [--reservation reservation]\n"
          "              [--sort fields] [--start] [--states states] [-u users] [-w nodes] [-ahlrsv]\n"))
    return *early;
  CommandOutput result;
  std::vector<JobView> picked = select_jobs(opts, jobs);
  const BadSort bad_sort = sort_jobs(picked, opts.sort.value_or(opts.start ? "S" : "P,t,-p"), now);

  const auto& fields = squeue_fields();
  auto infos = field_infos(fields);
  ParsedFormat parsed = opts.format_long ? parse_long_format(*opts.format_long, infos)
                                         : parse_percent_format(opts.format.value_or(
                                                                    opts.long_format ? kSqueueLongFormat
                                                                    : opts.start     ? kSqueueStartFormat
                                                                                     : kSqueueDefaultFormat),
                                                                infos);
  result.err = invalid_lines(parsed.invalid);
  if (bad_sort.last) {
    // Slurm 22.05 printed the header and no job, and exited 1; 'b' alone it
    // only remarks on (no "error:"), and lists the jobs.
    result.err += fmt::format("squeue: {}Invalid sort specification: {}\n", bad_sort.last == 'b' ? "" : "error: ",
                              bad_sort.last);
  }
  if (bad_sort.fatal) {
    result.exit_code = kExitError;
    picked.clear();
  }
  std::vector<SqueueRow> rows;
  for (const auto& j : picked) rows.push_back({&j, now});
  result.out = squeue_banners(opts, now);
  result.out += render_table(parsed.layout, fields, rows, !opts.noheader);
  return result;
}

}  // namespace drover::cli
