// Differential test: the reference FCFS / EASY scheduler
// (testing/reference_scheduler.hpp) against core::Scheduler, driven by the
// simulator, on random small clusters and random traces. With run time =
// limit the start times must be identical; in every cycle no node may be
// overcommitted, and no job holding a reservation may start later than the
// reservation said (a backfilled job must never delay it).
//
// Debugging aids: DROVER_DIFF_DUMP=DIR writes each case's trace as
// DIR/seedN.csv (replayable with `drover sim run`) and its shape (nodes,
// CPUs per node, whole nodes) as DIR/seedN.shape; DROVER_DIFF_TRACE=1
// prints every cycle the core ran.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "core/scheduler.hpp"
#include "sim/driver.hpp"
#include "sim/testing/reference_scheduler.hpp"
#include "sim/trace.hpp"

namespace drover::sim {
namespace {

using testing::RefJob;
using testing::RefPolicy;

struct Shape {
  int32_t nodes = 1;
  int32_t cpus = 1;      // per node
  bool whole_nodes = false;  // jobs ask for whole nodes (--exclusive) instead of one-CPU tasks
};

core::Cluster make_cluster(const Shape& s, RefPolicy policy) {
  core::Cluster c;
  c.name = "diff";
  for (int32_t i = 0; i < s.nodes; ++i) {
    core::NodeSpec n;
    n.name = "n" + std::to_string(i + 1);
    n.cores_per_socket = s.cpus;
    n.cpus = s.cpus;
    n.mem_mb = 1000;
    c.nodes.push_back(n);
  }
  core::PartitionSpec p;
  p.name = "batch";
  p.is_default = true;
  for (int32_t i = 0; i < s.nodes; ++i) p.nodes.push_back(i);
  c.partitions.push_back(p);
  c.sched.policy = policy == RefPolicy::kEasy ? core::QueuePolicy::kBackfill : core::QueuePolicy::kFcfs;
  c.sched.bf_reserve_depth = 1;
  c.sched.bf_interval = 0;
  c.sched.bf_resolution = 1;
  c.sched.bf_window = 30 * 86400;
  c.finalize();
  return c;
}

struct Workload {
  std::vector<RefJob> ref;
  Trace trace;
};

// Units: CPUs of one-CPU nodes, or whole nodes.
Workload make_workload(std::mt19937_64& rng, const Shape& s, int n_jobs, bool run_is_limit) {
  Workload w;
  const int32_t units = s.whole_nodes ? s.nodes : s.nodes * s.cpus;
  std::uniform_int_distribution<int64_t> gap(0, 40), run(1, 400), size(1, std::max(1, units));
  std::uniform_real_distribution<double> early(0.2, 1.0);
  int64_t t = 0;
  for (int i = 0; i < n_jobs; ++i) {
    t += gap(rng);
    int64_t limit = run(rng);
    int64_t r = run_is_limit ? limit : std::max<int64_t>(1, static_cast<int64_t>(limit * early(rng)));
    int64_t k = size(rng) % 3 == 0 ? size(rng) : 1 + size(rng) % std::max(1, units / 4 + 1);
    w.ref.push_back(RefJob{i + 1, t, r, limit, k});
    TraceJob j;
    j.spec.id = i + 1;
    j.label = std::to_string(i + 1);
    j.spec.user = "u" + std::to_string(i % 3);
    j.spec.account = "a";
    j.spec.submit_time = t;
    j.spec.time_limit = limit;
    if (s.whole_nodes) {
      j.spec.min_nodes = static_cast<int32_t>(k);
      j.spec.exclusive = true;
    } else {
      j.spec.ntasks = static_cast<int32_t>(k);
      j.spec.cpus_per_task = 1;
    }
    j.run_time = r;
    w.trace.jobs.push_back(j);
  }
  return w;
}

// Checks one cycle: every core held at most once, never more CPUs than a
// node has, an exclusive job alone on its nodes.
void check_no_overcommit(const core::Cluster& c, const core::CycleInput& in, const core::CycleResult& res) {
  std::map<core::NodeIndex, std::set<int32_t>> cores;
  std::map<core::NodeIndex, int32_t> holders, exclusive;
  auto take = [&](const core::Allocation& a, core::JobId id) {
    for (const auto& t : a.nodes) {
      ++holders[t.node];
      exclusive[t.node] += a.exclusive;
      for (int32_t core_id : t.cores) {
        EXPECT_TRUE(cores[t.node].insert(core_id).second) << "core " << core_id << " of node " << t.node
                                                           << " given twice (job " << id << ")";
        EXPECT_LT(core_id, c.nodes[t.node].cores()) << "job " << id;
      }
    }
  };
  for (const auto& r : in.running) take(r.alloc, r.spec->id);
  for (const auto& s : res.starts) take(s.alloc, s.job->id);
  for (const auto& [node, n] : holders) {
    EXPECT_LE(static_cast<int32_t>(cores[node].size()), c.nodes[node].cores());
    if (exclusive[node] > 0) {
      EXPECT_EQ(n, 1) << "an exclusive job shares node " << node;
    }
  }
}

// One line per cycle: running jobs [nodes]->planned end, starts, plans
// (R = reserved) @start [nodes]. For DROVER_DIFF_TRACE.
void print_cycle(const core::CycleInput& in, const core::CycleResult& res) {
  auto nodes = [](const core::Allocation& a) {
    std::string s = "[";
    for (const auto& t : a.nodes) s += std::to_string(t.node) + " ";
    return s + "]";
  };
  std::string line = "t=" + std::to_string(in.now) + " run:";
  for (const auto& r : in.running) line += " " + std::to_string(r.spec->id) + nodes(r.alloc) + "->" + std::to_string(r.end);
  line += " start:";
  for (const auto& d : res.starts) line += " " + std::to_string(d.job->id) + nodes(d.alloc);
  line += " plan:";
  for (const auto& p : res.pending) {
    line += " " + std::to_string(p.job->id) + (p.reserved ? "R" : "") + "@" + std::to_string(p.start) + "[";
    for (auto n : p.nodes) line += std::to_string(n) + " ";
    line += "]";
  }
  std::printf("%s\n", line.c_str());
}

struct Outcome {
  int compared = 0;
  int mismatched = 0;
};

// One random cluster and trace: the invariants on every cycle, then the start times against the reference.
Outcome run_case(uint64_t seed, RefPolicy policy, bool run_is_limit) {
  std::mt19937_64 rng(seed);
  Shape s;
  s.nodes = std::uniform_int_distribution<int32_t>(1, 24)(rng);
  s.cpus = std::uniform_int_distribution<int32_t>(0, 2)(rng) == 0 ? 1 : 4;
  s.whole_nodes = s.cpus > 1;
  core::Cluster cluster = make_cluster(s, policy);
  Workload w = make_workload(rng, s, 120, run_is_limit);
  if (const char* dump = std::getenv("DROVER_DIFF_DUMP")) {
    std::ofstream(std::string(dump) + "/seed" + std::to_string(seed) + ".csv") << write_native_csv(w.trace.jobs);
    std::ofstream(std::string(dump) + "/seed" + std::to_string(seed) + ".shape")
        << s.nodes << " " << s.cpus << " " << s.whole_nodes << "\n";
  }
  std::map<core::JobId, core::Time> promised;  // earliest reserved start seen
  SimOptions opts;
  const bool trace_cycles = std::getenv("DROVER_DIFF_TRACE") != nullptr;
  opts.on_cycle = [&](const core::CycleInput& in, const core::CycleOptions&, const core::CycleResult& res) {
    if (trace_cycles) print_cycle(in, res);
    check_no_overcommit(cluster, in, res);
    for (const auto& p : res.pending) {
      if (!p.reserved || p.start == core::kNoPlan) continue;
      auto [it, fresh] = promised.emplace(p.job->id, p.start);
      if (!fresh) it->second = std::min(it->second, p.start);
    }
  };
  auto result = simulate(cluster, w.trace, opts);
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  if (!result.ok()) return {};
  for (const auto& [id, at] : promised) {
    const auto& r = result->jobs[id - 1];
    EXPECT_LE(r.start, at)
        << (policy == RefPolicy::kEasy ? "EASY" : "FCFS") << " seed " << seed << ": job " << id << " held a reservation at " << at << " but started at " << r.start;
  }
  Outcome o;
  auto expected = testing::ReferenceScheduler(w.ref, s.whole_nodes ? s.nodes : s.nodes * s.cpus, policy).run();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ++o.compared;
    if (result->jobs[i].start == expected[i]) continue;
    if (++o.mismatched <= 3) {
      ADD_FAILURE() << (policy == RefPolicy::kEasy ? "EASY" : "FCFS") << " seed " << seed << " (" << s.nodes << " nodes x " << s.cpus << " CPUs"
                    << (s.whole_nodes ? ", whole nodes" : "") << "): job " << w.ref[i].id << " (size " << w.ref[i].size
                    << ", submit " << w.ref[i].submit << ", limit " << w.ref[i].limit << ") starts at "
                    << result->jobs[i].start << ", the reference says " << expected[i];
    }
  }
  return o;
}

TEST(Differential, FcfsMatchesTheReference) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    Outcome o = run_case(seed, RefPolicy::kFcfs, true);
    ASSERT_EQ(o.mismatched, 0) << "seed " << seed;
  }
}

// Jobs ending before their limits (the plan assumes the limit; the job
// ends sooner and the next cycle re-plans).
TEST(Differential, FcfsEarlyEndsMatchTheReference) {
  for (uint64_t seed = 1000; seed < 1060; ++seed) {
    Outcome o = run_case(seed, RefPolicy::kFcfs, false);
    ASSERT_EQ(o.mismatched, 0) << "seed " << seed;
  }
}

// EASY: start times as the reference's, no node overcommitted and no
// reservation broken on any cycle.
TEST(Differential, EasyMatchesTheReference) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    Outcome o = run_case(seed, RefPolicy::kEasy, true);
    ASSERT_EQ(o.mismatched, 0) << "seed " << seed;
  }
}

TEST(Differential, EasyEarlyEndsMatchTheReference) {
  for (uint64_t seed = 1000; seed < 1060; ++seed) {
    Outcome o = run_case(seed, RefPolicy::kEasy, false);
    ASSERT_EQ(o.mismatched, 0) << "seed " << seed;
  }
}

}  // namespace
}  // namespace drover::sim
