#include "core/scheduler.hpp"

#include <gtest/gtest.h>

#include "core/core_test_util.hpp"

namespace drover::core {
namespace {

using testing::ClusterBuilder;
using testing::cycle;
using testing::Jobs;
using testing::node;
using testing::node_names;
using testing::running;
using testing::started;
using testing::waiting;

// Two GPU nodes (8 x h100, 8 x a100) and two CPU nodes, one partition each
// way plus an "all" partition over every node.
Cluster mixed() {
  ClusterBuilder b;
  b.add(node("g1", 32, 256000, "h100", 8, {"h100"}))
      .add(node("g2", 32, 256000, "a100", 8, {"a100"}))
      .add(node("c1", 32, 128000))
      .add(node("c2", 32, 128000));
  b.partition("gpu", {"g1", "g2"});
  b.partition("cpu", {"c1", "c2"}, true);
  b.partition("all", {"g1", "g2", "c1", "c2"});
  return b.build();
}

TEST(Placement, CpuJobStartsOnCpuNodeWithItsCores) {
  Cluster c = mixed();
  Scheduler s(c);
  Jobs jobs;
  JobSpec& j = jobs.add(1);
  j.partitions = {"all"};
  j.cpus_per_task = 4;
  CycleResult r = cycle(s, jobs);
  const StartDecision* d = started(r, 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(node_names(c, d->alloc), std::vector<std::string>{"c1"});
  EXPECT_EQ(d->alloc.nodes[0].cores, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(d->alloc.nodes[0].cpus, 4);
  EXPECT_EQ(d->alloc.nodes[0].mem_mb, 4 * 1024);
  EXPECT_EQ(d->end, 1000 + 3600);
  EXPECT_EQ(d->kind, StartKind::kImmediate);
}

// -N min-max with -n starts on as many nodes as hold a task now (Slurm 22.05
// ran -N 1-2 -n 2 on two nodes, one task each); -n alone, as few as hold it;
// --spread-job, as many as it has tasks.
TEST(Placement, NodeRangeAndSpreadJobStartOnAsManyNodesAsHoldATask) {
  Cluster c = mixed();
  JobSpec blocker;
  blocker.id = 90;
  // The tasks each node got when a 3-task job of this shape started, c2 busy or not.
  auto tasks_on = [&](int32_t min_nodes, int32_t max_nodes, bool spread, bool c2_busy) {
    Scheduler s(c);
    Jobs jobs;
    JobSpec& j = jobs.add(1);
    j.partitions = {"cpu"};
    j.ntasks = 3;
    j.min_nodes = min_nodes;
    j.max_nodes = max_nodes;
    j.spread_job = spread;
    std::vector<RunningJob> run;
    if (c2_busy) run.push_back(running(c, &blocker, {"c2"}, 32, 1000, 0, 0, 5000));
    CycleResult r = cycle(s, jobs, run);
    const StartDecision* d = started(r, 1);
    std::vector<std::pair<std::string, int32_t>> out;
    if (d) {
      for (const auto& t : d->alloc.nodes) out.emplace_back(c.nodes[t.node].name, t.tasks);
    }
    return out;
  };
  using Got = std::vector<std::pair<std::string, int32_t>>;
  EXPECT_EQ(tasks_on(1, 2, false, false), (Got{{"c1", 2}, {"c2", 1}})) << "one task each, the rest on the first";
  EXPECT_EQ(tasks_on(0, 0, false, false), (Got{{"c1", 3}})) << "-n alone: as few nodes as hold it";
  EXPECT_EQ(tasks_on(1, 2, false, true), (Got{{"c1", 3}})) << "one node free now: it starts there, not later";
  EXPECT_EQ(tasks_on(0, 0, true, false), (Got{{"c1", 2}, {"c2", 1}})) << "--spread-job over both nodes";
}

// -N min-max without -n starts on as many free nodes as the range allows,
// one task on each (Slurm 22.05 ran `-N 2-3` on three idle nodes: NumTasks=3,
// SLURM_TASKS_PER_NODE=1(x3); `-N 1-4 -c 2` on four), and on fewer as soon as
// the range's bottom is free.
TEST(Placement, NodeRangeWithoutTasksTakesEveryFreeNodeUpToItsTop) {
  ClusterBuilder b;
  b.add(node("c1", 8, 64000)).add(node("c2", 8, 64000)).add(node("c3", 8, 64000)).add(node("c4", 8, 64000));
  b.partition("cpu", {"c1", "c2", "c3", "c4"}, true);
  Cluster c = b.build();
  JobSpec blocker;
  blocker.id = 90;
  using Got = std::vector<std::pair<std::string, int32_t>>;
  auto tasks_on = [&](int32_t min_nodes, int32_t max_nodes, std::vector<std::string> busy) {
    Scheduler s(c);
    Jobs jobs;
    JobSpec& j = jobs.add(1);
    j.partitions = {"cpu"};
    j.min_nodes = min_nodes;
    j.max_nodes = max_nodes;
    j.cpus_per_task = 2;
    std::vector<RunningJob> run;
    if (!busy.empty()) run.push_back(running(c, &blocker, busy, 8, 1000, 0, 0, 5000));
    CycleResult r = cycle(s, jobs, run);
    Got out;
    if (const StartDecision* d = started(r, 1)) {
      for (const auto& t : d->alloc.nodes) out.emplace_back(c.nodes[t.node].name, t.tasks);
    }
    return out;
  };
  EXPECT_EQ(tasks_on(2, 3, {}), (Got{{"c1", 1}, {"c2", 1}, {"c3", 1}}));
  EXPECT_EQ(tasks_on(1, 4, {}), (Got{{"c1", 1}, {"c2", 1}, {"c3", 1}, {"c4", 1}}));
  EXPECT_EQ(tasks_on(2, 3, {"c1", "c3"}), (Got{{"c2", 1}, {"c4", 1}})) << "two free: it starts now on them";
  EXPECT_EQ(tasks_on(2, 3, {"c1", "c2", "c3"}), Got{}) << "one free: below the range's bottom, it waits";
  EXPECT_EQ(tasks_on(2, 0, {}), (Got{{"c1", 1}, {"c2", 1}})) << "-N 2: two nodes";
}

// -N k -n m on shared nodes starts with the first node as full as it holds
// and one task on each node after it, as Slurm 22.05 laid such jobs out on
// the anchor cluster (-N2 -n4: 3,1; -N3 -n5 with 4 CPUs free on the first
// node: 3,1,1; -N2 -n8 there: 4,4); whole nodes deal them evenly (2,2).
TEST(Placement, NodeCountWithTasksFillsTheFirstNodeAsSlurmDid) {
  ClusterBuilder b;
  b.add(node("c1", 8, 64000)).add(node("c2", 8, 64000)).add(node("c3", 8, 64000));
  b.partition("cpu", {"c1", "c2", "c3"}, true);
  Cluster c = b.build();
  JobSpec blocker;
  blocker.id = 90;
  auto tasks_on = [&](int32_t nodes, int32_t ntasks, int32_t c1_busy_cpus, bool exclusive) {
    Scheduler s(c);
    Jobs jobs;
    JobSpec& j = jobs.add(1);
    j.partitions = {"cpu"};
    j.ntasks = ntasks;
    j.min_nodes = j.max_nodes = nodes;
    j.exclusive = exclusive;
    j.mem_per_cpu_mb = 100;
    std::vector<RunningJob> run;
    if (c1_busy_cpus > 0) run.push_back(running(c, &blocker, {"c1"}, c1_busy_cpus, 1000, 0, 0, 5000));
    CycleResult r = cycle(s, jobs, run);
    std::vector<int32_t> out;
    if (const StartDecision* d = started(r, 1)) {
      for (const auto& t : d->alloc.nodes) out.push_back(t.tasks);
      int32_t cpus = 0;
      for (const auto& t : d->alloc.nodes) cpus += t.cpus;
      if (!exclusive) {
        EXPECT_EQ(cpus, ntasks) << "the CPUs follow the tasks";
      }
    }
    return out;
  };
  using Got = std::vector<int32_t>;
  EXPECT_EQ(tasks_on(2, 4, 0, false), (Got{3, 1}));
  EXPECT_EQ(tasks_on(3, 6, 0, false), (Got{4, 1, 1}));
  EXPECT_EQ(tasks_on(2, 12, 0, false), (Got{8, 4})) << "the first node holds 8";
  EXPECT_EQ(tasks_on(3, 5, 4, false), (Got{3, 1, 1})) << "4 CPUs free on c1";
  EXPECT_EQ(tasks_on(2, 8, 4, false), (Got{4, 4}));
  EXPECT_EQ(tasks_on(2, 4, 0, true), (Got{2, 2})) << "--exclusive: dealt evenly";
  EXPECT_EQ(tasks_on(2, 5, 0, true), (Got{3, 2}));
}

// --gpus=N over several nodes starts with the first node as full as it
// holds and one GPU on each node after it, as Slurm 22.05 laid it out on
// the anchor cluster (--gpus=4 -N2: 3,1; --gpus=10 on 8-GPU nodes: 8,2;
// --gpus=3 -n4 -N2: tasks 3,1 and GPUs 2,1).
TEST(Placement, GpusOverSeveralNodesFillTheFirstNodeAsSlurmDid) {
  Cluster c = mixed();
  auto gpus_on = [&](int32_t gpus, int32_t nodes, int32_t ntasks) {
    Scheduler s(c);
    Jobs jobs;
    JobSpec& j = jobs.add(1);
    j.partitions = {"gpu"};
    j.gpus.count = gpus;
    j.min_nodes = j.max_nodes = nodes;
    j.ntasks = ntasks;
    j.mem_per_cpu_mb = 100;
    CycleResult r = cycle(s, jobs);
    std::vector<std::pair<int32_t, int32_t>> out;  // (tasks, GPUs) per node
    if (const StartDecision* d = started(r, 1)) {
      for (const auto& t : d->alloc.nodes) {
        int32_t g = 0;
        for (const auto& take : t.gres) g += take.count;
        out.emplace_back(t.tasks, g);
      }
    }
    return out;
  };
  using Got = std::vector<std::pair<int32_t, int32_t>>;
  EXPECT_EQ(gpus_on(4, 2, 0), (Got{{1, 3}, {1, 1}}));
  EXPECT_EQ(gpus_on(10, 0, 0), (Got{{1, 8}, {1, 2}}));
  EXPECT_EQ(gpus_on(3, 2, 4), (Got{{3, 2}, {1, 1}}));
  EXPECT_EQ(gpus_on(16, 2, 0), (Got{{1, 8}, {1, 8}}));
}

TEST(Placement, CpuJobGoesToGpuNodeOnlyWhenCpuNodesAreFull) {
  Cluster c = mixed();
  Scheduler s(c);
  Jobs jobs;
  JobSpec& blocker1 = jobs.add(90);
  JobSpec& blocker2 = jobs.add(91);
  std::vector<RunningJob> run = {running(c, &blocker1, {"c1"}, 32, 1000, 0, 0, 5000),
                                 running(c, &blocker2, {"c2"}, 32, 1000, 0, 0, 5000)};
  Jobs pending;
  JobSpec& j = pending.add(1);
  j.partitions = {"all"};
  j.cpus_per_task = 2;
  CycleResult r = cycle(s, pending, run);
  const StartDecision* d = started(r, 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(node_names(c, d->alloc), std::vector<std::string>{"g1"});
}

TEST(Placement, GpuJobGetsDevicesAndCoresCloseToThem) {
  Cluster c = mixed();
  Scheduler s(c);
  Jobs jobs;
  JobSpec& j = jobs.add(1);
  j.partitions = {"gpu"};
  j.gres = {GresSpec{"gpu", "a100", 2}};
  j.cpus_per_task = 4;
  CycleResult r = cycle(s, jobs);
  const StartDecision* d = started(r, 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(node_names(c, d->alloc), std::vector<std::string>{"g2"});
  ASSERT_EQ(d->alloc.nodes[0].gres.size(), 1u);
  EXPECT_EQ(d->alloc.nodes[0].gres[0].devices, (std::vector<int32_t>{0, 1}));
  // Devices 0-3 are close to socket 0 (cores 0-15).
  for (int32_t core : d->alloc.nodes[0].cores) EXPECT_LT(core, 16);
}

TEST(Placement, ExclusiveTakesTheWholeNode) {
  Cluster c = mixed();
  Scheduler s(c);
  Jobs jobs;
  JobSpec& j = jobs.add(1);
  j.partitions = {"cpu"};
  j.exclusive = true;
  CycleResult r = cycle(s, jobs);
  const StartDecision* d = started(r, 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->alloc.nodes[0].cpus, 32);
  // Every CPU, but only the memory it asks for: 1024 MB per CPU (Slurm 22.05 gave an --exclusive job
  // DefMemPerCPU times the node's CPUs on the anchor cluster, 256G of hm01's 2000000M).
  EXPECT_EQ(d->alloc.nodes[0].mem_mb, 32 * 1024);
  EXPECT_TRUE(d->alloc.exclusive);
  // --mem=0 (and no memory asked for with no default) is the whole node's; more than it has fits nowhere.
  Scheduler s2(c);
  Jobs rest;
  for (auto [id, mem] : {std::pair<JobId, int64_t>{2, 0}, {3, 200000}}) {
    JobSpec& j2 = rest.add(id);
    j2.partitions = {"cpu"};
    j2.exclusive = true;
    j2.mem_per_cpu_mb = -1;
    j2.mem_per_node_mb = mem;
  }
  CycleResult r2 = cycle(s2, rest);
  const StartDecision* w = started(r2, 2);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->alloc.nodes[0].mem_mb, 128000);
  EXPECT_EQ(started(r2, 3), nullptr);
}

TEST(Placement, NoMemoryRequestAndNoDefaultTakesAllTheNodesMemory) {
  Cluster c = mixed();
  Scheduler s(c);
  Jobs jobs;
  JobSpec& j = jobs.add(1);
  j.partitions = {"cpu"};
  j.mem_per_cpu_mb = -1;
  CycleResult r = cycle(s, jobs);
  const StartDecision* d = started(r, 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->alloc.nodes[0].mem_mb, 128000);
}

TEST(Placement, CpuJobDoesNotStrandGpus) {
  // g1 has 4 free cores and 8 free GPUs; a 4-core CPU-only job there would
  // leave the GPUs with no core. c1 has room: the job goes there.
  ClusterBuilder b;
  b.add(node("g1", 8, 64000, "h100", 8)).add(node("c1", 8, 64000));
  b.partition("p", {"g1", "c1"}, true);
  Cluster c = b.build();
  Scheduler s(c);
  Jobs hold;
  JobSpec& h = hold.add(90);
  std::vector<RunningJob> run = {running(c, &h, {"g1"}, 4, 1000, 0, 0, 9000),
                                 running(c, &h, {"c1"}, 2, 1000, 0, 0, 9000)};
  Jobs jobs;
  JobSpec& j = jobs.add(1);
  j.cpus_per_task = 4;
  CycleResult r = cycle(s, jobs, run);
  const StartDecision* d = started(r, 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(node_names(c, d->alloc), std::vector<std::string>{"c1"});
}

TEST(Placement, LowerWeightFirst) {
  ClusterBuilder b;
  b.add(node("heavy", 8, 64000, "", 0, {}, 10)).add(node("light", 8, 64000, "", 0, {}, 1));
  b.partition("p", {"heavy", "light"}, true);
  Cluster c = b.build();
  Scheduler s(c);
  Jobs jobs;
  jobs.add(1);
  CycleResult r = cycle(s, jobs);
  ASSERT_NE(started(r, 1), nullptr);
  EXPECT_EQ(node_names(c, started(r, 1)->alloc), std::vector<std::string>{"light"});
}

// Five 16-core nodes <prefix>1..5 in one partition, each with `gpus` GPUs of `gpu_type` (also a feature).
Cluster five_nodes(const std::string& prefix, const std::string& partition, const std::string& gpu_type = "",
                   int32_t gpus = 0) {
  ClusterBuilder b;
  std::vector<std::string> names;
  for (int i = 1; i <= 5; ++i) {
    names.push_back(prefix + std::to_string(i));
    b.add(node(names.back(), 16, 64000, gpu_type, gpus,
               gpu_type.empty() ? std::vector<std::string>{} : std::vector<std::string>{gpu_type}));
  }
  b.partition(partition, names, true);
  return b.build();
}

TEST(Placement, FourNodeExclusiveGpuJobLikeTheSeedsTraining) {
  Cluster c = five_nodes("h", "training", "h100", 8);
  Scheduler s(c);
  Jobs jobs;
  JobSpec& j = jobs.add(1);
  j.min_nodes = 4;
  j.ntasks_per_node = 8;
  j.gres = {GresSpec{"gpu", "", 8}};
  j.exclusive = true;
  j.constraint = "h100";
  j.time_limit = 48 * 3600;
  CycleResult r = cycle(s, jobs);
  const StartDecision* d = started(r, 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(node_names(c, d->alloc), (std::vector<std::string>{"h1", "h2", "h3", "h4"}));
  for (const NodeTake& t : d->alloc.nodes) {
    EXPECT_EQ(t.tasks, 8);
    EXPECT_EQ(t.gres.at(0).count, 8);
  }
}

// Jobs taking every core of their nodes with no time limit (the seed's
// MPI template on a partition without MaxTime): they run for ever, and
// still start at once on idle nodes, on one node or on four.
TEST(Placement, WholeNodeJobsWithoutATimeLimitStartOnIdleNodes) {
  Cluster c = five_nodes("n", "p");
  Scheduler s(c);
  Jobs jobs;
  JobSpec& four = jobs.add(1);
  four.min_nodes = 4;
  four.ntasks_per_node = 16;
  four.time_limit = kInfinite;
  JobSpec& one = jobs.add(2);
  one.ntasks = 16;
  one.time_limit = kInfinite;
  CycleResult r = cycle(s, jobs);
  const StartDecision* d = started(r, 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(node_names(c, d->alloc), (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
  const StartDecision* e = started(r, 2);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(node_names(c, e->alloc), (std::vector<std::string>{"n5"}));
}

// ---- planning and backfill -------------------------------------------------

struct Busy {
  Cluster c;
  Jobs holders;
  std::vector<RunningJob> run;
};

// Four 8-core nodes; n1 and n2 busy until 2000 and 3000, n3 and n4 idle.
Busy four_nodes() {
  Busy b;
  ClusterBuilder cb;
  for (int i = 1; i <= 4; ++i) cb.add(node("n" + std::to_string(i), 8, 64000));
  cb.partition("p", {"n1", "n2", "n3", "n4"}, true);
  b.c = cb.build();
  JobSpec& h1 = b.holders.add(90);
  JobSpec& h2 = b.holders.add(91);
  b.run = {running(b.c, &h1, {"n1"}, 8, 8000, 0, 0, 2000), running(b.c, &h2, {"n2"}, 8, 8000, 0, 0, 3000)};
  return b;
}

TEST(Backfill, BlockedJobGetsTheEarliestStartAndReservation) {
  Busy b = four_nodes();
  Scheduler s(b.c);
  Jobs jobs;
  JobSpec& big = jobs.add(1);
  big.min_nodes = 3;
  big.exclusive = true;
  CycleResult r = cycle(s, jobs, b.run);
  const PendingPlan* p = waiting(r, 1);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->reason, Reason::kResources);
  EXPECT_EQ(p->start, 2040);  // n1 frees at 2000, rounded up to bf_resolution (60 s)
  EXPECT_TRUE(p->reserved);
  EXPECT_EQ(p->nodes, (std::vector<NodeIndex>{0, 2, 3}));
}

TEST(Backfill, ShortJobBackfillsLongJobWaits) {
  Busy b = four_nodes();
  b.c.sched.bf_resolution = 1;
  Scheduler s(b.c);
  Jobs jobs;
  JobSpec& big = jobs.add(1);
  big.min_nodes = 3;
  big.exclusive = true;
  JobSpec& quick = jobs.add(2);  // ends before 2000: may use n3
  quick.exclusive = true;
  quick.time_limit = 900;
  JobSpec& slow = jobs.add(3);   // would hold n4 past 2000
  slow.exclusive = true;
  slow.time_limit = 5000;
  CycleResult r = cycle(s, jobs, b.run);
  ASSERT_NE(started(r, 2), nullptr);
  EXPECT_EQ(started(r, 2)->kind, StartKind::kBackfilled);
  ASSERT_NE(waiting(r, 3), nullptr);
  EXPECT_EQ(waiting(r, 3)->reason, Reason::kPriority);
  // Job 1 holds n1, n3 and n4 from 2000; n2 frees at 3000 and stays free.
  EXPECT_EQ(waiting(r, 3)->start, 3000);
  EXPECT_EQ(waiting(r, 3)->nodes, std::vector<NodeIndex>{1});
}

// --exclusive=user (Slurm 22.05 on the anchor cluster): the job takes what
// it asks for, and shares its node with its own user's jobs only; another
// user's job waits for it (and a user-exclusive job for the other users'
// jobs), planned for when they end; a later user-exclusive job of the first
// user may not start into that plan.
TEST(Placement, ExclusiveUserSharesNodesOnlyWithTheSameUser) {
  ClusterBuilder b;
  b.add(node("n1", 32, 128000));
  b.partition("p", {"n1"}, true);
  Cluster c = b.build();
  c.sched.bf_resolution = 1;
  Scheduler s(c);
  Jobs run_jobs;
  JobSpec& mine = run_jobs.add(90);
  mine.user = "root";
  mine.exclusive_user = true;
  std::vector<RunningJob> run = {running(c, &mine, {"n1"}, 1, 1024, 0, 900, 2000)};
  Jobs jobs;
  JobSpec& same = jobs.add(1);  // root's, not exclusive: shares with root's
  same.user = "root";
  same.time_limit = 500;
  JobSpec& other = jobs.add(2);  // alice's: waits until root's user-exclusive job ends
  other.time_limit = 600;
  CycleResult r = cycle(s, jobs, run);
  const StartDecision* d = started(r, 1);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->alloc.nodes[0].cpus, 1) << "not the whole node";
  EXPECT_FALSE(d->alloc.exclusive);
  const PendingPlan* p = waiting(r, 2);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->reason, Reason::kResources);
  EXPECT_EQ(p->start, 2000);
  EXPECT_TRUE(p->reserved);

  // Root's next user-exclusive job would run into alice's plan: it waits.
  Jobs later;
  JobSpec& alice = later.add(2);
  alice.time_limit = 600;
  JobSpec& again = later.add(3);
  again.user = "root";
  again.exclusive_user = true;
  again.time_limit = 3000;
  r = cycle(s, later, run);
  EXPECT_EQ(started(r, 3), nullptr);
  ASSERT_NE(waiting(r, 2), nullptr);
  EXPECT_EQ(waiting(r, 2)->start, 2000);
  // One that ends before it may run beside root's own.
  again.time_limit = 900;
  again.revision += 1;
  r = cycle(s, later, run);
  EXPECT_NE(started(r, 3), nullptr);

  // The other way round: alice's job runs; root's user-exclusive job waits for its end.
  Jobs alice_run;
  JobSpec& hers = alice_run.add(80);
  std::vector<RunningJob> run2 = {running(c, &hers, {"n1"}, 1, 1024, 0, 900, 1500)};
  Scheduler s2(c);
  Jobs pend2;
  JobSpec& ux = pend2.add(4);
  ux.user = "root";
  ux.exclusive_user = true;
  r = cycle(s2, pend2, run2);
  EXPECT_EQ(started(r, 4), nullptr);
  ASSERT_NE(waiting(r, 4), nullptr);
  EXPECT_EQ(waiting(r, 4)->start, 1500);
}

// An advance reservation on c1 and c2 from 1000 + 3600 to 1000 + 7200,
// seen by jobs outside it: a job that would run into the window waits for
// its end; one that ends before it starts now; a running job's part stays.
TEST(Blocks, JobsOutsideAReservationRunAroundItsWindow) {
  Cluster c = mixed();
  c.sched.bf_resolution = 1;
  Scheduler s(c);
  Jobs jobs;
  JobSpec& longer = jobs.add(1);
  longer.partitions = {"cpu"};
  longer.exclusive = true;
  longer.time_limit = 7200;
  JobSpec& shorter = jobs.add(2);
  shorter.partitions = {"cpu"};
  shorter.exclusive = true;
  shorter.time_limit = 1800;
  std::vector<NodeBlock> blocks = {{c.find_node("c1"), 1000 + 3600, 1000 + 7200},
                                   {c.find_node("c2"), 1000 + 3600, 1000 + 7200}};
  std::vector<const JobSpec*> pending = jobs.pending();
  CycleInput in;
  in.now = 1000;
  in.pending = pending;
  in.blocks = blocks;
  CycleResult r = s.run_cycle(in);
  ASSERT_NE(started(r, 2), nullptr);
  ASSERT_NE(waiting(r, 1), nullptr);
  EXPECT_EQ(waiting(r, 1)->start, 1000 + 7200);
  // Without the blocks both start now (the same scheduler: nothing stays behind).
  in.blocks = {};
  CycleResult free = s.run_cycle(in);
  EXPECT_NE(started(free, 1), nullptr);
  EXPECT_NE(started(free, 2), nullptr);
  // A block that has begun closes the node now: the GPU-less job goes nowhere in "cpu".
  std::vector<NodeBlock> now_blocks = {{c.find_node("c1"), 0, kForever}, {c.find_node("c2"), 500, 1000 + 60}};
  in.blocks = now_blocks;
  CycleResult closed = s.run_cycle(in);
  EXPECT_EQ(started(closed, 1), nullptr);
  EXPECT_EQ(started(closed, 2), nullptr);
  // c2 opens at 1060 and job 1 (first in the queue) is planned there; job 2 behind it.
  ASSERT_NE(waiting(closed, 1), nullptr);
  EXPECT_EQ(waiting(closed, 1)->start, 1000 + 60);
  EXPECT_EQ(waiting(closed, 1)->nodes, std::vector<NodeIndex>{c.find_node("c2")});
  ASSERT_NE(waiting(closed, 2), nullptr);
  EXPECT_EQ(waiting(closed, 2)->start, 1000 + 60 + 7200);
}

TEST(Backfill, EasyReservesOnlyTheFirstWaitingJob) {
  Busy b = four_nodes();
  b.c.sched.bf_reserve_depth = 1;
  b.c.sched.bf_resolution = 1;
  Scheduler s(b.c);
  Jobs jobs;
  JobSpec& big = jobs.add(1);
  big.min_nodes = 3;
  big.exclusive = true;
  JobSpec& second = jobs.add(2);
  second.min_nodes = 4;
  second.exclusive = true;
  CycleResult r = cycle(s, jobs, b.run);
  EXPECT_TRUE(waiting(r, 1)->reserved);
  EXPECT_FALSE(waiting(r, 2)->reserved);
  EXPECT_EQ(waiting(r, 2)->start, 2000 + 3600);  // an estimate after job 1
}

TEST(Backfill, FcfsStartsNothingBehindAWaitingJob) {
  Busy b = four_nodes();
  b.c.sched.policy = QueuePolicy::kFcfs;
  Scheduler s(b.c);
  Jobs jobs;
  JobSpec& big = jobs.add(1);
  big.min_nodes = 3;
  big.exclusive = true;
  JobSpec& quick = jobs.add(2);
  quick.time_limit = 60;
  CycleResult r = cycle(s, jobs, b.run);
  EXPECT_TRUE(r.starts.empty());
  EXPECT_EQ(waiting(r, 2)->reason, Reason::kPriority);
  EXPECT_GE(waiting(r, 2)->start, waiting(r, 1)->start);
}

// A job waiting for the nodes it names (-w) holds back only those nodes in
// an FCFS walk; one without -w holds back its whole partition until the
// backfill pass (Slurm 22.05's main scheduler on the anchor cluster).
TEST(Backfill, AWaitingJobThatNamesItsNodesHoldsBackOnlyThose) {
  for (PassKind pass : {PassKind::kQuick, PassKind::kFull}) {
    SCOPED_TRACE(pass == PassKind::kQuick ? "quick pass" : "sched/builtin");
    Busy b = four_nodes();  // n1 and n2 busy
    if (pass == PassKind::kFull) b.c.sched.policy = QueuePolicy::kFcfs;
    Scheduler s(b.c);
    Jobs jobs;
    JobSpec& pinned = jobs.add(1);
    pinned.nodelist = "n1,n3";
    pinned.min_nodes = 2;
    pinned.exclusive = true;
    jobs.add(2);
    JobSpec& on_n3 = jobs.add(3);
    on_n3.nodelist = "n3";
    CycleResult r = cycle(s, jobs, b.run, 1000, pass);
    ASSERT_EQ(r.starts.size(), 1u);
    EXPECT_EQ(r.starts[0].job->id, 2);
    EXPECT_EQ(r.starts[0].alloc.nodes[0].node, 3);  // n4: n3 is held for job 1
    EXPECT_EQ(waiting(r, 1)->reason, Reason::kResources);
    EXPECT_EQ(waiting(r, 3)->reason, Reason::kPriority);

    pinned.nodelist.clear();  // three nodes anywhere: nothing behind it starts
    pinned.min_nodes = 3;
    ++pinned.revision;
    CycleResult blocked = cycle(s, jobs, b.run, 1000, pass);
    EXPECT_TRUE(blocked.starts.empty());
    EXPECT_EQ(waiting(blocked, 2)->reason, Reason::kPriority);
  }
}

TEST(Backfill, BeyondTheWindowHasNoPlan) {
  Busy b = four_nodes();
  b.c.sched.bf_window = 600;  // ten minutes; the nodes free after 1000 s
  Scheduler s(b.c);
  Jobs jobs;
  JobSpec& big = jobs.add(1);
  big.min_nodes = 3;
  big.exclusive = true;
  CycleResult r = cycle(s, jobs, b.run);
  EXPECT_EQ(waiting(r, 1)->start, kNoPlan);
  EXPECT_EQ(waiting(r, 1)->reason, Reason::kResources);
  EXPECT_EQ(r.stats.beyond_window, 1);
}

TEST(Backfill, QuickPassTestsOnlyTheHeadOfTheQueue) {
  Busy b = four_nodes();
  b.c.sched.default_queue_depth = 2;
  Scheduler s(b.c);
  Jobs jobs;
  for (JobId id = 1; id <= 5; ++id) jobs.add(id);
  CycleResult r = cycle(s, jobs, b.run, 1000, PassKind::kQuick);
  EXPECT_EQ(r.stats.tested, 2);
  EXPECT_EQ(r.starts.size(), 2u);
  EXPECT_FALSE(waiting(r, 5)->tested);
}

TEST(Backfill, SameInputSameDecisions) {
  Busy b = four_nodes();
  Jobs jobs;
  for (JobId id = 1; id <= 30; ++id) {
    JobSpec& j = jobs.add(id);
    j.cpus_per_task = 1 + static_cast<int32_t>(id * 7 % 8);
    j.time_limit = 300 + id * 97 % 4000;
  }
  Scheduler s1(b.c), s2(b.c);
  CycleResult r1 = cycle(s1, jobs, b.run), r2 = cycle(s2, jobs, b.run);
  ASSERT_EQ(r1.starts.size(), r2.starts.size());
  for (size_t i = 0; i < r1.starts.size(); ++i) {
    EXPECT_EQ(r1.starts[i].job->id, r2.starts[i].job->id);
    EXPECT_EQ(r1.starts[i].alloc.nodes[0].cores, r2.starts[i].alloc.nodes[0].cores);
  }
  ASSERT_EQ(r1.pending.size(), r2.pending.size());
  for (size_t i = 0; i < r1.pending.size(); ++i) {
    EXPECT_EQ(r1.pending[i].job->id, r2.pending[i].job->id);
    EXPECT_EQ(r1.pending[i].start, r2.pending[i].start);
    EXPECT_EQ(r1.pending[i].nodes, r2.pending[i].nodes);
  }
}

// ---- reasons -----------------------------------------------------------------

class HistoryStub : public JobHistory {
 public:
  std::map<JobId, JobOutcome> known;
  JobOutcome outcome(JobId job, int64_t) const override {
    auto it = known.find(job);
    return it == known.end() ? JobOutcome{} : it->second;
  }
};

TEST(Reasons, HoldBeginTimeAndDependencies) {
  Cluster c = mixed();
  Scheduler s(c);
  Jobs jobs;
  jobs.add(1).hold = Hold::kUser;
  jobs.add(2).hold = Hold::kAdmin;
  jobs.add(3).begin_time = 5000;
  JobSpec& dep = jobs.add(4);
  dep.dependency.items = {DepItem{DepKind::kAfterOk, 100}};
  JobSpec& never = jobs.add(5);
  never.dependency.items = {DepItem{DepKind::kAfterOk, 101}};
  JobSpec& ok = jobs.add(6);
  ok.dependency.items = {DepItem{DepKind::kAfterNotOk, 101}};
  JobSpec& any = jobs.add(7);
  any.dependency.items = {DepItem{DepKind::kAfterAny, 100}};
  HistoryStub h;
  h.known[100] = {JobProgress::kRunning, 900};
  h.known[101] = {JobProgress::kFailed, 500};
  std::vector<const JobSpec*> pending = jobs.pending();
  CycleInput in;
  in.now = 1000;
  in.pending = pending;
  in.history = &h;
  CycleResult r = s.run_cycle(in);
  EXPECT_EQ(waiting(r, 1)->reason, Reason::kJobHeldUser);
  EXPECT_EQ(waiting(r, 2)->reason, Reason::kJobHeldAdmin);
  EXPECT_EQ(waiting(r, 3)->reason, Reason::kBeginTime);
  EXPECT_EQ(waiting(r, 4)->reason, Reason::kDependency);
  EXPECT_EQ(waiting(r, 5)->reason, Reason::kDependencyNeverSatisfied);
  EXPECT_NE(started(r, 6), nullptr);
  EXPECT_EQ(waiting(r, 7)->reason, Reason::kDependency);
}

TEST(Reasons, SingletonWaitsForTheOlderJobOfTheSameName) {
  Cluster c = mixed();
  Scheduler s(c);
  Jobs jobs;
  JobSpec& a = jobs.add(1);
  a.name = "same";
  a.dependency.items = {DepItem{DepKind::kSingleton}};
  JobSpec& b = jobs.add(2);
  b.name = "same";
  b.dependency.items = {DepItem{DepKind::kSingleton}};
  CycleResult r = cycle(s, jobs);
  EXPECT_NE(started(r, 1), nullptr);
  EXPECT_EQ(waiting(r, 2)->reason, Reason::kDependency);
}

TEST(Reasons, PartitionAndQosLimits) {
  ClusterBuilder b;
  b.add(node("n1", 8, 64000, "h100", 4)).add(node("n2", 8, 64000, "h100", 4));
  b.partition("p", {"n1", "n2"}, true, 3600);
  QosSpec normal;
  normal.name = "normal";
  normal.grp_tres = {{"gres/gpu", 4}};
  QosSpec debug;
  debug.name = "debug";
  debug.max_wall = 600;
  debug.priority = 10;
  b.qos(normal).qos(debug);
  Cluster c = b.build();
  Scheduler s(c);
  Jobs jobs;
  jobs.add(1).time_limit = 7200;  // over the partition's MaxTime
  JobSpec& n3 = jobs.add(2);
  n3.min_nodes = 3;                // the partition has two nodes
  JobSpec& wall = jobs.add(3);
  wall.qos = "debug";
  wall.time_limit = 1200;
  JobSpec& g1 = jobs.add(4);
  g1.gres = {GresSpec{"gpu", "", 3}};
  JobSpec& g2 = jobs.add(5);
  g2.gres = {GresSpec{"gpu", "", 2}};  // 3 + 2 > GrpTRES gres/gpu=4
  CycleResult r = cycle(s, jobs);
  EXPECT_EQ(waiting(r, 1)->reason, Reason::kPartitionTimeLimit);
  EXPECT_EQ(waiting(r, 2)->reason, Reason::kPartitionNodeLimit);
  EXPECT_EQ(waiting(r, 3)->reason, Reason::kQosMaxWallDurationPerJobLimit);
  EXPECT_NE(started(r, 4), nullptr);
  EXPECT_EQ(waiting(r, 5)->reason, Reason::kQosGrpGres);
}

// Association limits (sacctmgr's, on accounts and users in them): MaxJobs
// on the user's association (or the nearest account's), GrpJobs and
// GrpTRES counted over every job at or below the association, MaxWall
// and MaxTRES per job from the nearest one set; a job whose association
// has no row is not held back.
TEST(Reasons, AssociationLimits) {
  ClusterBuilder b;
  b.add(node("n1", 8, 64000, "h100", 4)).add(node("n2", 8, 64000, "h100", 4));
  b.partition("p", {"n1", "n2"}, true);
  Cluster c = b.build();
  auto row = [](std::string account, std::string user, int32_t parent) {
    AssocLimitSpec a;
    a.account = std::move(account);
    a.user = std::move(user);
    a.parent = parent;
    return a;
  };
  AssocLimitSpec lab = row("lab", "", 0);
  lab.grp_tres = {{"gres/gpu", 3}};
  lab.max_wall = 3600;
  lab.max_tres_per_job = {{"cpu", 4}};
  lab.max_jobs = 2;
  AssocLimitSpec small = row("small", "", 0);
  small.grp_jobs = 1;
  AssocLimitSpec bob = row("lab", "bob", 1);
  bob.max_jobs = 5;  // his own, over the account's
  c.set_assocs({row("root", "", -1), lab, small, row("lab", "alice", 1), bob, row("small", "dave", 2)});
  Scheduler s(c);
  Jobs jobs;
  auto job = [&](JobId id, const char* user, const char* account) -> JobSpec& {
    JobSpec& j = jobs.add(id);
    j.user = user;
    j.account = account;
    return j;
  };
  job(1, "alice", "lab");
  job(2, "alice", "lab");
  job(3, "alice", "lab");  // the account's MaxJobs=2 per user
  job(4, "bob", "lab").gres = {GresSpec{"gpu", "", 2}};
  job(5, "bob", "lab").gres = {GresSpec{"gpu", "", 2}};  // 2 + 2 > the account's GrpTRES gres/gpu=3
  job(6, "bob", "lab").time_limit = 7200;                // over MaxWall=1:00:00
  job(7, "bob", "lab").ntasks = 6;                       // over MaxTRES cpu=4
  job(8, "dave", "small");
  job(9, "dave", "small");    // GrpJobs=1 over the account
  job(10, "carol", "other");  // no association row: no limits
  CycleResult r = cycle(s, jobs);
  EXPECT_NE(started(r, 1), nullptr);
  EXPECT_NE(started(r, 2), nullptr);
  EXPECT_EQ(waiting(r, 3)->reason, Reason::kAssocMaxJobsLimit);
  EXPECT_NE(started(r, 4), nullptr);
  EXPECT_EQ(waiting(r, 5)->reason, Reason::kAssocGrpGres);
  EXPECT_EQ(waiting(r, 6)->reason, Reason::kAssocMaxWallDurationPerJobLimit);
  EXPECT_EQ(waiting(r, 7)->reason, Reason::kAssocMaxCpuPerJobLimit);
  EXPECT_NE(started(r, 8), nullptr);
  EXPECT_EQ(waiting(r, 9)->reason, Reason::kAssocGrpJobsLimit);
  EXPECT_NE(started(r, 10), nullptr);
  EXPECT_EQ(reason_name(Reason::kAssocGrpGres), "AssocGrpGRES");
}

TEST(Reasons, ArrayThrottle) {
  Cluster c = mixed();
  Scheduler s(c);
  Jobs jobs;
  for (int t = 0; t < 4; ++t) {
    JobSpec& j = jobs.add(10 + t);
    j.array_job_id = 10;
    j.array_task_id = t;
    j.array_max_running = 2;
  }
  CycleResult r = cycle(s, jobs);
  EXPECT_EQ(r.starts.size(), 2u);
  EXPECT_EQ(waiting(r, 12)->reason, Reason::kJobArrayTaskLimit);
}

TEST(Reasons, HigherTierGoesFirst) {
  ClusterBuilder b;
  b.add(node("n1", 8, 64000));
  b.partition("low", {"n1"}, true);
  b.partition("high", {"n1"});
  Cluster c = b.build();
  c.partitions[1].priority_tier = 2;
  Scheduler s(c);
  Jobs jobs;
  JobSpec& a = jobs.add(1);
  a.partitions = {"low"};
  a.exclusive = true;
  JobSpec& h = jobs.add(2);
  h.partitions = {"high"};
  h.exclusive = true;
  CycleResult r = cycle(s, jobs);
  EXPECT_NE(started(r, 2), nullptr);
  EXPECT_EQ(waiting(r, 1)->reason, Reason::kResources);
}

TEST(Explain, NamesNodeGroupsAndWhatTheyLack) {
  Cluster c = mixed();
  Scheduler s(c);
  Jobs holders;
  JobSpec& h = holders.add(90);
  std::vector<RunningJob> run = {running(c, &h, {"g1"}, 4, 1000, 6, 0, 5000)};
  Jobs jobs;
  JobSpec& j = jobs.add(1);
  j.partitions = {"gpu"};
  j.gres = {GresSpec{"gpu", "", 8}};
  j.constraint = "h100";
  std::vector<const JobSpec*> pending = jobs.pending();
  CycleInput in;
  in.now = 1000;
  in.running = run;
  in.pending = pending;
  Explanation ex = s.explain(in, j);
  std::string all;
  for (const std::string& l : ex.lines) all += l + "\n";
  EXPECT_NE(all.find("nodes g1"), std::string::npos) << all;
  EXPECT_NE(all.find("only 2 free GPUs"), std::string::npos) << all;
  EXPECT_NE(all.find("nodes g2"), std::string::npos) << all;
  EXPECT_NE(all.find("lack the features \"h100\""), std::string::npos) << all;
  EXPECT_NE(all.find("reason: Resources; planned start"), std::string::npos) << all;
}

}  // namespace
}  // namespace drover::core

namespace drover::core {
namespace {

// Three one-CPU nodes; job 2 holds n2 and n3 until 100; n1 is idle.
TEST(Backfill, ReservationLeavesIdleNodesToBackfill) {
  testing::ClusterBuilder b;
  for (int i = 1; i <= 3; ++i) b.add(testing::node("n" + std::to_string(i), 1, 1000, "", 0, {}, 1, 1));
  b.partition("p", {"n1", "n2", "n3"}, true);
  Cluster c = b.build();
  c.sched.bf_reserve_depth = 1;
  c.sched.bf_resolution = 1;
  Scheduler s(c);
  testing::Jobs hold;
  JobSpec& h = hold.add(2);
  std::vector<RunningJob> run = {testing::running(c, &h, {"n2", "n3"}, 1, 100, 0, 0, 100)};
  testing::Jobs jobs;
  JobSpec& j3 = jobs.add(3);
  j3.min_nodes = 2;
  j3.time_limit = 10;
  j3.mem_per_cpu_mb = 100;
  JobSpec& j4 = jobs.add(4);
  j4.time_limit = 1000;
  j4.mem_per_cpu_mb = 100;
  std::vector<const JobSpec*> pending = jobs.pending();
  CycleInput in;
  in.now = 7;
  in.running = run;
  in.pending = pending;
  CycleResult r = s.run_cycle(in);
  ASSERT_NE(testing::waiting(r, 3), nullptr);
  EXPECT_EQ(testing::waiting(r, 3)->start, 100);
  EXPECT_EQ(testing::waiting(r, 3)->nodes, (std::vector<NodeIndex>{1, 2}));
  ASSERT_NE(testing::started(r, 4), nullptr);
  EXPECT_EQ(testing::node_names(c, testing::started(r, 4)->alloc), std::vector<std::string>{"n1"});
}

// Two one-CPU nodes: n1 frees at 500, n2 at 1000. Job 1 is planned on n1
// over [500, 1000); job 2 can start at 1000 on either node. Equal starts go
// to the first node in cluster order, whether the search walks the moments
// nodes free up (where n1's moment at 1000 came from job 1's plan, after
// n2's) or looks at every node.
TEST(Backfill, EqualStartsGoToTheFirstNodeHoweverTheSearchRuns) {
  testing::ClusterBuilder b;
  for (int i = 1; i <= 2; ++i) b.add(testing::node("n" + std::to_string(i), 1, 1000, "", 0, {}, 1, 1));
  b.partition("p", {"n1", "n2"}, true);
  Cluster c = b.build();
  c.sched.bf_resolution = 1;
  testing::Jobs hold;
  JobSpec& h1 = hold.add(10);
  JobSpec& h2 = hold.add(11);
  std::vector<RunningJob> run = {testing::running(c, &h1, {"n1"}, 1, 100, 0, 0, 500),
                                 testing::running(c, &h2, {"n2"}, 1, 100, 0, 0, 1000)};
  testing::Jobs jobs;
  for (JobId id : {1, 2}) {
    JobSpec& j = jobs.add(id);
    j.time_limit = 500;
    j.mem_per_cpu_mb = 100;
  }
  std::vector<const JobSpec*> pending = jobs.pending();
  for (size_t threshold : {size_t{0}, SIZE_MAX}) {
    for (bool reference : {false, true}) {
      Scheduler s(c);
      s.set_index_threshold(threshold);
      s.use_reference_search(reference);
      CycleInput in;
      in.now = 7;
      in.running = run;
      in.pending = pending;
      CycleResult r = s.run_cycle(in);
      ASSERT_NE(testing::waiting(r, 1), nullptr);
      EXPECT_EQ(testing::waiting(r, 1)->start, 500);
      EXPECT_EQ(testing::waiting(r, 1)->nodes, std::vector<NodeIndex>{0});
      ASSERT_NE(testing::waiting(r, 2), nullptr);
      EXPECT_EQ(testing::waiting(r, 2)->start, 1000) << threshold << " " << reference;
      EXPECT_EQ(testing::waiting(r, 2)->nodes, std::vector<NodeIndex>{0}) << threshold << " " << reference;
    }
  }
}

// FCFS: four one-CPU nodes; job 1 holds two until 100; job 2 (3 nodes) waits
// for 100; job 3 (2 nodes) may not start before job 2, and its plan must not
// overlap job 2's.
TEST(Backfill, FcfsPlansBehindTheBlockedJobWithoutOverlap) {
  testing::ClusterBuilder b;
  for (int i = 1; i <= 4; ++i) b.add(testing::node("n" + std::to_string(i), 1, 1000, "", 0, {}, 1, 1));
  b.partition("p", {"n1", "n2", "n3", "n4"}, true);
  Cluster c = b.build();
  c.sched.policy = QueuePolicy::kFcfs;
  c.sched.bf_resolution = 1;
  Scheduler s(c);
  testing::Jobs hold;
  JobSpec& h = hold.add(1);
  std::vector<RunningJob> run = {testing::running(c, &h, {"n1", "n2"}, 1, 100, 0, 0, 100)};
  testing::Jobs jobs;
  JobSpec& j2 = jobs.add(2);
  j2.min_nodes = 3;
  j2.time_limit = 100;
  j2.mem_per_cpu_mb = 100;
  JobSpec& j3 = jobs.add(3);
  j3.min_nodes = 2;
  j3.time_limit = 50;
  j3.mem_per_cpu_mb = 100;
  std::vector<const JobSpec*> pending = jobs.pending();
  CycleInput in;
  in.now = 2;
  in.running = run;
  in.pending = pending;
  CycleResult r = s.run_cycle(in);
  EXPECT_TRUE(r.starts.empty());
  const PendingPlan* p2 = testing::waiting(r, 2);
  const PendingPlan* p3 = testing::waiting(r, 3);
  EXPECT_EQ(p2->start, 100);
  // n4 is the only node job 2 leaves free from 100 to 200: job 3 waits for 200.
  EXPECT_EQ(p3->start, 200);
}

}  // namespace
}  // namespace drover::core

namespace drover::core {
namespace {

TEST(Dependencies, FromTheParsedSyntax) {
  auto spec = parse_dependency("afterok:1:2_3,after:5+10,singleton");
  ASSERT_TRUE(spec.ok());
  Dependency d = dependency_from(*spec);
  ASSERT_EQ(d.items.size(), 4u);
  EXPECT_FALSE(d.any);
  EXPECT_EQ(d.items[0].kind, DepKind::kAfterOk);
  EXPECT_EQ(d.items[0].job, 1);
  EXPECT_EQ(d.items[1].array_task, 3);
  EXPECT_EQ(d.items[2].kind, DepKind::kAfter);
  EXPECT_EQ(d.items[2].delay, 600);
  EXPECT_EQ(d.items[3].kind, DepKind::kSingleton);
  EXPECT_TRUE(dependency_from(*parse_dependency("afterok:1?afternotok:2")).any);
}

// after:J+M waits M minutes from J's start, or from its cancel when it never started (Slurm 22.05
// kept "after:J+5(unfulfilled)" after J's cancel on the anchor cluster).
TEST(Dependencies, AfterWithMinutesCountsFromTheStartOrTheCancel) {
  struct OneJob : JobHistory {
    JobOutcome o;
    JobOutcome outcome(JobId, int64_t) const override { return o; }
  } history;
  DepItem after{DepKind::kAfter, 7, -1, 300};
  JobSpec job;
  history.o = {JobProgress::kPending, 0};
  EXPECT_EQ(dependency_item_state(after, job, history, 1000), DepItemState::kWait);
  history.o = {JobProgress::kCancelled, 1000};  // cancelled while pending, at 1000
  EXPECT_EQ(dependency_item_state(after, job, history, 1100), DepItemState::kWait);
  EXPECT_EQ(dependency_item_state(after, job, history, 1300), DepItemState::kMet);
  history.o = {JobProgress::kRunning, 1000};
  EXPECT_EQ(dependency_item_state(after, job, history, 1299), DepItemState::kWait);
  EXPECT_EQ(dependency_item_state(after, job, history, 1300), DepItemState::kMet);
}

}  // namespace
}  // namespace drover::core
