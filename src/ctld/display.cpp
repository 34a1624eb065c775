// What queries answer: jobs with their display figures, nodes with their
// state and allocated resources, partitions, configuration, statistics.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "common/tres.hpp"
#include "common/user_db.hpp"
#include "config/debug_levels.hpp"
#include "config/parse.hpp"
#include "config/tables.hpp"
#include "core/constraint.hpp"
#include "core/demand.hpp"
#include "ctld/accounting.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

void alloc_tres(const CoreBridge& bridge, const v1::JobRecord& rec, v1::JobDisplay& d) {
  const v1::JobAllocation& a = rec.alloc();
  std::vector<std::string> names;
  for (const auto& t : a.nodes()) names.push_back(t.node());
  auto tres = job_alloc_tres(bridge, rec);
  d.set_num_cpus(tres["cpu"]);
  d.set_num_nodes(a.nodes_size());
  d.set_nodes(hostlist_compress(names));
  for (const auto& [k, v] : tres) (*d.mutable_tres())[k] = v;
}

const char* dep_type(v1::DepType t) {
  switch (t) {
    case v1::DEP_AFTER: return "after";
    case v1::DEP_AFTER_OK: return "afterok";
    case v1::DEP_AFTER_NOT_OK: return "afternotok";
    case v1::DEP_SINGLETON: return "singleton";
    case v1::DEP_AFTER_CORR: return "aftercorr";
    default: return "afterany";
  }
}

}  // namespace

// Slurm's Dependency=: each item still waiting "(unfulfilled)", each that
// never will be "(failed)"; a met item is gone, and with '?' one met item
// clears them all. Held jobs show theirs too.
std::string ControllerState::dependency_display(const Job& j) const {
  const auto& items = j.rec.desc().dependency().items();
  if (items.empty() || j.rec.state() != v1::PENDING) return "";
  std::vector<core::DepItemState> states = dependency_states(j);
  if (states.size() != static_cast<std::size_t>(items.size())) return "";
  const bool any = j.rec.desc().dependency().any();
  if (any && std::count(states.begin(), states.end(), core::DepItemState::kMet) > 0) return "";
  std::vector<std::string> parts;
  for (int k = 0; k < items.size(); ++k) {
    const auto& i = items[k];
    if (states[static_cast<std::size_t>(k)] == core::DepItemState::kMet) continue;
    const char* mark = states[static_cast<std::size_t>(k)] == core::DepItemState::kNever ? "(failed)" : "(unfulfilled)";
    std::string p = dep_type(i.type());
    if (i.type() != v1::DEP_SINGLETON) {
      p += ":" + std::to_string(i.job_id());
      if (i.array_task() >= 0) p += "_" + std::to_string(i.array_task());
      else if (arrays_.count(i.job_id())) p += "_*";
      if (i.delay_s() > 0) p += "+" + std::to_string(i.delay_s() / 60);
    }
    parts.push_back(p + mark);
  }
  return join(parts, any ? "?" : ",");
}

namespace {

std::string gres_take_text(const v1::GresTake& g, int64_t count) {
  return g.type().empty() ? fmt::format("{}:{}", g.name(), count) : fmt::format("{}:{}:{}", g.name(), g.type(), count);
}

// scontrol -d show job: the job's GRES in all, in the order its nodes first
// hold them, and one line per run of consecutive nodes that hold the same
// CPUs, memory and devices.
void node_detail(const CoreBridge& bridge, const v1::JobAllocation& alloc, v1::JobDisplay& d) {
  std::vector<std::pair<const v1::GresTake*, int64_t>> total;
  std::vector<std::string> names;
  v1::JobNodeDetail cur;
  auto flush = [&] {
    if (names.empty()) return;
    cur.set_nodes(hostlist_compress(names));
    *d.add_node_detail() = cur;
    names.clear();
  };
  for (const v1::NodeTake& t : alloc.nodes()) {
    int64_t threads = 1;
    if (core::NodeIndex ni = bridge.find_node(t.node()); ni >= 0) threads = bridge.cluster().nodes[ni].threads_per_core;
    std::vector<int64_t> cpus;
    for (int32_t c : t.cores())
      for (int64_t k = 0; k < threads; ++k) cpus.push_back(c * threads + k);
    std::sort(cpus.begin(), cpus.end());
    std::vector<std::string> gres;
    for (const v1::GresTake& g : t.gres()) {
      std::vector<int64_t> idx(g.indexes().begin(), g.indexes().end());
      std::sort(idx.begin(), idx.end());
      gres.push_back(gres_take_text(g, g.count()) + (idx.empty() ? "" : "(IDX:" + compress_ranges(idx) + ")"));
      auto it = std::find_if(total.begin(), total.end(), [&](const auto& e) {
        return e.first->name() == g.name() && e.first->type() == g.type();
      });
      if (it == total.end()) total.emplace_back(&g, g.count());
      else it->second += g.count();
    }
    v1::JobNodeDetail next;
    next.set_cpu_ids(compress_ranges(cpus));
    next.set_mem_mb(t.mem_mb());
    next.set_gres(join(gres, ","));
    if (!names.empty() && (next.cpu_ids() != cur.cpu_ids() || next.mem_mb() != cur.mem_mb() || next.gres() != cur.gres()))
      flush();
    if (names.empty()) cur = next;
    names.push_back(t.node());
  }
  flush();
  std::vector<std::string> parts;
  for (const auto& [g, n] : total) parts.push_back(gres_take_text(*g, n));
  d.set_job_gres(join(parts, ","));
}

}  // namespace

v1::JobRecord ControllerState::job_for_display(const Job& j, bool detail, bool with_script, int64_t now) const {
  (void)now;
  v1::JobRecord r = j.rec;
  if (!with_script) {
    r.mutable_desc()->clear_script();
    r.mutable_desc()->clear_environment();
  }
  v1::JobDisplay& d = *r.mutable_display();
  const v1::JobDescriptor& desc = j.rec.desc();
  int32_t part = bridge_->find_partition(j.rec.partition());
  if (auto sum = bridge_->summarize(j.spec, part >= 0 ? part : std::max(0, bridge_->default_partition()))) {
    d.set_num_cpus(sum->min_cpus);
    d.set_num_nodes(sum->min_nodes);
    // The -N maximum asked for (0: none); pending with fewer tasks (-n) than
    // it, the tasks' count (Slurm 22.05: `-N 1-4 -n 2` NumNodes=1-2).
    d.set_max_nodes(desc.max_nodes());
    if (j.rec.state() == v1::PENDING && desc.ntasks() > 0 && desc.max_nodes() > desc.ntasks()) {
      d.set_max_nodes(std::max<int64_t>(sum->min_nodes, desc.ntasks()));
    }
    // Pending without -N, with more tasks than nodes: the nodes it would take
    // on an idle cluster, when more (Slurm 22.05 on the anchor cluster:
    // `-n 200` on 64-CPU nodes NODES 4; `-n 64` at 4 GB a CPU on 250 GB
    // nodes 2; `-p interactive -n 63` 1, one 128-CPU node holding it). With
    // -N it shows the minimum asked for (`-N 1-4 -n 8`: 1, NumNodes=1-4).
    if (j.rec.state() == v1::PENDING && desc.min_nodes() <= 0 && sum->ntasks > sum->min_nodes) {
      if (j.idle_nodes_revision != j.spec.revision + 1) {
        j.idle_nodes = bridge_->nodes_when_idle(j.spec);
        j.idle_nodes_revision = j.spec.revision + 1;
      }
      if (j.idle_nodes > sum->min_nodes) d.set_num_nodes(j.idle_nodes);
    }
    d.set_num_tasks(sum->ntasks);
    d.set_cpus_per_task(sum->cpus_per_task);
    d.set_mem_per_node_mb(sum->mem_per_node_mb);
    d.set_mem_per_cpu_mb(sum->mem_per_cpu_mb);
    d.set_tres_per_node(sum->tres_per_node);
    for (const auto& [k, v] : sum->tres) (*d.mutable_tres())[k] = v;
    // Slurm's pn_min_cpus: a task's CPUs, times --ntasks-per-node when given,
    // at least --mincpus (`-n 4` shows 1, `-n 4 --ntasks-per-node=2` 2, `-c 3` 3,
    // --exclusive 1: Slurm 22.05 on the anchor cluster).
    const int64_t per_task = std::max<int64_t>(1, sum->cpus_per_task);
    d.set_min_cpus_per_node(std::max<int64_t>(desc.min_cpus_per_node(),
                                              per_task * std::max<int64_t>(1, desc.ntasks_per_node())));
  }
  if (j.rec.alloc().nodes_size() > 0 && j.rec.state() != v1::PENDING) {
    // Started: the tasks it was laid out with (`-N 2-3` started on three
    // nodes has three, as Slurm 22.05 showed NumTasks=3).
    int64_t tasks = 0;
    for (const auto& t : j.rec.alloc().nodes()) tasks += t.tasks();
    if (tasks > 0) d.set_num_tasks(tasks);
    d.mutable_tres()->clear();
    alloc_tres(*bridge_, j.rec, d);
    if (detail) node_detail(*bridge_, j.rec.alloc(), d);
    if (!desc.prefer().empty()) {
      auto preferred = core::Constraint::parse(desc.prefer());
      const core::Cluster& c = bridge_->cluster();
      bool all = preferred.ok();
      for (const auto& t : j.rec.alloc().nodes()) {
        const core::NodeIndex n = bridge_->find_node(t.node());
        all = all && n >= 0 && preferred->matches(c.nodes[n]);
      }
      if (all) d.set_features_in_use(desc.prefer());
    }
  }
  d.set_dependency(dependency_display(j));
  d.set_planned_start(j.planned_start);
  d.set_sched_nodes(j.sched_nodes);
  d.set_reason(j.rec.reason());
  (void)desc;
  return r;
}

namespace {

struct NodeUsage {
  int32_t cpus = 0;
  int64_t mem = 0;
  int32_t jobs = 0;
  bool completing = false;
  std::map<std::pair<std::string, std::string>, std::vector<int32_t>> gpus;  // (name, type) -> indexes
};

v1::NodeBaseState base_state(const NodeRt& rt, const NodeUsage& u, int32_t cpus) {
  if (rt.down) return v1::NODE_DOWN;
  if (!rt.registered && !rt.responding) return v1::NODE_UNKNOWN;
  if (u.cpus == 0 && u.jobs == 0) return v1::NODE_IDLE;
  return u.cpus >= cpus ? v1::NODE_ALLOCATED : v1::NODE_MIXED;
}

void fill_config(const config::NodeConfig* nc, const core::Cluster& c, const core::NodeSpec& n, v1::NodeInfo& info) {
  info.set_name(n.name);
  info.set_cpus(n.cpus);
  info.set_sockets(n.sockets);
  info.set_cores_per_socket(n.cores_per_socket);
  info.set_threads_per_core(n.threads_per_core);
  info.set_boards(1);
  info.set_real_memory_mb(n.mem_mb);
  info.set_weight(n.weight);
  for (const auto& f : (nc ? nc->features : n.features)) info.add_features(f);
  if (nc && nc->active_features) {
    for (const auto& f : *nc->active_features) info.add_active_features(f);
    if (nc->active_features->empty()) info.add_active_features("");  // none active, some available
  }
  if (nc) {
    info.set_addr(nc->addr);
    info.set_hostname(nc->hostname);
    info.set_port(nc->port);
    info.set_tmp_disk_mb(nc->tmp_disk_mb);
    for (const auto& g : nc->gres) info.add_gres(g.str());
  }
  auto& cfg = *info.mutable_cfg_tres();
  cfg["cpu"] = n.cpus;
  cfg["mem"] = n.mem_mb;
  for (const auto& g : n.gres) {
    cfg["gres/" + g.name] += g.count;
    if (!g.type.empty()) cfg["gres/" + g.name + ":" + g.type] += g.count;
  }
  // Its billing: its CPUs, or the most its partitions' TRESBillingWeights
  // make of its CPUs, memory and GRES (Slurm 22.05 on the anchor cluster:
  // cpu01, in compute CPU=1.0,Mem=0.25G and interactive
  // CPU=0.5,Mem=1G,Node=3, billing=282; its node count is not billed).
  const TresMap own(cfg.begin(), cfg.end());
  double billing = -1;
  for (int32_t p : n.partitions) {
    const core::PartitionSpec& part = c.partitions[static_cast<size_t>(p)];
    if (!part.billing_weights.empty()) billing = std::max(billing, core::billing_units(c, part, own));
  }
  cfg["billing"] = billing < 0 ? n.cpus : core::billing_count(billing);
}

// `gres_types`: slurm.conf's GresTypes, of which a node without GRES shows
// none in use ("gpu:0", as Slurm's GresUsed).
void fill_usage(const core::NodeSpec& n, const NodeUsage& u, const std::vector<std::string>& gres_types,
                v1::NodeInfo& info) {
  info.set_alloc_cpus(u.cpus);
  info.set_alloc_memory_mb(u.mem);
  info.set_running_jobs(u.jobs);
  info.set_completing(u.completing);
  auto& at = *info.mutable_alloc_tres();  // no billing: Slurm's node AllocTRES has none (its CfgTRES has)
  if (u.cpus) at["cpu"] = u.cpus;
  if (u.mem) at["mem"] = u.mem;
  if (n.gres.empty()) {
    for (const auto& t : gres_types) info.add_gres_used()->set_name(t);
  }
  for (const auto& g : n.gres) {
    v1::GresUsed* gu = info.add_gres_used();
    gu->set_name(g.name);
    gu->set_type(g.type);
    auto it = u.gpus.find({g.name, g.type});
    if (it == u.gpus.end()) continue;
    std::vector<int64_t> idx(it->second.begin(), it->second.end());
    std::sort(idx.begin(), idx.end());
    gu->set_count(static_cast<int64_t>(idx.size()));
    gu->set_indexes(compress_ranges(idx));
    at["gres/" + g.name] += gu->count();
    if (!g.type.empty()) at["gres/" + g.name + ":" + g.type] += gu->count();
  }
}

}  // namespace

// Slurm's "*" (idle*, mixed*) comes before DOWN: its controller pings each
// node every SlurmdTimeout/3 and flags one whose ping fails; here, a
// registered node silent that long (and for two heartbeats at least).
bool ControllerState::silent(const NodeRt& n, int64_t now) const {
  return n.registered && n.last_heard > 0 &&
         now - n.last_heard > std::max(settings_.slurmd_timeout_s / 3, 2 * settings_.heartbeat_s + 1);
}

std::vector<v1::NodeInfo> ControllerState::node_infos(int64_t now) const {
  const core::Cluster& c = bridge_->cluster();
  std::vector<NodeUsage> use(c.nodes.size());
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    if (!holds_resources(j)) continue;
    if (j.rec.epilog_nodes_size() > 0) {
      // Over, its Epilogs running: the nodes show COMPLETING, their
      // resources no longer the job's (Slurm's IDLE+COMPLETING).
      for (const auto& name : j.rec.epilog_nodes()) {
        if (core::NodeIndex ni = bridge_->find_node(name); ni >= 0) use[ni].completing = true;
      }
      continue;
    }
    for (const auto& t : j.rec.alloc().nodes()) {
      core::NodeIndex ni = bridge_->find_node(t.node());
      if (ni < 0) continue;
      use[ni].mem += t.mem_mb();
      if (j.rec.state() != v1::SUSPENDED) {  // a suspended job's CPUs are lent out (Slurm shows the node idle)
        use[ni].cpus += t.cpus();
        use[ni].jobs += 1;
      }
      use[ni].completing = use[ni].completing || j.rec.completing();
      for (const auto& g : t.gres()) {
        auto& v = use[ni].gpus[{g.name(), g.type()}];
        v.insert(v.end(), g.indexes().begin(), g.indexes().end());
      }
    }
  }
  // Nodes in a reservation active now (RESERVED; MAINTENANCE too for Flags=MAINT).
  std::vector<uint8_t> reserved(c.nodes.size(), 0), maint(c.nodes.size(), 0);
  for (const auto& [name, r] : reservations_) {
    if (!r.active(now)) continue;
    for (core::NodeIndex n : r.nodes) {
      reserved[static_cast<size_t>(n)] = 1;
      maint[static_cast<size_t>(n)] |= r.maint ? 1 : 0;
    }
  }
  std::vector<v1::NodeInfo> out;
  for (core::NodeIndex i = 0; i < static_cast<core::NodeIndex>(c.nodes.size()); ++i) {
    const core::NodeSpec& n = c.nodes[i];
    const NodeRt& rt = nodes_[i];
    v1::NodeInfo info;
    fill_config(cfg_.find_node(n.name), c, n, info);
    for (int32_t p : n.partitions) info.add_partitions(c.partitions[p].name);
    fill_usage(n, use[i], cfg_.gres_types, info);
    info.set_base(base_state(rt, use[i], n.cpus));
    info.set_drain(rt.drain);
    info.set_fail(rt.fail);
    info.set_not_responding(!rt.responding || silent(rt, now));
    info.set_invalid_reg(rt.invalid_reg);
    info.set_reason(rt.reason);
    info.set_reason_time(rt.reason_time);
    info.set_reason_uid(rt.reason_uid);
    info.set_reason_user(rt.reason_user);
    info.set_comment(rt.comment);
    info.set_boot_time(rt.boot_time);
    info.set_agent_start_time(rt.agent_start);
    info.set_last_heard(rt.last_heard);
    info.set_version(rt.version);
    info.set_os(rt.os);
    info.set_arch(rt.arch);
    info.set_cpu_load(rt.cpu_load);
    info.set_free_memory_mb(rt.free_mem_mb);
    info.set_last_busy_time(use[i].jobs ? now : rt.last_busy);
    info.set_reserved(reserved[static_cast<size_t>(i)] != 0);
    info.set_maint(maint[static_cast<size_t>(i)] != 0);
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<v1::PartitionInfo> ControllerState::partitions() const {
  std::vector<v1::PartitionInfo> out;
  const core::Cluster& c = bridge_->cluster();
  for (const auto& pc : cfg_.partitions) {
    v1::PartitionInfo p;
    p.set_name(pc.name);
    p.set_is_default(pc.is_default);
    p.set_hidden(pc.hidden);
    p.set_state(pc.state);
    // Through a NodeSet: the nodes, sorted and ranged, as Slurm 22.05 showed them on the anchor cluster.
    p.set_nodes_expr(config::names_node_set(cfg_, pc.nodes_expr) ? hostlist_compress_slurm_sorted(pc.nodes)
                                                                   : pc.nodes_expr);
    int64_t cpus = 0;
    for (const auto& n : pc.nodes) {
      p.add_node_names(n);
      core::NodeIndex ni = bridge_->find_node(n);
      if (ni >= 0) cpus += c.nodes[ni].cpus;
    }
    p.set_max_time_s(pc.max_time);
    p.set_default_time_s(pc.default_time ? *pc.default_time : -1);
    p.set_min_nodes(pc.min_nodes);
    p.set_max_nodes(pc.max_nodes < 0 ? 0 : pc.max_nodes);
    p.set_max_cpus_per_node(pc.max_cpus_per_node < 0 ? 0 : pc.max_cpus_per_node);
    p.set_total_cpus(cpus);
    p.set_total_nodes(pc.nodes.size());
    p.set_allow_groups(pc.allow_groups.empty() ? "ALL" : join(pc.allow_groups, ","));
    p.set_root_only(pc.root_only);
    p.set_disable_root_jobs(pc.disable_root_jobs);
    p.set_alloc_nodes(pc.alloc_nodes);
    p.set_allow_accounts(pc.allow_accounts.empty() ? "ALL" : join(pc.allow_accounts, ","));
    p.set_allow_qos(pc.allow_qos.empty() ? "ALL" : join(pc.allow_qos, ","));
    p.set_deny_accounts(join(pc.deny_accounts, ","));
    p.set_deny_qos(join(pc.deny_qos, ","));
    p.set_qos(pc.qos);
    p.set_exclusive_user(pc.exclusive_user);
    p.set_over_subscribe(to_upper(pc.oversubscribe));
    p.set_priority_job_factor(pc.priority_job_factor);
    p.set_priority_tier(pc.priority_tier);
    p.set_preempt_mode(pc.preempt_mode.empty() ? cfg_.preempt_mode : pc.preempt_mode);
    p.set_grace_time_s(pc.grace_time);
    if (pc.over_time_limit) p.set_over_time_limit_min(*pc.over_time_limit);
    // The partition's own (a global DefMemPerCPU is not shown here: Slurm's
    // partitions then read DefMemPerNode=UNLIMITED, golden scontrol_show_partition.txt).
    p.set_def_mem_per_cpu_mb(pc.def_mem_per_cpu_mb.value_or(0));
    p.set_def_mem_per_node_mb(pc.def_mem_per_node_mb.value_or(0));
    p.set_max_mem_per_cpu_mb(pc.max_mem_per_cpu_mb.value_or(0));
    p.set_max_mem_per_node_mb(pc.max_mem_per_node_mb.value_or(0));
    int32_t pi = bridge_->find_partition(pc.name);
    if (pi >= 0) {
      for (const auto& [k, v] : c.partitions[pi].total_tres) (*p.mutable_tres())[k] = v;
      TresMap total(p.tres().begin(), p.tres().end());
      (*p.mutable_tres())["billing"] = core::billing_count(core::billing_units(c, c.partitions[pi], total));
    }
    p.set_tres_billing_weights(pc.tres_billing_weights);
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// The unit Slurm's `scontrol show config` writes after a key's number
// ("MinJobAge = 300 sec"; golden scontrol_show_config.txt); none for others.
const char* config_unit(const std::string& key) {
  static const std::map<std::string, const char*, std::less<>> units = {
      {"AcctGatherNodeFreq", "sec"}, {"BatchStartTimeout", "sec"},  {"CompleteWait", "sec"},
      {"EpilogMsgTime", "usec"},     {"ExtSensorsFreq", "sec"},     {"GetEnvTimeout", "sec"},
      {"GroupUpdateTime", "sec"},    {"HealthCheckInterval", "sec"}, {"InactiveLimit", "sec"},
      {"KillWait", "sec"},           {"MessageTimeout", "sec"},     {"MinJobAge", "sec"},
      {"OverTimeLimit", "min"},      {"ResumeRate", "nodes/min"},   {"ResumeTimeout", "sec"},
      {"ResvOverRun", "min"},        {"SchedulerTimeSlice", "sec"}, {"SlurmctldTimeout", "sec"},
      {"SlurmdTimeout", "sec"},      {"SuspendRate", "nodes/min"},  {"SuspendTimeout", "sec"},
      {"TCPTimeout", "sec"},         {"UnkillableStepTimeout", "sec"}, {"WaitTime", "sec"},
  };
  auto it = units.find(key);
  return it == units.end() ? nullptr : it->second;
}

// A value as Slurm shows it: a plain number of a key with a unit gets the unit.
std::string config_value(const std::string& key, const std::string& value) {
  // Slurm 22.05 printed an unset PriorityFlags as nothing, others as (null).
  if (value.empty()) return key == "PriorityFlags" ? "" : "(null)";
  const char* unit = config_unit(key);
  if (!unit || !std::all_of(value.begin(), value.end(), [](unsigned char ch) { return std::isdigit(ch); })) {
    return value;
  }
  return value + " " + unit;
}

}  // namespace

// Values as Slurm 22.05's scontrol show config printed them for the same
// slurm.conf (anchor cluster): SchedulerParameters and PriorityWeightTRES as
// written, else (null); Yes/No; CR_ flags in capitals; of MaxMemPerCPU and
// MaxMemPerNode (DefMem* alike) the one set, else MaxMemPerNode UNLIMITED;
// the default TRES before the ones AccountingStorageTRES adds; SlurmUser
// with its uid; PriorityWeightFairShare so spelled.
void ControllerState::slurm_presentation(std::vector<std::pair<std::string, std::string>>& rows) const {
  auto written = [&](const std::string& key) {
    auto it = cfg_.globals_written.find(key);
    return it == cfg_.globals_written.end() ? std::string() : it->second.first;
  };
  auto value_of = [&](const std::string& key) -> std::string* {
    for (auto& [k, v] : rows)
      if (k == key) return &v;
    return nullptr;
  };
  auto drop = [&](const std::string& key) {
    std::erase_if(rows, [&](const auto& kv) { return kv.first == key; });
  };
  for (const char* key : {"SchedulerParameters", "PriorityWeightTRES"}) {
    if (std::string* v = value_of(key)) *v = written(key);
  }
  for (const char* key : {"DisableRootJobs", "PriorityFavorSmall"}) {
    std::string* v = value_of(key);
    if (!v) continue;
    const std::string low = to_lower(*v);
    if (low == "yes" || low == "true" || low == "1") *v = "Yes";
    if (low == "no" || low == "false" || low == "0") *v = "No";
  }
  if (std::string* v = value_of("SelectTypeParameters")) *v = to_upper(*v);
  for (const auto& [per_cpu, per_node] : {std::pair<std::string, std::string>{"MaxMemPerCPU", "MaxMemPerNode"},
                                          {"DefMemPerCPU", "DefMemPerNode"}}) {
    std::string* cpu = value_of(per_cpu);
    if (cpu && !cpu->empty()) {
      drop(per_node);
      continue;
    }
    drop(per_cpu);
    std::string* node = value_of(per_node);
    if (node && node->empty()) *node = "UNLIMITED";
  }
  for (const char* key : {"DefCpuPerGPU", "DefMemPerGPU"}) {
    const std::string* v = value_of(key);
    if (v && v->empty()) drop(key);
  }
  if (std::string* v = value_of("AccountingStorageTRES")) {
    std::vector<std::string> tres = plain_tres_names();
    std::vector<std::string> added;
    for (const auto& t : split(*v, ','))
      if (!t.empty() && std::find(tres.begin(), tres.end(), t) == tres.end()) added.push_back(t);
    std::sort(added.begin(), added.end());
    added.erase(std::unique(added.begin(), added.end()), added.end());
    tres.insert(tres.end(), added.begin(), added.end());
    *v = join(tres, ",");
  }
  if (std::string* v = value_of("SlurmUser")) {
    if (auto u = user_by_name(v->empty() ? std::string("root") : *v)) *v = fmt::format("{}({})", u->name, u->uid);
  }
  for (auto& [k, v] : rows)
    if (k == "PriorityWeightFairshare") k = "PriorityWeightFairShare";
}

std::vector<v1::ConfigEntry> ControllerState::config_entries() const {
  std::vector<std::pair<std::string, std::string>> rows;
  std::set<std::string> seen;
  // The log detail in force (scontrol setdebug/setdebugflags), not only slurm.conf's.
  rows.emplace_back("SlurmctldDebug", std::string(config::debug_level_name(settings_.log_level)));
  rows.emplace_back("DebugFlags", config::debug_flags_text(settings_.debug_flags));
  seen.insert({"SlurmctldDebug", "DebugFlags"});
  for (const auto& def : config::global_keys().keys()) {
    rows.emplace_back(def.name, def.show(cfg_));
    seen.insert(def.name);
  }
  for (const auto& [k, v] : cfg_.passive_values) {
    if (seen.insert(k).second) rows.emplace_back(k, v);
  }
  // Keys the daemons act on with a default: shown when slurm.conf leaves them out too, as Slurm shows them.
  for (const auto& [k, v] : {std::pair<std::string, std::string>{"MailProg", settings_.mail_prog},
                             {"MailDomain", settings_.mail_domain},
                             {"Prolog", ""},
                             {"Epilog", ""},
                             {"PrologEpilogTimeout", "65534"},
                             {"PrologFlags", ""},
                             {"HealthCheckProgram", ""},
                             {"HealthCheckInterval", "0"},
                             {"HealthCheckNodeState", "ANY"},
                             {"InactiveLimit", "0"},
                             {"TaskProlog", ""},
                             {"TaskEpilog", ""}}) {
    if (seen.insert(k).second) rows.emplace_back(k, v);
  }
  slurm_presentation(rows);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return to_lower(a.first) < to_lower(b.first); });
  std::vector<v1::ConfigEntry> out;
  for (const auto& [k, v] : rows) {
    v1::ConfigEntry e;
    e.set_key(k);
    e.set_value(config_value(k, v));
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<v1::License> ControllerState::licenses() const {
  std::vector<v1::License> out;
  for (const auto& [name, total] : cfg_.licenses) {
    v1::License l;
    l.set_name(name);
    l.set_total(total);
    const std::string tres = "license/" + name;
    for (core::JobId id : active_) {
      const Job& j = jobs_.at(id);
      if (!holds_resources(j)) continue;
      auto it = j.spec.licenses.find(tres);
      if (it != j.spec.licenses.end()) l.set_used(l.used() + it->second);
    }
    out.push_back(std::move(l));
  }
  return out;
}

namespace {

int64_t rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return parse_int(trim(line.substr(6, line.size() - 9))).value_or(0);
  }
  return 0;
}

}  // namespace

v1::StatusReply ControllerState::status(int64_t now) const {
  v1::StatusReply s;
  s.set_cluster(settings_.cluster_name);
  s.set_host(settings_.shown_host);
  s.set_start_time(start_time_);
  s.set_now(now);
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    if (is_pending(j)) s.set_jobs_pending(s.jobs_pending() + 1);
    if (j.rec.state() == v1::RUNNING) s.set_jobs_running(s.jobs_running() + 1);
  }
  s.set_jobs_remembered(static_cast<int64_t>(jobs_.size()));
  s.set_cycles_quick(counters_.cycles_quick);
  s.set_cycles_full(counters_.cycles_full);
  s.set_last_cycle_us(counters_.last_cycle_us);
  s.set_max_cycle_us(counters_.max_cycle_us);
  s.set_total_cycle_us(counters_.total_cycle_us);
  s.set_jobs_submitted(counters_.submitted);
  s.set_jobs_started(counters_.started);
  s.set_jobs_completed(counters_.completed);
  int64_t responding = 0;
  for (const auto& n : nodes_) responding += n.responding;
  s.set_nodes_responding(responding);
  s.set_nodes_total(static_cast<int64_t>(nodes_.size()));
  s.set_next_job_id(next_job_id_);
  s.set_rss_kb(rss_kb());
  return s;
}

namespace {

void fill_pass(const PassCounters& c, v1::PassStats& p) {
  p.set_cycles(c.cycles);
  p.set_last_us(c.last_us);
  p.set_max_us(c.max_us);
  p.set_total_us(c.total_us);
  p.set_last_depth(c.last_depth);
  p.set_total_depth(c.total_depth);
  p.set_last_queue(c.last_queue);
  p.set_total_queue(c.total_queue);
  p.set_last_when(c.last_when);
  p.set_started(c.started);
  p.set_backfilled(c.backfilled);
  p.set_last_planned(c.last_planned);
  p.set_last_reserved(c.last_reserved);
}

int64_t thread_count() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::stoll(line.substr(8));
  }
  return 0;
}

}  // namespace

v1::DiagReply ControllerState::diag(int64_t now) const {
  v1::StatusReply st = status(now);
  v1::DiagReply d;
  d.set_now(now);
  d.set_since(stats_since_ ? stats_since_ : start_time_);
  d.set_server_threads(thread_count());
  d.set_jobs_submitted(counters_.submitted);
  d.set_jobs_started(counters_.started);
  d.set_jobs_completed(counters_.completed_ok);
  d.set_jobs_canceled(counters_.canceled);
  d.set_jobs_failed(counters_.failed);
  d.set_jobs_pending(st.jobs_pending());
  d.set_jobs_running(st.jobs_running());
  fill_pass(counters_.quick, *d.mutable_main());
  fill_pass(counters_.full, *d.mutable_backfill());
  d.set_jobs_in_memory(st.jobs_remembered());
  d.set_nodes_responding(st.nodes_responding());
  d.set_nodes_total(st.nodes_total());
  d.set_rss_kb(st.rss_kb());
  return d;
}

}  // namespace drover::ctld
