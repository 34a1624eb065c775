// The replay stamps its running jobs (RunningJob::stamp), so the core keeps
// what they hold from one pass to the next. Here every pass of a replay is
// run a second time, on a scheduler given the same input without stamps
// (counting everything afresh, as the controller does), and both must
// decide the same: on the seed's cluster with its QOS limits and arrays,
// on scale-10k, and on a Lublin slice under EASY and FCFS.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/reason.hpp"
#include "core/scheduler.hpp"
#include "sim/driver.hpp"
#include "sim/sim_test_util.hpp"
#include "sim/trace.hpp"

namespace drover::sim {
namespace {

std::string describe(const core::StartDecision& d) {
  std::string s = std::to_string(d.job->id) + " in " + std::to_string(d.partition) + ":";
  for (const core::NodeTake& t : d.alloc.nodes) {
    s += " n" + std::to_string(t.node) + "/" + std::to_string(t.mem_mb) + "M/c";
    for (int32_t core : t.cores) s += std::to_string(core) + ",";
    for (const core::GresTake& g : t.gres) {
      for (int32_t dev : g.devices) s += "/g" + std::to_string(dev);
    }
  }
  return s;
}

std::string describe(const core::PendingPlan& p) {
  std::string s = std::to_string(p.job->id) + " " + std::string(core::reason_name(p.reason)) + " at " +
                  std::to_string(p.start) + (p.reserved ? " reserved" : "");
  for (core::NodeIndex n : p.nodes) s += " n" + std::to_string(n);
  return s;
}

struct Counts {
  int64_t passes = 0, stamped = 0, starts = 0;
};

// Replays the trace; each pass is checked against a scheduler that keeps nothing.
Counts replay_both_ways(const core::Cluster& c, const Trace& t) {
  core::Scheduler plain(c);
  Counts n;
  SimOptions opts;
  opts.on_cycle = [&](const core::CycleInput& in, const core::CycleOptions& o, const core::CycleResult& res) {
    if (::testing::Test::HasFailure()) return;
    ++n.passes;
    n.starts += static_cast<int64_t>(res.starts.size());
    std::vector<core::RunningJob> running(in.running.begin(), in.running.end());
    for (core::RunningJob& r : running) {
      n.stamped += r.stamp != 0;
      r.stamp = 0;
    }
    core::CycleInput unstamped = in;
    unstamped.running = running;
    core::CycleResult want = plain.run_cycle(unstamped, o);
    const std::string where = "pass " + std::to_string(n.passes) + " at " + std::to_string(in.now);
    ASSERT_EQ(res.starts.size(), want.starts.size()) << where;
    for (size_t i = 0; i < res.starts.size(); ++i) {
      ASSERT_EQ(describe(res.starts[i]), describe(want.starts[i])) << where;
      ASSERT_EQ(res.starts[i].kind, want.starts[i].kind) << where;
    }
    ASSERT_EQ(res.pending.size(), want.pending.size()) << where;
    for (size_t i = 0; i < res.pending.size(); ++i) {
      ASSERT_EQ(describe(res.pending[i]), describe(want.pending[i])) << where;
    }
    ASSERT_EQ(res.stats.profile_steps, want.stats.profile_steps) << where;
  };
  auto r = simulate(c, t, opts);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return n;
}

TEST(KeptStateReplay, SeedClusterWithQosLimitsAndArrays) {
  const core::Cluster c = testing::cluster_at("examples/seed/slurm.conf");
  for (uint64_t seed : {1, 2}) {
    Counts n = replay_both_ways(c, testing::generated(c, 600, 400, seed));
    EXPECT_GT(n.passes, 100) << "seed " << seed;
    EXPECT_GT(n.stamped, 1000) << "seed " << seed;
    EXPECT_GT(n.starts, 500) << "seed " << seed;
  }
}

TEST(KeptStateReplay, Scale10k) {
  const core::Cluster c = testing::cluster_at("examples/scale-10k/slurm.conf");
  // Short jobs: they end while others wait, so passes count jobs out as well as in.
  Counts n = replay_both_ways(c, testing::generated(c, 1500, 6000, 3, 0.02));
  EXPECT_GT(n.passes, 150);
  EXPECT_EQ(n.starts, 1500);
}

TEST(KeptStateReplay, LublinSliceEasyAndFcfs) {
  for (const char* conf : {"tests/sim/lublin_easy/slurm.conf", "tests/sim/lublin_fcfs/slurm.conf"}) {
    const core::Cluster c = testing::cluster_at(conf);
    TraceOptions to;
    to.first = 2048;
    to.count = 400;
    auto t = load_trace(std::string(DROVER_SOURCE_DIR) + "/../shared/traces/lublin-256-1.swf", to);
    if (!t.ok()) GTEST_SKIP() << "the Lublin trace is not here: " << t.error().message;
    Counts n = replay_both_ways(c, *t);
    EXPECT_GT(n.passes, 300) << conf;
    EXPECT_EQ(n.starts, 400) << conf;
  }
}

}  // namespace
}  // namespace drover::sim
