// The index, the rise walk and the bounds learnt during a cycle only make
// the search cheaper: on random clusters and queues every decision must be
// the one the plain search (every node looked at) makes.
#include <gtest/gtest.h>

#include <random>

#include "core/core_test_util.hpp"
#include "core/scheduler.hpp"

namespace drover::core {
namespace {

using testing::Jobs;

struct World {
  Cluster cluster;
  Jobs specs;
  std::vector<RunningJob> running;
  std::vector<const JobSpec*> pending;
  Time now = 100000;
};

int64_t pick(std::mt19937_64& g, int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); }

// two_partitions: a second partition "q" over the first half of the nodes
// (for the FCFS tests; the other tests' worlds stay as they were).
// extra_pool: every node also has a counted "nic" pool, so GPU nodes have
// two pools (the rise walk carries the first pool's amount itself and reads
// the others from the moment's full record).
Cluster random_cluster(std::mt19937_64& g, bool two_partitions = false, int64_t mem_per_core = 1000,
                       bool extra_pool = false) {
  testing::ClusterBuilder b;
  int groups = static_cast<int>(pick(g, 1, 3));
  std::vector<std::string> all;
  for (int k = 0; k < groups; ++k) {
    int32_t cores = static_cast<int32_t>(2 * pick(g, 2, 8));
    int32_t gpus = pick(g, 0, 2) == 0 ? 0 : static_cast<int32_t>(pick(g, 1, 4));
    std::string feature = gpus > 0 ? (pick(g, 0, 1) ? "h100" : "a100") : "cpu";
    int n = static_cast<int>(pick(g, 1, 6));
    for (int i = 0; i < n; ++i) {
      std::string name = "g" + std::to_string(k) + "n" + std::to_string(i);
      NodeSpec spec = testing::node(name, cores, mem_per_core * cores, feature, gpus, {feature},
                                    static_cast<uint32_t>(pick(g, 1, 2)));
      if (extra_pool) {
        GresPool nic;
        nic.name = "nic";
        nic.count = static_cast<int32_t>(pick(g, 1, 4));
        spec.gres.push_back(nic);
      }
      b.add(std::move(spec));
      all.push_back(name);
    }
  }
  b.partition("p", all, true);
  if (two_partitions) b.partition("q", std::vector<std::string>(all.begin(), all.begin() + (all.size() + 1) / 2), false);
  Cluster c = b.build();
  c.sched.bf_resolution = pick(g, 0, 1) ? 1 : 60;
  c.sched.bf_window = pick(g, 0, 3) == 0 ? 3000 : 200000;
  c.sched.bf_reserve_depth = pick(g, 0, 2) == 0 ? 1 : kNoLimit;
  if (pick(g, 0, 5) == 0) c.sched.policy = QueuePolicy::kFcfs;
  return c;
}

void random_job(std::mt19937_64& g, JobSpec& j, const Cluster& c) {
  j.time_limit = 60 * pick(g, 1, 120);
  j.submit_time = 0;
  int shape = static_cast<int>(pick(g, 0, 4));
  const NodeSpec& any = c.nodes[static_cast<size_t>(pick(g, 0, static_cast<int64_t>(c.nodes.size()) - 1))];
  if (shape == 0) {
    j.exclusive = true;
    j.min_nodes = static_cast<int32_t>(pick(g, 1, 3));
  } else if (shape == 1 && any.gpus() > 0) {
    j.gres = {GresSpec{"gpu", "", pick(g, 1, any.gpus())}};
    j.cpus_per_task = static_cast<int32_t>(pick(g, 1, 4));
  } else if (shape == 2) {
    j.min_nodes = static_cast<int32_t>(pick(g, 1, 2));
    j.ntasks_per_node = static_cast<int32_t>(pick(g, 1, 4));
  } else if (shape == 3) {
    j.ntasks = static_cast<int32_t>(pick(g, 1, 12));  // spread over as few nodes as hold it
  } else {
    j.cpus_per_task = static_cast<int32_t>(pick(g, 1, any.cpus));
  }
  if (pick(g, 0, 4) == 0) j.constraint = any.features.front();
}

// huge_memory: nodes with more memory (in MB) than an int32 holds, and
// jobs asking for amounts on both sides of that (the index keeps int32 bounds).
World random_world(uint64_t seed, bool two_partitions = false, bool huge_memory = false, bool extra_pool = false) {
  std::mt19937_64 g(seed);
  World w;
  const int64_t mem_per_core = huge_memory ? (int64_t{1} << 31) : 1000;
  w.cluster = random_cluster(g, two_partitions, mem_per_core, extra_pool);
  auto ask_memory = [&](JobSpec& j) {
    if (huge_memory && pick(g, 0, 1) == 0) j.mem_per_node_mb = pick(g, 1, 3) * (mem_per_core / 2) + pick(g, 0, 999);
    if (extra_pool && pick(g, 0, 1) == 0) j.gres.push_back(GresSpec{"nic", "", pick(g, 1, 3)});
  };
  // Place some running jobs with the scheduler itself, then age them.
  std::vector<const JobSpec*> first;
  int run = static_cast<int>(pick(g, 0, 12));
  for (int i = 0; i < run; ++i) {
    JobSpec& j = w.specs.add(1000 + i);
    random_job(g, j, w.cluster);
    ask_memory(j);
    first.push_back(&j);
  }
  Scheduler placer(w.cluster);
  CycleInput in;
  in.now = w.now;
  in.pending = first;
  for (StartDecision& d : placer.run_cycle(in).starts) {
    RunningJob r;
    r.spec = d.job;
    r.partition = d.partition;
    r.start = w.now - pick(g, 0, 3000);
    r.end = r.start + pick(g, 60, 8000);
    r.alloc = d.alloc;
    w.running.push_back(r);
  }
  int queue = static_cast<int>(pick(g, 1, 40));
  for (int i = 0; i < queue; ++i) {
    JobSpec& j = w.specs.add(1 + i);
    random_job(g, j, w.cluster);
    ask_memory(j);
    j.submit_time = i;
    if (two_partitions && pick(g, 0, 1) == 0) j.partitions = {"q"};
    w.pending.push_back(&j);
  }
  return w;
}

CycleResult run(const World& w, bool reference, bool estimates = true, bool behind_blocked = true,
               size_t index_threshold = 0) {
  Scheduler s(w.cluster);
  s.use_reference_search(reference);
  s.set_index_threshold(index_threshold);  // 0: the index even for these small groups
  CycleInput in;
  in.now = w.now;
  in.running = w.running;
  in.pending = w.pending;
  CycleOptions opts;
  opts.estimate_unreserved = estimates;
  opts.plan_behind_blocked = behind_blocked;
  return s.run_cycle(in, opts);
}

// The same jobs start, in the same order, on the same nodes and cores.
void expect_same_starts(const CycleResult& x, const CycleResult& y, uint64_t seed) {
  ASSERT_EQ(x.starts.size(), y.starts.size()) << "seed " << seed;
  for (size_t i = 0; i < x.starts.size(); ++i) {
    const StartDecision &a = x.starts[i], &b = y.starts[i];
    ASSERT_EQ(a.job->id, b.job->id) << "seed " << seed;
    ASSERT_EQ(a.alloc.nodes.size(), b.alloc.nodes.size()) << "seed " << seed;
    for (size_t k = 0; k < a.alloc.nodes.size(); ++k) {
      EXPECT_EQ(a.alloc.nodes[k].node, b.alloc.nodes[k].node) << "seed " << seed << " job " << a.job->id;
      EXPECT_EQ(a.alloc.nodes[k].cores, b.alloc.nodes[k].cores) << "seed " << seed << " job " << a.job->id;
    }
  }
}

// FCFS: leaving out the plans behind a queue blocked in every partition
// changes no start and no reason; only plans behind it go (and some do).
TEST(SearchEquivalence, NotPlanningBehindABlockedFcfsQueueChangesNoDecision) {
  int64_t left_out = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    World w = random_world(seed, seed % 2 == 0);
    w.cluster.sched.policy = QueuePolicy::kFcfs;
    CycleResult with = run(w, false, false, true), without = run(w, false, false, false);
    expect_same_starts(with, without, seed);
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_EQ(with.pending.size(), without.pending.size()) << "seed " << seed;
    for (size_t i = 0; i < with.pending.size(); ++i) {
      const PendingPlan &a = with.pending[i], &b = without.pending[i];
      ASSERT_EQ(a.job->id, b.job->id) << "seed " << seed;
      EXPECT_EQ(a.reason, b.reason) << "seed " << seed << " job " << a.job->id;
      EXPECT_EQ(a.never, b.never) << "seed " << seed << " job " << a.job->id;
      if (b.reserved) {
        EXPECT_EQ(a.start, b.start) << "seed " << seed << " job " << a.job->id;
      }
      if (a.reserved && !b.reserved) {
        EXPECT_EQ(b.start, kNoPlan) << "seed " << seed << " job " << a.job->id;
        ++left_out;
      }
    }
  }
  EXPECT_GT(left_out, 0);  // the option did leave plans out somewhere
}

TEST(SearchEquivalence, LeavingOutEstimatesChangesNoDecision) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    World w = random_world(seed);
    CycleResult with = run(w, false, true), without = run(w, false, false);
    ASSERT_EQ(with.starts.size(), without.starts.size()) << "seed " << seed;
    for (size_t i = 0; i < with.starts.size(); ++i) {
      EXPECT_EQ(with.starts[i].job->id, without.starts[i].job->id) << "seed " << seed;
      EXPECT_EQ(with.starts[i].alloc.nodes[0].node, without.starts[i].alloc.nodes[0].node) << "seed " << seed;
    }
    for (size_t i = 0; i < with.pending.size(); ++i) {
      EXPECT_EQ(with.pending[i].reserved, without.pending[i].reserved) << "seed " << seed;
      if (with.pending[i].reserved) {
        EXPECT_EQ(with.pending[i].start, without.pending[i].start) << "seed " << seed;
      } else {
        EXPECT_EQ(without.pending[i].start, kNoPlan) << "seed " << seed;
      }
    }
  }
}

// Every start, and every pending job's reason, planned start and nodes.
void expect_same_decisions(const CycleResult& x, const CycleResult& y, uint64_t seed) {
  expect_same_starts(x, y, seed);
  if (::testing::Test::HasFatalFailure()) return;
  ASSERT_EQ(x.pending.size(), y.pending.size()) << "seed " << seed;
  for (size_t i = 0; i < x.pending.size(); ++i) {
    const PendingPlan &a = x.pending[i], &b = y.pending[i];
    ASSERT_EQ(a.job->id, b.job->id) << "seed " << seed;
    EXPECT_EQ(a.reason, b.reason) << "seed " << seed << " job " << a.job->id;
    EXPECT_EQ(a.start, b.start) << "seed " << seed << " job " << a.job->id;
    EXPECT_EQ(a.nodes, b.nodes) << "seed " << seed << " job " << a.job->id;
    EXPECT_EQ(a.reserved, b.reserved) << "seed " << seed << " job " << a.job->id;
  }
}

TEST(SearchEquivalence, IndexedSearchDecidesAsThePlainSearch) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    World w = random_world(seed);
    expect_same_decisions(run(w, false), run(w, true), seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The index's bounds are int32 (clamped): amounts beyond that decide as the plain search does.
TEST(SearchEquivalence, MemoryBeyondInt32DecidesAsThePlainSearch) {
  int64_t big = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    World w = random_world(seed, false, true);
    for (const NodeSpec& n : w.cluster.nodes) big += n.mem_mb > INT32_MAX;
    expect_same_decisions(run(w, false), run(w, true), seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(big, 0);
}

// Nodes with two pools: jobs asking for the second decide as the plain search does.
TEST(SearchEquivalence, SecondPoolDecidesAsThePlainSearch) {
  int64_t asked = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    World w = random_world(seed, false, false, true);
    for (const JobSpec* j : w.pending) asked += !j->gres.empty() && j->gres.back().name == "nic";
    expect_same_decisions(run(w, false), run(w, true), seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(asked, 0);
}

// By default a group is searched node by node until the cycle has searched
// it often, then through its index, built in the middle of the cycle: the
// decisions are those of the index from the start.
TEST(SearchEquivalence, SwitchingToTheIndexMidCycleDecidesTheSame) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    World w = random_world(seed);
    expect_same_decisions(run(w, false, true, true, SIZE_MAX), run(w, false), seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace drover::core
