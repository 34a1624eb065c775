// Concrete resources on each node for a job starting now: which cores,
// which GPU devices. GPUs first, chosen so their close cores are free; then
// cores close to those GPUs; a job without GPUs takes cores from the socket
// that holds it most tightly, away from free GPUs where it can.
#include <algorithm>
#include <numeric>

#include "core/cycle.hpp"

namespace drover::core {

namespace {

int32_t free_close(const GresPool& pool, size_t dev, const NodeUse& u) {
  if (dev >= pool.close_cores.size() || pool.close_cores[dev].empty()) {
    return static_cast<int32_t>(std::count(u.core_used.begin(), u.core_used.end(), 0));
  }
  int32_t n = 0;
  for (int32_t core : pool.close_cores[dev]) {
    if (core >= 0 && core < static_cast<int32_t>(u.core_used.size()) && !u.core_used[core]) ++n;
  }
  return n;
}

// Devices of one pool: the free ones with the most free close cores first.
std::vector<int32_t> pick_devices(const GresPool& pool, std::vector<uint8_t>& used, const NodeUse& u, int32_t count) {
  std::vector<int32_t> free;
  for (size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) free.push_back(static_cast<int32_t>(i));
  }
  if (free.size() > 1) {
    std::stable_sort(free.begin(), free.end(), [&](int32_t a, int32_t b) {
      return free_close(pool, static_cast<size_t>(a), u) > free_close(pool, static_cast<size_t>(b), u);
    });
  }
  if (static_cast<int32_t>(free.size()) > count) free.resize(static_cast<size_t>(count));
  std::sort(free.begin(), free.end());
  for (int32_t d : free) used[static_cast<size_t>(d)] = 1;
  return free;
}

// How many free devices a core is close to (for keeping CPU-only jobs off them).
std::vector<int32_t> gpu_pull(const NodeSpec& spec, const NodeUse& u) {
  std::vector<int32_t> pull(u.core_used.size(), 0);
  for (size_t p = 0; p < spec.gres.size(); ++p) {
    const GresPool& pool = spec.gres[p];
    if (pool.name != "gpu" || p >= u.dev_used.size()) continue;
    for (size_t d = 0; d < u.dev_used[p].size(); ++d) {
      if (u.dev_used[p][d] || d >= pool.close_cores.size()) continue;
      for (int32_t core : pool.close_cores[d]) {
        if (core >= 0 && core < static_cast<int32_t>(pull.size())) ++pull[core];
      }
    }
  }
  return pull;
}

std::vector<int32_t> pick_cores(const NodeSpec& spec, NodeUse& u, int32_t count, const std::vector<int32_t>& near) {
  std::vector<int32_t> out;
  auto take = [&](int32_t core) {
    if (static_cast<int32_t>(out.size()) < count && !u.core_used[core]) {
      u.core_used[core] = 1;
      out.push_back(core);
    }
  };
  for (int32_t core : near) take(core);
  if (static_cast<int32_t>(out.size()) < count) {
    int32_t per = std::max(1, spec.cores_per_socket);
    int32_t sockets = std::max(1, static_cast<int32_t>((u.core_used.size() + per - 1) / per));
    std::vector<int32_t> free_in(sockets, 0);
    for (size_t i = 0; i < u.core_used.size(); ++i) {
      if (!u.core_used[i]) ++free_in[static_cast<int32_t>(i) / per];
    }
    int32_t left = count - static_cast<int32_t>(out.size());
    // Best fit: the socket with the fewest free cores that holds the rest;
    // otherwise the sockets with the most free cores first.
    std::vector<int32_t> order(sockets);
    std::iota(order.begin(), order.end(), 0);
    int32_t tight = -1;
    for (int32_t s : order) {
      if (free_in[s] >= left && (tight < 0 || free_in[s] < free_in[tight])) tight = s;
    }
    if (order.size() > 1) {
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return free_in[a] > free_in[b]; });
    }
    if (tight >= 0) {
      order.erase(std::find(order.begin(), order.end(), tight));
      order.insert(order.begin(), tight);
    }
    // Without GPUs every core pulls the same: the cores keep their order.
    const bool gpus = std::any_of(spec.gres.begin(), spec.gres.end(), [](const GresPool& g) { return g.name == "gpu"; });
    std::vector<int32_t> pull = gpus ? gpu_pull(spec, u) : std::vector<int32_t>{};
    std::vector<int32_t> cores;
    for (int32_t s : order) {
      cores.clear();
      for (int32_t i = s * per; i < std::min<int32_t>((s + 1) * per, static_cast<int32_t>(u.core_used.size())); ++i) {
        if (!u.core_used[i]) cores.push_back(i);
      }
      if (gpus && cores.size() > 1) {
        std::stable_sort(cores.begin(), cores.end(), [&](int32_t a, int32_t b) { return pull[a] < pull[b]; });
      }
      for (int32_t core : cores) take(core);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Allocation Scheduler::Impl::allocate(const PartChoice& pc, const Placement& p) {
  Allocation a;
  a.exclusive = pc.demand.whole_node;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    NodeIndex n = p.nodes[i];
    const NodeSpec& spec = c.nodes[n];
    NodeNeed need = need_on(p.gpus.empty() ? pc.demand : with_gpus_per_node(pc.demand, p.gpus[i]), spec, p.tasks[i]);
    touch(n, kSavedUse);
    NodeUse& u = use[n];
    NodeTake take;
    take.node = n;
    take.tasks = p.tasks[i];
    take.mem_mb = need.mem_mb;
    std::vector<int32_t> near;
    for (size_t pool = 0; pool < spec.gres.size(); ++pool) {
      int32_t want = need.pool[pool];
      if (want <= 0) continue;
      GresTake g;
      g.pool = static_cast<int32_t>(pool);
      g.count = want;
      const GresPool& gp = spec.gres[pool];
      if (!gp.device_ids.empty() && pool < u.dev_used.size()) {
        g.devices = pick_devices(gp, u.dev_used[pool], u, want);
        for (int32_t d : g.devices) {
          if (static_cast<size_t>(d) < gp.close_cores.size()) {
            near.insert(near.end(), gp.close_cores[d].begin(), gp.close_cores[d].end());
          }
        }
      }
      take.gres.push_back(std::move(g));
    }
    std::sort(near.begin(), near.end());
    near.erase(std::unique(near.begin(), near.end()), near.end());
    near.erase(std::remove_if(near.begin(), near.end(),
                              [&](int32_t core) { return core < 0 || core >= static_cast<int32_t>(u.core_used.size()); }),
               near.end());
    take.cores = pick_cores(spec, u, need.cores, near);
    take.cpus = static_cast<int32_t>(take.cores.size()) * std::max(1, spec.threads_per_core);
    a.nodes.push_back(std::move(take));
  }
  return a;
}

}  // namespace drover::core
