#include "config/core_cluster.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/hostlist.hpp"
#include "common/strings.hpp"

namespace drover::config {

namespace {

// The minor number of a device file: /dev/nvidia3 -> 3; -1 when none.
int32_t device_minor(const std::string& path) {
  size_t end = path.size(), start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(path[start - 1]))) --start;
  if (start == end || end - start > 9) return -1;
  return static_cast<int32_t>(std::stol(path.substr(start)));
}

// Devices and close cores for one pool of a node, from the gres.conf lines
// naming the node. Without gres.conf devices a GPU pool gets devices
// 0..count-1 (autodetected or emulated GPUs), split evenly over the sockets
// for closeness, as on common two-socket GPU servers.
void fill_devices(const ClusterConfig& cfg, const NodeConfig& n, core::GresPool& pool, int32_t first_default) {
  for (const GresLine& g : cfg.gres_lines) {
    if (g.name != pool.name || g.files.empty()) continue;
    if (!g.type.empty() && !pool.type.empty() && g.type != pool.type) continue;
    if (!g.node_expr.empty() && std::find(g.nodes.begin(), g.nodes.end(), n.name) == g.nodes.end()) continue;
    for (const std::string& f : g.files) {
      if (static_cast<int32_t>(pool.device_ids.size()) >= pool.count) break;
      int32_t minor = device_minor(f);
      pool.device_ids.push_back(minor >= 0 ? minor : static_cast<int32_t>(pool.device_ids.size()));
      pool.close_cores.push_back(g.cores);
    }
  }
  if (!pool.device_ids.empty() || pool.name != "gpu") return;
  int32_t sockets = std::max(1, n.sockets * std::max(1, n.boards));
  int32_t per = std::max(1, n.cores_per_socket);
  for (int32_t i = 0; i < pool.count; ++i) {
    pool.device_ids.push_back(first_default + i);
    int32_t s = static_cast<int32_t>(static_cast<int64_t>(i) * sockets / std::max(1, pool.count));
    std::vector<int32_t> cores;
    for (int32_t c = s * per; c < (s + 1) * per; ++c) cores.push_back(c);
    pool.close_cores.push_back(std::move(cores));
  }
}

core::NodeSpec node_spec(const ClusterConfig& cfg, const NodeConfig& n) {
  core::NodeSpec s;
  s.name = n.name;
  s.sockets = std::max(1, n.sockets * std::max(1, n.boards));
  s.cores_per_socket = std::max(1, n.cores_per_socket);
  s.threads_per_core = std::max(1, n.threads_per_core);
  s.cpus = std::max(1, n.cpus);
  // CPUs= alone (no socket layout): every CPU is a core of one socket.
  if (s.sockets * s.cores_per_socket * s.threads_per_core != s.cpus) {
    if (s.sockets * s.cores_per_socket * s.threads_per_core < s.cpus || s.sockets * s.cores_per_socket == 1) {
      s.sockets = 1;
      s.cores_per_socket = s.cpus / s.threads_per_core;
    }
  }
  s.mem_mb = std::max<int64_t>(1, n.real_memory_mb - n.mem_spec_limit_mb.value_or(0));
  s.weight = n.weight;
  s.tmp_disk_mb = n.tmp_disk_mb;
  s.features = n.active_features.value_or(n.features);
  int32_t next_gpu = 0;
  for (const GresSpec& g : n.gres) {
    core::GresPool p;
    p.name = g.name;
    p.type = g.type;
    p.count = static_cast<int32_t>(std::min<int64_t>(g.count, INT32_MAX));
    p.no_consume = g.no_consume;
    fill_devices(cfg, n, p, next_gpu);
    if (p.name == "gpu") next_gpu += p.count;
    s.gres.push_back(std::move(p));
  }
  return s;
}

core::PartitionState partition_state(const std::string& s) {
  std::string u = to_upper(s);
  if (u == "DOWN") return core::PartitionState::kDown;
  if (u == "DRAIN") return core::PartitionState::kDrain;
  if (u == "INACTIVE") return core::PartitionState::kInactive;
  return core::PartitionState::kUp;
}

core::PartitionSpec partition_spec(const PartitionConfig& p, const core::Cluster& c, int64_t over_time_min) {
  core::PartitionSpec s;
  s.name = p.name;
  for (const std::string& n : p.nodes) {
    core::NodeIndex i = c.find_node(n);
    if (i >= 0 && std::find(s.nodes.begin(), s.nodes.end(), i) == s.nodes.end()) s.nodes.push_back(i);
  }
  s.is_default = p.is_default;
  s.max_time = p.max_time;
  s.default_time = p.default_time;
  s.max_nodes = p.max_nodes;
  s.min_nodes = p.min_nodes;
  s.state = partition_state(p.state);
  s.priority_tier = p.priority_tier;
  s.priority_job_factor = p.priority_job_factor;
  s.billing_weights = p.tres_billing;
  s.preempt_mode = preempt_mode_value(p.preempt_mode);
  s.grace_time = p.grace_time;
  const int64_t over = p.over_time_limit.value_or(over_time_min);
  s.over_time = over == kUnlimited ? kInfinite : over * 60;
  s.exclusive = istarts_with(p.oversubscribe, "EXCLUSIVE");
  s.exclusive_user = p.exclusive_user;
  s.qos = p.qos;
  s.allow_qos = p.allow_qos;
  s.deny_qos = p.deny_qos;
  s.allow_accounts = p.allow_accounts;
  s.deny_accounts = p.deny_accounts;
  s.allow_groups = p.allow_groups;
  s.root_only = p.root_only;
  s.disable_root_jobs = p.disable_root_jobs;
  if (!p.alloc_nodes.empty()) {
    auto hosts = hostlist_expand(p.alloc_nodes);  // checked as the key was read
    if (hosts) s.alloc_nodes = std::move(*hosts);
  }
  s.def_mem_per_cpu_mb = p.def_mem_per_cpu_mb;
  s.def_mem_per_gpu_mb = p.def_mem_per_gpu_mb;
  s.def_mem_per_node_mb = p.def_mem_per_node_mb;
  s.max_mem_per_cpu_mb = p.max_mem_per_cpu_mb;
  s.max_mem_per_node_mb = p.max_mem_per_node_mb;
  s.def_cpu_per_gpu = p.def_cpu_per_gpu;
  s.max_cpus_per_node = p.max_cpus_per_node;
  return s;
}

core::PreemptType preempt_type(const std::string& t) {
  if (iequals(t, "preempt/qos")) return core::PreemptType::kQos;
  if (iequals(t, "preempt/partition_prio")) return core::PreemptType::kPartitionPrio;
  return core::PreemptType::kNone;
}

core::QosSpec qos_spec(const QosConfig& q) {
  core::QosSpec s;
  s.name = q.name;
  s.priority = q.priority;
  s.grp_tres = q.grp_tres;
  s.grp_jobs = q.grp_jobs;
  s.grp_submit_jobs = q.grp_submit_jobs;
  s.max_tres_per_job = q.max_tres_per_job;
  s.max_tres_per_node = q.max_tres_per_node;
  s.max_tres_per_user = q.max_tres_per_user;
  s.max_jobs_per_user = q.max_jobs_per_user;
  s.max_submit_jobs_per_user = q.max_submit_jobs_per_user;
  s.max_wall = q.max_wall;
  s.usage_factor = q.usage_factor;
  s.deny_on_limit = q.deny_on_limit;
  s.no_reserve = q.no_reserve;
  s.preempt = q.preempt;
  s.preempt_mode = preempt_mode_value(q.preempt_mode);
  s.preempt_exempt_time = q.preempt_exempt_time;
  s.grace_time = q.grace_time;
  return s;
}

core::SchedParams sched_params(const ClusterConfig& cfg) {
  core::SchedParams s;
  s.policy = iequals(cfg.scheduler_type, "sched/builtin") ? core::QueuePolicy::kFcfs : core::QueuePolicy::kBackfill;
  s.bf_window = cfg.sched.bf_window_minutes * 60;
  s.bf_resolution = cfg.sched.bf_resolution;
  s.bf_max_job_test = cfg.sched.bf_max_job_test;
  s.bf_reserve_depth = cfg.sched.bf_reserve_depth;
  s.bf_interval = cfg.sched.bf_interval;
  s.default_queue_depth = cfg.sched.default_queue_depth;
  s.enforce_part_limits = !iequals(cfg.enforce_part_limits, "NO");
  return s;
}

core::PriorityParams priority_params(const ClusterConfig& cfg) {
  core::PriorityParams p;
  p.kind = iequals(cfg.priority_type, "priority/multifactor") ? core::PriorityKind::kMultifactor
                                                                : core::PriorityKind::kBasic;
  p.weight_age = cfg.priority_weight_age;
  p.weight_fairshare = cfg.priority_weight_fairshare;
  p.weight_job_size = cfg.priority_weight_job_size;
  p.weight_partition = cfg.priority_weight_partition;
  p.weight_qos = cfg.priority_weight_qos;
  p.weight_tres = cfg.priority_weight_tres;
  p.max_age = cfg.priority_max_age;
  p.decay_half_life = cfg.priority_decay_half_life;
  p.favor_small = cfg.priority_favor_small;
  for (const std::string& f : cfg.priority_flags) {
    const bool all = f == "NO_NORMAL_ALL";
    p.raw_partition |= all || f == "NO_NORMAL_PART";
    p.raw_qos |= all || f == "NO_NORMAL_QOS";
    p.raw_tres |= all || f == "NO_NORMAL_TRES";
    p.size_relative_to_time |= f == "SMALL_RELATIVE_TO_TIME";
    p.accrue_always |= f == "ACCRUE_ALWAYS";
    p.incr_only |= f == "INCR_ONLY";
    p.max_tres |= f == "MAX_TRES";
  }
  return p;
}

}  // namespace

core::QosSpec core_qos(const QosConfig& q) { return qos_spec(q); }

core::PreemptMode preempt_mode_value(std::string_view written) {
  // The mode that ends a job; GANG (time slicing) and WITHIN only qualify it.
  bool gang = false;
  for (const auto& m : split(written, ',')) {
    if (iequals(m, "OFF")) return core::PreemptMode::kOff;
    if (iequals(m, "CANCEL")) return core::PreemptMode::kCancel;
    if (iequals(m, "REQUEUE")) return core::PreemptMode::kRequeue;
    if (iequals(m, "SUSPEND")) return core::PreemptMode::kSuspend;
    gang = gang || iequals(m, "GANG");
  }
  return gang ? core::PreemptMode::kGang : core::PreemptMode::kCluster;
}

Result<core::Cluster> build_core_cluster(const ClusterConfig& cfg) {
  core::Cluster c;
  c.name = cfg.cluster_name;
  std::set<std::string> seen;
  for (const NodeConfig& n : cfg.nodes) {
    if (n.cpus <= 0) return make_error("node " + n.name + " has no CPUs (CPUs=" + std::to_string(n.cpus) + ")");
    if (!seen.insert(n.name).second) continue;  // defined twice: the doctor reports it; the first wins
    c.nodes.push_back(node_spec(cfg, n));
  }
  c.finalize();
  for (const PartitionConfig& p : cfg.partitions) c.partitions.push_back(partition_spec(p, c, cfg.over_time_limit));
  for (const QosConfig& q : cfg.qos) c.qos.push_back(qos_spec(q));
  c.priority = priority_params(cfg);
  c.sched = sched_params(cfg);
  c.preempt.type = preempt_type(cfg.preempt_type);
  c.preempt.mode = preempt_mode_value(cfg.preempt_mode);
  if (c.preempt.mode == core::PreemptMode::kCluster) c.preempt.mode = core::PreemptMode::kOff;
  c.preempt.exempt_time = cfg.preempt_exempt_time;
  c.def_cpu_per_gpu = cfg.def_cpu_per_gpu;
  c.def_mem_per_cpu_mb = cfg.def_mem_per_cpu_mb;
  c.def_mem_per_gpu_mb = cfg.def_mem_per_gpu_mb;
  c.def_mem_per_node_mb = cfg.def_mem_per_node_mb;
  c.max_mem_per_cpu_mb = cfg.max_mem_per_cpu_mb;
  c.max_mem_per_node_mb = cfg.max_mem_per_node_mb;
  for (const auto& [name, count] : cfg.licenses) c.licenses["license/" + name] = count;
  c.finalize();
  return c;
}

}  // namespace drover::config
