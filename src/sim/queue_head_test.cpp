// Where a pass settles early (FCFS, or a quick pass, once every partition is
// blocked), the replay gives the core only the head of its queue
// (CycleStats::settled). Here the same replays run with the whole queue
// given to every pass, and every job must start, end and be labelled the
// same: on the seed's cluster under FCFS and under backfill with quick
// passes (static multifactor priorities, so the queue order is not the
// submit order), and on the Lublin trace under FCFS.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/driver.hpp"
#include "sim/sim_test_util.hpp"
#include "sim/trace.hpp"

namespace drover::sim {
namespace {

std::string row(const JobRecord& r) {
  return std::to_string(r.submit) + " " + std::to_string(r.start) + " " + std::to_string(r.end) + " " +
         job_state_name(r.state) + " " + start_how_name(r.how) + " p" + std::to_string(r.partition) + " n" +
         std::to_string(r.nodes) + " c" + std::to_string(r.cpus) + " g" + std::to_string(r.gpus) + " " + r.note;
}

// Replays both ways; returns how many passes got only the head.
int64_t same_both_ways(const core::Cluster& c, const Trace& t, const std::string& what) {
  SimOptions head;
  SimOptions whole;
  whole.whole_queue = true;
  auto a = simulate(c, t, head);
  auto b = simulate(c, t, whole);
  EXPECT_TRUE(a.ok() && b.ok()) << what;
  if (!a.ok() || !b.ok()) return 0;
  EXPECT_EQ(b->stats.head_passes, 0) << what;
  EXPECT_EQ(a->stats.quick_passes, b->stats.quick_passes) << what;
  EXPECT_EQ(a->stats.full_passes, b->stats.full_passes) << what;
  EXPECT_EQ(a->jobs.size(), b->jobs.size()) << what;
  for (size_t i = 0; i < a->jobs.size() && i < b->jobs.size(); ++i) {
    EXPECT_EQ(row(a->jobs[i]), row(b->jobs[i])) << what << ": job " << t.jobs[i].spec.id;
    if (::testing::Test::HasFailure()) break;
  }
  return a->stats.head_passes;
}

TEST(QueueHead, SeedClusterUnderFcfsDecidesAsWithTheWholeQueue) {
  core::Cluster c = testing::cluster_at("examples/seed/slurm.conf");
  c.sched.policy = core::QueuePolicy::kFcfs;
  c.priority.kind = core::PriorityKind::kBasic;
  // A job held by a QOS limit does not block its partition's queue: with
  // the seed's limits the walk seldom settles (and gets the whole queue).
  for (core::QosSpec& q : c.qos) {
    q.grp_tres.clear();
    q.max_tres_per_user.clear();
    q.grp_jobs = core::kNoLimit;
    q.max_jobs_per_user = core::kNoLimit;
  }
  for (uint64_t seed : {1, 2}) {
    const Trace t = testing::generated(c, 800, 30000, seed);
    int64_t heads = same_both_ways(c, t, "fcfs, seed " + std::to_string(seed));
    EXPECT_GT(heads, 10) << "seed " << seed;
  }
}

// Priorities from QOS, partition and size only: they do not move with
// time, and a later job may go ahead of earlier ones.
TEST(QueueHead, BackfillQuickPassesWithStaticPrioritiesDecideAsWithTheWholeQueue) {
  core::Cluster c = testing::cluster_at("examples/seed/slurm.conf");
  ASSERT_EQ(c.priority.kind, core::PriorityKind::kMultifactor);
  c.priority.weight_age = 0;
  c.priority.weight_fairshare = 0;
  c.priority.weight_qos = 10000;
  c.priority.weight_job_size = 1000;
  c.priority.weight_partition = 1000;
  ASSERT_EQ(c.sched.policy, core::QueuePolicy::kBackfill);
  c.sched.bf_interval = 60;
  for (uint64_t seed : {3, 4}) {
    const Trace t = testing::generated(c, 800, 3000, seed);
    int64_t heads = same_both_ways(c, t, "backfill, seed " + std::to_string(seed));
    EXPECT_GT(heads, 50) << "seed " << seed;
  }
}

TEST(QueueHead, LublinUnderFcfsDecidesAsWithTheWholeQueue) {
  const core::Cluster c = testing::cluster_at("tests/sim/lublin_fcfs/slurm.conf");
  TraceOptions to;
  to.first = 1;
  to.count = 2500;
  auto t = load_trace(std::string(DROVER_SOURCE_DIR) + "/../shared/traces/lublin-256-1.swf", to);
  if (!t.ok()) GTEST_SKIP() << "the Lublin trace is not here: " << t.error().message;
  EXPECT_GT(same_both_ways(c, *t, "lublin fcfs"), 1000);
}

}  // namespace
}  // namespace drover::sim
