// What running jobs hold is kept between cycles when the caller stamps its
// RunningJob records. The decisions must not change: two schedulers, one
// given stamped records and one the same records unstamped (counted afresh
// every cycle), must decide the same, cycle after cycle, while jobs start,
// end, outlive their end, nodes go down and come back, and QOS limits,
// per-user limits and array throttles are in play. The queue order the
// last cycle left (merged with the new jobs instead of sorted again) gives
// the same order as sorting from scratch.
#include <random>

#include <gtest/gtest.h>

#include "core/core_test_util.hpp"

namespace drover::core {
namespace {

using testing::ClusterBuilder;
using testing::Jobs;
using testing::node;

Cluster mixed_cluster() {
  ClusterBuilder b;
  b.add(node("g1", 16, 64000, "h100", 4)).add(node("g2", 16, 64000, "h100", 4));
  b.add(node("g3", 16, 64000, "a100", 4));
  for (int i = 1; i <= 5; ++i) b.add(node("c" + std::to_string(i), 8, 32000));
  b.add(node("m1", 8, 512000));
  b.partition("gpu", {"g1", "g2", "g3"});
  b.partition("cpu", {"c1", "c2", "c3", "c4", "c5", "m1"}, true);
  QosSpec normal;
  normal.name = "normal";
  normal.grp_tres = {{"cpu", 40}};
  normal.max_tres_per_user = {{"cpu", 24}};
  QosSpec gpu;
  gpu.name = "gpuq";
  gpu.grp_tres = {{"gres/gpu", 10}};
  gpu.max_jobs_per_user = 3;
  b.qos(normal).qos(gpu);
  Cluster c = b.build();
  c.sched.policy = QueuePolicy::kBackfill;
  c.sched.bf_reserve_depth = 3;
  c.sched.bf_resolution = 10;
  return c;
}

void expect_same_allocation(const Allocation& a, const Allocation& b, const std::string& where) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size()) << where;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeTake& x = a.nodes[i];
    const NodeTake& y = b.nodes[i];
    EXPECT_EQ(x.node, y.node) << where;
    EXPECT_EQ(x.cores, y.cores) << where;
    EXPECT_EQ(x.mem_mb, y.mem_mb) << where;
    ASSERT_EQ(x.gres.size(), y.gres.size()) << where;
    for (size_t g = 0; g < x.gres.size(); ++g) EXPECT_EQ(x.gres[g].devices, y.gres[g].devices) << where;
  }
}

void expect_same(const CycleResult& a, const CycleResult& b, int cycle) {
  const std::string where = "cycle " + std::to_string(cycle);
  ASSERT_EQ(a.starts.size(), b.starts.size()) << where;
  for (size_t i = 0; i < a.starts.size(); ++i) {
    EXPECT_EQ(a.starts[i].job, b.starts[i].job) << where;
    EXPECT_EQ(a.starts[i].partition, b.starts[i].partition) << where;
    EXPECT_EQ(a.starts[i].end, b.starts[i].end) << where;
    EXPECT_EQ(a.starts[i].kind, b.starts[i].kind) << where;
    expect_same_allocation(a.starts[i].alloc, b.starts[i].alloc, where + " job " + std::to_string(a.starts[i].job->id));
  }
  ASSERT_EQ(a.pending.size(), b.pending.size()) << where;
  for (size_t i = 0; i < a.pending.size(); ++i) {
    const PendingPlan& x = a.pending[i];
    const PendingPlan& y = b.pending[i];
    const std::string job = where + " job " + std::to_string(x.job->id);
    EXPECT_EQ(x.job, y.job) << job;
    EXPECT_EQ(x.start, y.start) << job;
    EXPECT_EQ(x.nodes, y.nodes) << job;
    EXPECT_EQ(x.reason, y.reason) << job;
    EXPECT_EQ(x.reserved, y.reserved) << job;
  }
  EXPECT_EQ(a.stats.profile_steps, b.stats.profile_steps) << where;
}

TEST(KeptState, StampedRunningJobsDecideAsCountingAfresh) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    // Priorities: basic (seeds 1, 2), multifactor that does not move with
    // time (3, 4), multifactor with age (5, 6: the order is sorted afresh).
    Cluster c = mixed_cluster();
    if (seed >= 3) {
      c.priority.kind = PriorityKind::kMultifactor;
      c.priority.weight_qos = 1000;
      c.priority.weight_job_size = 500;
      c.priority.weight_age = seed >= 5 ? 1000 : 0;
      c.priority.max_age = 3600;
      c.qos[1].priority = 10;
    }
    std::mt19937_64 rng(seed);
    Scheduler kept(c), fresh(c);
    Jobs jobs;
    std::vector<const JobSpec*> pending;
    std::vector<RunningJob> running;
    std::vector<NodeAvail> avail(c.nodes.size(), NodeAvail::kUp);
    uint64_t stamps = 0;
    Time now = 1000;
    JobId next = 1;
    int started = 0, overran = 0, flips = 0;
    for (int cycle = 0; cycle < 160; ++cycle) {
      // New jobs: CPU tasks, GPU jobs, multi-node and exclusive ones, array elements.
      for (int k = std::uniform_int_distribution<int>(0, 4)(rng); k > 0; --k) {
        JobSpec& j = jobs.add(next);
        j.submit_time = now;
        j.user = "u" + std::to_string(rng() % 3);
        j.time_limit = 60 * std::uniform_int_distribution<int>(1, 40)(rng);
        j.nice = static_cast<int32_t>(rng() % 3) * 100 - 100;  // later jobs may go ahead of earlier ones
        switch (rng() % 5) {
          case 0:
            j.partitions = {"gpu"};
            j.qos = "gpuq";
            j.gres = {GresSpec{"gpu", rng() % 2 ? "h100" : "", static_cast<int32_t>(1 + rng() % 4)}};
            break;
          case 1:
            j.min_nodes = j.max_nodes = static_cast<int32_t>(1 + rng() % 3);
            j.exclusive = rng() % 2 == 0;
            break;
          case 2:
            j.array_job_id = next;
            j.array_task_id = 0;
            j.array_max_running = 1;
            break;
          default:
            j.ntasks = static_cast<int32_t>(1 + rng() % 6);
            break;
        }
        if (j.partitions.empty()) j.qos = "normal";
        pending.push_back(&j);
        ++next;
      }
      // Some jobs end; some outlive their end (the plan then holds them until just after now).
      std::erase_if(running, [&](const RunningJob& r) { return r.end <= now && rng() % 4 != 0; });
      for (const RunningJob& r : running) overran += r.end <= now;
      if (rng() % 25 == 0) {  // a node goes down or comes back
        auto& a = avail[rng() % avail.size()];
        a = a == NodeAvail::kUp ? (rng() % 2 ? NodeAvail::kDown : NodeAvail::kDrain) : NodeAvail::kUp;
        ++flips;
      }
      if (rng() % 7 == 0) std::shuffle(running.begin(), running.end(), rng);  // order is not identity
      if (rng() % 2 == 0) std::shuffle(pending.begin(), pending.end(), rng);  // the cycle orders the queue

      std::vector<RunningJob> unstamped = running;
      for (RunningJob& r : unstamped) r.stamp = 0;
      CycleInput a{now, avail, running, pending, nullptr, nullptr, {}};
      CycleInput b{now, avail, unstamped, pending, nullptr, nullptr, {}};
      CycleResult ra = kept.run_cycle(a);
      CycleResult rb = fresh.run_cycle(b);
      expect_same(ra, rb, cycle);
      // A scheduler that has seen no earlier cycle (no queue order, no
      // caches to start from) decides the same too.
      Scheduler first(c);
      expect_same(ra, first.run_cycle(b), cycle);
      if (::testing::Test::HasFailure()) return;

      for (const StartDecision& d : ra.starts) {
        RunningJob r{d.job, d.partition, d.qos, now, d.end, d.alloc};
        r.stamp = ++stamps;
        running.push_back(std::move(r));
        std::erase(pending, d.job);
        ++started;
      }
      // Short steps too: an outlived job's cut (until just after now, rounded
      // up to bf_resolution) then still reaches past the next cycle's now.
      now += rng() % 3 == 0 ? std::uniform_int_distribution<Time>(1, 12)(rng)
                            : std::uniform_int_distribution<Time>(0, 400)(rng);
    }
    EXPECT_GT(started, 100) << "seed " << seed;
    EXPECT_GT(overran, 0) << "seed " << seed;
    EXPECT_GT(flips, 0) << "seed " << seed;
  }
}

// A stamp given twice, or a record without one among stamped ones: the
// cycle counts everything afresh and still decides the same.
TEST(KeptState, BrokenPromisesFallBackToCountingAfresh) {
  const Cluster c = mixed_cluster();
  Scheduler kept(c), fresh(c);
  Jobs jobs;
  std::vector<const JobSpec*> pending;
  for (JobId id = 1; id <= 12; ++id) {
    JobSpec& j = jobs.add(id);
    j.ntasks = 4;
    j.qos = "normal";
    pending.push_back(&j);
  }
  std::vector<RunningJob> running;
  Time now = 100;
  for (int cycle = 0; cycle < 4; ++cycle) {
    std::vector<RunningJob> unstamped = running;
    for (RunningJob& r : unstamped) r.stamp = 0;
    CycleInput a{now, {}, running, pending, nullptr, nullptr, {}};
    CycleInput b{now, {}, unstamped, pending, nullptr, nullptr, {}};
    CycleResult ra = kept.run_cycle(a);
    expect_same(ra, fresh.run_cycle(b), cycle);
    for (const StartDecision& d : ra.starts) {
      RunningJob r{d.job, d.partition, d.qos, now, d.end, d.alloc};
      r.stamp = cycle == 1 ? 7 : (cycle == 2 ? 0 : 100 + running.size());  // twice 7, then one 0
      running.push_back(std::move(r));
      std::erase(pending, d.job);
    }
    if (cycle == 0) {
      ASSERT_FALSE(running.empty());
    }
    if (!running.empty()) running.erase(running.begin());
    for (JobId id = 20 + cycle * 3; id < 23 + cycle * 3; ++id) {
      JobSpec& j = jobs.add(id);
      j.ntasks = 3;
      j.qos = "normal";
      pending.push_back(&j);
    }
    now += 30;
  }
}

// The first reservation of a cycle is taken from the cycle before when
// nothing it was searched in has changed. Each step below changes one thing
// it depends on, or only what it does not depend on (a new job behind it,
// time passing), and the kept scheduler must plan as one that counts
// everything afresh.
TEST(KeptState, FirstReservationReusedOnlyWhileItsProfilesHold) {
  ClusterBuilder b;
  for (int i = 1; i <= 4; ++i) b.add(node("n" + std::to_string(i), 8, 32000));
  b.partition("p", {"n1", "n2", "n3", "n4"}, true);
  Cluster c = b.build();
  c.sched.policy = QueuePolicy::kBackfill;
  c.sched.bf_reserve_depth = 1;
  Scheduler kept(c);
  Jobs jobs;
  JobSpec& holder = jobs.add(90);
  std::vector<RunningJob> running;
  uint64_t stamps = 0;
  auto run_on = [&](const std::string& n, Time end) {
    RunningJob r = testing::running(c, &holder, {n}, 8, 8000, 0, 0, end);
    r.stamp = ++stamps;
    running.push_back(r);
  };
  run_on("n1", 2000);
  run_on("n2", 3000);
  run_on("n3", 4000);
  run_on("n4", 5000);
  JobSpec& head = jobs.add(10);  // two whole nodes: waits, and holds the reservation
  head.min_nodes = head.max_nodes = 2;
  head.exclusive = true;
  std::vector<const JobSpec*> pending{&head};
  Time now = 1000;
  auto step = [&](int n) {
    std::vector<RunningJob> unstamped = running;
    for (RunningJob& r : unstamped) r.stamp = 0;
    CycleResult ra = kept.run_cycle(CycleInput{now, {}, running, pending, nullptr, nullptr, {}});
    Scheduler fresh(c);
    CycleResult rb = fresh.run_cycle(CycleInput{now, {}, unstamped, pending, nullptr, nullptr, {}});
    expect_same(ra, rb, n);
    return ra;
  };
  CycleResult r0 = step(0);
  ASSERT_EQ(r0.pending.front().start, 3000);  // n1 and n2 free by then
  now = 1100;  // time passes, and a job that waits behind it arrives
  JobSpec& behind = jobs.add(11);
  behind.min_nodes = behind.max_nodes = 4;
  pending.push_back(&behind);
  EXPECT_EQ(step(1).pending.front().start, 3000);
  running.erase(running.begin() + 1);  // n2's job ends early: the reservation moves to n1's end
  now = 1200;
  const Time moved = step(2).pending.front().start;
  EXPECT_GE(moved, 2000);
  EXPECT_LT(moved, 3000);
  now = 1300;  // a short job ahead of it starts now on n2: the reservation moves again
  JobSpec& ahead = jobs.add(5);  // a lower id: ahead of it in the queue
  ahead.ntasks = 8;
  ahead.time_limit = 4000;
  pending.insert(pending.begin(), &ahead);
  CycleResult r3 = step(3);
  ASSERT_NE(testing::started(r3, 5), nullptr);
  RunningJob r{&ahead, r3.starts[0].partition, r3.starts[0].qos, now, r3.starts[0].end, r3.starts[0].alloc};
  r.stamp = ++stamps;
  running.push_back(r);
  pending.erase(pending.begin());
  now = 2500;  // n1's job outlives its end: the cut moves with now
  step(4);
  now = 2600;
  step(5);
}

}  // namespace
}  // namespace drover::core
