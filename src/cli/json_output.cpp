// squeue/sinfo/sacct --json (see json_output.hpp).
#include "cli/json_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/job_state.hpp"
#include "cli/job_values.hpp"
#include "cli/sinfo_internal.hpp"
#include "common/gres.hpp"
#include "common/hostlist.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using Json = nlohmann::ordered_json;

// Slurm's own release: the commands answer --version with it too.
Json meta() {
  return Json{{"plugin", {{"type", "openapi/v0.0.38"}, {"name", "Slurm OpenAPI v0.0.38"}}},
              {"Slurm", {{"version", {{"major", 22}, {"micro", 8}, {"minor", 5}}}, {"release", "22.05.8"}}}};
}

std::string document(const char* list, Json items) {
  Json doc;
  doc["meta"] = meta();
  doc["errors"] = Json::array();
  doc[list] = std::move(items);
  return doc.dump(2) + "\n";
}

int64_t unix_or_zero(UnixTime t) { return t == kNoTime ? 0 : t; }

// Whole minutes, or null for no limit (and for one not yet set).
Json limit_minutes(Seconds s) {
  if (s == kInfinite || s == kNotSet || s < 0) return nullptr;
  return s / 60;
}

template <class T>
Json positive_or_null(T v) {
  return v > 0 ? Json(v) : Json(nullptr);
}

// A wait status as Slurm keeps it: the exit code in the high byte, the signal low.
int64_t wait_status(int code, int signal) { return (static_cast<int64_t>(code & 0xff) << 8) | (signal & 0x7f); }

// "0-3,8" -> {0, 1, 2, 3, 8}; unreadable parts are skipped.
std::vector<int64_t> expand_ranges(const std::string& text) {
  std::vector<int64_t> out;
  for (const auto& part : split(text, ',')) {
    auto dash = part.find('-');
    auto lo = parse_int(part.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : parse_int(part.substr(dash + 1));
    if (!lo || !hi) continue;
    for (int64_t i = *lo; i <= *hi; ++i) out.push_back(i);
  }
  return out;
}

// What a running job asked for: its allocation less the typed GRES entries
// ("gres/gpu:h100") that only the allocation names.
TresMap requested_of(const TresMap& tres) {
  TresMap out;
  for (const auto& [k, n] : tres) {
    if (k.rfind("gres/", 0) == 0 && k.find(':') != std::string::npos) continue;
    out.emplace(k, n);
  }
  return out;
}

Json job_resources(const JobView& j, const std::map<std::string, const NodeView*>& by_name) {
  Json nodes = Json::array();
  for (const auto& d : j.node_detail) {
    auto names = hostlist_expand(d.nodes);
    if (!names) continue;
    for (const auto& name : *names) {
      auto it = by_name.find(name);
      int64_t threads = it != by_name.end() ? std::max<int64_t>(1, it->second->threads_per_core) : 1;
      int64_t per_socket = it != by_name.end() ? std::max<int64_t>(1, it->second->cores_per_socket) : 0;
      std::map<int64_t, std::set<int64_t>> cores;  // socket -> cores in it
      for (int64_t cpu : expand_ranges(d.cpu_ids)) {
        int64_t core = cpu / threads;
        if (per_socket > 0) cores[core / per_socket].insert(core % per_socket);
        else cores[0].insert(core);
      }
      Json sockets = Json::object();
      for (const auto& [s, list] : cores) {
        Json c = Json::object();
        for (int64_t core : list) c[std::to_string(core)] = "allocated";
        sockets[std::to_string(s)] = {{"cores", std::move(c)}};
      }
      nodes.push_back({{"sockets", std::move(sockets)},
                       {"nodename", name},
                       {"cpus_used", 0},
                       {"memory_used", 0},
                       {"memory_allocated", d.mem_mb}});
    }
  }
  return Json{{"nodes", j.nodes},
              {"allocated_cores", j.num_cpus},
              {"allocated_hosts", j.num_nodes},
              {"allocated_nodes", std::move(nodes)}};
}

Json gres_detail(const JobView& j) {
  Json out = Json::array();
  for (const auto& d : j.node_detail) {
    if (d.gres.empty()) continue;
    auto names = hostlist_expand(d.nodes);
    size_t n = names ? names->size() : 1;
    for (size_t i = 0; i < n; ++i) out.push_back(d.gres);
  }
  return out;
}

Json squeue_job(const JobView& j, const std::map<std::string, const NodeView*>& by_name) {
  const bool pending = j.state == JobState::kPending;
  const bool remainder = j.array_job_id != 0 && !j.array_task_id;
  std::string tasks;
  if (remainder) {
    tasks = compress_ranges(j.array_pending_tasks);
    if (j.array_max_running > 0) tasks += fmt::format("%{}", j.array_max_running);
  }
  Json billable = nullptr;
  if (!pending) {
    auto b = j.tres.find("billing");
    billable = static_cast<double>(b != j.tres.end() ? b->second : j.num_cpus);
  }
  Json o;
  o["account"] = j.account;
  o["accrue_time"] = unix_or_zero(j.accrue_time);
  o["admin_comment"] = "";
  o["array_job_id"] = j.array_job_id;
  o["array_task_id"] = j.array_task_id ? Json(*j.array_task_id) : Json(nullptr);
  o["array_max_tasks"] = j.array_max_running;
  o["array_task_string"] = tasks;
  o["association_id"] = 0;
  o["batch_features"] = "";
  o["batch_flag"] = j.batch;
  o["batch_host"] = j.batch_host;
  o["flags"] = Json::array();
  o["burst_buffer"] = "";
  o["burst_buffer_state"] = "";
  o["cluster"] = j.cluster;
  o["cluster_features"] = "";
  o["command"] = j.command;
  o["comment"] = j.comment;
  o["container"] = "";
  o["contiguous"] = j.contiguous;
  o["core_spec"] = nullptr;
  o["thread_spec"] = nullptr;
  o["cores_per_socket"] = positive_or_null(j.cores_per_socket);
  o["billable_tres"] = billable;
  o["cpus_per_task"] = j.cpus_per_task > 1 ? Json(j.cpus_per_task) : Json(nullptr);
  o["cpu_frequency_minimum"] = nullptr;
  o["cpu_frequency_maximum"] = nullptr;
  o["cpu_frequency_governor"] = nullptr;
  o["cpus_per_tres"] = "";
  o["deadline"] = unix_or_zero(j.deadline);
  o["delay_boot"] = 0;
  o["dependency"] = j.dependency;
  o["derived_exit_code"] = wait_status(j.derived_exit_code, j.derived_exit_signal);
  o["eligible_time"] = unix_or_zero(j.eligible_time);
  o["end_time"] = unix_or_zero(j.end_time);
  o["excluded_nodes"] = j.exc_nodes;
  o["exit_code"] = wait_status(j.exit_code, j.exit_signal);
  o["features"] = j.features;
  o["federation_origin"] = "";
  o["federation_siblings_active"] = "";
  o["federation_siblings_viable"] = "";
  o["gres_detail"] = gres_detail(j);
  o["group_id"] = j.gid;
  o["group_name"] = j.group;
  o["job_id"] = j.job_id;
  if (!pending && !j.nodes.empty()) o["job_resources"] = job_resources(j, by_name);
  o["job_state"] = job_state_long(j.state);
  o["last_sched_evaluation"] = unix_or_zero(j.last_sched_eval);
  o["licenses"] = j.licenses;
  o["max_cpus"] = j.max_cpus;
  o["max_nodes"] = j.max_nodes;
  o["mcs_label"] = j.mcs_label;
  o["memory_per_tres"] = "";
  o["name"] = j.name;
  o["nodes"] = pending ? std::string() : j.nodes;
  o["nice"] = j.nice != 0 ? Json(j.nice) : Json(nullptr);
  o["tasks_per_core"] = nullptr;
  o["tasks_per_node"] = j.ntasks_per_node;
  o["tasks_per_socket"] = nullptr;
  o["tasks_per_board"] = 0;
  o["cpus"] = j.num_cpus;
  o["node_count"] = j.num_nodes;
  o["tasks"] = j.num_tasks;
  o["het_job_id"] = 0;
  o["het_job_id_set"] = "";
  o["het_job_offset"] = 0;
  o["partition"] = j.partition;
  o["prefer"] = "";
  o["memory_per_node"] = positive_or_null(j.mem_per_node_mb);
  o["memory_per_cpu"] = positive_or_null(j.mem_per_cpu_mb);
  o["minimum_cpus_per_node"] = j.min_cpus_per_node;
  o["minimum_tmp_disk_per_node"] = j.min_tmp_disk_mb;
  o["preempt_time"] = 0;
  o["pre_sus_time"] = j.pre_suspend_time;
  o["priority"] = j.priority;
  o["profile"] = nullptr;
  o["qos"] = j.qos;
  o["reboot"] = false;
  o["required_nodes"] = j.req_nodes;
  o["requeue"] = j.requeue;
  o["resize_time"] = 0;
  o["restart_cnt"] = j.restarts;
  o["resv_name"] = j.reservation;
  o["shared"] = nullptr;
  o["show_flags"] = Json::array({"SHOW_ALL", "SHOW_DETAIL", "SHOW_LOCAL"});
  o["sockets_per_board"] = 0;
  o["sockets_per_node"] = positive_or_null(j.sockets_per_node);
  o["start_time"] = unix_or_zero(j.start_time);
  o["state_description"] = "";
  o["state_reason"] = j.reason;
  o["standard_error"] = j.std_err;
  o["standard_input"] = j.std_in;
  o["standard_output"] = j.std_out;
  o["submit_time"] = unix_or_zero(j.submit_time);
  o["suspend_time"] = unix_or_zero(j.suspend_time);
  o["system_comment"] = "";
  o["time_limit"] = limit_minutes(j.time_limit);
  o["time_minimum"] = j.time_min / 60;
  o["threads_per_core"] = positive_or_null(j.threads_per_core);
  o["tres_bind"] = "";
  o["tres_freq"] = "";
  o["tres_per_job"] = j.tres_per_job;
  o["tres_per_node"] = j.tres_per_node;
  o["tres_per_socket"] = j.tres_per_socket;
  o["tres_per_task"] = j.tres_per_task;
  o["tres_req_str"] = format_tres(pending ? j.tres : requested_of(j.tres));
  o["tres_alloc_str"] = pending ? std::string() : format_tres(j.tres);
  o["user_id"] = j.uid;
  o["user_name"] = j.user;
  o["wckey"] = j.wckey;
  o["current_working_directory"] = j.work_dir;
  return o;
}

const char* node_base_name(NodeBase b) {
  switch (b) {
    case NodeBase::kDown: return "down";
    case NodeBase::kIdle: return "idle";
    case NodeBase::kAllocated: return "allocated";
    case NodeBase::kError: return "error";
    case NodeBase::kMixed: return "mixed";
    case NodeBase::kFuture: return "future";
    case NodeBase::kUnknown: break;
  }
  return "unknown";
}

Json node_state_flags(const NodeState& s) {
  Json f = Json::array();
  auto add = [&](bool on, const char* name) {
    if (on) f.push_back(name);
  };
  add(s.drain, "DRAIN");
  add(s.completing, "COMPLETING");
  add(s.not_responding, "NOT_RESPONDING");
  add(s.fail, "FAIL");
  add(s.maint, "MAINTENANCE");
  add(s.reserved, "RESERVED");
  add(s.powered_down, "POWERED_DOWN");
  add(s.powering_up, "POWERING_UP");
  add(s.power_down_pending, "POWER_DOWN");
  add(s.powering_down, "POWERING_DOWN");
  add(s.reboot_requested, "REBOOT_REQUESTED");
  add(s.reboot_issued, "REBOOT_ISSUED");
  add(s.planned, "PLANNED");
  add(s.invalid_reg, "INVALID_REG");
  return f;
}

Json sinfo_node(const NodeView& n) {
  Json o;
  o["architecture"] = n.arch;
  o["burstbuffer_network_address"] = "";
  o["boards"] = n.boards;
  o["boot_time"] = unix_or_zero(n.boot_time);
  o["comment"] = n.comment;
  o["cores"] = n.cores_per_socket;
  o["cpu_binding"] = 0;
  o["cpu_load"] = n.cpu_load < 0 ? 0 : static_cast<int64_t>(std::llround(n.cpu_load * 100));
  o["extra"] = n.extra;
  o["free_memory"] = n.free_memory_mb < 0 ? Json(nullptr) : Json(n.free_memory_mb);
  o["cpus"] = n.cpus;
  o["last_busy"] = unix_or_zero(n.last_busy_time);
  o["features"] = n.features;
  o["active_features"] = n.features_active;
  o["gres"] = n.gres.empty() ? std::string() : format_gres_list(n.gres);
  o["gres_drained"] = "N/A";
  o["gres_used"] = gres_used_text(n);
  o["mcs_label"] = n.mcs_label;
  o["name"] = n.name;
  o["next_state_after_reboot"] = "invalid";
  o["address"] = n.addr;
  o["hostname"] = n.hostname;
  o["state"] = node_base_name(n.state.base);
  o["state_flags"] = node_state_flags(n.state);
  o["next_state_after_reboot_flags"] = Json::array();
  o["operating_system"] = n.os;
  o["owner"] = n.owner.empty() ? Json(nullptr) : Json(n.owner);
  o["partitions"] = n.partitions;
  o["port"] = n.port;
  o["real_memory"] = n.real_memory_mb;
  o["reason"] = n.reason;
  o["reason_changed_at"] = n.reason.empty() ? 0 : unix_or_zero(n.reason_time);
  o["reason_set_by_user"] = n.reason.empty() || n.reason_user.empty() ? Json(nullptr) : Json(n.reason_user);
  o["slurmd_start_time"] = unix_or_zero(n.slurmd_start_time);
  o["sockets"] = n.sockets;
  o["threads"] = n.threads_per_core;
  o["temporary_disk"] = n.tmp_disk_mb;
  o["weight"] = n.weight;
  o["tres"] = format_tres(n.cfg_tres);
  o["slurmd_version"] = n.version;
  o["alloc_memory"] = n.alloc_memory_mb;
  o["alloc_cpus"] = n.alloc_cpus;
  int64_t usable = n.cpus_effective > 0 ? n.cpus_effective : n.cpus;
  o["idle_cpus"] = std::max<int64_t>(0, usable - n.alloc_cpus);
  o["tres_used"] = n.alloc_tres.empty() ? Json(nullptr) : Json(format_tres(n.alloc_tres));
  auto billing = n.alloc_tres.find("billing");
  o["tres_weighted"] = static_cast<double>(billing != n.alloc_tres.end() ? billing->second : n.alloc_cpus);
  return o;
}

// ---- sacct ----------------------------------------------------------------------------

// TRES ids as slurmdbd numbers them: the fixed ones, then one per GRES or
// license name (from 1001, in name order over the whole document).
class TresNumbers {
 public:
  explicit TresNumbers(const std::vector<AccountingRecord>& records) {
    std::set<std::string> dynamic;
    for (const auto& r : records) {
      for (const auto* m : {&r.req_tres, &r.alloc_tres}) {
        for (const auto& [k, n] : *m) {
          if (!fixed_id(k)) dynamic.insert(k);
        }
      }
    }
    int64_t next = 1001;
    for (const auto& k : dynamic) ids_[k] = next++;
  }

  // `energy`: a job's allocation lists energy too, with no count (none is measured), as slurmdbd's does.
  Json list(const TresMap& tres, bool energy = false) const {
    // Slurm's order: the fixed ids first, then the dynamic ones.
    std::vector<std::pair<int64_t, std::string>> order;
    for (const auto& [k, n] : tres) order.emplace_back(id(k), k);
    if (energy && !tres.empty() && !tres.count("energy")) order.emplace_back(3, "energy");
    std::sort(order.begin(), order.end());
    Json out = Json::array();
    for (const auto& [tid, k] : order) {
      auto slash = k.find('/');
      Json name = slash == std::string::npos ? Json(nullptr) : Json(k.substr(slash + 1));
      auto count = tres.find(k);
      out.push_back({{"type", slash == std::string::npos ? k : k.substr(0, slash)},
                     {"name", std::move(name)},
                     {"id", tid},
                     {"count", count != tres.end() ? Json(count->second) : Json(nullptr)}});
    }
    return out;
  }

 private:
  static int64_t fixed_id(const std::string& k) {
    static const std::map<std::string, int64_t> fixed = {{"cpu", 1},    {"mem", 2},     {"energy", 3}, {"node", 4},
                                                         {"billing", 5}, {"fs/disk", 6}, {"vmem", 7},   {"pages", 8}};
    auto it = fixed.find(k);
    return it == fixed.end() ? 0 : it->second;
  }
  int64_t id(const std::string& k) const {
    if (int64_t f = fixed_id(k)) return f;
    auto it = ids_.find(k);
    return it == ids_.end() ? 0 : it->second;
  }
  std::map<std::string, int64_t> ids_;
};

Json exit_json(int code, int signal) {
  Json o;
  if (signal > 0) {
    o["status"] = "SIGNALED";
    o["return_code"] = nullptr;
    const char* described = strsignal(signal);  // "Killed", as Slurm names it here
    o["signal"] = {{"signal_id", signal}, {"name", described ? described : signal_name(signal)}};
  } else {
    o["status"] = code != 0 ? "FAILED" : "SUCCESS";
    o["return_code"] = code;
  }
  return o;
}

Json cpu_time(double seconds) {
  auto whole = static_cast<int64_t>(seconds);
  return Json{{"seconds", whole}, {"microseconds", static_cast<int64_t>(std::llround((seconds - whole) * 1e6))}};
}

Seconds elapsed(const AccountingRecord& r, UnixTime now) {
  if (r.start == kNoTime) return 0;
  UnixTime until = r.end != kNoTime ? r.end : now;
  return std::max<Seconds>(0, until - r.start - r.suspended);
}

// The pending tasks of an array as slurmdbd's bitmap: "0x3C" for 2-5.
Json task_bitmap(const std::vector<int64_t>& tasks) {
  if (tasks.empty()) return nullptr;
  int64_t top = *std::max_element(tasks.begin(), tasks.end());
  std::vector<uint8_t> nibbles(static_cast<size_t>(top / 4 + 1), 0);
  for (int64_t t : tasks) {
    if (t >= 0) nibbles[static_cast<size_t>(t / 4)] |= static_cast<uint8_t>(1u << (t % 4));
  }
  std::string hex = "0x";
  for (auto it = nibbles.rbegin(); it != nibbles.rend(); ++it) hex += "0123456789ABCDEF"[*it];
  return hex;
}

Json sacct_step(const AccountingRecord& s, const TresNumbers& ids, UnixTime now) {
  std::vector<std::string> nodes;
  if (!s.node_list.empty()) {
    if (auto names = hostlist_expand(s.node_list)) nodes = *names;
  }
  Json empty_usage = {{"max", Json::array()}, {"min", Json::array()}, {"average", Json::array()}, {"total", Json::array()}};
  Json step_id = s.step;
  if (auto n = parse_int(s.step)) step_id = *n;
  Json o;
  o["nodes"] = {{"list", nodes}, {"count", static_cast<int64_t>(nodes.size())}, {"range", s.node_list}};
  o["tres"] = {{"requested", empty_usage}, {"consumed", empty_usage}, {"allocated", ids.list(s.alloc_tres)}};
  o["time"] = {{"elapsed", elapsed(s, now)},
               {"end", unix_or_zero(s.end)},
               {"start", unix_or_zero(s.start)},
               {"suspended", s.suspended},
               {"system", cpu_time(s.system_cpu_sec)},
               {"total", cpu_time(s.total_cpu_sec)},
               {"user", cpu_time(s.user_cpu_sec)}};
  o["exit_code"] = exit_json(s.exit_code, s.exit_signal);
  o["tasks"] = {{"count", s.ntasks}};
  o["pid"] = nullptr;
  o["CPU"] = {{"requested_frequency", {{"min", 0}, {"max", 0}}}, {"governor", Json::array()}};
  o["kill_request_user"] = nullptr;
  o["state"] = job_state_long(s.state);
  o["statistics"] = {{"CPU", {{"actual_frequency", 0}}}, {"energy", {{"consumed", 0}}}};
  o["step"] = {{"job_id", s.job_id}, {"het", {{"component", nullptr}}}, {"id", step_id}, {"name", s.job_name}};
  o["task"] = {{"distribution", std::all_of(s.step.begin(), s.step.end(), [](unsigned char c) { return std::isdigit(c) != 0; }) ? "Block" : "Unknown"}};
  return o;
}

Json sacct_job(const AccountingRecord& r, Json steps, const TresNumbers& ids, UnixTime now) {
  const bool remainder = r.array_job_id != 0 && !r.array_task_id;
  Json o;
  o["account"] = r.account;
  o["comment"] = {{"administrator", nullptr},
                  {"job", r.comment.empty() ? Json(nullptr) : Json(r.comment)},
                  {"system", nullptr}};
  o["allocation_nodes"] = r.nnodes;
  o["array"] = {{"job_id", r.array_job_id},
                {"limits", {{"max", {{"running", {{"tasks", r.array_max_running}}}}}}},
                {"task", remainder ? task_bitmap(r.array_pending_tasks) : Json(nullptr)},
                {"task_id", r.array_task_id ? Json(*r.array_task_id) : Json(nullptr)}};
  o["association"] = {{"account", r.account}, {"cluster", r.cluster}, {"partition", nullptr}, {"user", r.user}};
  o["cluster"] = r.cluster;
  o["constraints"] = r.constraints;
  o["container"] = nullptr;
  o["derived_exit_code"] = exit_json(r.derived_exit_code, r.derived_exit_signal);
  o["time"] = {{"elapsed", elapsed(r, now)},
               {"eligible", unix_or_zero(r.eligible)},
               {"end", unix_or_zero(r.end)},
               {"start", unix_or_zero(r.start)},
               {"submission", unix_or_zero(r.submit)},
               {"suspended", r.suspended},
               {"system", cpu_time(r.system_cpu_sec)},
               {"limit", limit_minutes(r.time_limit)},
               {"total", cpu_time(r.total_cpu_sec)},
               {"user", cpu_time(r.user_cpu_sec)}};
  o["exit_code"] = exit_json(r.exit_code, r.exit_signal);
  // sacct's Flags in the JSON names Slurm 22.05 gives them (fixture sacct.json).
  o["flags"] = Json::array();
  const auto flags = split(r.flags, ',');
  auto has = [&](const char* f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
  if (has("StartRecieved")) o["flags"].push_back("CLEAR_SCHEDULING");
  if (has("SchedSubmit")) o["flags"].push_back("STARTED_ON_SUBMIT");
  if (has("SchedMain")) o["flags"].push_back("STARTED_ON_SCHEDULE");
  if (has("SchedBackfill")) o["flags"].push_back("STARTED_ON_BACKFILL");
  o["group"] = r.group;
  o["het"] = {{"job_id", 0}, {"job_offset", nullptr}};
  o["job_id"] = r.job_id;
  o["name"] = r.job_name;
  o["mcs"] = {{"label", ""}};
  o["nodes"] = r.node_list.empty() ? std::string("None assigned") : r.node_list;
  o["partition"] = r.partition;
  o["priority"] = r.priority;
  o["qos"] = r.qos;
  o["required"] = {{"CPUs", r.req_cpus}, {"memory", r.req_mem_mb}};
  o["kill_request_user"] = nullptr;
  // slurmdbd's record id of the reservation, and its name (0 when none, as Slurm prints it).
  o["reservation"] = {{"id", 0}, {"name", r.reservation.empty() ? Json(0) : Json(r.reservation)}};
  o["state"] = {{"current", job_state_long(r.state)}, {"reason", r.reason}};
  o["steps"] = std::move(steps);
  o["tres"] = {{"allocated", ids.list(r.alloc_tres, true)}, {"requested", ids.list(r.req_tres)}};
  o["user"] = r.user;
  o["wckey"] = {{"wckey", r.wckey}, {"flags", Json::array()}};
  o["working_directory"] = r.work_dir;
  return o;
}

}  // namespace

std::string render_squeue_json(const std::vector<JobView>& jobs, const std::vector<NodeView>& nodes) {
  std::map<std::string, const NodeView*> by_name;
  for (const auto& n : nodes) by_name.emplace(n.name, &n);
  Json list = Json::array();
  for (const auto& j : jobs) list.push_back(squeue_job(j, by_name));
  return document("jobs", std::move(list));
}

std::string render_sinfo_json(const std::vector<NodeView>& nodes) {
  Json list = Json::array();
  for (const auto& n : nodes) list.push_back(sinfo_node(n));
  return document("nodes", std::move(list));
}

std::string render_sacct_json(const std::vector<AccountingRecord>& records, UnixTime now) {
  TresNumbers ids(records);
  Json list = Json::array();
  for (size_t i = 0; i < records.size();) {
    const AccountingRecord& job = records[i++];
    Json steps = Json::array();
    for (; i < records.size() && !records[i].step.empty(); ++i) steps.push_back(sacct_step(records[i], ids, now));
    if (!job.step.empty()) continue;  // a step whose job was not selected
    list.push_back(sacct_job(job, std::move(steps), ids, now));
  }
  return document("jobs", std::move(list));
}

std::string yaml_not_built(const std::string& command) {
  return command + ": error: --yaml is not built in Drover; --json prints the same document as JSON\n";
}

}  // namespace drover::cli
