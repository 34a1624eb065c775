// Micro-benchmarks of the scheduling core: one full cycle on small and
// mid-size clusters, the shapes the simulator replays (Lublin: 256 one-CPU
// nodes and jobs of 1-256 nodes) and a GPU cluster with single-node jobs.
#include <benchmark/benchmark.h>

#include <deque>
#include <random>

#include "core/scheduler.hpp"

namespace {

using namespace drover;
using namespace drover::core;

struct World {
  Cluster cluster;
  std::deque<JobSpec> specs;
  std::vector<RunningJob> running;
  std::vector<const JobSpec*> pending;
};

Cluster one_cpu_nodes(int n) {
  Cluster c;
  PartitionSpec p;
  p.name = "batch";
  p.is_default = true;
  for (int i = 0; i < n; ++i) {
    NodeSpec node;
    node.name = "n" + std::to_string(i);
    node.cpus = 1;
    node.mem_mb = 1000;
    c.nodes.push_back(node);
    p.nodes.push_back(i);
  }
  c.partitions.push_back(p);
  c.sched.bf_resolution = 1;
  c.sched.bf_reserve_depth = 1;
  c.sched.bf_window = 43200;
  c.finalize();
  return c;
}

// Half the nodes busy with jobs ending over the next hours; `pending` jobs
// of 1-64 nodes waiting.
World lublin_like(int nodes, int pending) {
  World w;
  w.cluster = one_cpu_nodes(nodes);
  std::mt19937_64 g(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(g); };
  for (int i = 0; i < nodes / 2; ++i) {
    JobSpec& j = w.specs.emplace_back();
    j.id = 100000 + i;
    RunningJob r;
    r.spec = &j;
    r.start = 0;
    r.end = 1000 + pick(0, 20000);
    NodeTake t;
    t.node = i;
    t.cores = {0};
    t.cpus = 1;
    t.mem_mb = 1000;
    r.alloc.nodes = {t};
    w.running.push_back(r);
  }
  for (int i = 0; i < pending; ++i) {
    JobSpec& j = w.specs.emplace_back();
    j.id = i + 1;
    j.submit_time = i;
    j.ntasks = 1 << pick(0, 6);
    j.time_limit = 60 * pick(1, 600);
    w.pending.push_back(&j);
  }
  return w;
}

void BM_LublinLikeCycle(benchmark::State& state) {
  World w = lublin_like(256, static_cast<int>(state.range(0)));
  Scheduler s(w.cluster);
  CycleInput in;
  in.now = 1000;
  in.running = w.running;
  in.pending = w.pending;
  for (auto _ : state) {
    CycleResult r = s.run_cycle(in);
    benchmark::DoNotOptimize(r.starts.size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(w.pending.size()));
}
BENCHMARK(BM_LublinLikeCycle)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

}  // namespace
