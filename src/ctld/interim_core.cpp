// INTERIM (see interim_core.hpp): first-fit placement, submit check and
// summary. Replaced by src/core when its implementation is merged.
#include "ctld/interim_core.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "common/hostlist.hpp"
#include "common/strings.hpp"

namespace drover::ctld::interim {
namespace {

using core::Cluster;
using core::JobSpec;
using core::NodeSpec;
using core::Reason;

// The per-node shape of a job in one partition.
struct Shape {
  int32_t nodes = 1;
  int32_t ntasks = 1;
  int32_t tasks_per_node = 1;
  int32_t cpus_per_task = 1;
  int32_t cpus_per_node = 1;
  int32_t gpus_per_node = 0;
  std::string gpu_type;
  int64_t mem_per_node_mb = 0;  // 0: the whole node's memory
  int64_t mem_per_cpu_mb = 0;   // when memory was asked (or defaulted) per CPU
  bool exclusive = false;
  Seconds time_limit = kInfinite;
};

int32_t ceil_div(int64_t a, int64_t b) { return static_cast<int32_t>(b <= 0 ? a : (a + b - 1) / b); }

void gpu_need(const JobSpec& j, Shape& s) {
  for (const auto& g : j.gres) {
    if (g.name == "gpu") {
      s.gpus_per_node = static_cast<int32_t>(g.count);
      s.gpu_type = g.type;
      return;
    }
  }
  if (j.gpus_per_node.count > 0) {
    s.gpus_per_node = j.gpus_per_node.count;
    s.gpu_type = j.gpus_per_node.type;
  } else if (j.gpus.count > 0) {
    s.gpus_per_node = ceil_div(j.gpus.count, s.nodes);
    s.gpu_type = j.gpus.type;
  } else if (j.gpus_per_task.count > 0) {
    s.gpus_per_node = j.gpus_per_task.count * s.tasks_per_node;
    s.gpu_type = j.gpus_per_task.type;
  }
}

void mem_need(const Cluster& c, const core::PartitionSpec& p, const JobSpec& j, Shape& s) {
  if (j.mem_per_node_mb >= 0) {
    s.mem_per_node_mb = j.mem_per_node_mb;
  } else if (j.mem_per_cpu_mb >= 0) {
    s.mem_per_cpu_mb = j.mem_per_cpu_mb;
  } else if (j.mem_per_gpu_mb >= 0 && s.gpus_per_node > 0) {
    s.mem_per_node_mb = j.mem_per_gpu_mb * s.gpus_per_node;
  } else if (auto d = p.def_mem_per_cpu_mb ? p.def_mem_per_cpu_mb : c.def_mem_per_cpu_mb) {
    s.mem_per_cpu_mb = *d;
  } else if (auto n = p.def_mem_per_node_mb ? p.def_mem_per_node_mb : c.def_mem_per_node_mb) {
    s.mem_per_node_mb = *n;
  }
  if (s.mem_per_cpu_mb > 0) s.mem_per_node_mb = s.mem_per_cpu_mb * s.cpus_per_node;
}

Shape shape_of(const Cluster& c, const JobSpec& j, int32_t part) {
  const auto& p = c.partitions[part];
  Shape s;
  s.nodes = std::max(1, j.min_nodes);
  s.cpus_per_task = std::max(1, j.cpus_per_task);
  if (j.ntasks > 0) {
    s.ntasks = j.ntasks;
  } else if (j.ntasks_per_node > 0) {
    s.ntasks = j.ntasks_per_node * s.nodes;
  } else {
    s.ntasks = s.nodes;
  }
  s.tasks_per_node = j.ntasks_per_node > 0 ? j.ntasks_per_node : ceil_div(s.ntasks, s.nodes);
  s.cpus_per_node = std::max(s.tasks_per_node * s.cpus_per_task, j.min_cpus_per_node);
  gpu_need(j, s);
  if (j.cpus_per_gpu > 0) s.cpus_per_node = std::max(s.cpus_per_node, j.cpus_per_gpu * s.gpus_per_node);
  mem_need(c, p, j, s);
  s.exclusive = j.exclusive || p.exclusive;
  if (j.time_limit >= 0) {
    s.time_limit = j.time_limit;
  } else {
    s.time_limit = p.default_time ? *p.default_time : p.max_time;
  }
  return s;
}

int32_t pool_gpus(const NodeSpec& n, const std::string& type) {
  int32_t total = 0;
  for (const auto& g : n.gres) {
    if (g.name == "gpu" && (type.empty() || g.type == type)) total += g.count;
  }
  return total;
}

// -C: words joined by '&' or ',' (all) and '|' (any); brackets and "*N" ignored.
bool features_match(const NodeSpec& n, const std::string& expr) {
  if (expr.empty()) return true;
  std::string e;
  for (char ch : expr) {
    if (ch != '[' && ch != ']' && ch != '(' && ch != ')') e += ch;
  }
  for (const auto& alt : split(e, '|')) {
    bool all = true;
    for (auto word : split_outside_brackets(alt, '&')) {
      for (auto w : split(word, ',')) {
        auto star = w.find('*');
        if (star != std::string::npos) w = w.substr(0, star);
        if (!w.empty() && std::find(n.features.begin(), n.features.end(), w) == n.features.end()) {
          all = false;
        }
      }
    }
    if (all) return true;
  }
  return false;
}

std::set<std::string> feature_words(const std::string& expr) {
  std::set<std::string> out;
  std::string word;
  for (char ch : expr + "|") {
    if (ch == '&' || ch == '|' || ch == ',' || ch == '[' || ch == ']' || ch == '(' || ch == ')' || ch == '*') {
      if (!word.empty() && !std::isdigit(static_cast<unsigned char>(word[0]))) out.insert(word);
      word.clear();
    } else {
      word += ch;
    }
  }
  return out;
}

// Does the node, empty, take the shape at all ("ever")?
bool node_can_ever(const NodeSpec& n, const Shape& s, const JobSpec& j) {
  if (s.cpus_per_node > n.cpus) return false;
  if (s.mem_per_node_mb > n.mem_mb) return false;
  if (s.gpus_per_node > pool_gpus(n, s.gpu_type)) return false;
  return features_match(n, j.constraint);
}

// ---- occupancy -------------------------------------------------------------

struct NodeUse {
  std::vector<bool> core_used;
  int64_t mem_used = 0;
  std::vector<std::vector<bool>> device_used;  // per pool
  int32_t jobs = 0;
  bool exclusive = false;
};

std::vector<NodeUse> occupancy(const Cluster& c, std::span<const core::RunningJob> running) {
  std::vector<NodeUse> use(c.nodes.size());
  for (std::size_t i = 0; i < c.nodes.size(); ++i) {
    use[i].core_used.assign(c.nodes[i].sockets * c.nodes[i].cores_per_socket, false);
    for (const auto& g : c.nodes[i].gres) use[i].device_used.emplace_back(std::max(g.count, 0), false);
  }
  for (const auto& r : running) {
    for (const auto& t : r.alloc.nodes) {
      if (t.node < 0 || t.node >= static_cast<int32_t>(use.size())) continue;
      auto& u = use[t.node];
      for (int32_t core : t.cores) {
        if (core >= 0 && core < static_cast<int32_t>(u.core_used.size())) u.core_used[core] = true;
      }
      u.mem_used += t.mem_mb;
      for (const auto& g : t.gres) {
        if (g.pool < 0 || g.pool >= static_cast<int32_t>(u.device_used.size())) continue;
        for (int32_t d : g.devices) {
          if (d >= 0 && d < static_cast<int32_t>(u.device_used[g.pool].size())) u.device_used[g.pool][d] = true;
        }
      }
      u.jobs += 1;
      u.exclusive = u.exclusive || r.alloc.exclusive;
    }
  }
  return use;
}

// Takes the shape on node `ni` if it fits now; fills `take`.
bool take_node(const Cluster& c, const std::vector<NodeUse>& use, core::NodeIndex ni, const Shape& s,
               core::NodeTake& take) {
  const NodeSpec& n = c.nodes[ni];
  const NodeUse& u = use[ni];
  if (u.exclusive || (s.exclusive && u.jobs > 0)) return false;
  int32_t tpc = std::max(1, n.threads_per_core);
  int32_t cores_needed = s.exclusive ? static_cast<int32_t>(u.core_used.size()) : ceil_div(s.cpus_per_node, tpc);
  take = core::NodeTake{};
  take.node = ni;
  for (int32_t i = 0; i < static_cast<int32_t>(u.core_used.size()) && (int32_t)take.cores.size() < cores_needed; ++i) {
    if (!u.core_used[i]) take.cores.push_back(i);
  }
  if (static_cast<int32_t>(take.cores.size()) < cores_needed) return false;
  take.cpus = cores_needed * tpc;
  int64_t mem = (s.mem_per_node_mb == 0 || s.exclusive) ? n.mem_mb : s.mem_per_node_mb;
  if (s.mem_per_cpu_mb > 0 && !s.exclusive) mem = s.mem_per_cpu_mb * take.cpus;
  if (mem > n.mem_mb - u.mem_used) return false;
  take.mem_mb = mem;
  int32_t gpus_left = s.exclusive ? pool_gpus(n, s.gpu_type) : s.gpus_per_node;
  for (int32_t p = 0; p < static_cast<int32_t>(n.gres.size()) && gpus_left > 0; ++p) {
    const auto& pool = n.gres[p];
    if (pool.name != "gpu" || (!s.gpu_type.empty() && pool.type != s.gpu_type)) continue;
    core::GresTake g;
    g.pool = p;
    for (int32_t d = 0; d < static_cast<int32_t>(u.device_used[p].size()) && gpus_left > 0; ++d) {
      if (!u.device_used[p][d]) {
        g.devices.push_back(d);
        --gpus_left;
      }
    }
    g.count = static_cast<int32_t>(g.devices.size());
    if (g.count > 0) take.gres.push_back(std::move(g));
  }
  if (gpus_left > 0 && !s.exclusive) return false;
  take.tasks = s.tasks_per_node;
  return true;
}

void mark_used(std::vector<NodeUse>& use, const core::Allocation& a) {
  for (const auto& t : a.nodes) {
    auto& u = use[t.node];
    for (int32_t core : t.cores) u.core_used[core] = true;
    u.mem_used += t.mem_mb;
    for (const auto& g : t.gres) {
      for (int32_t d : g.devices) u.device_used[g.pool][d] = true;
    }
    u.jobs += 1;
    u.exclusive = u.exclusive || a.exclusive;
  }
}

std::set<std::string> host_set(const std::string& expr) {
  std::set<std::string> out;
  if (expr.empty()) return out;
  auto hosts = hostlist_expand(expr);
  if (hosts) out.insert(hosts->begin(), hosts->end());
  return out;
}

// Nodes of the partition in placement order: weight, then configured order.
std::vector<core::NodeIndex> placement_order(const Cluster& c, const core::PartitionSpec& p) {
  std::vector<core::NodeIndex> order(p.nodes.begin(), p.nodes.end());
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return c.nodes[a].weight < c.nodes[b].weight; });
  return order;
}

std::optional<core::Allocation> place(const Cluster& c, const std::vector<NodeUse>& use,
                                      std::span<const core::NodeAvail> avail, int32_t part, const JobSpec& j,
                                      const Shape& s) {
  auto want = host_set(j.nodelist);
  auto excluded = host_set(j.exclude);
  core::Allocation a;
  a.exclusive = s.exclusive;
  for (auto ni : placement_order(c, c.partitions[part])) {
    const NodeSpec& n = c.nodes[ni];
    if (!avail.empty() && avail[ni] != core::NodeAvail::kUp) continue;
    if (excluded.count(n.name) || (!want.empty() && !want.count(n.name))) continue;
    if (!node_can_ever(n, s, j)) continue;
    core::NodeTake take;
    if (!take_node(c, use, ni, s, take)) continue;
    a.nodes.push_back(std::move(take));
    if (static_cast<int32_t>(a.nodes.size()) == s.nodes) break;
  }
  if (static_cast<int32_t>(a.nodes.size()) < s.nodes) return std::nullopt;
  std::sort(a.nodes.begin(), a.nodes.end(), [](const auto& x, const auto& y) { return x.node < y.node; });
  return a;
}

// ---- dependencies ----------------------------------------------------------

enum class DepVerdict { kMet, kWaiting, kNever };

DepVerdict item_verdict(const core::DepItem& d, const core::JobHistory* h, core::Time now) {
  using P = core::JobProgress;
  P p = h ? h->outcome(d.job, d.array_task).progress : P::kUnknown;
  auto ended = [](P x) { return x == P::kCompletedOk || x == P::kFailed || x == P::kCancelled; };
  switch (d.kind) {
    case core::DepKind::kAfter: {
      if (p == P::kUnknown) return DepVerdict::kMet;
      if (p == P::kPending) return DepVerdict::kWaiting;
      core::Time start = h->outcome(d.job, d.array_task).start;
      return (d.delay == 0 || now >= start + d.delay) ? DepVerdict::kMet : DepVerdict::kWaiting;
    }
    case core::DepKind::kAfterAny:
      return (p == P::kUnknown || ended(p)) ? DepVerdict::kMet : DepVerdict::kWaiting;
    case core::DepKind::kAfterOk:
      if (p == P::kUnknown || p == P::kCompletedOk) return DepVerdict::kMet;
      return ended(p) ? DepVerdict::kNever : DepVerdict::kWaiting;
    case core::DepKind::kAfterNotOk:
      if (p == P::kUnknown || p == P::kFailed || p == P::kCancelled) return DepVerdict::kMet;
      return p == P::kCompletedOk ? DepVerdict::kNever : DepVerdict::kWaiting;
    case core::DepKind::kSingleton: return DepVerdict::kMet;  // checked by the cycle
  }
  return DepVerdict::kMet;
}

DepVerdict dependency_verdict(const core::Dependency& dep, const core::JobHistory* h, core::Time now) {
  if (dep.empty()) return DepVerdict::kMet;
  int met = 0, never = 0;
  for (const auto& d : dep.items) {
    DepVerdict v = item_verdict(d, h, now);
    met += v == DepVerdict::kMet;
    never += v == DepVerdict::kNever;
  }
  if (dep.any) {
    if (met > 0) return DepVerdict::kMet;
    return never == static_cast<int>(dep.items.size()) ? DepVerdict::kNever : DepVerdict::kWaiting;
  }
  if (never > 0) return DepVerdict::kNever;
  return met == static_cast<int>(dep.items.size()) ? DepVerdict::kMet : DepVerdict::kWaiting;
}

bool wants_singleton(const JobSpec& j) {
  return std::any_of(j.dependency.items.begin(), j.dependency.items.end(),
                     [](const auto& d) { return d.kind == core::DepKind::kSingleton; });
}

// ---- cycle -------------------------------------------------------------------

int32_t resolve_partition(const Cluster& c, const JobSpec& j) {
  if (j.partitions.empty() || (j.partitions.size() == 1 && j.partitions[0].empty())) {
    for (int32_t i = 0; i < static_cast<int32_t>(c.partitions.size()); ++i) {
      if (c.partitions[i].is_default) return i;
    }
    return c.partitions.empty() ? -1 : 0;
  }
  for (int32_t i = 0; i < static_cast<int32_t>(c.partitions.size()); ++i) {
    if (c.partitions[i].name == j.partitions[0]) return i;
  }
  return -1;
}

int32_t find_qos(const Cluster& c, const std::string& name) {
  for (int32_t i = 0; i < static_cast<int32_t>(c.qos.size()); ++i) {
    if (c.qos[i].name == name) return i;
  }
  return -1;
}

int32_t job_qos(const Cluster& c, const JobSpec& j, int32_t part) {
  if (!j.qos.empty()) return find_qos(c, j.qos);
  if (part >= 0 && !c.partitions[part].qos.empty()) return find_qos(c, c.partitions[part].qos);
  return find_qos(c, "normal");
}

// Limits that keep a job waiting however free the cluster is.
Reason limit_reason(const Cluster& c, const JobSpec& j, int32_t part, const Shape& s) {
  const auto& p = c.partitions[part];
  if (p.state == core::PartitionState::kDown || p.state == core::PartitionState::kDrain) return Reason::kPartitionDown;
  if (p.state == core::PartitionState::kInactive) return Reason::kPartitionInactive;
  if (s.time_limit != kInfinite && p.max_time != kInfinite && s.time_limit > p.max_time) {
    return Reason::kPartitionTimeLimit;
  }
  if (s.time_limit == kInfinite && p.max_time != kInfinite) return Reason::kPartitionTimeLimit;
  if ((p.max_nodes != core::kNoLimit && s.nodes > p.max_nodes) || s.nodes > static_cast<int32_t>(p.nodes.size())) {
    return Reason::kPartitionNodeLimit;
  }
  int32_t q = job_qos(c, j, part);
  if (q >= 0 && c.qos[q].max_wall != kInfinite && (s.time_limit == kInfinite || s.time_limit > c.qos[q].max_wall)) {
    return Reason::kQosMaxWallDurationPerJobLimit;
  }
  return Reason::kNone;
}

struct Ordered {
  const JobSpec* job;
  uint32_t tier;
  int64_t priority;
};

int64_t interim_priority(const Cluster& c, const JobSpec& j, int32_t part) {
  if (j.admin_priority) return *j.admin_priority;
  int64_t p = 1000;
  int32_t q = job_qos(c, j, part);
  if (q >= 0) p += c.qos[q].priority;
  if (part >= 0) p += c.partitions[part].priority_job_factor;
  return std::max<int64_t>(1, p - j.nice);
}

std::vector<Ordered> queue_order(const Cluster& c, std::span<const JobSpec* const> pending) {
  std::vector<Ordered> q;
  for (const JobSpec* j : pending) {
    int32_t part = resolve_partition(c, *j);
    q.push_back({j, part >= 0 ? c.partitions[part].priority_tier : 0, interim_priority(c, *j, part)});
  }
  std::stable_sort(q.begin(), q.end(), [](const Ordered& a, const Ordered& b) {
    if (a.tier != b.tier) return a.tier > b.tier;
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.job->submit_time != b.job->submit_time) return a.job->submit_time < b.job->submit_time;
    return a.job->id < b.job->id;
  });
  return q;
}

struct CycleState {
  std::vector<NodeUse> use;
  std::map<core::JobId, int32_t> array_running;           // array id -> running elements
  std::set<std::pair<std::string, std::string>> singles;   // (user, name) running
  bool blocked = false;                                    // a job ahead waits for resources
};

CycleState cycle_state(const Cluster& c, const core::CycleInput& in) {
  CycleState st;
  st.use = occupancy(c, in.running);
  for (const auto& r : in.running) {
    if (!r.spec) continue;
    if (r.spec->array_job_id) st.array_running[r.spec->array_job_id] += 1;
    st.singles.insert({r.spec->user, r.spec->name});
  }
  return st;
}

// Why the job cannot start before placement is tried (kNone: try it).
Reason gate_reason(const Cluster& c, const core::CycleInput& in, CycleState& st, const JobSpec& j, int32_t part,
                   const Shape& s, bool& never) {
  if (j.hold == core::Hold::kUser) return Reason::kJobHeldUser;
  if (j.hold == core::Hold::kAdmin) return Reason::kJobHeldAdmin;
  if (j.begin_time > in.now) return Reason::kBeginTime;
  DepVerdict dv = dependency_verdict(j.dependency, in.history, in.now);
  if (dv == DepVerdict::kNever) {
    never = true;
    return Reason::kDependencyNeverSatisfied;
  }
  if (dv == DepVerdict::kWaiting) return Reason::kDependency;
  if (wants_singleton(j) && st.singles.count({j.user, j.name})) return Reason::kDependency;
  if (j.array_job_id && j.array_max_running > 0 && st.array_running[j.array_job_id] >= j.array_max_running) {
    return Reason::kJobArrayTaskLimit;
  }
  Reason lim = limit_reason(c, j, part, s);
  if (lim != Reason::kNone) never = true;
  return lim;
}

}  // namespace

core::CycleResult run_cycle(const Cluster& c, const core::CycleInput& in) {
  core::CycleResult out;
  CycleState st = cycle_state(c, in);
  out.stats.pending = static_cast<int64_t>(in.pending.size());
  for (const auto& o : queue_order(c, in.pending)) {
    const JobSpec& j = *o.job;
    int32_t part = resolve_partition(c, j);
    core::PendingPlan plan;
    plan.job = &j;
    plan.tested = true;
    plan.partition = part;
    plan.priority = o.priority;
    ++out.stats.tested;
    if (part < 0) {
      plan.reason = Reason::kBadConstraints;
      plan.never = true;
      out.pending.push_back(std::move(plan));
      continue;
    }
    Shape s = shape_of(c, j, part);
    plan.reason = gate_reason(c, in, st, j, part, s, plan.never);
    if (plan.reason == Reason::kNone) {
      if (auto a = place(c, st.use, in.node_avail, part, j, s)) {
        core::StartDecision d;
        d.job = &j;
        d.partition = part;
        d.qos = job_qos(c, j, part);
        d.alloc = std::move(*a);
        d.time_limit = s.time_limit;
        d.end = s.time_limit == kInfinite ? core::kForever : in.now + s.time_limit;
        d.kind = st.blocked ? core::StartKind::kBackfilled : core::StartKind::kImmediate;
        mark_used(st.use, d.alloc);
        if (j.array_job_id) st.array_running[j.array_job_id] += 1;
        st.singles.insert({j.user, j.name});
        out.stats.started += 1;
        out.stats.backfilled += st.blocked ? 1 : 0;
        out.starts.push_back(std::move(d));
        continue;
      }
      plan.reason = st.blocked ? Reason::kPriority : Reason::kResources;
      st.blocked = true;
    }
    out.pending.push_back(std::move(plan));
  }
  return out;
}

core::SubmitVerdict check_submit(const Cluster& c, const JobSpec& j, const core::SubmitContext& ctx) {
  core::SubmitVerdict v;
  auto refuse = [&](std::string error, std::string drover) {
    v.accepted = false;
    v.error = std::move(error);
    v.drover_line = std::move(drover);
    return v;
  };
  std::vector<int32_t> parts;
  if (j.partitions.empty()) {
    int32_t d = resolve_partition(c, j);
    if (d < 0) return refuse("No partition specified or system default partition", "no partition is Default=YES; pass -p");
    parts.push_back(d);
  }
  for (const auto& name : j.partitions) {
    int32_t found = -1;
    for (int32_t i = 0; i < static_cast<int32_t>(c.partitions.size()); ++i) {
      if (c.partitions[i].name == name) found = i;
    }
    if (found < 0) {
      v.details.push_back("invalid partition specified: " + name);
      return refuse("Invalid partition name specified", "");
    }
    parts.push_back(found);
  }
  if (!j.qos.empty() && find_qos(c, j.qos) < 0) return refuse("Invalid qos specification", "");
  std::set<std::string> known;
  for (const auto& n : c.nodes) known.insert(n.features.begin(), n.features.end());
  for (const auto& w : feature_words(j.constraint)) {
    if (!known.count(w)) return refuse("Invalid feature specification", "no node has the feature '" + w + "'");
  }
  for (int32_t part : parts) {
    Shape s = shape_of(c, j, part);
    int fit = 0, cpus_ok = 0, mem_ok = 0;
    for (auto ni : c.partitions[part].nodes) {
      const NodeSpec& n = c.nodes[ni];
      cpus_ok += s.cpus_per_node <= n.cpus;
      mem_ok += s.mem_per_node_mb <= n.mem_mb;
      fit += node_can_ever(n, s, j);
    }
    if (fit >= std::min<int32_t>(s.nodes, static_cast<int32_t>(c.partitions[part].nodes.size())) && fit > 0) {
      v.partition = part;
      v.account = j.account;
      int32_t q = job_qos(c, j, part);
      v.qos = q >= 0 ? c.qos[q].name : j.qos;
      v.pending_reason = limit_reason(c, j, part, s);
      (void)ctx;
      return v;
    }
    if (cpus_ok == 0) v.details = {"CPU count per node can not be satisfied"};
    else if (mem_ok == 0) v.details = {"Memory specification can not be satisfied"};
  }
  return refuse("Requested node configuration is not available",
                "no node of the partition has what the job asks per node (CPUs, memory, GPUs, features)");
}

Result<core::RequestSummary> summarize(const Cluster& c, const JobSpec& j, int32_t partition) {
  if (partition < 0 || partition >= static_cast<int32_t>(c.partitions.size())) {
    return make_error("job " + std::to_string(j.id) + ": no such partition");
  }
  Shape s = shape_of(c, j, partition);
  core::RequestSummary r;
  r.partition = partition;
  r.qos = job_qos(c, j, partition);
  r.time_limit = s.time_limit;
  r.min_nodes = s.nodes;
  r.max_nodes = j.max_nodes;
  r.ntasks = s.ntasks;
  r.cpus_per_task = s.cpus_per_task;
  r.min_cpus = static_cast<int64_t>(s.cpus_per_node) * s.nodes;
  r.mem_per_cpu_mb = s.mem_per_cpu_mb;
  r.mem_per_node_mb = s.mem_per_cpu_mb > 0 ? 0 : s.mem_per_node_mb;
  r.tres["cpu"] = r.min_cpus;
  r.tres["mem"] = s.mem_per_node_mb * s.nodes;
  r.tres["node"] = s.nodes;
  r.tres["billing"] = r.min_cpus;
  if (s.gpus_per_node > 0) {
    r.tres["gres/gpu"] = static_cast<int64_t>(s.gpus_per_node) * s.nodes;
    if (!s.gpu_type.empty()) r.tres["gres/gpu:" + s.gpu_type] = r.tres["gres/gpu"];
    r.tres_per_node = "gres:gpu:" + (s.gpu_type.empty() ? "" : s.gpu_type + ":") + std::to_string(s.gpus_per_node);
  }
  return r;
}

}  // namespace drover::ctld::interim
