// Simulator throughput (docs/sim.md, "Speed"): the whole Lublin-1 trace
// (10,000 jobs, 256 nodes) under textbook FCFS and EASY, and generated
// traces of growing length on the 10,000-node scale-10k cluster.
//
//   build/bin/sim_bench --benchmark_filter=Lublin
//   DROVER_SIM_BENCH_JOBS=1000,10000,100000,1000000 build/bin/sim_bench --benchmark_filter=Scale10k
//
// Each case runs once (a simulation is long and deterministic); the
// counters say jobs per wall second, virtual seconds per wall second
// (how much faster than real time), scheduler passes, and the share of the
// time spent inside core::Scheduler::run_cycle.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/strings.hpp"
#include "config/core_cluster.hpp"
#include "config/model.hpp"
#include "sim/driver.hpp"
#include "sim/gen.hpp"
#include "sim/trace.hpp"

namespace drover {
namespace {

core::Cluster load_cluster(const std::string& rel) {
  auto cfg = config::load_config({std::string(DROVER_SOURCE_DIR) + "/" + rel, {}, {}});
  if (!cfg) throw std::runtime_error(cfg.error().message);
  auto c = config::build_core_cluster(*cfg);
  if (!c) throw std::runtime_error(c.error().message);
  return std::move(*c);
}

void run(benchmark::State& state, const core::Cluster& c, const sim::Trace& t) {
  sim::SimResult r;
  for (auto _ : state) {
    auto res = sim::simulate(c, t);
    if (!res) {
      state.SkipWithError(res.error().message.c_str());
      return;
    }
    r = std::move(*res);
  }
  const double wall = r.stats.wall_s > 0 ? r.stats.wall_s : 1e-9;
  state.counters["jobs"] = static_cast<double>(t.jobs.size());
  state.counters["jobs_per_s"] = static_cast<double>(t.jobs.size()) / wall;
  state.counters["x_real_time"] = static_cast<double>(r.last_end - r.first_submit) / wall;
  state.counters["passes"] = static_cast<double>(r.stats.quick_passes + r.stats.full_passes);
  state.counters["core_share"] = r.stats.core_wall_s / wall;
}

void BM_SimLublin(benchmark::State& state) {
  const std::string trace_path = std::string(DROVER_SOURCE_DIR) + "/../shared/traces/lublin-256-1.swf";
  if (!std::filesystem::exists(trace_path)) {
    state.SkipWithError("../shared/traces/lublin-256-1.swf not present");
    return;
  }
  const char* config = state.range(0) == 0 ? "tests/sim/lublin_fcfs/slurm.conf" : "tests/sim/lublin_easy/slurm.conf";
  core::Cluster c = load_cluster(config);
  auto t = sim::load_trace(trace_path, {});
  if (!t) {
    state.SkipWithError(t.error().message.c_str());
    return;
  }
  state.SetLabel(state.range(0) == 0 ? "fcfs" : "easy");
  run(state, c, *t);
}
BENCHMARK(BM_SimLublin)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

// A generated workload (drover sim gen's defaults, 2,000 submissions an
// hour: about what the training partition can take) of state.range(0) jobs.
void BM_SimScale10k(benchmark::State& state) {
  core::Cluster c = load_cluster("examples/scale-10k/slurm.conf");
  sim::GenOptions o;
  o.jobs = state.range(0);
  o.rate_per_hour = 2000;
  o.users = 200;
  o.accounts = 20;
  auto targets = sim::targets_for(c, o);
  if (!targets) {
    state.SkipWithError(targets.error().message.c_str());
    return;
  }
  sim::Trace t;
  t.jobs = sim::generate(o, *targets);
  run(state, c, t);
}

// Trace lengths from DROVER_SIM_BENCH_JOBS (default 1000,10000).
int register_scale_sizes() {
  const char* env = std::getenv("DROVER_SIM_BENCH_JOBS");
  auto* b = benchmark::RegisterBenchmark("BM_SimScale10k", BM_SimScale10k);
  for (const auto& item : split(env && *env ? env : "1000,10000", ',')) {
    if (auto n = parse_int(item); n && *n > 0) b->Arg(*n);
  }
  b->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
  return 0;
}
const int kRegistered = register_scale_sizes();

}  // namespace
}  // namespace drover
