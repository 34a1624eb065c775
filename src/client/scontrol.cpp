// scontrol's keywords that need the controller: show job|jobid|node|partition|config|licenses|step,
// update NodeName=... / JobId=..., hold, uhold, release, requeue, requeuehold,
// ping, reconfigure, write batch_script, shutdown, create/delete PartitionName=,
// wait_job. Everything else (show hostnames/hostlist, help, modes) is src/cli's scontrol.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "cli/cli_error.hpp"
#include "cli/commands.hpp"
#include "cli/job_values.hpp"
#include "cli/sbatch_script.hpp"
#include "cli/scontrol_show.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "client/submit_map.hpp"
#include "client/views_map.hpp"
#include "common/duration.hpp"
#include "common/hostlist.hpp"
#include "common/mail_type.hpp"
#include "common/strings.hpp"
#include "common/units.hpp"
#include "config/debug_levels.hpp"
#include "config/model.hpp"

namespace drover::client {
namespace {

// The options among the words and the words (cli::parse_scontrol_options).
using Opts = cli::ScontrolOptions;


// Case-insensitive abbreviation of `name`, at least `min` letters.
bool abbrev(const std::string& word, std::string_view name, std::size_t min) {
  return word.size() >= min && word.size() <= name.size() && iequals(word, name.substr(0, word.size()));
}

int print_views(const std::vector<std::string>& blocks, const char* none) {
  if (blocks.empty()) {
    std::puts(none);
    return 0;
  }
  for (const auto& b : blocks) write_out(b, stdout);
  return 0;
}

cli::CliResult<v1::JobTarget> target_of(const std::string& text);

int show_jobs(ControllerApi& api, const Invocation& inv, const Opts& o, const std::vector<std::string>& ids) {
  std::vector<int64_t> want;
  for (const auto& id : ids) {
    auto t = target_of(id);
    if (!t) {  // Slurm 22.05's words for `show job abc` and `show job 12_ab`
      std::fprintf(stderr, "scontrol_print_job error: Invalid job id specified\n");
      return 1;
    }
    want.push_back(t->job_id());
  }
  auto reply = api.get_jobs(want, o.details > 0, true);
  if (!reply) return report_failure(inv, api, reply.error());
  std::vector<std::string> blocks;
  // N_T names one task, also one still pending in its array's record: it is
  // shown on its own, as Slurm 22.05 shows it (JobId=N ArrayTaskId=T, its
  // own output paths).
  const bool one_task = !ids.empty() && ids[0].find('_') != std::string::npos;
  for (auto v : job_views(*reply, one_task)) {
    bool wanted = want.empty() || std::find(want.begin(), want.end(), v.job_id) != want.end() ||
                  (v.array_job_id && std::find(want.begin(), want.end(), v.array_job_id) != want.end());
    if (one_task && v.array_task_id) {
      wanted = ids[0] == std::to_string(v.array_job_id) + "_" + std::to_string(*v.array_task_id);
      if (v.state == cli::JobState::kPending) v.job_id = v.array_job_id;  // not split from its array yet
    }
    if (wanted) blocks.push_back(cli::render_job_detail(v, reply->now(), o.one_line, o.details > 0));
  }
  if (blocks.empty() && !ids.empty()) {
    std::fprintf(stderr, "slurm_load_jobs error: Invalid job id specified\n");
    return 1;
  }
  return print_views(blocks, "No jobs in the system");
}

// The records of `items` that `names` names (all when empty), rendered;
// Slurm's words when a named one is missing or there are none.
template <class Items, class Render>
int show_named(const Items& items, const std::vector<std::string>& names, Render render, const char* entity,
               const char* none) {
  std::vector<std::string> blocks;
  for (const auto& x : items) {
    if (names.empty() || std::find(names.begin(), names.end(), x.name()) != names.end()) blocks.push_back(render(x));
  }
  if (blocks.empty() && !names.empty()) {
    std::printf("%s %s not found\n", entity, names[0].c_str());
    return 1;
  }
  return print_views(blocks, none);
}

int show_nodes(ControllerApi& api, const Invocation& inv, const Opts& o, const std::vector<std::string>& names) {
  auto reply = api.get_nodes({});
  if (!reply) return report_load_failure(inv, api, reply.error(), "slurm_load_node error");
  return show_named(
      reply->nodes(), names, [&](const v1::NodeInfo& n) { return cli::render_node_detail(node_view(n), o.one_line); },
      "Node", "No nodes in the system");
}

int show_partitions(ControllerApi& api, const Invocation& inv, const Opts& o, const std::vector<std::string>& names) {
  auto reply = api.get_partitions();
  if (!reply) return report_load_failure(inv, api, reply.error(), "slurm_load_partitions error");
  return show_named(
      reply->partitions(), names,
      [&](const v1::PartitionInfo& p) { return cli::render_partition_detail(partition_view(p), o.one_line); },
      "Partition", "No partitions in the system");
}

int show_reservations(ControllerApi& api, const Invocation& inv, const Opts& o, const std::vector<std::string>& names) {
  auto reply = api.get_reservations();
  if (!reply) return report_failure(inv, api, reply.error());
  return show_named(
      reply->reservations(), names,
      [&](const v1::ReservationInfo& r) { return cli::render_reservation_detail(reservation_view(r), o.one_line); },
      "Reservation", "No reservations in the system");
}

int show_config(ControllerApi& api, const Invocation& inv) {
  auto reply = api.get_config();
  if (!reply) return report_failure(inv, api, reply.error());
  cli::ConfigView v;
  v.as_of = reply->as_of();
  for (const auto& e : reply->entries()) v.entries.push_back({e.key(), e.value()});
  v.trailer.push_back("Slurmctld(primary) at " + reply->controller_host() + " is UP");
  write_out(cli::render_config(v), stdout);
  return 0;
}

// scontrol show licenses [NAME]: slurm.conf's Licenses= and what running
// jobs hold, in Slurm 22.05's layout (a name not configured prints nothing).
int show_licenses(ControllerApi& api, const Invocation& inv, const Opts& o, const std::vector<std::string>& names) {
  auto reply = api.get_config();
  if (!reply) return report_failure(inv, api, reply.error());
  if (reply->licenses().empty()) {
    write_out("No licenses configured in Slurm.\n", stdout);  // Slurm 22.05's words
    return 0;
  }
  std::string out;
  for (const auto& l : reply->licenses()) {
    if (!names.empty() && std::find(names.begin(), names.end(), l.name()) == names.end()) continue;
    out += fmt::format("LicenseName={}{}Total={} Used={} Free={} Reserved=0 Remote=no\n", l.name(),
                       o.one_line ? " " : "\n    ", l.total(), l.used(), std::max<int64_t>(0, l.total() - l.used()));
  }
  write_out(out, stdout);
  return 0;
}


// scontrol show step [JOB | JOB.STEP | JOB.batch ...]: the running steps of
// running jobs (the batch step first, as Slurm lists them), in Slurm 22.05's
// layout; an unknown job or step is Slurm's "Invalid job id specified".
int show_steps(ControllerApi& api, const Invocation& inv, const Opts& o, const std::vector<std::string>& ids) {
  struct Want {
    v1::JobTarget job;
    std::optional<int64_t> step;
  };
  std::vector<Want> wants;
  auto invalid = [] {
    std::fprintf(stderr, "slurm_get_job_steps error: Invalid job id specified\n");
    return 1;
  };
  for (const auto& id : ids) {
    auto dot = id.find('.');
    auto t = target_of(id.substr(0, dot));
    if (!t) return invalid();
    Want w{*t, std::nullopt};
    if (dot != std::string::npos) {
      std::string step = id.substr(dot + 1);
      auto n = parse_int(step);
      if (iequals(step, "batch")) w.step = -2;
      else if (n && *n >= 0) w.step = *n;
      else return invalid();
    }
    wants.push_back(std::move(w));
  }
  std::vector<int64_t> job_ids;
  for (const auto& w : wants) job_ids.push_back(w.job.job_id());
  auto jobs = api.get_jobs(job_ids, false);
  if (!jobs) return report_failure(inv, api, jobs.error());
  std::map<int64_t, const v1::JobRecord*> by_id;
  for (const auto& j : jobs->jobs()) by_id[j.job_id()] = &j;
  std::vector<int64_t> running;
  for (const auto& [id, j] : by_id) running.push_back(id);
  for (const auto& w : wants) {
    bool known = std::any_of(by_id.begin(), by_id.end(), [&](const auto& kv) {
      return kv.first == w.job.job_id() || kv.second->array_job_id() == w.job.job_id();
    });
    if (!known) return invalid();
  }
  auto steps = api.get_steps(running);
  if (!steps) return report_failure(inv, api, steps.error());
  auto selected = [&](const v1::StepInfo& s, const v1::JobRecord& j) {
    if (wants.empty()) return true;
    for (const auto& w : wants) {
      bool job = w.job.array_tasks_size() > 0
                     ? j.array_job_id() == w.job.job_id() && j.array_task_id() == w.job.array_tasks(0)
                     : j.job_id() == w.job.job_id() || j.array_job_id() == w.job.job_id();
      if (job && (!w.step || *w.step == s.step_id())) return true;
    }
    return false;
  };
  std::vector<const v1::StepInfo*> order;
  for (const auto& s : steps->steps()) order.push_back(&s);
  // The batch step first, then the numbered ones, then those waiting to be created (Slurm's order).
  auto rank = [](int64_t id) { return id == cli::kPendingStep ? INT64_MAX : id < 0 ? -1 : id; };
  std::stable_sort(order.begin(), order.end(), [&](const v1::StepInfo* a, const v1::StepInfo* b) {
    if (a->job_id() != b->job_id()) return a->job_id() < b->job_id();
    return rank(a->step_id()) < rank(b->step_id());
  });
  std::string out;
  for (const v1::StepInfo* s : order) {
    auto j = by_id.find(s->job_id());
    if (j == by_id.end() || !selected(*s, *j->second)) continue;
    const v1::JobRecord& job = *j->second;
    cli::StepDetailView v;
    std::string job_text = job.array_job_id() > 0 ? std::to_string(job.array_job_id()) + "_" +
                                                        std::to_string(job.array_task_id())
                                                  : std::to_string(job.job_id());
    const bool waiting = s->step_id() == cli::kPendingStep;
    v.batch = s->step_id() < 0 && !waiting;
    v.id = job_text + "." + (waiting ? std::string("TDB") : v.batch ? std::string("batch") : std::to_string(s->step_id()));
    v.uid = s->uid();
    v.start_time = s->start_time() > 0 ? s->start_time() : kNoTime;
    v.time_limit = s->time_limit_s() > 0 ? s->time_limit_s() : kInfinite;
    v.state = s->state();
    v.partition = job.partition();
    std::vector<std::string> nodes;
    for (const auto& n : s->nodes()) nodes.push_back(n.node());
    v.nodes = hostlist_compress(nodes);
    v.num_nodes = s->nodes_size();
    v.cpus = s->cpus();
    v.tasks = s->ntasks();
    v.name = s->name();
    v.tres = s->tres();
    v.srun_host = s->srun_host();
    v.srun_pid = s->srun_pid();
    v.distribution = s->distribution();
    out += cli::render_step_detail(v, o.one_line);
  }
  if (out.empty()) {
    if (wants.empty()) {
      out = "No job steps in the system\n";
    } else {
      // A job the controller knows without that step (ended, pending, or
      // the step not running), in Slurm 22.05's words: "Job step 12.0 not
      // found", "Job step 12. not found" for a job named without a step,
      // on stdout, exit 1.
      const std::string& id = ids.front();
      const auto dot = id.find('.');
      write_out(fmt::format("Job step {}.{} not found\n", id.substr(0, dot),
                            dot == std::string::npos ? "" : id.substr(dot + 1)),
                stdout);
      return 1;
    }
  }
  write_out(out, stdout);
  return 0;
}

// "-dd", "123" etc. after the entity: ids only.
std::vector<std::string> ids_of(const std::vector<std::string>& words, std::size_t from) {
  std::vector<std::string> out;
  for (std::size_t i = from; i < words.size(); ++i) {
    for (const auto& w : split_outside_brackets(words[i], ',')) {
      if (!w.empty()) out.push_back(w);
    }
  }
  return out;
}

// Node names as host lists ("cpu[01,02]", "gpu01,cpu[01-02]"); a word that is no host list is kept as
// written, for Slurm's "Node X not found".
std::vector<std::string> node_names(const std::vector<std::string>& words, std::size_t from) {
  std::vector<std::string> out;
  for (std::size_t i = from; i < words.size(); ++i) {
    auto names = hostlist_expand(words[i]);
    if (!names) {
      out.push_back(words[i]);
      continue;
    }
    out.insert(out.end(), names->begin(), names->end());
  }
  return out;
}

std::optional<int> run_show(ControllerApi* api, const Invocation& inv, const Opts& o) {
  if (o.words.size() < 2) return std::nullopt;
  const std::string& e = o.words[1];
  auto rest = ids_of(o.words, 2);
  auto need = [&]() { return api; };
  if (iequals(e, "jobid") || iequals(e, "jobs") || abbrev(e, "job", 1)) return need() ? show_jobs(*api, inv, o, rest) : 1;
  if (iequals(e, "nodes") || abbrev(e, "node", 1)) return need() ? show_nodes(*api, inv, o, node_names(o.words, 2)) : 1;
  if (iequals(e, "partitions") || abbrev(e, "partition", 1)) return need() ? show_partitions(*api, inv, o, rest) : 1;
  if (abbrev(e, "config", 1)) return need() ? show_config(*api, inv) : 1;
  if (abbrev(e, "licenses", 3)) return need() ? show_licenses(*api, inv, o, rest) : 1;
  if (abbrev(e, "steps", 2)) return need() ? show_steps(*api, inv, o, rest) : 1;
  if (abbrev(e, "frontend", 2)) {
    // Drover has no front-end nodes (slurm.conf's FrontendName lines are
    // read past): Slurm 22.05's answer for a cluster without them.
    write_out("No nodes in the system\n", stdout);
    return 0;
  }
  if (abbrev(e, "reservations", 1)) return need() ? show_reservations(*api, inv, o, rest) : 1;
  return std::nullopt;
}

// JobId=123 / NodeName=x and Key=Value pairs.
std::vector<std::pair<std::string, std::string>> pairs_of(const std::vector<std::string>& words, std::size_t from) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = from; i < words.size(); ++i) {
    auto eq = words[i].find('=');
    if (eq == std::string::npos) out.emplace_back(words[i], "");
    else out.emplace_back(words[i].substr(0, eq), words[i].substr(eq + 1));
  }
  return out;
}

cli::CliResult<v1::JobTarget> target_of(const std::string& text) {
  v1::JobTarget t;
  t.set_text(text);
  auto us = text.find('_');
  auto id = parse_int(text.substr(0, us));
  if (!id) return cli::CliError{"Invalid job id specified\n", 1};
  t.set_job_id(*id);
  if (us != std::string::npos) {
    // "123_4", or "123_[1-3,5]" (named "123_1-3,5" in messages, as Slurm's scontrol names it).
    std::string tasks = text.substr(us + 1);
    if (tasks.size() >= 2 && tasks.front() == '[' && tasks.back() == ']') {
      tasks = tasks.substr(1, tasks.size() - 2);
      t.set_text(text.substr(0, us + 1) + tasks);
    }
    if (tasks.find('%') != std::string::npos) return cli::CliError{"Invalid job id specified\n", 1};
    auto spec = cli::parse_array_spec(tasks);
    if (!spec) return cli::CliError{"Invalid job id specified\n", 1};
    for (int64_t i : spec->task_ids()) t.add_array_tasks(i);
  }
  return t;
}

// What an operation on jobs went wrong with, as Slurm 22.05's scontrol says
// it (anchor cluster): "ERROR for job N" for a whole job; for array
// elements, each outcome once with the tasks that had it, as ranges
// ("A_0-1: Job has already finished", "A_0,2: No error"; outcomes in the
// order of their first task), the elements that went well included when
// any did not. Whether any job-wide refusal was printed goes to `job_wide`.
int print_results(const google::protobuf::RepeatedPtrField<v1::JobResult>& results, bool* job_wide = nullptr) {
  const bool any_failed = std::any_of(results.begin(), results.end(), [](const v1::JobResult& r) { return !r.ok(); });
  if (!any_failed) return 0;
  std::string array;                                               // the array whose tasks are gathered
  std::vector<std::pair<std::string, std::vector<int64_t>>> said;  // outcome -> its tasks
  auto flush = [&] {
    for (const auto& [what, tasks] : said) {
      std::fprintf(stderr, "%s_%s: %s\n", array.c_str(), compress_ranges(tasks).c_str(), what.c_str());
    }
    said.clear();
  };
  for (const auto& r : results) {
    const std::string what = r.ok() ? "No error" : r.error();
    const auto us = r.target().find('_');
    const std::optional<int64_t> task =
        us == std::string::npos ? std::nullopt : parse_int(std::string_view(r.target()).substr(us + 1));
    if (!task) {
      flush();
      if (r.ok()) continue;
      if (us != std::string::npos) {  // a range of tasks that named no job ("A_7-8")
        std::fprintf(stderr, "%s: %s\n", r.target().c_str(), what.c_str());
        continue;
      }
      std::fprintf(stderr, "%s for job %s\n", what.c_str(), r.target().c_str());
      if (job_wide) *job_wide = true;
      continue;
    }
    if (r.target().substr(0, us) != array) {
      flush();
      array = r.target().substr(0, us);
    }
    auto same = std::find_if(said.begin(), said.end(), [&](const auto& kv) { return kv.first == what; });
    if (same == said.end()) same = said.insert(said.end(), {what, {}});
    same->second.push_back(*task);
  }
  flush();
  return 1;
}

// An update's outcome as scontrol prints it: nothing, or "slurm_update error: ...".
template <class Reply>
int update_outcome(ControllerApi& api, const Invocation& inv, const ApiResult<Reply>& reply) {
  if (reply) return 0;
  if (reply.error().unreachable) return report_failure(inv, api, reply.error());
  std::fprintf(stderr, "slurm_update error: %s\n", reply.error().message.c_str());
  return 1;
}

// The node keys Slurm 22.05's scontrol update knows (scontrol(1)); any other
// is refused here, before asking, as Slurm's is.
bool slurm_node_update_key(const std::string& k) {
  static const char* const kKeys[] = {"NodeName",    "Node",       "State",    "Reason",   "ActiveFeatures",
                                      "AvailableFeatures", "Features", "Comment", "CpuBind", "Extra",
                                      "Gres",        "NodeAddr",   "NodeHostname", "ResumeAfter", "Weight"};
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const char* w) { return iequals(k, w); });
}

int update_node(ControllerApi& api, const Invocation& inv, const std::vector<std::pair<std::string, std::string>>& kv) {
  v1::UpdateNodeRequest req;
  for (const auto& [k, v] : kv) {
    if (!slurm_node_update_key(k)) {
      std::fprintf(stderr, "Update of this parameter is not supported: %s=%s\nRequest aborted\n", k.c_str(), v.c_str());
      return 1;
    }
    if (iequals(k, "Weight") && !cli::parse_count(v)) {
      std::fprintf(stderr, "scontrol: error: Weight value (%s) is not a valid number\nNo changes specified\n", v.c_str());
      return 1;
    }
  }
  std::string state_key = "State";
  for (const auto& [k, v] : kv) {
    if (iequals(k, "NodeName") || iequals(k, "Node")) req.set_nodes(v);
    else if (iequals(k, "State")) {
      req.set_state(v);
      state_key = k;
    }
    else if (iequals(k, "Reason")) req.set_reason(v);
    else (*req.mutable_other())[k] = v;
  }
  // What Slurm 22.05's scontrol refuses itself, before asking (its words,
  // as it printed them on the anchor cluster).
  if (!req.state().empty()) {
    const std::string st = to_lower(req.state());
    static const char* const kSlurmStates[] = {
        "noresp", "drain", "fail", "future", "resume", "power_down", "power_down_asap", "power_down_force",
        "power_up", "undrain", "cancel_reboot", "down", "idle", "allocated", "mixed", "unknown", "reboot"};
    if (std::none_of(std::begin(kSlurmStates), std::end(kSlurmStates), [&](const char* w) { return st == w; })) {
      // The key as typed, as Slurm's ("Invalid input: state=bogus").
      std::fprintf(stderr, "Invalid input: %s=%s\nRequest aborted\nValid states are: NoResp DRAIN FAIL FUTURE "
                           "RESUME POWER_DOWN POWER_UP UNDRAIN\nNot all states are valid given a node's prior state\n",
                   state_key.c_str(), req.state().c_str());
      return 1;
    }
    if ((st == "drain" || st == "down" || st == "fail") && req.reason().empty()) {
      std::fputs("You must specify a reason when DOWNING or DRAINING a node. Request denied\n", stderr);
      return 1;
    }
  }
  auto reply = api.update_node(req);
  if (reply && !reply->not_resumable().empty()) {
    // The others resumed; these were neither drained nor down.
    std::fputs("slurm_update error: Invalid node state specified\n", stderr);
    return 1;
  }
  return update_outcome(api, inv, reply);
}

// The partition keys Slurm 22.05's scontrol update knows (scontrol(1), and
// the per-GPU and power ones slurm.conf has); any other is refused here,
// before asking, in the words Slurm's printed on the anchor cluster.
const std::vector<std::string>& slurm_partition_update_keys() {
  static const std::vector<std::string> kKeys = {
      "PartitionName", "AllocNodes", "AllowAccounts", "AllowGroups", "AllowQOS", "Alternate", "CpuBind", "Default",
      "DefaultTime", "DefCpuPerGPU", "DefMemPerCPU", "DefMemPerGPU", "DefMemPerNode", "DenyAccounts", "DenyQOS",
      "DisableRootJobs", "ExclusiveUser", "GraceTime", "Hidden", "JobDefaults", "LLN", "MaxCPUsPerNode",
      "MaxCPUsPerSocket", "MaxMemPerCPU", "MaxMemPerNode", "MaxNodes", "MaxTime", "MinNodes", "Nodes",
      "OverSubscribe", "OverTimeLimit", "PowerDownOnIdle", "PreemptMode", "Priority", "PriorityJobFactor",
      "PriorityTier", "QOS", "ReqResv", "ResumeTimeout", "RootOnly", "Shared", "State", "SuspendTime",
      "SuspendTimeout", "TRESBillingWeights"};
  return kKeys;
}

int update_partition(ControllerApi& api, const Invocation& inv,
                     const std::vector<std::pair<std::string, std::string>>& kv) {
  v1::UpdatePartitionRequest req;
  const auto& known = slurm_partition_update_keys();
  for (const auto& [k, v] : kv) {
    // A key may be cut short, as Slurm's scontrol takes it (MaxTim=).
    auto takes = [&](const std::string& w) { return k.size() >= 3 && istarts_with(w, k); };
    if (std::none_of(known.begin(), known.end(), takes)) {
      std::fprintf(stderr,
                   "scontrol: error: Update of this parameter is not supported: %s=%s\n\nscontrol: error: Request "
                   "aborted\nslurm_update error: No error\n",
                   k.c_str(), v.c_str());
      if (auto near = nearest(k, known)) std::fprintf(stderr, "scontrol: error: drover: did you mean %s?\n", near->c_str());
      return 1;
    }
  }
  for (const auto& [k, v] : kv) {
    if (iequals(k, "PartitionName")) {
      req.set_name(v);
      continue;
    }
    v1::PartitionSetting* s = req.add_settings();
    s->set_key(k);
    s->set_value(v);
  }
  return update_outcome(api, inv, api.update_partition(req));
}

// The job keys Slurm 22.05's scontrol update knows (scontrol(1)); any other
// is refused here, before asking, as Slurm's is. The controller then says
// which of these Drover does not build.
bool slurm_job_update_key(const std::string& k) {
  static const char* const kKeys[] = {
      "Account", "AdminComment", "ArrayTaskThrottle", "BurstBuffer", "Clusters", "ClusterFeatures", "Comment",
      "Contiguous", "CoreSpec", "CPUsPerTask", "Deadline", "DelayBoot", "Dependency", "EligibleTime", "ExcNodeList",
      "Features", "Constraint", "Gres", "JobId", "Job", "Licenses", "MailType", "MailUser", "MinCPUsNode",
      "MinMemoryCPU", "MinMemoryNode", "MinTmpDiskNode", "TimeMin", "JobName", "Name", "Nice", "NodeList", "NumCPUs",
      "NumNodes", "NumTasks", "OverSubscribe", "Partition", "Prefer", "Priority", "QOS", "Reboot", "ReqCores",
      "ReqNodeList", "ReqNodes", "ReqProcs", "ReqSockets", "ReqThreads", "Requeue", "ReservationName", "Reservation",
      "SiteFactor", "StdOut", "StdErr", "Shared", "StartTime", "BeginTime", "Switches", "TasksPerNode", "ThreadSpec",
      "TimeLimit", "UserID", "WCKey", "WorkDir"};
  return std::any_of(std::begin(kKeys), std::end(kKeys), [&](const char* w) { return iequals(k, w); });
}

bool names_job(const std::string& key) { return iequals(key, "JobId") || iequals(key, "Job"); }

// scontrol(1)'s JobName= without JobId=: the jobs of that name still queued
// or running, of every user or of UserID='s, are the ones changed. Their ids
// go in `req`; false (said) when none matches.
bool targets_by_name(ControllerApi& api, const Invocation& inv, const std::string& name,
                     const std::optional<std::string>& user, v1::UpdateJobRequest& req, int& rc) {
  auto jobs = api.get_jobs({}, false, false, false);
  if (!jobs) {
    rc = report_failure(inv, api, jobs.error());
    return false;
  }
  std::set<int64_t> ids;
  for (const auto& j : jobs->jobs()) {
    if (j.desc().name() != name) continue;
    if (j.state() != v1::PENDING && j.state() != v1::RUNNING && j.state() != v1::SUSPENDED) continue;
    if (user && j.user() != *user && std::to_string(j.uid()) != *user) continue;
    ids.insert(j.job_id());
  }
  if (ids.empty()) {
    std::fprintf(stderr, "scontrol: error: No jobs with name '%s'\n", name.c_str());
    rc = 1;
    return false;
  }
  for (int64_t id : ids) {
    v1::JobTarget* t = req.add_targets();
    t->set_job_id(id);
    t->set_text(std::to_string(id));
  }
  return true;
}

int update_job(ControllerApi& api, const Invocation& inv, const std::vector<std::pair<std::string, std::string>>& kv) {
  v1::UpdateJobRequest req;
  for (const auto& [k, v] : kv) {
    if (!slurm_job_update_key(k)) {
      if (v.empty()) std::fprintf(stderr, "Invalid input: %s\nRequest aborted\n", k.c_str());
      else std::fprintf(stderr, "Update of this parameter is not supported: %s=%s\nRequest aborted\n", k.c_str(), v.c_str());
      return 1;
    }
  }
  // Without JobId=, JobName= (with UserID=, when given) names the jobs rather than setting a name.
  const bool by_id = std::any_of(kv.begin(), kv.end(), [](const auto& p) { return names_job(p.first); });
  if (!by_id) {
    std::optional<std::string> name, user;
    for (const auto& [k, v] : kv) {
      if (iequals(k, "JobName")) name = v;
      if (iequals(k, "UserID")) user = v;
    }
    int rc = 0;
    if (!targets_by_name(api, inv, *name, user, req, rc)) return rc;
  }
  for (const auto& [k, v] : kv) {
    if (!by_id && (iequals(k, "JobName") || iequals(k, "UserID"))) continue;
    if (iequals(k, "JobId") || iequals(k, "Job")) {
      for (const auto& id : split_outside_brackets(v, ',')) {
        auto t = target_of(id);
        if (!t) {  // Slurm 22.05's words for `update jobid=123+2` on the anchor cluster
          std::fprintf(stderr, "Invalid job id specified for job %s\n", id.c_str());
          return 1;
        }
        *req.add_targets() = *t;
      }
      continue;
    }
    if (iequals(k, "TimeLimit")) {
      // As Slurm's scontrol: checked here; a leading + or - changes the current limit.
      if (!parse_limit_change(v)) {
        std::fputs("scontrol: error: Invalid TimeLimit value\n", stderr);
        return 1;
      }
    }
    // Megabytes as a plain number: Slurm 22.05's scontrol refused "1G" and "1024M" (anchor cluster).
    if ((iequals(k, "MinMemoryNode") || iequals(k, "MinMemoryCPU") || iequals(k, "MinTmpDiskNode")) &&
        (v.empty() || !std::all_of(v.begin(), v.end(), [](unsigned char ch) { return std::isdigit(ch); }) ||
         !parse_memory_mb(v))) {
      std::fprintf(stderr, "scontrol: error: Invalid %s value: %s\n", k.c_str(), v.c_str());
      return 1;
    }
    // Slurm's scontrol checks these before it asks (anchor cluster: "Invalid OverSubscribe value: maybe").
    if (iequals(k, "OverSubscribe") || iequals(k, "Shared") || iequals(k, "Contiguous")) {
      if (!iequals(v, "yes") && !iequals(v, "no") && v != "1" && v != "0") {
        std::fprintf(stderr, "scontrol: error: Invalid %s value: %s\n",
                     iequals(k, "Contiguous") ? "Contiguous" : "OverSubscribe", v.c_str());
        return 1;
      }
    }
    if (iequals(k, "MailType") && !parse_mail_type(v)) {
      std::fprintf(stderr, "Invalid MailType: %s\n", v.c_str());  // Slurm 22.05's words; nothing asked
      return 1;
    }
    if (iequals(k, "Dependency") && !v.empty()) {
      auto dep = cli::parse_dependency(v);
      if (!dep) {
        std::fprintf(stderr, "scontrol: error: Invalid dependency specification: %s (%s)\n", v.c_str(),
                     dep.error().message.c_str());
        return 1;
      }
      dependency_to_proto(*dep, req.mutable_dependency());
    }
    (*req.mutable_fields())[k] = v;
    req.add_field_order(k);
  }
  // Slurm's scontrol checks a decrease of the time limit against each job's
  // limit before it asks, in minutes (Slurm 22.05 on the anchor cluster:
  // "TimeLimit decrement larger than current time limit (100 > 25)").
  for (const auto& [k, v] : kv) {
    if (!iequals(k, "TimeLimit") || !v.starts_with('-')) continue;
    const Seconds down = parse_limit_change(v)->amount;
    for (const auto& t : req.targets()) {
      auto jobs = api.get_jobs({t.job_id()}, false);
      if (!jobs || jobs->jobs().empty() || jobs->jobs(0).time_limit_s() == kInfinite) continue;
      const int64_t now_limit = jobs->jobs(0).time_limit_s();
      if (down != kInfinite && down <= now_limit) continue;
      std::fprintf(stderr, "scontrol: error: TimeLimit decrement larger than current time limit (%lld > %lld)\n",
                   static_cast<long long>(down == kInfinite ? down : down / 60), static_cast<long long>(now_limit / 60));
      return 1;
    }
  }
  auto reply = api.update_job(req);
  if (!reply) return report_failure(inv, api, reply.error());
  return print_results(reply->results());
}

// A reservation change's refusal, in the words Slurm's scontrol uses for
// each kind (ChangeReservationRequest): `local` what scontrol itself
// refuses, `server` what the controller does (the first line is Slurm's,
// any further lines are Drover's explanation, printed after).
struct ResvWords {
  const char* local_suffix;    // "No reservation created."
  const char* server_prefix;   // "Error creating the reservation: "
  bool slurm_update_line;      // update repeats the error as "slurm_update error: "
};

int report_reservation_error(const Invocation& inv, const ControllerApi& api, const ApiError& e,
                             const ResvWords& w) {
  if (e.unreachable) return report_failure(inv, api, e);
  const auto nl = e.message.find('\n');
  const std::string first = e.message.substr(0, nl);
  const std::string more = nl == std::string::npos ? "" : e.message.substr(nl + 1) + "\n";
  constexpr int kInvalidArgument = 3;  // gRPC's: refused before anything was asked
  if (e.code == kInvalidArgument) {
    std::fprintf(stderr, "scontrol: error: %s  %s\n", first.c_str(), w.local_suffix);
    if (w.slurm_update_line) std::fprintf(stderr, "slurm_update error: No error\n");
  } else {
    std::fprintf(stderr, "%s%s\n", w.server_prefix, first.c_str());
    if (w.slurm_update_line) std::fprintf(stderr, "slurm_update error: %s\n", first.c_str());
  }
  write_out(more, stderr);
  return 1;
}

void add_settings(v1::ChangeReservationRequest& req, const std::vector<std::pair<std::string, std::string>>& kv,
                  std::size_t from) {
  for (std::size_t i = from; i < kv.size(); ++i) {
    v1::PartitionSetting* setting = req.add_settings();
    setting->set_key(kv[i].first);
    setting->set_value(kv[i].second);
  }
}

// scontrol create reservation Key=Value... / create ReservationName=NAME ...
int create_reservation(ControllerApi& api, const Invocation& inv,
                       const std::vector<std::pair<std::string, std::string>>& kv) {
  v1::ChangeReservationRequest req;
  req.set_action(v1::RESERVATION_CREATE);
  const bool named_entity = kv[0].second.empty() && !iequals(kv[0].first, "ReservationName");
  add_settings(req, kv, named_entity ? 1 : 0);
  auto reply = api.change_reservation(req);
  if (!reply) {
    // Busy nodes, no partition named: Slurm 22.05's scontrol printed this note first (anchor cluster).
    const bool partition_named = std::any_of(kv.begin(), kv.end(), [](const auto& p) {
      return iequals(p.first, "PartitionName") || iequals(p.first, "Partition");
    });
    if (!reply.error().unreachable && !partition_named &&
        reply.error().message.rfind("Requested nodes are busy", 0) == 0) {
      std::printf("Note, unless nodes are directly requested a reservation must exist in a single partition.\n"
                  "If no partition is requested the default partition is assumed.\n");
      std::fflush(stdout);
    }
    return report_reservation_error(inv, api, reply.error(),
                                    {"No reservation created.", "Error creating the reservation: ", false});
  }
  std::printf("Reservation created: %s\n", reply->name().c_str());
  return 0;
}

int update_reservation(ControllerApi& api, const Invocation& inv,
                       const std::vector<std::pair<std::string, std::string>>& kv) {
  v1::ChangeReservationRequest req;
  req.set_action(v1::RESERVATION_UPDATE);
  req.set_name(kv[0].second);
  add_settings(req, kv, 1);
  auto reply = api.change_reservation(req);
  if (!reply) {
    return report_reservation_error(inv, api, reply.error(),
                                    {"No reservation update.", "Error updating the reservation: ", true});
  }
  std::printf("Reservation updated.\n");
  return 0;
}

bool names_reservation(const std::string& key) {
  return iequals(key, "ReservationName") || abbrev(key, "reservation", 3);
}

// scontrol create PartitionName=NAME Key=Value... or reservation Key=Value...:
// Slurm's words, checked on Slurm 22.05. Nodes are not built.
int run_create(ControllerApi& api, const Invocation& inv, const Opts& o) {
  auto kv = pairs_of(o.words, 1);
  if (kv.empty()) {
    std::fprintf(stderr, "too few arguments for create keyword\n");
    return 1;
  }
  const std::string& first = kv[0].first;
  if (names_reservation(first)) return create_reservation(api, inv, kv);
  if (!iequals(first, "PartitionName")) {
    if (iequals(first, "NodeName")) {
      std::fprintf(stderr,
                   "scontrol: error: create NodeName= is not built in Drover (nodes come from slurm.conf; "
                   "create PartitionName= and create reservation are built)\n");
      return 1;
    }
    std::fprintf(stderr, "scontrol: error: Invalid input: %s  Request aborted\n", o.words[1].c_str());
    return 1;
  }
  v1::UpdatePartitionRequest req;
  req.set_action(v1::PARTITION_CREATE);
  req.set_name(kv[0].second);
  for (std::size_t i = 1; i < kv.size(); ++i) {
    v1::PartitionSetting* setting = req.add_settings();
    setting->set_key(kv[i].first);
    setting->set_value(kv[i].second);
  }
  auto reply = api.update_partition(req);
  if (reply) return 0;
  if (reply.error().unreachable) return report_failure(inv, api, reply.error());
  std::fprintf(stderr, "Error creating the partition: %s\n", reply.error().message.c_str());
  return 1;
}

// Whether the keyword has between min and max words, itself included; says
// Slurm's "too few/many arguments for keyword:K" otherwise.
bool word_count_ok(const Opts& o, std::size_t min, std::size_t max) {
  if (o.words.size() >= min && o.words.size() <= max) return true;
  std::fprintf(stderr, "too %s arguments for keyword:%s\n", o.words.size() < min ? "few" : "many", o.words[0].c_str());
  return false;
}

// scontrol delete PartitionName=NAME, or delete partition NAME.
int run_delete(ControllerApi& api, const Invocation& inv, const Opts& o) {
  if (!word_count_ok(o, 2, SIZE_MAX)) return 1;
  const std::string& what = o.words[1];
  const auto eq = what.find('=');
  const std::string key = what.substr(0, eq);
  std::string name;
  if (eq != std::string::npos && o.words.size() == 2) {
    name = what.substr(eq + 1);
  } else if (eq == std::string::npos && o.words.size() == 3) {
    name = o.words[2];
  } else {
    std::fprintf(stderr, "Invalid deletion entity: %s\n", what.c_str());
    return 1;
  }
  if (names_reservation(key)) {
    v1::ChangeReservationRequest req;
    req.set_action(v1::RESERVATION_DELETE);
    req.set_name(name);
    auto reply = api.change_reservation(req);
    if (reply) return 0;
    if (reply.error().unreachable) return report_failure(inv, api, reply.error());
    const std::string& m = reply.error().message;
    const auto nl = m.find('\n');
    std::fprintf(stderr, "delete_reservation %s: %s\n", eq != std::string::npos ? what.c_str() : name.c_str(),
                 m.substr(0, nl).c_str());
    if (nl != std::string::npos) write_out(m.substr(nl + 1) + "\n", stderr);
    return 1;
  }
  if (iequals(key, "NodeName")) {
    std::fprintf(stderr, "scontrol: error: delete NodeName= is not built in Drover (nodes come from slurm.conf)\n");
    return 1;
  }
  if (!iequals(key, "PartitionName") && !iequals(key, "Partition")) {
    std::fprintf(stderr, "Invalid deletion entity: %s\n", what.c_str());
    return 1;
  }
  v1::UpdatePartitionRequest req;
  req.set_action(v1::PARTITION_DELETE);
  req.set_name(name);
  auto reply = api.update_partition(req);
  if (reply) return 0;
  if (reply.error().unreachable) return report_failure(inv, api, reply.error());
  std::fprintf(stderr, "delete_partition PartitionName=%s: %s\n", name.c_str(), reply.error().message.c_str());
  return 1;
}

std::optional<int> run_update(ControllerApi& api, const Invocation& inv, const Opts& o) {
  // A job may be named as a word of its own, anywhere: `update job 12
  // TimeLimit=5`, `update TimeLimit=5 jobid 12` (Slurm 22.05 took both).
  std::vector<std::string> words;
  for (std::size_t i = 1; i < o.words.size(); ++i) {
    if (names_job(o.words[i]) && i + 1 < o.words.size() && o.words[i + 1].find('=') == std::string::npos) {
      words.push_back("JobId=" + o.words[++i]);
    } else {
      words.push_back(o.words[i]);
    }
  }
  auto kv = pairs_of(words, 0);
  if (kv.empty()) {
    std::fprintf(stderr, "too few arguments for update keyword\n");  // Slurm 22.05's words
    return 1;
  }
  if (std::any_of(kv.begin(), kv.end(), [](const auto& p) { return names_job(p.first) || iequals(p.first, "JobName"); })) {
    return update_job(api, inv, kv);
  }
  // The entity is the first key naming a node, partition or reservation with a value, wherever it
  // stands: Slurm 22.05 took `update state=drain nodename=cpu02 reason=x` and `update reservation
  // ReservationName=r Duration=3:00:00` (a bare "reservation" word before the name is passed over).
  enum Entity { kNone, kNode, kPartition, kReservation };
  auto entity_of = [](const std::string& k) {
    if (iequals(k, "NodeName") || iequals(k, "Node")) return kNode;
    if (iequals(k, "PartitionName") || iequals(k, "Partition")) return kPartition;
    return names_reservation(k) ? kReservation : kNone;
  };
  auto named = std::find_if(kv.begin(), kv.end(), [&](const auto& p) {
    return entity_of(p.first) != kNone && words[&p - kv.data()].find('=') != std::string::npos;
  });
  if (named == kv.end()) {
    auto bare = std::find_if(kv.begin(), kv.end(), [&](const auto& p) { return entity_of(p.first) != kNone; });
    if (bare != kv.end()) {
      // Slurm's words for an entity named without '=' (`update node cpu01 ...`).
      std::fprintf(stderr, "scontrol: error: Invalid input: %s  Request aborted\nslurm_update error: No error\n",
                   bare->first.c_str());
      return 1;
    }
  } else {
    const Entity kind = entity_of(named->first);
    if (kind == kNode) return update_node(api, inv, kv);
    if (kind == kPartition && iequals(named->first, "PartitionName")) return update_partition(api, inv, kv);
    if (kind == kReservation) {
      std::vector<std::pair<std::string, std::string>> ordered{*named};
      for (std::size_t i = 0; i < kv.size(); ++i) {
        const bool bare_word = words[i].find('=') == std::string::npos && entity_of(kv[i].first) == kReservation;
        if (&kv[i] != &*named && !bare_word) ordered.push_back(kv[i]);
      }
      return update_reservation(api, inv, ordered);
    }
  }
  const std::string& first = kv[0].first;
  for (const char* other : {"StepId", "FrontendName", "SlurmctldDebug", "SuspendExcNodes", "SuspendExcParts",
                            "SuspendExcStates"}) {
    if (iequals(first, other)) {
      std::fprintf(stderr,
                   "scontrol: error: update of %s is not supported by Drover yet (NodeName=, PartitionName=, "
                   "ReservationName= and JobId= are)\n",
                   first.c_str());
      return 1;
    }
  }
  std::fprintf(stderr,
               "No valid entity in update command\nInput line must include \"NodeName\", \"PartitionName\", "
               "\"Reservation\", \"JobId\", or \"SlurmctldDebug\"\n");
  return 1;
}

int run_control(ControllerApi& api, const Invocation& inv, const Opts& o, v1::ControlAction action) {
  v1::ControlRequest req;
  req.set_action(action);
  const bool suspend_call = action == v1::HOLD || action == v1::USER_HOLD || action == v1::RELEASE;
  // requeuehold State=SpecialExit JOBS (scontrol(1)): the option comes first, as Slurm's takes it.
  std::size_t first = 1;
  if (action == v1::REQUEUE_HOLD && o.words.size() > 1 && iequals(o.words[1], "State=SpecialExit")) {
    req.set_special_exit(true);
    first = 2;
  }
  // A word that is no job id is said and the others are still acted on, as
  // Slurm 22.05's scontrol did (`release abc 12` released 12; on the anchor cluster).
  bool bad_id = false;
  for (const auto& id : ids_of(o.words, first)) {
    auto t = target_of(id);
    if (!t) {
      std::fprintf(stderr, "Invalid job id specified for job %s\n", id.c_str());
      bad_id = true;
      continue;
    }
    *req.add_targets() = *t;
  }
  if (req.targets().empty() && !bad_id) {
    std::fprintf(stderr, "too few arguments for keyword:%s\n", o.words[0].c_str());
    return 1;
  }
  int rc = 1;
  if (!req.targets().empty()) {
    auto reply = api.control(req);
    if (!reply) return report_failure(inv, api, reply.error());
    bool job_wide = false;
    rc = print_results(reply->results(), &job_wide);
    // Slurm 22.05's scontrol then names the last error once more for hold,
    // uhold and release of whole jobs, under the name of the call they share with suspend
    // (on the anchor cluster: "slurm_suspend error: Invalid job id specified").
    if (job_wide && !bad_id && !o.quiet && suspend_call) {
      std::string last;
      for (const auto& r : reply->results()) {
        if (!r.ok()) last = r.error();
      }
      std::fprintf(stderr, "slurm_suspend error: %s\n", last.c_str());
    }
  }
  if (bad_id) {  // named once more for hold, uhold and release, as Slurm's does
    if (suspend_call && !o.quiet) std::fprintf(stderr, "slurm_suspend error: Invalid job id specified\n");
    return 1;
  }
  return rc;
}

int run_ping(ControllerApi& api) {
  ControllerApi::OneAttempt once(api);  // a ping asks once, as Slurm's does
  auto reply = api.status();
  std::string host = api.endpoint().describe();
  if (!reply) {
    std::printf("Slurmctld(primary) at %s is DOWN\n", host.c_str());
    std::printf("*****************************************\n** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
                "*****************************************\n");
    return 1;
  }
  std::printf("Slurmctld(primary) at %s is UP\n", reply->host().empty() ? host.c_str() : reply->host().c_str());
  return 0;
}

// The record a job id names ("123", or an array element "123_4"), or null.
const v1::JobRecord* record_of(const v1::GetJobsReply& reply, const v1::JobTarget& target) {
  const bool element = target.array_tasks_size() > 0;
  for (const auto& r : reply.jobs()) {
    if (element ? r.array_job_id() == target.job_id() && r.array_task_id() == target.array_tasks(0)
                : r.job_id() == target.job_id()) {
      return &r;
    }
  }
  return nullptr;
}

// scontrol write batch_script JOBID [FILE|-]: the job's script as submitted,
// to FILE (default slurm-JOBID.sh) or standard output, for its owner and the
// privileged (the controller sends anyone else's without it). Slurm's
// messages; unlike Slurm's scontrol, a failure exits 1.
int run_write(ControllerApi& api, const Invocation& inv, const Opts& o) {
  if (!word_count_ok(o, 2, 4)) return 1;
  if (!abbrev(o.words[1], "batch_script", 1)) {
    std::fprintf(stderr, "invalid entity:%s for keyword:%s\n", o.words[1].c_str(), o.words[0].c_str());
    return 1;
  }
  if (o.words.size() < 3) {
    std::fprintf(stderr, "scontrol: error: write batch_script needs a job id (write batch_script JOBID [FILE|-])\n");
    return 1;
  }
  const std::string& id = o.words[2];
  auto fail = [](const std::string& why) {
    std::fprintf(stderr, "job script retrieval failed: %s\n", why.c_str());
    return 1;
  };
  auto target = target_of(id);
  if (!target) return fail("Invalid job id specified");
  auto reply = api.get_jobs({target->job_id()}, true, true);
  if (!reply) return report_failure(inv, api, reply.error());
  const v1::JobRecord* rec = record_of(*reply, *target);
  if (!rec) return fail("Invalid job id specified");
  if (!rec->desc().batch()) return fail("Job script not specified");  // salloc, srun: no script
  if (rec->desc().script().empty()) return fail("Invalid user id");  // another user's job
  const std::string file = o.words.size() > 3 ? o.words[3] : "slurm-" + id + ".sh";
  if (file == "-") {
    write_out(rec->desc().script(), stdout);
    return 0;
  }
  FILE* f = std::fopen(file.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "failed to open file `%s`: %s\n", file.c_str(), std::strerror(errno));
    return 1;
  }
  bool ok = std::fwrite(rec->desc().script().data(), 1, rec->desc().script().size(), f) == rec->desc().script().size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::fprintf(stderr, "failed to write file `%s`: %s\n", file.c_str(), std::strerror(errno));
    return 1;
  }
  std::printf("batch script for job %s written to %s\n", id.c_str(), file.c_str());
  return 0;
}

int run_reconfigure(ControllerApi& api, const Invocation& inv) {
  auto reply = api.reconfigure();
  if (!reply) {
    if (reply.error().unreachable) return report_failure(inv, api, reply.error());
    // Slurm 22.05's words for a user's reconfigure (anchor cluster), then why.
    std::fprintf(stderr, "slurm_reconfigure error: %s%s\n",
                 reply.error().denied() ? "Invalid user id: " : "", reply.error().message.c_str());
    return 1;
  }
  for (const auto& m : reply->messages()) std::puts(m.c_str());
  return 0;
}

// scontrol shutdown [slurmctld|controller]: the controller, and every agent
// unless only the controller is named, save nothing more (every change is
// already durable) and stop; running jobs keep running. Silent on success,
// as Slurm's.
int run_shutdown(ControllerApi& api, const Invocation& inv, const Opts& o) {
  if (!word_count_ok(o, 1, 2)) return 1;
  bool controller_only = false;
  if (o.words.size() == 2) {
    if (!iequals(o.words[1], "slurmctld") && !iequals(o.words[1], "controller")) {
      std::fprintf(stderr, "invalid shutdown argument:%s\n", o.words[1].c_str());
      return 1;
    }
    controller_only = true;
  }
  auto reply = api.shutdown(controller_only);
  if (!reply) {
    if (reply.error().unreachable) return report_failure(inv, api, reply.error());
    std::fprintf(stderr, "slurm_shutdown error: %s%s\n",
                 reply.error().denied() ? "Invalid user id: " : "", reply.error().message.c_str());
    return 1;
  }
  return 0;
}

// scontrol wait_job JOBID: whether the job's nodes are ready for it. A
// Drover node is ready as soon as the job runs on it (nothing boots), so a
// running job is answered at once; as in Slurm 22.05 (checked on the anchor
// cluster), a job that is not running, pending included, fails at once.
int run_wait_job(ControllerApi& api, const Invocation& inv, const Opts& o) {
  if (!word_count_ok(o, 2, 2)) return 1;
  const std::string& id = o.words[1];
  auto target = target_of(id);
  if (!target) {
    std::fprintf(stderr, "scontrol: Problem running job %s\n", id.c_str());
    return 1;
  }
  auto reply = api.get_jobs({target->job_id()}, true, true);
  if (!reply) return report_failure(inv, api, reply.error());
  const v1::JobRecord* rec = record_of(*reply, *target);
  if (!rec) {
    std::fprintf(stderr, "scontrol: Problem running job %s\n", id.c_str());
    return 1;
  }
  if (rec->state() != v1::RUNNING) {
    std::fprintf(stderr, "scontrol: Job %s no longer running\n", id.c_str());
    return 1;
  }
  std::fprintf(stderr, "scontrol: Nodes are ready for job %s\n", id.c_str());
  return 0;
}

// scontrol show daemons: the daemons slurm.conf runs on this host, from the
// configuration alone (no controller is asked), in Slurm's words: slurmctld
// for SlurmctldHost, slurmd for a node whose NodeHostname or NodeAddr is here.
int run_show_daemons(const Invocation& inv) {
  config::LoadOptions load{config::resolve_config_path(inv.config_flag), "", ""};
  auto cfg = config::load_config(load);
  if (!cfg) {
    std::fprintf(stderr, "scontrol: error: %s\n", cfg.error().message.c_str());
    return 1;
  }
  const bool ctld = std::any_of(cfg->slurmctld_hosts.begin(), cfg->slurmctld_hosts.end(),
                                [](const std::string& h) { return is_this_host(h.substr(0, h.find('('))); }) ||
                    (cfg->slurmctld_hosts.empty() && is_this_host(cfg->controller_host()));
  const bool agent = std::any_of(cfg->nodes.begin(), cfg->nodes.end(), [](const config::NodeConfig& n) {
    return is_this_host(n.hostname) || is_this_host(n.addr);
  });
  std::string out = ctld ? "slurmctld" : "";
  if (agent) out += out.empty() ? "slurmd" : " slurmd";
  std::puts(out.c_str());
  return 0;
}

// Sends a setdebug/setdebugflags change; `call` names it in a refusal
// ("slurm_set_debug_level error: Permission denied", as Slurm's).
int send_set_debug(ControllerApi& api, const Invocation& inv, const v1::SetDebugRequest& req, const char* call) {
  auto reply = api.set_debug(req);
  if (reply) return 0;
  if (reply.error().unreachable) return report_failure(inv, api, reply.error());
  std::fprintf(stderr, "%s error: %s\n", call,
               reply.error().denied() ? "Permission denied" : reply.error().message.c_str());
  return 1;
}

// scontrol setdebug LEVEL: the controller's log detail (SlurmctldDebug's
// words or 0-9) until its next restart or reconfigure. Silent on success, as Slurm's.
int run_setdebug(ControllerApi& api, const Invocation& inv, const Opts& o) {
  if (!word_count_ok(o, 2, 2)) return 1;
  if (!config::parse_debug_level(o.words[1])) {
    std::fprintf(stderr, "invalid debug level: %s\n", o.words[1].c_str());
    return 1;
  }
  v1::SetDebugRequest req;
  req.set_level(o.words[1]);
  return send_set_debug(api, inv, req, "slurm_set_debug_level");
}

// scontrol setdebugflags +NAME[,NAME] | -NAME[,NAME]: adds DebugFlags
// subsystems to the controller's log, or takes them away.
int run_setdebugflags(ControllerApi& api, const Invocation& inv, const Opts& o) {
  if (!word_count_ok(o, 2, 2)) return 1;
  const std::string& word = o.words[1];
  if (word.empty() || (word[0] != '+' && word[0] != '-')) {
    std::fprintf(stderr, "invalid debug flag: %s\nUsage: setdebugflags [+|-]NAME\n", word.c_str());
    return 1;
  }
  const std::string names = word.substr(1);
  if (auto flags = config::parse_debug_flags(names); !flags || names.empty()) {
    if (!flags) std::fprintf(stderr, "scontrol: error: %s\n", flags.error().message.c_str());
    std::fprintf(stderr, "invalid debug flag: %s\n", word.c_str());
    return 1;
  }
  v1::SetDebugRequest req;
  (word[0] == '+' ? req.mutable_add_flags() : req.mutable_remove_flags())->assign(names);
  return send_set_debug(api, inv, req, "slurm_set_debug_flags");
}

bool needs_controller(const Opts& o) {
  if (o.words.empty()) return false;
  const std::string& k = o.words[0];
  if (abbrev(k, "show", 3)) {
    if (o.words.size() < 2) return false;
    const std::string& e = o.words[1];
    return iequals(e, "jobid") || iequals(e, "jobs") || abbrev(e, "job", 1) || iequals(e, "nodes") ||
           abbrev(e, "node", 1) || iequals(e, "partitions") || abbrev(e, "partition", 1) || abbrev(e, "config", 1) ||
           abbrev(e, "licenses", 3) || abbrev(e, "steps", 2) || abbrev(e, "reservations", 1) ||
           abbrev(e, "frontend", 2);
  }
  for (auto [name, min] : {std::pair<std::string_view, std::size_t>{"update", 1}, {"hold", 3}, {"uhold", 2},
                           {"release", 3}, {"requeue", 3}, {"requeuehold", 8}, {"ping", 3}, {"reconfigure", 3},
                           {"write", 2}, {"suspend", 2}, {"resume", 3}, {"top", 3}, {"shutdown", 3},
                           {"create", 2}, {"delete", 3}, {"wait_job", 4}, {"setdebugflags", 9}, {"setdebug", 4}}) {
    if (abbrev(k, name, min)) return true;
  }
  return false;
}

// scontrol with no command: Slurm's interactive mode. Each line of stdin is
// one command (words split and quoted as a shell would), with the options
// given on the command line; `quit` or `exit` ends it, as does the end of
// input. `oneliner`, `details` and `quiet` set those options for the
// commands that follow. The prompt is shown when stdin is a terminal. The
// exit status is 1 when a command failed.
int run_interactive(const Args& args) {
  const bool tty = isatty(STDIN_FILENO) != 0;
  Args base = args;
  int rc = 0;
  std::string line;
  for (;;) {
    if (tty) {
      std::fputs("scontrol: ", stdout);
      std::fflush(stdout);
    }
    if (!std::getline(std::cin, line)) break;
    std::vector<std::string> words = cli::split_directive_words(line);
    if (words.empty()) continue;
    const std::string& k = words[0];
    if (abbrev(k, "quit", 4) || abbrev(k, "exit", 4)) break;
    if (words.size() == 1 && (abbrev(k, "oneliner", 3) || abbrev(k, "details", 3) || abbrev(k, "quiet", 4))) {
      base.push_back(abbrev(k, "oneliner", 3) ? "-o" : abbrev(k, "details", 3) ? "-d" : "-Q");
      continue;
    }
    Args full = base;
    full.insert(full.end(), words.begin(), words.end());
    if (scontrol_main(full) != 0) rc = 1;
    std::fflush(stdout);
    std::fflush(stderr);
  }
  if (tty) std::fputs("\n", stdout);
  return rc;
}

}  // namespace

int scontrol_main(const Args& args) {
  Invocation inv = invocation("scontrol", args);
  Opts o;
  if (int rc = cli::parse_scontrol_options(inv.args, o); rc != 0) return rc;
  if (o.help || o.version) return cli::scontrol_main(inv.args);
  if (o.words.empty()) return run_interactive(args);
  if (o.words.size() == 2 && abbrev(o.words[0], "show", 3) && abbrev(o.words[1], "daemons", 2)) {
    return run_show_daemons(inv);
  }
  // -M must name this cluster, also for what needs no controller (as Slurm's scontrol).
  const bool controller = needs_controller(o);
  std::unique_ptr<ControllerApi> api;
  if (controller || !o.clusters.empty()) {
    api = connect_or_report(inv);
    if (!api) return 1;
    if (!o.clusters.empty() && !names_this_cluster("scontrol", o.clusters, *api)) return 1;
  }
  if (!controller) return cli::scontrol_main(inv.args);
  const std::string& k = o.words[0];
  if (abbrev(k, "show", 3)) return run_show(api.get(), inv, o).value_or(1);
  if (abbrev(k, "update", 1)) return run_update(*api, inv, o).value_or(1);
  if (abbrev(k, "requeuehold", 8)) return run_control(*api, inv, o, v1::REQUEUE_HOLD);
  if (abbrev(k, "requeue", 3)) return run_control(*api, inv, o, v1::REQUEUE);
  if (abbrev(k, "hold", 3)) return run_control(*api, inv, o, v1::HOLD);
  if (abbrev(k, "uhold", 2)) return run_control(*api, inv, o, v1::USER_HOLD);
  if (abbrev(k, "release", 3)) return run_control(*api, inv, o, v1::RELEASE);
  if (abbrev(k, "suspend", 2)) return run_control(*api, inv, o, v1::SUSPEND);
  if (abbrev(k, "resume", 3)) return run_control(*api, inv, o, v1::RESUME);
  if (abbrev(k, "top", 3)) return run_control(*api, inv, o, v1::TOP);
  if (abbrev(k, "ping", 3)) return run_ping(*api);
  if (abbrev(k, "reconfigure", 3)) return run_reconfigure(*api, inv);
  if (abbrev(k, "write", 2)) return run_write(*api, inv, o);
  if (abbrev(k, "shutdown", 3)) return run_shutdown(*api, inv, o);
  if (abbrev(k, "create", 2)) return run_create(*api, inv, o);
  if (abbrev(k, "delete", 3)) return run_delete(*api, inv, o);
  if (abbrev(k, "wait_job", 4)) return run_wait_job(*api, inv, o);
  if (abbrev(k, "setdebugflags", 9)) return run_setdebugflags(*api, inv, o);
  if (abbrev(k, "setdebug", 4)) return run_setdebug(*api, inv, o);
  return cli::scontrol_main(inv.args);
}

}  // namespace drover::client
