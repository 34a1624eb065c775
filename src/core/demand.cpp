#include "core/demand.hpp"

#include <algorithm>
#include <set>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "common/units.hpp"

namespace drover::core {

TresList::TresList(std::vector<value_type> items) {
  std::sort(items.begin(), items.end());
  for (auto& [name, v] : items) {
    if (!v_.empty() && v_.back().first == name) {
      v_.back().second += v;
    } else {
      v_.emplace_back(std::move(name), v);
    }
  }
}

namespace {

constexpr const char* kNodeConfigUnavailable = "Requested node configuration is not available";

int32_t ceil_div(int64_t a, int64_t b) { return static_cast<int32_t>((a + b - 1) / b); }

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Refusal refuse(std::string error, std::string drover_line, std::vector<std::string> details = {}) {
  return Refusal{std::move(details), std::move(error), std::move(drover_line)};
}

// The QOS a job runs under: the one it names, else "normal" when defined.
Result<int32_t, Refusal> resolve_qos(const Cluster& c, const JobSpec& job, const PartitionSpec& part) {
  if (auto unknown = unknown_qos(c, job)) return *unknown;
  std::string name = job.qos.empty() ? "normal" : job.qos;
  int32_t q = c.find_qos(name);
  if (q >= 0) {
    bool allowed = part.allow_qos.empty() || contains(part.allow_qos, "ALL") || contains(part.allow_qos, name);
    if (!allowed || contains(part.deny_qos, name)) {
      return refuse("Invalid qos specification",
                    "drover: partition " + part.name + " does not accept QOS " + name);
    }
  }
  return q;
}

Seconds resolve_time_limit(const Cluster& c, const JobSpec& job, const PartitionSpec& part, int32_t qos,
                           int32_t assoc) {
  if (job.time_limit == 0) return kInfinite;  // --time=0: no limit
  if (job.time_limit > 0) return job.time_limit;
  Seconds t = part.default_time.value_or(part.max_time);
  // An unset limit is capped by the QOS MaxWall and the association's
  // (its own or the nearest account's), as Slurm's accounting policy does.
  if (qos >= 0 && c.qos[qos].max_wall < t) t = c.qos[qos].max_wall;
  if (assoc >= 0) t = std::min(t, c.assocs[assoc].in_force.max_wall);
  return t;
}

// One feature expression's alternatives (-C, or --prefer with its own line).
Result<std::vector<Constraint>, Refusal> resolve_features(const Cluster& c, const std::string& text,
                                                          const char* slurm_line, const char* option) {
  auto parsed = Constraint::parse(text);
  if (!parsed) return refuse(slurm_line, "drover: " + parsed.error().message);
  if (!parsed->counts().empty()) {
    return refuse(slurm_line, std::string("drover: node counts in ") + option + " (\"" +
                                  parsed->counts().front().feature + "*" +
                                  std::to_string(parsed->counts().front().count) +
                                  "\") are not supported yet; ask for the feature on every node instead");
  }
  for (const std::string& f : parsed->features()) {
    bool known = std::any_of(c.groups.begin(), c.groups.end(),
                             [&](const NodeGroup& g) { return c.nodes[g.members.front()].has_feature(f); });
    if (!known) return refuse(slurm_line, "drover: no node in the cluster has the feature \"" + f + "\"");
  }
  return parsed->alternatives();
}

// The job's feature alternatives, in the order the scheduler tries them:
// --prefer's first (in place of -C, as Slurm 22.05 takes it), then -C's.
std::optional<Refusal> resolve_constraint(const Cluster& c, const JobSpec& job, Demand& d) {
  auto alts = resolve_features(c, job.constraint, "Invalid feature specification", "--constraint");
  if (!alts) return alts.error();
  d.alternatives.clear();
  if (!job.prefer.empty()) {
    auto preferred = resolve_features(c, job.prefer, "Invalid preferred feature specification", "--prefer");
    if (!preferred) return preferred.error();
    d.alternatives = std::move(preferred).value();
  }
  d.preferred = static_cast<int32_t>(d.alternatives.size());
  for (auto& a : *alts) d.alternatives.push_back(std::move(a));
  return std::nullopt;
}

// Largest GPU count of the given type on one of the partition's nodes.
int32_t max_gpus_per_node(const Cluster& c, const PartitionSpec& part, const std::string& type) {
  int32_t best = 0;
  for (const NodeGroup& grp : c.groups) {
    const NodeSpec& node = c.nodes[grp.members.front()];
    if (!std::binary_search(node.partitions.begin(), node.partitions.end(), c.find_partition(part.name))) continue;
    int32_t g = 0;
    for (const GresPool& p : node.gres) {
      if (p.name == "gpu" && (type.empty() || p.type == type)) g += p.count;
    }
    best = std::max(best, g);
  }
  return best;
}

void resolve_shape(const Cluster& c, const JobSpec& job, const PartitionSpec& part, Demand& d) {
  d.cpus_per_task = std::max(1, job.cpus_per_task);
  d.min_cpus_per_node = job.min_cpus_per_node;
  d.min_tmp_disk_mb = job.min_tmp_disk_mb;
  d.sockets = job.sockets_per_node;
  d.cores_per_socket = job.cores_per_socket;
  d.threads_per_core = job.threads_per_core;
  d.tasks_per_socket = job.ntasks_per_socket;
  d.tasks_per_core = job.ntasks_per_core;
  int32_t min_nodes = job.min_nodes;
  int32_t max_nodes = std::max(job.max_nodes, job.min_nodes);
  if (!d.required.empty() && static_cast<int32_t>(d.required.size()) > min_nodes) {
    min_nodes = static_cast<int32_t>(d.required.size());  // -w a,b implies at least two nodes
    max_nodes = std::max(max_nodes, min_nodes);
  }
  // --gpus=N for the whole job: as few nodes as hold them, evenly spread.
  if (job.gpus.count > 0) {
    int32_t per_node_max = std::max(1, max_gpus_per_node(c, part, job.gpus.type));
    int32_t nodes = std::max(min_nodes, ceil_div(job.gpus.count, per_node_max));
    min_nodes = nodes;
    max_nodes = std::max(max_nodes, nodes);
    d.gres.push_back({"gpu", job.gpus.type, ceil_div(job.gpus.count, nodes)});
    if (nodes > 1) {
      d.gpus_total = job.gpus.count;
      d.gpus_index = static_cast<int32_t>(d.gres.size()) - 1;
    }
  }
  if (min_nodes <= 0) min_nodes = 1;
  if (max_nodes < min_nodes) max_nodes = min_nodes;

  if (job.ntasks_per_node > 0) {
    d.tasks_per_node = job.ntasks_per_node;
    // Each node gives room for --ntasks-per-node tasks, also when -n asks
    // fewer (Slurm's pn_min_cpus: `-n 2 --ntasks-per-node=4` takes 4 CPUs).
    d.min_cpus_per_node = std::max(d.min_cpus_per_node, job.ntasks_per_node * d.cpus_per_task);
    if (job.ntasks > 0) {
      min_nodes = std::max(min_nodes, ceil_div(job.ntasks, job.ntasks_per_node));
      d.tasks = job.ntasks;
    } else {
      d.tasks = min_nodes * job.ntasks_per_node;
    }
    max_nodes = min_nodes;
  } else if (job.ntasks > 0) {
    d.tasks = job.ntasks;
    if (job.max_nodes <= 0 && job.min_nodes <= 0 && job.gpus.count <= 0 && d.required.empty()) {
      max_nodes = job.ntasks;  // -n alone: as many nodes as it takes, fewest first
    }
    max_nodes = std::min(max_nodes, std::max(min_nodes, job.ntasks));
    if (min_nodes == max_nodes) {
      d.tasks_per_node = ceil_div(job.ntasks, min_nodes);
      d.pack = min_nodes > 1;
    }
    if (job.spread_job) {  // over as many nodes as there are tasks, within -N's top when given
      max_nodes = job.max_nodes > 0 ? std::min(job.max_nodes, job.ntasks) : std::max(min_nodes, job.ntasks);
      if (max_nodes > min_nodes) {
        d.tasks_per_node = 0;
        d.pack = false;
        d.even = true;
      }
    }
    d.widest = (job.spread_job || job.max_nodes > std::max(job.min_nodes, 1)) && max_nodes > min_nodes;
  } else {
    d.tasks = min_nodes;  // one task per node
    d.tasks_per_node = 1;
    if (job.max_nodes > min_nodes && job.gpus.count <= 0) d.grow_to = job.max_nodes;
    max_nodes = min_nodes;
  }
  d.min_nodes = min_nodes;
  d.max_nodes = max_nodes;
}

void resolve_gres(const Cluster& c, const JobSpec& job, const PartitionSpec& part, Demand& d) {
  for (const GresSpec& g : job.gres) d.gres.push_back({g.name, g.type, static_cast<int32_t>(g.count)});
  if (job.gpus_per_node.count > 0) d.gres.push_back({"gpu", job.gpus_per_node.type, job.gpus_per_node.count});
  d.gpus_per_task = job.gpus_per_task;
  bool wants_gpus = job.gpus_per_task.count > 0 ||
                    std::any_of(d.gres.begin(), d.gres.end(), [](const GresNeed& g) { return g.name == "gpu"; });
  d.cpus_per_gpu = job.cpus_per_gpu;
  // DefCpuPerGPU: the partition's, else the cluster's, for a GPU job that
  // names neither --cpus-per-gpu nor --cpus-per-task.
  const std::optional<int64_t>& def_cpus = part.def_cpu_per_gpu ? part.def_cpu_per_gpu : c.def_cpu_per_gpu;
  if (d.cpus_per_gpu <= 0 && job.cpus_per_task <= 0 && wants_gpus && def_cpus) {
    d.cpus_per_gpu = static_cast<int32_t>(*def_cpus);
  }
}

// Memory, in Slurm's order: the job's own --mem / --mem-per-cpu /
// --mem-per-gpu, then the partition's defaults, then the cluster's; with
// none of them the job is given all the memory of each node (Slurm's
// behaviour when DefMemPer* is unset).
void resolve_memory(const Cluster& c, const JobSpec& job, const PartitionSpec& part, Demand& d) {
  bool wants_gpus = d.gpus_per_task.count > 0 ||
                    std::any_of(d.gres.begin(), d.gres.end(), [](const GresNeed& g) { return g.name == "gpu"; });
  if (job.mem_per_node_mb >= 0) {
    d.mem_mode = job.mem_per_node_mb == 0 ? MemMode::kWholeNode : MemMode::kPerNode;
    d.mem_mb = job.mem_per_node_mb;
  } else if (job.mem_per_cpu_mb >= 0) {
    d.mem_mode = MemMode::kPerCpu;
    d.mem_mb = job.mem_per_cpu_mb;
  } else if (job.mem_per_gpu_mb >= 0) {
    d.mem_mode = MemMode::kPerGpu;
    d.mem_mb = job.mem_per_gpu_mb;
  } else if (part.def_mem_per_cpu_mb) {
    d.mem_mode = MemMode::kPerCpu;
    d.mem_mb = *part.def_mem_per_cpu_mb;
  } else if (part.def_mem_per_node_mb) {
    d.mem_mode = MemMode::kPerNode;
    d.mem_mb = *part.def_mem_per_node_mb;
  } else if (wants_gpus && part.def_mem_per_gpu_mb) {
    d.mem_mode = MemMode::kPerGpu;
    d.mem_mb = *part.def_mem_per_gpu_mb;
  } else if (c.def_mem_per_cpu_mb) {
    d.mem_mode = MemMode::kPerCpu;
    d.mem_mb = *c.def_mem_per_cpu_mb;
  } else if (c.def_mem_per_node_mb) {
    d.mem_mode = MemMode::kPerNode;
    d.mem_mb = *c.def_mem_per_node_mb;
  } else if (wants_gpus && c.def_mem_per_gpu_mb) {
    d.mem_mode = MemMode::kPerGpu;
    d.mem_mb = *c.def_mem_per_gpu_mb;
  } else {
    d.mem_mode = MemMode::kWholeNode;
    d.mem_mb = 0;
  }
}

// Units of one request taken from a node's pools: a typed request from the
// pool of that type, an untyped one from the largest pool of that name that
// holds it whole, else spread over the pools in order.
bool take_from_pools(const NodeSpec& node, const std::string& name, const std::string& type, int32_t count,
                     std::vector<int32_t>& pool) {
  if (count <= 0) return true;
  int best = -1;
  for (size_t i = 0; i < node.gres.size(); ++i) {
    const GresPool& p = node.gres[i];
    if (p.name != name || (!type.empty() && p.type != type)) continue;
    if (p.no_consume) return true;
    if (p.count - pool[i] >= count && (best < 0 || p.count > node.gres[best].count)) best = static_cast<int>(i);
  }
  if (best >= 0) {
    pool[best] += count;
    return true;
  }
  for (size_t i = 0; i < node.gres.size() && count > 0; ++i) {
    const GresPool& p = node.gres[i];
    if (p.name != name || (!type.empty() && p.type != type)) continue;
    int32_t take = std::min(count, p.count - pool[i]);
    pool[i] += take;
    count -= take;
  }
  return count == 0;
}

}  // namespace

std::optional<Refusal> unknown_qos(const Cluster& c, const JobSpec& job) {
  if (job.qos.empty() || c.find_qos(job.qos) >= 0) return std::nullopt;
  return refuse("Invalid qos specification", "drover: no QOS named \"" + job.qos + "\" is defined");
}

Result<std::vector<NodeIndex>, Refusal> resolve_nodes(const Cluster& c, const std::string& expr,
                                                      const char* option) {
  std::vector<NodeIndex> out;
  if (expr.empty()) return out;
  auto names = hostlist_expand(expr);
  if (!names) {
    return refuse("Invalid node name specified",
                  std::string("drover: ") + option + " " + expr + ": " + names.error().message);
  }
  for (const std::string& n : *names) {
    NodeIndex i = c.find_node(n);
    if (i < 0) return refuse("Invalid node name specified", std::string("drover: ") + option + ": no node named " + n);
    out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// Tasks free to spread (-n without -N) over nodes none of which can hold two
// of them go one per node: a fixed shape of `tasks` nodes (one-CPU nodes, or
// whole-node tasks), as Slurm lays them out.
void one_task_per_node(const Cluster& c, Demand& d) {
  if (d.fixed_shape() || d.tasks <= 1) return;
  const PartitionSpec& part = c.partitions[d.partition];
  for (const NodeGroup& g : c.groups) {
    const NodeSpec& n = c.nodes[g.members.front()];
    if (!std::binary_search(n.partitions.begin(), n.partitions.end(), d.partition)) continue;
    if (need_on(d, n, 2).fits) return;
  }
  (void)part;
  d.min_nodes = std::max(d.min_nodes, d.tasks);
  d.max_nodes = d.min_nodes;
  d.tasks_per_node = 1;
}

}  // namespace

namespace {

// The gres part of need_on: pools taken, GPUs counted, `fits` false when
// the node's pools cannot give them.
NodeNeed gres_need_on(const Demand& d, const NodeSpec& node, int32_t tasks_on_node) {
  NodeNeed need;
  need.pool.assign(node.gres.size(), 0);
  for (const GresNeed& g : d.gres) {
    if (!take_from_pools(node, g.name, g.type, g.count, need.pool)) need.fits = false;
    if (g.name == "gpu") need.gpus += g.count;
  }
  if (d.gpus_per_task.count > 0) {
    int32_t n = d.gpus_per_task.count * tasks_on_node;
    if (!take_from_pools(node, "gpu", d.gpus_per_task.type, n, need.pool)) need.fits = false;
    need.gpus += n;
  }
  return need;
}

}  // namespace

NodeNeed need_on(const Demand& d, const NodeSpec& node, int32_t tasks_on_node) {
  NodeNeed need = gres_need_on(d, node, tasks_on_node);
  int64_t cpus = static_cast<int64_t>(tasks_on_node) * d.cpus_per_task;
  cpus = std::max<int64_t>(cpus, d.min_cpus_per_node);
  cpus = std::max<int64_t>(cpus, static_cast<int64_t>(d.cpus_per_gpu) * need.gpus);
  int32_t threads = std::max(1, node.threads_per_core);
  need.cores = ceil_div(std::max<int64_t>(cpus, 1), threads);
  if (d.whole_node) {
    if (need.cores > node.cores()) need.fits = false;
    need.cores = node.cores();
    for (size_t i = 0; i < node.gres.size(); ++i) need.pool[i] = node.gres[i].no_consume ? 0 : node.gres[i].count;
  }
  need.cpus = need.cores * threads;
  switch (d.mem_mode) {
    case MemMode::kPerNode: need.mem_mb = d.mem_mb; break;
    case MemMode::kPerCpu: need.mem_mb = d.mem_mb * need.cpus; break;
    case MemMode::kPerGpu: need.mem_mb = d.mem_mb * std::max(need.gpus, 1); break;
    case MemMode::kWholeNode: need.mem_mb = node.mem_mb; break;
  }
  if (d.whole_node) {
    // All its CPUs and GRES, but only the memory it asks for (per CPU: of
    // every CPU; with DefMemPerCPU, that default's) as Slurm 22.05 allocates
    // an --exclusive job's memory; --mem=0 is the whole node. More than the
    // node has never fits (and the refusal names what it asks).
    if (need.mem_mb > node.mem_mb) need.fits = false;
  }
  if (need.cores > node.cores() || need.mem_mb > node.mem_mb) need.fits = false;
  if (d.tasks_per_socket > 0 && tasks_on_node > static_cast<int64_t>(d.tasks_per_socket) * node.sockets) need.fits = false;
  if (d.tasks_per_core > 0 && tasks_on_node > static_cast<int64_t>(d.tasks_per_core) * node.cores()) need.fits = false;
  return need;
}

Demand with_gpus_per_node(const Demand& d, int32_t gpus) {
  Demand out = d;
  if (d.gpus_index >= 0) out.gres[static_cast<size_t>(d.gpus_index)].count = gpus;
  return out;
}

bool node_config_fits(const Demand& d, const NodeSpec& node) {
  return node.tmp_disk_mb >= d.min_tmp_disk_mb && node.sockets >= d.sockets &&
         node.cores_per_socket >= d.cores_per_socket && node.threads_per_core >= d.threads_per_core;
}

bool node_eligible(const Demand& d, const Cluster& c, NodeIndex n, size_t alt) {
  const NodeSpec& node = c.nodes[n];
  if (!std::binary_search(node.partitions.begin(), node.partitions.end(), d.partition)) return false;
  if (!d.alternatives[alt].matches(node)) return false;
  if (!node_config_fits(d, node)) return false;
  if (std::binary_search(d.excluded.begin(), d.excluded.end(), n)) return false;
  if (!d.required.empty() && static_cast<int32_t>(d.required.size()) >= d.min_nodes &&
      !std::binary_search(d.required.begin(), d.required.end(), n)) {
    return false;
  }
  return true;
}

namespace {

// Who may run in the partition, in Slurm 22.05's words (anchor cluster):
// AllowGroups (root always may), RootOnly, DisableRootJobs, AllocNodes.
std::optional<Refusal> partition_access(const PartitionSpec& part, const JobSpec& job) {
  if (!job.identity_known) return std::nullopt;
  if (!part.allow_groups.empty() && !contains(part.allow_groups, "ALL") && job.uid != 0 &&
      std::none_of(job.groups.begin(), job.groups.end(), [&](const std::string& g) { return contains(part.allow_groups, g); })) {
    return Refusal{{}, "User's group not permitted to use this partition",
                   "drover: partition " + part.name + " admits members of " + join(part.allow_groups, ",") +
                       " (AllowGroups); " + job.user + " is in " + (job.groups.empty() ? "none" : join(job.groups, ","))};
  }
  if (part.root_only && job.uid != 0) {
    return Refusal{{}, "Access/permission denied",
                   "drover: partition " + part.name + " runs only root's jobs (RootOnly=YES)"};
  }
  if (part.disable_root_jobs && job.uid == 0) {
    return Refusal{{}, "Invalid user id", "drover: partition " + part.name + " runs no job of root (DisableRootJobs=YES)"};
  }
  if (!part.alloc_nodes.empty() && !contains(part.alloc_nodes, job.alloc_node)) {
    return Refusal{{}, "Access/permission denied",
                   "drover: partition " + part.name + " takes jobs submitted from " + join(part.alloc_nodes, ",") +
                       " (AllocNodes); this one comes from " + (job.alloc_node.empty() ? "an unknown host" : job.alloc_node)};
  }
  return std::nullopt;
}

}  // namespace

Result<Demand, Refusal> resolve_demand(const Cluster& c, const JobSpec& job, int32_t partition) {
  const PartitionSpec& part = c.partitions[partition];
  Demand d;
  d.partition = partition;
  auto qos = resolve_qos(c, job, part);
  if (!qos) return qos.error();
  d.qos = *qos;
  d.assoc = c.find_assoc(job.account, job.user);
  if (!job.account.empty()) {
    bool allowed = part.allow_accounts.empty() || contains(part.allow_accounts, "ALL") ||
                   contains(part.allow_accounts, job.account);
    if (!allowed || contains(part.deny_accounts, job.account)) {
      return refuse("Invalid account or account/partition combination specified",
                    "drover: partition " + part.name + " does not accept account " + job.account);
    }
  }
  if (auto no = partition_access(part, job)) return *no;
  d.time_limit = resolve_time_limit(c, job, part, d.qos, d.assoc);
  auto req = resolve_nodes(c, job.nodelist, "--nodelist");
  if (!req) return req.error();
  d.required = std::move(req).value();
  auto exc = resolve_nodes(c, job.exclude, "--exclude");  // before the features, as Slurm checks them
  if (!exc) return exc.error();
  d.excluded = std::move(exc).value();
  // A node both required and excluded: Slurm 22.05 refused `-w cpu01 -x cpu01` with this error.
  for (NodeIndex n : d.required) {
    if (std::binary_search(d.excluded.begin(), d.excluded.end(), n)) {
      return refuse("Invalid node name specified",
                    "drover: " + c.nodes[n].name + " is named by both --nodelist and --exclude");
    }
  }
  if (auto bad = resolve_constraint(c, job, d)) return *bad;
  d.whole_node = job.exclusive || part.exclusive;
  resolve_gres(c, job, part, d);
  if (job.cpus_per_gpu > 0 && job.gpus.count <= 0 && d.gpus_per_task.count <= 0 &&
      std::none_of(d.gres.begin(), d.gres.end(), [](const GresNeed& g) { return g.name == "gpu" && g.count > 0; })) {
    return refuse(kNodeConfigUnavailable,
                  "drover: --cpus-per-gpu gives CPUs per GPU, and the job asks for no GPU (add --gpus, "
                  "--gpus-per-node, --gpus-per-task or --gres=gpu:N)");
  }
  if (job.ntasks_per_node > 0 && job.ntasks > 0 && job.min_nodes > 0) {
    // -N's top bounds --ntasks-per-node's nodes: `-N1 -n2 --ntasks-per-node=1` is refused, as Slurm 22.05 refuses it.
    const int32_t top = std::max(job.min_nodes, job.max_nodes);
    if (static_cast<int64_t>(top) * job.ntasks_per_node < job.ntasks) {
      return refuse(kNodeConfigUnavailable, "drover: " + std::to_string(job.ntasks) + " tasks at --ntasks-per-node=" +
                                                std::to_string(job.ntasks_per_node) + " need " +
                                                std::to_string(ceil_div(job.ntasks, job.ntasks_per_node)) +
                                                " nodes; -N allows at most " + std::to_string(top));
    }
  }
  resolve_shape(c, job, part, d);
  resolve_memory(c, job, part, d);
  d.licenses = job.licenses;
  one_task_per_node(c, d);
  return d;
}

namespace {

std::string describe_gres(const std::vector<GresPool>& pools) {
  std::string s;
  for (const GresPool& p : pools) {
    if (!s.empty()) s += ",";
    s += p.name + (p.type.empty() ? "" : ":" + p.type) + ":" + std::to_string(p.count);
  }
  return s.empty() ? "no gres" : s;
}

std::string describe_need(const Demand& d) {
  std::string s;
  for (const GresNeed& g : d.gres) {
    if (!s.empty()) s += ",";
    s += g.name + (g.type.empty() ? "" : ":" + g.type) + ":" + std::to_string(g.count);
  }
  if (d.gpus_per_task.count > 0) {
    if (!s.empty()) s += ",";
    s += "gpu" + (d.gpus_per_task.type.empty() ? "" : ":" + d.gpus_per_task.type) + ":" +
         std::to_string(d.gpus_per_task.count) + " per task";
  }
  return s;
}

// The largest number of tasks one node can ever hold (0: none).
int32_t max_tasks_on(const Demand& d, const NodeSpec& node) {
  if (!need_on(d, node, 1).fits) return 0;
  int32_t lo = 1, hi = std::max(1, node.cpus);
  if (d.tasks_per_node > 0) return need_on(d, node, d.tasks_per_node).fits ? d.tasks_per_node : 0;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo + 1) / 2;
    if (need_on(d, node, mid).fits) lo = mid; else hi = mid - 1;
  }
  return lo;
}

// When the nodes the job may use would do but for --tmp or -B: Slurm's
// wording for which (TmpDisk checked first, as Slurm 22.05 did on the
// anchor cluster for a job asking both).
std::optional<Refusal> config_refusal(const Cluster& c, const Demand& d) {
  const PartitionSpec& part = c.partitions[d.partition];
  Demand open = d;
  open.min_tmp_disk_mb = 0;
  open.sockets = open.cores_per_socket = open.threads_per_core = 0;
  int64_t most_tmp = -1;               // -1: no node would do
  std::vector<std::string> layouts;  // S:C:T of those nodes, each once
  for (NodeIndex n : part.nodes) {
    if (!node_eligible(open, c, n, d.preferred)) continue;
    const NodeSpec& node = c.nodes[n];
    most_tmp = std::max(most_tmp, node.tmp_disk_mb);
    std::string l = std::to_string(node.sockets) + ":" + std::to_string(node.cores_per_socket) + ":" +
                    std::to_string(node.threads_per_core);
    if (std::find(layouts.begin(), layouts.end(), l) == layouts.end()) layouts.push_back(std::move(l));
  }
  if (most_tmp < 0) return std::nullopt;
  if (most_tmp < d.min_tmp_disk_mb) {
    return refuse(kNodeConfigUnavailable,
                  "drover: the job asks for " + format_memory_mb(d.min_tmp_disk_mb) +
                      " of temporary disk per node (--tmp); the nodes of partition " + part.name +
                      " it may use have TmpDisk=" + format_memory_mb(most_tmp) + " at most",
                  {"Temporary disk specification can not be satisfied"});
  }
  auto star = [](int32_t v) { return v > 0 ? std::to_string(v) : std::string("*"); };
  return refuse(kNodeConfigUnavailable,
                "drover: the job asks for nodes with at least " + star(d.sockets) + ":" + star(d.cores_per_socket) +
                    ":" + star(d.threads_per_core) + " sockets:cores:threads (-B); the nodes of partition " +
                    part.name + " it may use have " + join(layouts, ", "),
                {"Socket, core and/or thread specification can not be satisfied"});
}

// Slurm's wording for the dimension no node of the group can give.
Refusal capacity_refusal(const Cluster& c, const Demand& d, const std::vector<NodeIndex>& eligible) {
  const PartitionSpec& part = c.partitions[d.partition];
  int32_t tasks = d.tasks_per_node > 0 ? d.tasks_per_node : 1;
  if (eligible.empty()) {
    if (auto r = config_refusal(c, d)) return *r;
    const Constraint& asked = d.alternatives[d.preferred];  // -C's first (--prefer's come before it)
    std::string what = asked.empty() ? "" : " with features matching \"" + asked.text() + "\"";
    if (!d.required.empty()) what = " among the nodes named by --nodelist";
    return refuse(kNodeConfigUnavailable, "drover: partition " + part.name + " has no node" + what);
  }
  int32_t best_cpus = 0;
  int64_t best_mem = 0;
  bool gres_ok = false;
  for (NodeIndex n : eligible) {
    const NodeSpec& node = c.nodes[n];
    best_cpus = std::max(best_cpus, node.cpus);
    best_mem = std::max(best_mem, node.mem_mb);
    if (gres_need_on(d, node, tasks).fits) gres_ok = true;
  }
  const NodeSpec& sample = c.nodes[eligible.front()];
  NodeNeed need = need_on(d, sample, tasks);
  if (!gres_ok) {
    std::string have = describe_gres(sample.gres);
    return refuse(kNodeConfigUnavailable, "drover: no node of partition " + part.name + " that the job may use has " +
                                              describe_need(d) + " per node (they have " + have + ")");
  }
  if (need.cpus > best_cpus) {
    // Slurm 22.05 adds its line only when one node's minimum is beyond every
    // node: -c 65, not -N2 -n130 or -N2 -n4 -c40 (whose tasks it may pack).
    std::vector<std::string> slurm_lines;
    if (!d.pack || d.whole_node || need_on(d, sample, 1).cpus > best_cpus) {
      slurm_lines.push_back("CPU count per node can not be satisfied");
    }
    return refuse(kNodeConfigUnavailable,
                  "drover: the job needs " + std::to_string(need.cpus) + " CPUs on one node; the largest node of partition " +
                      part.name + " has " + std::to_string(best_cpus),
                  std::move(slurm_lines));
  }
  if (need.mem_mb > best_mem) {
    // Slurm 22.05 adds "Memory specification can not be satisfied" only when what the job wrote is beyond
    // every node (--mem, or one CPU's --mem-per-cpu); -c 64 at DefMemPerCPU=4096 on 250G nodes, or
    // --exclusive there, was "Requested node configuration is not available" alone (anchor cluster).
    const bool own = (d.mem_mode == MemMode::kPerNode || d.mem_mode == MemMode::kPerCpu) && d.mem_mb > best_mem;
    std::vector<std::string> slurm_lines;
    if (own) slurm_lines.push_back("Memory specification can not be satisfied");
    return refuse(kNodeConfigUnavailable,
                  "drover: the job needs " + format_memory_mb(need.mem_mb) + " of memory on one node; the largest node of partition " +
                      part.name + " has " + format_memory_mb(best_mem),
                  std::move(slurm_lines));
  }
  if (d.tasks_per_socket > 0 || d.tasks_per_core > 0) {
    Demand uncapped = d;
    uncapped.tasks_per_socket = uncapped.tasks_per_core = 0;
    if (need_on(uncapped, sample, tasks).fits) {
      return refuse(kNodeConfigUnavailable,
                    "drover: " + std::to_string(tasks) + " tasks on one node of partition " + part.name +
                        " are more than --ntasks-per-socket/--ntasks-per-core allow on its " +
                        std::to_string(sample.sockets) + " sockets and " + std::to_string(sample.cores()) + " cores");
    }
  }
  return refuse(kNodeConfigUnavailable, "drover: no node of partition " + part.name +
                                            " can hold one node's share of the job (" + std::to_string(need.cpus) +
                                            " CPUs, " + format_memory_mb(need.mem_mb) + ", " +
                                            (describe_need(d).empty() ? "no gres" : describe_need(d)) + ")");
}

}  // namespace

std::optional<Refusal> check_capacity(const Cluster& c, const Demand& d) {
  const PartitionSpec& part = c.partitions[d.partition];
  // The partition's own size is a pending limit (PartitionNodeLimit), not a refusal.
  int32_t want_nodes = std::min<int32_t>(d.min_nodes, static_cast<int32_t>(part.nodes.size()));
  bool per_node = !d.required.empty() || !d.excluded.empty();
  std::optional<Refusal> first;
  bool fits = false;  // some alternative can hold the job
  for (size_t alt = 0; alt < d.alternatives.size(); ++alt) {
    // --prefer must be possible in the partition, as Slurm 22.05 refuses it
    // otherwise; once it is, -C is only a fallback and need not be checked.
    if (d.preferred > 0 && static_cast<int32_t>(alt) == d.preferred) {
      if (fits) return std::nullopt;
      return refuse(kNodeConfigUnavailable, "drover: no node of partition " + part.name +
                                                " can hold the job with the features --prefer asks for (\"" +
                                                d.alternatives.front().text() + "\")");
    }
    // Node groups are alike in everything this looks at: one node answers for its group.
    std::vector<NodeIndex> eligible;  // one per group, for the refusal's wording
    int64_t fitting = 0;
    std::vector<std::pair<int32_t, int64_t>> room;  // tasks one node holds, nodes like it
    for (const NodeGroup& g : c.groups) {
      int64_t count = 0;
      NodeIndex sample = -1;
      for (NodeIndex n : g.members) {
        if (!node_eligible(d, c, n, alt)) {
          if (!per_node) break;
          continue;
        }
        if (sample < 0) sample = n;
        ++count;
        if (!per_node) {
          count = static_cast<int64_t>(g.members.size());
          break;
        }
      }
      if (sample < 0) continue;
      eligible.push_back(sample);
      int32_t t = max_tasks_on(d, c.nodes[sample]);
      if (t > 0) {
        fitting += count;
        room.push_back({t, count});
      }
    }
    std::sort(room.rbegin(), room.rend());
    int64_t task_room = 0, nodes_left = d.max_nodes;
    for (const auto& [t, count] : room) {
      int64_t take = std::min(count, nodes_left);
      task_room += t * take;
      nodes_left -= take;
      if (nodes_left <= 0) break;
    }
    bool ok = fitting >= want_nodes && fitting > 0 && (d.fixed_shape() || task_room >= d.tasks);
    if (ok && static_cast<int32_t>(alt) >= d.preferred) return std::nullopt;
    fits = fits || ok;
    if (first || static_cast<int32_t>(alt) < d.preferred) continue;  // refused in -C's words
    if (fitting == 0) {
      first = capacity_refusal(c, d, eligible);
    } else if (fitting < want_nodes) {
      first = refuse(kNodeConfigUnavailable, "drover: only " + std::to_string(fitting) + " node" +
                                                 (fitting == 1 ? "" : "s") + " of partition " + part.name +
                                                 " can hold one node's share of the job; it asks for " +
                                                 std::to_string(d.min_nodes));
    } else {
      first = refuse(kNodeConfigUnavailable, "drover: the nodes of partition " + part.name + " can hold " +
                                                 std::to_string(task_room) + " of the job's " +
                                                 std::to_string(d.tasks) + " tasks at most");
    }
  }
  return first;
}

namespace {

// The first per-job TRES limit the job's TRES pass over, as the reason for
// its kind: `reasons` are those for cpu, mem, node and the rest (gres).
struct PerJobReasons {
  Reason cpu, mem, node, gres;
};
constexpr PerJobReasons kQosPerJob{Reason::kQosMaxCpuPerJobLimit, Reason::kQosMaxMemoryPerJob,
                                   Reason::kQosMaxNodePerJobLimit, Reason::kQosMaxGresPerJob};
constexpr PerJobReasons kAssocPerJob{Reason::kAssocMaxCpuPerJobLimit, Reason::kAssocMaxMemPerJob,
                                     Reason::kAssocMaxNodePerJobLimit, Reason::kAssocMaxGresPerJob};

Reason per_job_tres_reason(const TresMap& limits, const TresMap& tres, const PerJobReasons& reasons) {
  for (const auto& [name, limit] : limits) {
    auto it = tres.find(name);
    if (it == tres.end() || it->second <= limit) continue;
    if (name == "cpu") return reasons.cpu;
    if (name == "mem") return reasons.mem;
    if (name == "node") return reasons.node;
    return reasons.gres;
  }
  return Reason::kNone;
}

}  // namespace

Reason static_limit_reason(const Cluster& c, const Demand& d) {
  const PartitionSpec& part = c.partitions[d.partition];
  // DRAIN takes no new jobs (check_submit) but runs those already queued.
  if (part.state == PartitionState::kDown) return Reason::kPartitionDown;
  if (part.state == PartitionState::kInactive) return Reason::kPartitionInactive;
  if (d.time_limit > part.max_time) return Reason::kPartitionTimeLimit;
  int64_t part_nodes = static_cast<int64_t>(part.nodes.size());
  if (d.min_nodes > part_nodes || (part.max_nodes != kNoLimit && d.min_nodes > part.max_nodes) ||
      d.max_nodes < part.min_nodes) {
    return Reason::kPartitionNodeLimit;
  }
  if (d.qos >= 0) {
    const QosSpec& q = c.qos[d.qos];
    if (d.time_limit > q.max_wall) return Reason::kQosMaxWallDurationPerJobLimit;
    Reason r = per_job_tres_reason(q.max_tres_per_job, demand_tres(c, d), kQosPerJob);
    if (r != Reason::kNone) return r;
  }
  if (d.assoc >= 0) {
    // The association's per-job limits in force: its own or the nearest set above it.
    const AssocLimitSpec::InForce& a = c.assocs[d.assoc].in_force;
    if (d.time_limit > a.max_wall) return Reason::kAssocMaxWallDurationPerJobLimit;
    return per_job_tres_reason(a.max_tres_per_job, demand_tres(c, d), kAssocPerJob);
  }
  return Reason::kNone;
}

int64_t demand_gpus(const Demand& d) {
  int64_t per_node = 0;
  for (const GresNeed& g : d.gres) {
    if (g.name == "gpu") per_node += g.count;
  }
  return per_node * d.min_nodes + static_cast<int64_t>(d.gpus_per_task.count) * d.tasks;
}

int64_t requested_cpus(const Demand& d) {
  int64_t cpus = static_cast<int64_t>(d.tasks) * d.cpus_per_task;
  cpus = std::max<int64_t>(cpus, static_cast<int64_t>(d.min_nodes) * d.min_cpus_per_node);
  return std::max<int64_t>(cpus, static_cast<int64_t>(d.cpus_per_gpu) * demand_gpus(d));
}

TresMap demand_tres(const Cluster& c, const Demand& d, bool as_requested) {
  TresMap t;
  // Figures per node from the partition's first node that can hold the job
  // (whole-node and per-CPU memory depend on the node).
  const PartitionSpec& part = c.partitions[d.partition];
  const NodeSpec* sample = nullptr;
  for (const NodeGroup& g : c.groups) {
    NodeIndex n = g.members.front();
    if (node_eligible(d, c, n, 0) && need_on(d, c.nodes[n], std::max(1, d.tasks_per_node)).fits) {
      sample = &c.nodes[n];
      break;
    }
  }
  (void)part;
  int64_t nodes = d.min_nodes;
  int64_t gpus = demand_gpus(d);
  int64_t cpus = requested_cpus(d);
  const bool whole = sample && d.whole_node && !as_requested;
  if (whole) cpus = std::max<int64_t>(cpus, nodes * sample->cpus);
  int64_t mem = 0;
  switch (d.mem_mode) {
    case MemMode::kPerNode: mem = d.mem_mb * nodes; break;
    case MemMode::kPerCpu: mem = d.mem_mb * cpus; break;
    case MemMode::kPerGpu: mem = d.mem_mb * std::max<int64_t>(gpus, nodes); break;
    case MemMode::kWholeNode: mem = sample ? sample->mem_mb * nodes : 0; break;
  }
  if (whole) mem = std::min(mem, sample->mem_mb * nodes);
  t["cpu"] = cpus;
  t["mem"] = mem;
  t["node"] = nodes;
  for (const GresNeed& g : d.gres) {
    t[gres_tres_name(g.name, "")] += static_cast<int64_t>(g.count) * nodes;
    if (!g.type.empty()) t[gres_tres_name(g.name, g.type)] += static_cast<int64_t>(g.count) * nodes;
  }
  if (d.gpus_per_task.count > 0) {
    int64_t n = static_cast<int64_t>(d.gpus_per_task.count) * d.tasks;
    t["gres/gpu"] += n;
    if (!d.gpus_per_task.type.empty()) t[gres_tres_name("gpu", d.gpus_per_task.type)] += n;
  }
  for (const auto& [name, count] : d.licenses) t[name] += count;
  // A billing of 0 (CPU=0.3 for one CPU) is left out, as Slurm 22.05's TRES= and sacct left it.
  if (const int64_t b = billing_count(billing_units(c, part, t)); b > 0) t["billing"] = b;
  return t;
}

double billing_units(const Cluster& c, const PartitionSpec& part, const TresMap& tres) {
  auto count = [&](const std::string& name) {
    auto it = tres.find(name);
    return it == tres.end() ? 0.0 : static_cast<double>(it->second);
  };
  if (part.billing_weights.empty()) return count("cpu");
  double sum = 0.0, top = 0.0;
  for (const auto& [name, weight] : part.billing_weights) {
    const double v = weight * count(name);
    const bool on_node = name == "cpu" || name == "mem" || name == "node" || name.starts_with("gres/");
    if (c.priority.max_tres && on_node) top = std::max(top, v);
    else sum += v;
  }
  return sum + top;
}

int64_t billing_count(double units) { return units > 0 ? static_cast<int64_t>(units) : 0; }

}  // namespace drover::core
