// INTERIM (see interim_core.hpp): core::Cluster from the configuration,
// without calling core::Cluster's own member functions (not linked yet).
#include <algorithm>
#include <cctype>

#include "common/strings.hpp"
#include "ctld/interim_core.hpp"

namespace drover::ctld::interim {
namespace {

// "/dev/nvidia3" -> 3; -1 without trailing digits.
int32_t trailing_number(const std::string& path) {
  std::size_t end = path.size(), start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(path[start - 1]))) --start;
  if (start == end) return -1;
  return static_cast<int32_t>(std::stol(path.substr(start)));
}

// Device ids and close cores of one pool from the gres.conf lines naming the node.
void add_devices(const config::ClusterConfig& cfg, const std::string& node, core::GresPool& pool) {
  for (const auto& line : cfg.gres_lines) {
    if (line.name != pool.name || (!pool.type.empty() && !line.type.empty() && line.type != pool.type)) continue;
    if (!line.nodes.empty() && std::find(line.nodes.begin(), line.nodes.end(), node) == line.nodes.end()) continue;
    for (const auto& f : line.files) {
      if (static_cast<int32_t>(pool.device_ids.size()) >= pool.count) break;
      int32_t minor = trailing_number(f);
      pool.device_ids.push_back(minor >= 0 ? minor : static_cast<int32_t>(pool.device_ids.size()));
      pool.close_cores.emplace_back(line.cores.begin(), line.cores.end());
    }
  }
  // Without File= lines a GPU pool still gets device indexes 0..count-1
  // (emulated and Count= GPUs), so that jobs are given distinct GPUs.
  if (pool.name == "gpu" && pool.device_ids.empty()) {
    for (int32_t i = 0; i < pool.count; ++i) pool.device_ids.push_back(i);
    pool.close_cores.resize(pool.count);
  }
}

core::NodeSpec node_spec(const config::ClusterConfig& cfg, const config::NodeConfig& n) {
  core::NodeSpec s;
  s.name = n.name;
  s.sockets = n.sockets * std::max(1, n.boards);
  s.cores_per_socket = n.cores_per_socket;
  s.threads_per_core = n.threads_per_core;
  s.cpus = n.cpus;
  s.mem_mb = n.real_memory_mb;
  s.weight = n.weight;
  s.features = n.features;
  std::sort(s.features.begin(), s.features.end());
  s.features.erase(std::unique(s.features.begin(), s.features.end()), s.features.end());
  for (const auto& g : n.gres) {
    core::GresPool pool;
    pool.name = g.name;
    pool.type = g.type;
    pool.count = static_cast<int32_t>(g.count);
    pool.no_consume = g.no_consume;
    add_devices(cfg, n.name, pool);
    s.gres.push_back(std::move(pool));
  }
  return s;
}

core::PartitionState partition_state(const std::string& s) {
  if (s == "DOWN") return core::PartitionState::kDown;
  if (s == "DRAIN") return core::PartitionState::kDrain;
  if (s == "INACTIVE") return core::PartitionState::kInactive;
  return core::PartitionState::kUp;
}

core::PartitionSpec partition_spec(const config::PartitionConfig& p, const std::map<std::string, int32_t>& index) {
  core::PartitionSpec s;
  s.name = p.name;
  for (const auto& n : p.nodes) {
    auto it = index.find(n);
    if (it != index.end()) s.nodes.push_back(it->second);
  }
  s.is_default = p.is_default;
  s.max_time = p.max_time;
  s.default_time = p.default_time;
  s.max_nodes = p.max_nodes;
  s.min_nodes = p.min_nodes;
  s.state = partition_state(p.state);
  s.priority_tier = p.priority_tier;
  s.priority_job_factor = p.priority_job_factor;
  s.exclusive = to_upper(p.oversubscribe) == "EXCLUSIVE";
  s.exclusive_user = p.exclusive_user;
  s.qos = p.qos;
  s.allow_qos = p.allow_qos;
  s.deny_qos = p.deny_qos;
  s.allow_accounts = p.allow_accounts;
  s.deny_accounts = p.deny_accounts;
  s.def_mem_per_cpu_mb = p.def_mem_per_cpu_mb;
  s.def_mem_per_gpu_mb = p.def_mem_per_gpu_mb;
  s.def_mem_per_node_mb = p.def_mem_per_node_mb;
  s.max_mem_per_cpu_mb = p.max_mem_per_cpu_mb;
  s.max_mem_per_node_mb = p.max_mem_per_node_mb;
  s.def_cpu_per_gpu = p.def_cpu_per_gpu;
  s.max_cpus_per_node = p.max_cpus_per_node;
  return s;
}

core::QosSpec qos_spec(const config::QosConfig& q) {
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
  return s;
}

void fill_sched(const config::ClusterConfig& cfg, core::Cluster& c) {
  c.sched.policy = cfg.scheduler_type == "sched/builtin" ? core::QueuePolicy::kFcfs : core::QueuePolicy::kBackfill;
  c.sched.bf_interval = cfg.sched.bf_interval;
  c.sched.bf_resolution = cfg.sched.bf_resolution;
  c.sched.bf_window = cfg.sched.bf_window_minutes * 60;
  c.sched.bf_max_job_test = cfg.sched.bf_max_job_test;
  c.sched.bf_reserve_depth = cfg.sched.bf_reserve_depth;
  c.sched.default_queue_depth = cfg.sched.default_queue_depth;
  c.sched.enforce_part_limits = cfg.enforce_part_limits != "NO";
  c.priority.kind = cfg.priority_type == "priority/multifactor" ? core::PriorityKind::kMultifactor
                                                                 : core::PriorityKind::kBasic;
  c.priority.weight_age = cfg.priority_weight_age;
  c.priority.weight_fairshare = cfg.priority_weight_fairshare;
  c.priority.weight_job_size = cfg.priority_weight_job_size;
  c.priority.weight_partition = cfg.priority_weight_partition;
  c.priority.weight_qos = cfg.priority_weight_qos;
  c.priority.weight_tres = cfg.priority_weight_tres;
  c.priority.max_age = cfg.priority_max_age;
  c.priority.decay_half_life = cfg.priority_decay_half_life;
  c.priority.favor_small = cfg.priority_favor_small;
}

}  // namespace

Result<core::Cluster> build_cluster(const config::ClusterConfig& cfg) {
  core::Cluster c;
  c.name = cfg.cluster_name;
  std::map<std::string, int32_t> index;
  for (const auto& n : cfg.nodes) {
    if (n.cpus < 1 || n.cores_per_socket < 1 || n.sockets < 1) {
      return make_error("node " + n.name + " has no cores (" + n.loc.str() + ")");
    }
    index[n.name] = static_cast<int32_t>(c.nodes.size());
    c.nodes.push_back(node_spec(cfg, n));
  }
  for (const auto& p : cfg.partitions) c.partitions.push_back(partition_spec(p, index));
  for (int32_t pi = 0; pi < static_cast<int32_t>(c.partitions.size()); ++pi) {
    for (auto ni : c.partitions[pi].nodes) c.nodes[ni].partitions.push_back(pi);
  }
  for (const auto& q : cfg.qos) c.qos.push_back(qos_spec(q));
  fill_sched(cfg, c);
  c.def_mem_per_cpu_mb = cfg.def_mem_per_cpu_mb;
  c.def_mem_per_gpu_mb = cfg.def_mem_per_gpu_mb;
  c.def_mem_per_node_mb = cfg.def_mem_per_node_mb;
  c.max_mem_per_cpu_mb = cfg.max_mem_per_cpu_mb;
  c.max_mem_per_node_mb = cfg.max_mem_per_node_mb;
  return c;
}

}  // namespace drover::ctld::interim

namespace drover::ctld::interim {

std::string reason_name(core::Reason r) {
  using R = core::Reason;
  static const std::pair<R, const char*> kNames[] = {
      {R::kNone, "None"},
      {R::kPriority, "Priority"},
      {R::kResources, "Resources"},
      {R::kDependency, "Dependency"},
      {R::kDependencyNeverSatisfied, "DependencyNeverSatisfied"},
      {R::kBeginTime, "BeginTime"},
      {R::kJobHeldUser, "JobHeldUser"},
      {R::kJobHeldAdmin, "JobHeldAdmin"},
      {R::kPartitionTimeLimit, "PartitionTimeLimit"},
      {R::kPartitionNodeLimit, "PartitionNodeLimit"},
      {R::kPartitionDown, "PartitionDown"},
      {R::kPartitionInactive, "PartitionInactive"},
      {R::kReqNodeNotAvail, "ReqNodeNotAvail"},
      {R::kBadConstraints, "BadConstraints"},
      {R::kJobArrayTaskLimit, "JobArrayTaskLimit"},
      {R::kLicenses, "Licenses"},
      {R::kQosGrpCpuLimit, "QOSGrpCpuLimit"},
      {R::kQosGrpMemLimit, "QOSGrpMemLimit"},
      {R::kQosGrpNodeLimit, "QOSGrpNodeLimit"},
      {R::kQosGrpGres, "QOSGrpGRES"},
      {R::kQosGrpLicense, "QOSGrpLicense"},
      {R::kQosGrpJobsLimit, "QOSGrpJobsLimit"},
      {R::kQosMaxWallDurationPerJobLimit, "QOSMaxWallDurationPerJobLimit"},
      {R::kQosMaxCpuPerJobLimit, "QOSMaxCpuPerJobLimit"},
      {R::kQosMaxMemoryPerJob, "QOSMaxMemoryPerJob"},
      {R::kQosMaxNodePerJobLimit, "QOSMaxNodePerJobLimit"},
      {R::kQosMaxGresPerJob, "QOSMaxGRESPerJob"},
      {R::kQosMaxCpuPerNode, "QOSMaxCpuPerNode"},
      {R::kQosMaxMemoryPerNode, "QOSMaxMemoryPerNode"},
      {R::kQosMaxGresPerNode, "QOSMaxGRESPerNode"},
      {R::kQosMaxCpuPerUserLimit, "QOSMaxCpuPerUserLimit"},
      {R::kQosMaxMemoryPerUser, "QOSMaxMemoryPerUser"},
      {R::kQosMaxNodePerUserLimit, "QOSMaxNodePerUserLimit"},
      {R::kQosMaxGresPerUser, "QOSMaxGRESPerUser"},
      {R::kQosMaxJobsPerUserLimit, "QOSMaxJobsPerUserLimit"},
      {R::kInvalidQos, "InvalidQOS"},
      {R::kInvalidAccount, "InvalidAccount"},
  };
  for (const auto& [k, n] : kNames) {
    if (k == r) return n;
  }
  return "None";
}

}  // namespace drover::ctld::interim
