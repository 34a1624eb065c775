// Where a pass settles early (FCFS, or a quick pass, once every partition in
// use is blocked), the replay gives the core only the head of its queue
// (CycleStats::settled), and it skips a backfill tick whose only events
// were submits queued behind where the last full pass settled. Here the
// same replays run with the whole queue given to every pass and every tick
// run, and every job must start, end and be labelled the same: on the
// seed's cluster under FCFS and under backfill with quick passes (static
// multifactor priorities, so the queue order is not the submit order), on
// random FCFS queues over three partitions, and on the Lublin trace. A
// backfill pass at a step whose only events were submits queued behind the
// whole queue carries the last walk on (its reservations and the new jobs,
// Driver::carry_ok_): EASY and deeper backfill on Lublin and on random
// queues over partitions of two node kinds, and the seed's cluster with
// a pass at every event.
#include <random>
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

struct Passes {
  int64_t head = 0;            // passes given only the head of the queue
  int64_t full_skipped = 0;    // full passes the whole-queue replay ran and this one did not need
  int64_t carried = 0;         // full passes that carried the last walk on
};

// Replays both ways.
Passes same_both_ways(const core::Cluster& c, const Trace& t, const std::string& what) {
  SimOptions head;
  SimOptions whole;
  whole.whole_queue = true;
  auto a = simulate(c, t, head);
  auto b = simulate(c, t, whole);
  EXPECT_TRUE(a.ok() && b.ok()) << what;
  if (!a.ok() || !b.ok()) return {};
  EXPECT_EQ(b->stats.head_passes, 0) << what;
  EXPECT_EQ(b->stats.carried_passes, 0) << what;
  // A backfill tick after submits that only queued behind a settled FCFS
  // queue needs no full pass (Driver::behind_settled).
  EXPECT_LE(a->stats.full_passes, b->stats.full_passes) << what;
  EXPECT_EQ(a->jobs.size(), b->jobs.size()) << what;
  for (size_t i = 0; i < a->jobs.size() && i < b->jobs.size(); ++i) {
    EXPECT_EQ(row(a->jobs[i]), row(b->jobs[i])) << what << ": job " << t.jobs[i].spec.id;
    if (::testing::Test::HasFailure()) break;
  }
  return {a->stats.head_passes, b->stats.full_passes - a->stats.full_passes, a->stats.carried_passes};
}

TEST(QueueHead, SeedClusterUnderFcfsDecidesAsWithTheWholeQueue) {
  core::Cluster c = testing::cluster_at("examples/seed/slurm.conf");
  c.sched.policy = core::QueuePolicy::kFcfs;
  // Priorities that do not move with time, and a later job may go ahead.
  c.priority.weight_age = 0;
  c.priority.weight_fairshare = 0;
  c.priority.weight_qos = 10000;
  c.priority.weight_job_size = 1000;
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
    Passes n = same_both_ways(c, t, "fcfs, seed " + std::to_string(seed));
    EXPECT_GT(n.head, 10) << "seed " << seed;
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
    Passes n = same_both_ways(c, t, "backfill, seed " + std::to_string(seed));
    EXPECT_GT(n.head, 50) << "seed " << seed;
    EXPECT_GT(n.full_skipped, 0) << "seed " << seed;  // ticks with nothing new to decide
  }
}

// Eight one-CPU nodes; "all" over every node, "half" over four of them
// (PriorityTier 2), an idle partition "spare"; two QOS. Random jobs, often
// enough that a queue builds up: some go ahead of the blocked head, some
// into a partition no one else waits in.
TEST(QueueHead, RandomFcfsQueuesOverPartitionsDecideAsWithTheWholeQueue) {
  const std::string conf =
      "SchedulerType=sched/builtin\nPriorityType=priority/multifactor\nPriorityWeightQOS=1000\n"
      "PriorityWeightAge=0\nPriorityWeightFairshare=0\nSelectTypeParameters=CR_Core\n"
      "SchedulerParameters=bf_interval=20\n"
      "NodeName=n[1-8] CPUs=1 Sockets=1 CoresPerSocket=1 ThreadsPerCore=1 RealMemory=1000\n"
      "NodeName=s1 CPUs=1 Sockets=1 CoresPerSocket=1 ThreadsPerCore=1 RealMemory=1000\n"
      "PartitionName=all Nodes=n[1-8] Default=YES MaxTime=INFINITE State=UP\n"
      "PartitionName=half Nodes=n[1-4] PriorityTier=2 MaxTime=INFINITE State=UP\n"
      "PartitionName=spare Nodes=s1 MaxTime=INFINITE State=UP\n";
  const std::string qos = "Name=normal\nName=high Priority=100\n";
  const core::Cluster c = testing::cluster_from(conf, "", qos);
  int64_t skipped = 0, heads = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    std::string csv = "id,submit,run_time,time_limit,ntasks,partition,qos\n";
    int64_t t = 0;
    for (int id = 1; id <= 400; ++id) {
      t += static_cast<int64_t>(rng() % 40);
      const int64_t run = 10 + static_cast<int64_t>(rng() % 300);
      const char* part = rng() % 10 == 0 ? "spare" : (rng() % 3 == 0 ? "half" : "all");
      const int64_t tasks = std::string(part) == "spare" ? 1 : 1 + static_cast<int64_t>(rng() % 4);
      csv += std::to_string(id) + "," + std::to_string(t) + "," + std::to_string(run) + "," +
             std::to_string(run + static_cast<int64_t>(rng() % 100)) + "," + std::to_string(tasks) + "," + part +
             "," + (rng() % 4 == 0 ? "high" : "normal") + "\n";
    }
    Passes n = same_both_ways(c, testing::trace_from(csv), "seed " + std::to_string(seed));
    heads += n.head;
    skipped += n.full_skipped;
  }
  EXPECT_GT(heads, 100);
  EXPECT_GT(skipped, 50);
}

TEST(QueueHead, LublinUnderFcfsDecidesAsWithTheWholeQueue) {
  const core::Cluster c = testing::cluster_at("tests/sim/lublin_fcfs/slurm.conf");
  TraceOptions to;
  to.first = 1;
  to.count = 1200;
  auto t = load_trace(std::string(DROVER_SOURCE_DIR) + "/../shared/traces/lublin-256-1.swf", to);
  if (!t.ok()) GTEST_SKIP() << "the Lublin trace is not here: " << t.error().message;
  Passes n = same_both_ways(c, *t, "lublin fcfs");
  EXPECT_GT(n.head, 1000);
  EXPECT_GT(n.full_skipped, 500);
}

// EASY (one reservation), four reservations and none, a pass at every
// event, and a coarse bf_resolution on a slice of Lublin.
TEST(QueueHead, LublinUnderBackfillCarriesWalksOnAsWithTheWholeQueue) {
  TraceOptions to;
  to.first = 2000;
  to.count = 1500;
  auto t = load_trace(std::string(DROVER_SOURCE_DIR) + "/../shared/traces/lublin-256-1.swf", to);
  if (!t.ok()) GTEST_SKIP() << "the Lublin trace is not here: " << t.error().message;
  core::Cluster c = testing::cluster_at("tests/sim/lublin_easy/slurm.conf");
  ASSERT_EQ(c.sched.bf_reserve_depth, 1);
  for (int64_t depth : {int64_t{1}, int64_t{4}, int64_t{0}}) {
    for (Seconds res : {Seconds{1}, Seconds{60}}) {
      c.sched.bf_reserve_depth = depth;
      c.sched.bf_resolution = res;
      const std::string what = "depth " + std::to_string(depth) + ", resolution " + std::to_string(res);
      Passes n = same_both_ways(c, *t, what);
      EXPECT_GT(n.carried, 500) << what << ": " << n.carried;
    }
  }
}

// Eight one-CPU nodes and two four-core GPU nodes. "all" over the CPU
// nodes, "half" over four of them (PriorityTier 2), "gpu" over the GPU
// nodes and "any" over every node; two QOS, one of them with a GrpJobs
// limit. Random jobs under backfill with a pass at every event: a start
// on a node kind where a job waits is backfilled, one elsewhere is not.
TEST(QueueHead, RandomBackfillQueuesOverTwoNodeKindsCarryWalksOnAsWithTheWholeQueue) {
  const std::string base =
      "SchedulerType=sched/backfill\nPriorityType=priority/multifactor\nPriorityWeightQOS=1000\n"
      "PriorityWeightAge=0\nPriorityWeightFairshare=0\nSelectTypeParameters=CR_Core\nGresTypes=gpu\n"
      "NodeName=n[1-8] CPUs=1 Sockets=1 CoresPerSocket=1 ThreadsPerCore=1 RealMemory=1000\n"
      "NodeName=g[1-2] CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=4000 Gres=gpu:2\n"
      "PartitionName=all Nodes=n[1-8] Default=YES MaxTime=INFINITE State=UP\n"
      "PartitionName=half Nodes=n[1-4] PriorityTier=2 MaxTime=INFINITE State=UP\n"
      "PartitionName=gpu Nodes=g[1-2] MaxTime=INFINITE State=UP\n"
      "PartitionName=any Nodes=n[1-8],g[1-2] MaxTime=INFINITE State=UP\n";
  const std::string gres = "NodeName=g[1-2] Name=gpu File=/dev/nvidia[0-1]\n";
  const std::string qos = "Name=normal\nName=high Priority=100 GrpJobs=3\n";
  int64_t carried = 0;
  for (const char* params : {"bf_interval=0,bf_reserve_depth=1", "bf_interval=0,bf_reserve_depth=2,bf_resolution=30"}) {
    const core::Cluster c = testing::cluster_from(base + "SchedulerParameters=" + params + "\n", gres, qos);
    for (uint32_t seed = 1; seed <= 4; ++seed) {
      std::mt19937 rng(seed);
      std::string csv = "id,submit,run_time,time_limit,ntasks,gpus,partition,qos\n";
      int64_t t = 0;
      for (int id = 1; id <= 400; ++id) {
        t += static_cast<int64_t>(rng() % 40);
        const int64_t run = 10 + static_cast<int64_t>(rng() % 300);
        const uint32_t k = rng() % 10;
        const char* part = k < 2 ? "gpu" : (k < 3 ? "any" : (k < 6 ? "half" : "all"));
        const int64_t tasks = 1 + static_cast<int64_t>(rng() % 4);
        const int64_t gpus = k < 2 ? static_cast<int64_t>(rng() % 3) : 0;
        csv += std::to_string(id) + "," + std::to_string(t) + "," + std::to_string(run) + "," +
               std::to_string(run + static_cast<int64_t>(rng() % 100)) + "," + std::to_string(tasks) + "," +
               std::to_string(gpus) + "," + part + "," + (rng() % 4 == 0 ? "high" : "normal") + "\n";
      }
      Passes n = same_both_ways(c, testing::trace_from(csv), std::string(params) + ", seed " + std::to_string(seed));
      carried += n.carried;
    }
  }
  EXPECT_GT(carried, 200) << carried;
}

TEST(QueueHead, SeedClusterWithAPassAtEveryEventCarriesWalksOnAsWithTheWholeQueue) {
  core::Cluster c = testing::cluster_at("examples/seed/slurm.conf");
  c.priority.weight_age = 0;
  c.priority.weight_fairshare = 0;
  c.priority.weight_qos = 10000;
  c.priority.weight_job_size = 1000;
  c.sched.bf_interval = 0;
  c.sched.bf_reserve_depth = 1;
  c.sched.bf_window = 30 * 86400;
  const Trace t = testing::generated(c, 800, 600, 5);
  Passes n = same_both_ways(c, t, "seed, a pass at every event");
  EXPECT_GT(n.carried, 20) << n.carried;
}

}  // namespace
}  // namespace drover::sim
