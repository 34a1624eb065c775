#include "sim/node_ledger.hpp"

namespace drover::sim {

NodeLedger::NodeLedger(const core::Cluster& c) : c_(c), held_(c.nodes.size()), totals_(c.nodes.size()) {}

int32_t NodeLedger::gpus_of(const core::NodeTake& take) const {
  int32_t n = 0;
  const auto& pools = c_.nodes[take.node].gres;
  for (const auto& g : take.gres) {
    if (g.pool >= 0 && g.pool < static_cast<int32_t>(pools.size()) && pools[g.pool].name == "gpu") n += g.count;
  }
  return n;
}

void NodeLedger::advance(core::NodeIndex n, core::Time now) {
  Held& h = held_[n];
  const double dt = static_cast<double>(now - h.since);
  h.since = now;
  if (dt <= 0) return;
  NodeTotals& t = totals_[n];
  t.cpu_s += static_cast<double>(h.cpus) * dt;
  t.gpu_s += static_cast<double>(h.gpus) * dt;
  t.mem_mb_s += static_cast<double>(h.mem_mb) * dt;
  const core::NodeSpec& spec = c_.nodes[n];
  const bool full = h.exclusive > 0 || h.cpus >= spec.cpus || h.mem_mb >= spec.mem_mb;
  const int64_t idle_gpus = spec.gpus() - h.gpus;
  if (full && idle_gpus > 0) t.stranded_gpu_s += static_cast<double>(idle_gpus) * dt;
}

void NodeLedger::apply(const core::Allocation& alloc, int sign, core::Time now) {
  for (const auto& take : alloc.nodes) {
    advance(take.node, now);
    Held& h = held_[take.node];
    h.cpus += sign * take.cpus;
    h.mem_mb += sign * take.mem_mb;
    h.gpus += sign * gpus_of(take);
    h.exclusive += alloc.exclusive ? sign : 0;
  }
}

void NodeLedger::close(core::Time now) {
  for (std::size_t n = 0; n < held_.size(); ++n) advance(static_cast<core::NodeIndex>(n), now);
}

}  // namespace drover::sim
