#include "core/preempt.hpp"

#include <gtest/gtest.h>

#include "core/core_test_util.hpp"

namespace drover::core {
namespace {

using testing::ClusterBuilder;
using testing::Jobs;
using testing::node;
using testing::running;

QosSpec qos(const std::string& name, int64_t priority, std::vector<std::string> preempt = {},
            PreemptMode mode = PreemptMode::kCluster) {
  QosSpec q;
  q.name = name;
  q.priority = priority;
  q.preempt = std::move(preempt);
  q.preempt_mode = mode;
  return q;
}

// Two 8-CPU nodes, QOS low (preemptable) and high (preempts low).
Cluster two_nodes(PreemptType type = PreemptType::kQos, PreemptMode mode = PreemptMode::kRequeue) {
  ClusterBuilder b;
  b.add(node("n1", 8, 8192)).add(node("n2", 8, 8192)).partition("p", {"n1", "n2"}, true);
  b.qos(qos("low", 10)).qos(qos("high", 100, {"low"}));
  Cluster c = b.build();
  c.preempt.type = type;
  c.preempt.mode = mode;
  return c;
}

CycleInput at_1000(const std::vector<RunningJob>& run) {
  CycleInput in;
  in.now = 1000;
  in.running = run;
  return in;
}

RunningJob on(const Cluster& c, const JobSpec& spec, const std::string& n, int32_t cores, int32_t qos_index,
              Time start = 0) {
  RunningJob r = running(c, &spec, {n}, cores, 1024, 0, start, 100000);
  r.qos = qos_index;
  return r;
}

TEST(Preempt, WhoMayPreemptWhomFollowsTheQosListModeAndExemptTime) {
  Cluster c = two_nodes();
  Jobs jobs;
  const JobSpec& a = jobs.add(1);
  RunningJob low = on(c, a, "n1", 8, 0);
  RunningJob high = on(c, a, "n2", 8, 1);
  EXPECT_TRUE(may_preempt(c, 1, 1, low, 1000));    // high lists low
  EXPECT_FALSE(may_preempt(c, 0, 1, high, 1000));  // low lists nothing
  EXPECT_FALSE(may_preempt(c, 1, 1, high, 1000));  // not itself unless listed
  EXPECT_FALSE(may_preempt(c, -1, 1, low, 1000));  // no QOS
  c.preempt.exempt_time = 600;
  EXPECT_FALSE(may_preempt(c, 1, 1, low, 500));  // ran 500 s of its 600 exempt
  EXPECT_TRUE(may_preempt(c, 1, 1, low, 600));
  c.qos[0].preempt_exempt_time = 0;  // the QOS's own exempt time wins
  EXPECT_TRUE(may_preempt(c, 1, 1, low, 1));
  c.qos[0].preempt_mode = PreemptMode::kOff;
  EXPECT_FALSE(may_preempt(c, 1, 1, low, 1000));
  c.qos[0].preempt_mode = PreemptMode::kSuspend;  // not built: not preempted
  EXPECT_FALSE(may_preempt(c, 1, 1, low, 1000));
  c.qos[0].preempt_mode = PreemptMode::kCancel;
  EXPECT_EQ(preempt_mode_of(c, 0, 0), PreemptMode::kCancel);
  EXPECT_EQ(preempt_mode_of(c, 1, 0), PreemptMode::kRequeue);  // the cluster's
  c.preempt.type = PreemptType::kNone;
  EXPECT_FALSE(may_preempt(c, 1, 1, low, 1000));
  EXPECT_EQ(preempt_mode_of(c, 0, 0), PreemptMode::kOff);
}

TEST(Preempt, PartitionPrioPreemptsOnlyLowerTiers) {
  ClusterBuilder b;
  b.add(node("n1", 8, 8192)).partition("low", {"n1"}).partition("high", {"n1"});
  Cluster c = b.build();
  c.partitions[0].priority_tier = 1;
  c.partitions[1].priority_tier = 5;
  c.preempt.type = PreemptType::kPartitionPrio;
  c.preempt.mode = PreemptMode::kCancel;
  Jobs jobs;
  const JobSpec& a = jobs.add(1);
  RunningJob r = on(c, a, "n1", 8, -1);
  r.partition = 0;
  EXPECT_TRUE(may_preempt(c, -1, 5, r, 1000));
  EXPECT_FALSE(may_preempt(c, -1, 1, r, 1000));  // same tier
  c.partitions[0].preempt_mode = PreemptMode::kOff;
  EXPECT_FALSE(may_preempt(c, -1, 5, r, 1000));
}

TEST(Preempt, ThePlanEndsOnlyTheJobsTheStartNeeds) {
  Cluster c = two_nodes();
  Scheduler trial(c);
  Jobs jobs;
  // Low jobs: 4 CPUs each, two on each node; the high job needs 4 CPUs.
  std::vector<RunningJob> run;
  for (JobId id = 1; id <= 4; ++id) {
    const JobSpec& s = jobs.add(id);
    RunningJob r = on(c, s, id <= 2 ? "n1" : "n2", 4, 0, 100 * id);
    if (id % 2 == 0) {  // the second on each node takes cores 4-7
      for (auto& t : r.alloc.nodes) {
        for (auto& core : t.cores) core += 4;
      }
    }
    run.push_back(r);
  }
  Jobs pending;
  JobSpec& want = pending.add(10);
  want.qos = "high";
  want.cpus_per_task = 4;
  const CycleInput in = at_1000(run);
  // The most preemptable first: the youngest (job 4, then 3, ...).
  auto plan = plan_preemption(trial, in, want, {3, 2, 1, 0});
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->victims.size(), 1u);
  EXPECT_EQ(run[plan->victims[0]].spec->id, 4);
  EXPECT_EQ(testing::node_names(c, plan->start.alloc), std::vector<std::string>{"n2"});

  // Needing a whole node: both jobs of one node go, and only those.
  want.cpus_per_task = 8;
  want.revision += 1;
  plan = plan_preemption(trial, in, want, {3, 2, 1, 0});
  ASSERT_TRUE(plan);
  std::vector<JobId> ids;
  for (size_t i : plan->victims) ids.push_back(run[i].spec->id);
  EXPECT_EQ(ids, (std::vector<JobId>{4, 3}));

  // More than the cluster has, even with every candidate gone: no plan.
  want.cpus_per_task = 16;
  want.revision += 1;
  EXPECT_FALSE(plan_preemption(trial, in, want, {3, 2, 1, 0}));
  // No candidates: no plan.
  want.cpus_per_task = 4;
  want.revision += 1;
  EXPECT_FALSE(plan_preemption(trial, in, want, {}));
}

TEST(Preempt, NoPlanWhenTheJobCouldStartWithoutTheCandidates) {
  Cluster c = two_nodes();
  Scheduler trial(c);
  Jobs jobs;
  const JobSpec& a = jobs.add(1);
  std::vector<RunningJob> run = {on(c, a, "n1", 8, 0)};
  Jobs pending;
  JobSpec& want = pending.add(10);
  want.qos = "high";
  want.cpus_per_task = 4;
  const CycleInput in = at_1000(run);
  // n2 is free: a start there needs no victim.
  EXPECT_FALSE(plan_preemption(trial, in, want, {0}));
}

}  // namespace
}  // namespace drover::core
