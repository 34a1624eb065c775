#include "core/job.hpp"

namespace drover::core {

Dependency dependency_from(const DependencySpec& spec) {
  Dependency d;
  d.any = spec.any_of;
  for (const DependencyClause& clause : spec.clauses) {
    DepKind kind = DepKind::kAfterAny;
    switch (clause.type) {
      case DependencyType::kAfter: kind = DepKind::kAfter; break;
      case DependencyType::kAfterAny:
      case DependencyType::kAfterBurstBuffer: kind = DepKind::kAfterAny; break;
      case DependencyType::kAfterCorr: kind = DepKind::kAfterCorr; break;
      case DependencyType::kAfterNotOk: kind = DepKind::kAfterNotOk; break;
      case DependencyType::kAfterOk: kind = DepKind::kAfterOk; break;
      case DependencyType::kSingleton: kind = DepKind::kSingleton; break;
    }
    if (kind == DepKind::kSingleton) {
      d.items.push_back(DepItem{kind, 0, -1, 0});
      continue;
    }
    for (const DependencyTarget& t : clause.targets) {
      d.items.push_back(DepItem{kind, t.job_id, t.array_task.value_or(-1), t.delay});
    }
  }
  return d;
}

int32_t Allocation::total_cpus() const {
  int32_t n = 0;
  for (const NodeTake& t : nodes) n += t.cpus;
  return n;
}

int64_t Allocation::total_gpus(const Cluster& c) const {
  int64_t n = 0;
  for (const NodeTake& t : nodes) {
    const NodeSpec& spec = c.nodes[t.node];
    for (const GresTake& g : t.gres) {
      if (spec.gres[g.pool].name == "gpu") n += g.count;
    }
  }
  return n;
}

TresMap Allocation::tres(const Cluster& c) const {
  TresMap t;
  t["cpu"] = 0;
  t["mem"] = 0;
  t["node"] = static_cast<int64_t>(nodes.size());
  for (const NodeTake& take : nodes) {
    t["cpu"] += take.cpus;
    t["mem"] += take.mem_mb;
    const NodeSpec& spec = c.nodes[take.node];
    for (const GresTake& g : take.gres) {
      const GresPool& pool = spec.gres[g.pool];
      t[gres_tres_name(pool.name, "")] += g.count;
      if (!pool.type.empty()) t[gres_tres_name(pool.name, pool.type)] += g.count;
    }
  }
  return t;
}

}  // namespace drover::core
