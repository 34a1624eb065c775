// A caller that keeps its own ordered queue (the simulator) orders it with
// Scheduler::queue_place and gives a cycle only the head when the cycle
// says where its decisions settled (CycleStats::settled).
#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/core_test_util.hpp"
#include "core/scheduler.hpp"

namespace drover::core {
namespace {

using testing::ClusterBuilder;
using testing::Jobs;
using testing::node;
using testing::running;

// Two CPU nodes in "low" and "high" (PriorityTier 2), one more in "other".
Cluster three_partitions(PriorityKind kind) {
  ClusterBuilder b;
  b.add(node("a1", 8, 32768)).add(node("a2", 8, 32768)).add(node("b1", 8, 32768));
  b.partition("low", {"a1", "a2"}, true).partition("high", {"a1", "a2"}).partition("other", {"b1"});
  QosSpec normal;
  normal.name = "normal";
  QosSpec urgent;
  urgent.name = "urgent";
  urgent.priority = 100;
  b.qos(normal).qos(urgent);
  Cluster c = b.build();
  c.partitions[1].priority_tier = 2;
  c.priority.kind = kind;
  c.priority.weight_qos = 1000;
  c.priority.weight_job_size = 500;
  c.priority.weight_partition = 100;
  return c;
}

TEST(QueuePlace, KeysOrderTheQueueAsTheCycleDoes) {
  for (PriorityKind kind : {PriorityKind::kBasic, PriorityKind::kMultifactor}) {
    const Cluster c = three_partitions(kind);
    Scheduler s(c);
    Jobs jobs;
    std::mt19937 rng(7);
    for (JobId id = 1; id <= 40; ++id) {
      JobSpec& j = jobs.add(id);
      j.submit_time = static_cast<Time>(rng() % 5);  // ties broken by id
      j.partitions = {rng() % 3 == 0 ? "high" : "low"};
      j.qos = rng() % 2 ? "urgent" : "normal";
      j.ntasks = 1 + static_cast<int32_t>(rng() % 8);
      j.time_limit = 600;
    }
    // Every node busy for a long while: nothing starts, every job is listed.
    JobSpec holder;
    holder.id = 1000;
    std::vector<RunningJob> run = {running(c, &holder, {"a1", "a2"}, 8, 1024, 0, 0, 100000)};
    CycleResult r = testing::cycle(s, jobs, run, 1000);
    ASSERT_TRUE(r.starts.empty());
    std::vector<const JobSpec*> by_key = jobs.pending();
    std::sort(by_key.begin(), by_key.end(), [&](const JobSpec* x, const JobSpec* y) {
      return s.queue_place(*x, 1000, nullptr).key < s.queue_place(*y, 1000, nullptr).key;
    });
    ASSERT_EQ(r.pending.size(), by_key.size());
    for (size_t i = 0; i < by_key.size(); ++i) EXPECT_EQ(r.pending[i].job->id, by_key[i]->id) << "position " << i;
    // PriorityTier first: every job of "high" ahead of every job of "low".
    auto first_low = std::find_if(by_key.begin(), by_key.end(), [](const JobSpec* j) { return j->partitions[0] == "low"; });
    EXPECT_TRUE(std::all_of(first_low, by_key.end(), [](const JobSpec* j) { return j->partitions[0] == "low"; }));
    EXPECT_NE(first_low, by_key.begin());
  }
}

TEST(QueuePlace, TellsThePartitionsAndWhetherTheJobCanEverRun) {
  const Cluster c = three_partitions(PriorityKind::kBasic);
  Scheduler s(c);
  Jobs jobs;
  JobSpec& both = jobs.add(1);
  both.partitions = {"low", "other"};
  JobSpec& huge = jobs.add(2);
  huge.ntasks = 64;  // no node has 64 cores
  QueuePlace p = s.queue_place(both, 0, nullptr);
  EXPECT_TRUE(p.can_run);
  EXPECT_EQ(p.partitions, (std::vector<int32_t>{0, 2}));
  QueuePlace q = s.queue_place(huge, 0, nullptr);
  EXPECT_FALSE(q.can_run);
  EXPECT_TRUE(q.partitions.empty());
}

// FCFS, one partition in use, both of its nodes busy: the first job blocks
// the queue, so the decisions are settled from the second position on.
TEST(QueuePlace, FcfsSettlesOnceEveryPartitionInUseIsBlocked) {
  Cluster c = three_partitions(PriorityKind::kBasic);
  c.sched.policy = QueuePolicy::kFcfs;
  Scheduler s(c);
  Jobs jobs;
  for (JobId id = 1; id <= 5; ++id) jobs.add(id).partitions = {"low"};
  JobSpec holder;
  holder.id = 1000;
  std::vector<RunningJob> run = {running(c, &holder, {"a1", "a2"}, 8, 1024, 0, 0, 5000)};
  std::vector<const JobSpec*> pending = jobs.pending();
  CycleInput in;
  in.now = 1000;
  in.running = run;
  in.pending = pending;
  CycleOptions quick{PassKind::kQuick};
  EXPECT_EQ(s.run_cycle(in, quick).stats.settled, 1);
  CycleOptions decisions_only{PassKind::kFull};
  decisions_only.plan_behind_blocked = false;
  EXPECT_EQ(s.run_cycle(in, decisions_only).stats.settled, 1);
  // With plans behind the blocked queue, every job is planned: not settled.
  EXPECT_EQ(s.run_cycle(in, CycleOptions{PassKind::kFull}).stats.settled, -1);
  // The whole queue also has a job for "other" (not given): never settled.
  std::vector<uint8_t> queue_parts = {1, 0, 1};
  in.queue_partitions = queue_parts;
  EXPECT_EQ(s.run_cycle(in, quick).stats.settled, -1);
  // Under backfill a full pass looks at every job.
  c.sched.policy = QueuePolicy::kBackfill;
  Scheduler bf(c);
  in.queue_partitions = {};
  EXPECT_EQ(bf.run_cycle(in, decisions_only).stats.settled, -1);
  EXPECT_EQ(bf.run_cycle(in, quick).stats.settled, 1);
}

}  // namespace
}  // namespace drover::core
