// The driver: how jobs start and end on the virtual clock, the passes it
// asks the core for, submit refusals, dependencies, SWF feedback, begin
// times, fair share, and the node ledger behind utilisation and stranded GPUs.
#include <gtest/gtest.h>

#include "sim/driver.hpp"
#include "sim/sim_test_util.hpp"

namespace drover::sim {
namespace {

using testing::cluster_from;
using testing::four_nodes;
using testing::kEasy;
using testing::trace_from;

std::vector<core::Time> starts(const SimResult& r) {
  std::vector<core::Time> out;
  for (const auto& j : r.jobs) out.push_back(j.start);
  return out;
}

SimResult run(const core::Cluster& c, const Trace& t, const SimOptions& o = {}) {
  auto r = simulate(c, t, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : SimResult{};
}

// The textbook case of reference_scheduler.hpp, through the driver.
const char* kTextbook =
    "id,submit,run_time,ntasks,time_limit\n"
    "1,0,100,2,100\n2,1,50,3,50\n3,2,90,1,90\n4,3,500,1,500\n5,4,500,1,500\n";

TEST(Driver, EasyStartsAndHowJobsStarted) {
  auto c = cluster_from(four_nodes(kEasy));
  SimResult r = run(c, trace_from(kTextbook));
  EXPECT_EQ(starts(r), (std::vector<core::Time>{0, 100, 2, 3, 150}));
  EXPECT_EQ(r.jobs[0].how, StartHow::kImmediate);
  EXPECT_EQ(r.jobs[1].how, StartHow::kReserved);
  EXPECT_EQ(r.jobs[2].how, StartHow::kBackfilled);
  EXPECT_EQ(r.jobs[3].how, StartHow::kBackfilled);
  EXPECT_EQ(r.jobs[4].state, JobState::kCompleted);
  EXPECT_EQ(r.first_submit, 0);
  EXPECT_EQ(r.last_end, 650);
  EXPECT_GT(r.stats.full_passes, 0);
  EXPECT_EQ(r.stats.quick_passes, 0);  // bf_interval=0: every pass is a full one
}

TEST(Driver, FcfsStopsAtTheFirstJobThatDoesNotFit) {
  auto c = cluster_from(four_nodes("SchedulerType=sched/builtin\nPriorityType=priority/basic"));
  SimResult r = run(c, trace_from(kTextbook));
  EXPECT_EQ(starts(r), (std::vector<core::Time>{0, 100, 100, 150, 150}));
}

// With bf_interval=30 the event passes are quick (no backfilling); the
// backfill pass runs on the 30 s grid from the first submit.
TEST(Driver, BackfillWaitsForTheTimer) {
  auto c = cluster_from(four_nodes("SchedulerType=sched/backfill\nSchedulerParameters=bf_reserve_depth=1,bf_interval=30,bf_resolution=1"));
  SimResult r = run(c, trace_from(kTextbook));
  EXPECT_EQ(r.jobs[2].start, 30);  // job 3 could backfill at 2; the backfill pass comes at 30
  EXPECT_EQ(r.jobs[2].how, StartHow::kBackfilled);
  EXPECT_GT(r.stats.quick_passes, 0);
}

TEST(Driver, JobsAreKilledAtTheirLimit) {
  auto c = cluster_from(four_nodes(kEasy));
  SimResult r = run(c, trace_from("id,submit,run_time,ntasks,time_limit\n1,0,500,1,100\n2,0,50,1,100\n"));
  EXPECT_EQ(r.jobs[0].state, JobState::kTimeout);
  EXPECT_EQ(r.jobs[0].end, 100);
  EXPECT_EQ(r.jobs[1].state, JobState::kCompleted);
  EXPECT_EQ(r.jobs[1].end, 50);
}

// OverTimeLimit, as the controller enforces it: past the limit by that many
// minutes (the partition's own wins), then TIMEOUT.
TEST(Driver, OverTimeLimitLetsJobsRunPastTheirLimit) {
  auto c = cluster_from(
      "SchedulerType=sched/builtin\nOverTimeLimit=1\nNodeName=n[1-3] CPUs=2 RealMemory=1000\n"
      "PartitionName=p Nodes=n[1-2] Default=YES MaxTime=2:00:00\n"
      "PartitionName=free Nodes=n3 MaxTime=2:00:00 OverTimeLimit=UNLIMITED\n");
  SimResult r = run(c, trace_from("id,submit,run_time,ntasks,time_limit,partition\n"
                                  "1,0,500,1,100,p\n2,0,130,1,100,p\n3,0,500,1,100,free\n"));
  EXPECT_EQ(r.jobs[0].state, JobState::kTimeout);
  EXPECT_EQ(r.jobs[0].end, 160);
  EXPECT_EQ(r.jobs[1].state, JobState::kCompleted);
  EXPECT_EQ(r.jobs[1].end, 130);
  EXPECT_EQ(r.jobs[2].state, JobState::kCompleted);
  EXPECT_EQ(r.jobs[2].end, 500);
}

TEST(Driver, RunToLimitUsesThePartitionDefault) {
  auto c = cluster_from(
      "SchedulerType=sched/builtin\nNodeName=n1 CPUs=2 RealMemory=1000\n"
      "PartitionName=p Nodes=n1 Default=YES MaxTime=2:00:00 DefaultTime=00:10:00\n");
  TraceOptions o;
  o.missing_limit = MissingLimit::kPartitionDefault;
  o.run_to_limit = true;
  SimResult r = run(c, trace_from("id,submit,run_time\n1,0,5\n", o));
  EXPECT_EQ(r.jobs[0].end - r.jobs[0].start, 600);
}

// As in Slurm (anchors never_cpus_too_many, never_bad_partition): what no
// node can hold is refused at submit; a job over a partition limit is
// accepted and waits for good (never_nodes_too_many: PartitionNodeLimit).
TEST(Driver, JobsThatCanNeverRun) {
  auto c = cluster_from(four_nodes(kEasy));
  SimResult r = run(c, trace_from("id,submit,run_time,ntasks,cpus_per_task,partition\n"
                                  "1,0,10,1,2,\n2,0,10,1,,nope\n3,0,10,8,,\n4,1,10,1,,\n"));
  EXPECT_EQ(r.jobs[0].state, JobState::kRejected);
  EXPECT_NE(r.jobs[0].note.find("Requested node configuration is not available"), std::string::npos) << r.jobs[0].note;
  EXPECT_EQ(r.jobs[1].state, JobState::kRejected);
  EXPECT_NE(r.jobs[1].note.find("partition"), std::string::npos) << r.jobs[1].note;
  EXPECT_EQ(r.jobs[2].state, JobState::kNeverRan);
  EXPECT_EQ(r.jobs[2].note, "PartitionNodeLimit");
  EXPECT_EQ(r.jobs[3].state, JobState::kCompleted);
}

TEST(Driver, Dependencies) {
  auto c = cluster_from(four_nodes(kEasy));
  SimResult r = run(c, trace_from("id,submit,run_time,ntasks,state,dependency\n"
                                  "1,0,100,1,FAILED,\n"
                                  "2,0,10,1,,afterok:1\n"
                                  "3,0,10,1,,afterany:1\n"
                                  "4,0,10,1,,afternotok:1\n"
                                  "5,0,10,1,,after:1+1\n"));
  EXPECT_EQ(r.jobs[0].state, JobState::kFailed);
  EXPECT_EQ(r.jobs[1].state, JobState::kNeverRan);
  EXPECT_EQ(r.jobs[1].note, "DependencyNeverSatisfied");
  EXPECT_EQ(r.jobs[2].start, 100);
  EXPECT_EQ(r.jobs[3].start, 100);
  EXPECT_EQ(r.jobs[4].start, 60);
}

TEST(Driver, ArrayDependency) {
  auto c = cluster_from(four_nodes(kEasy));
  SimResult r = run(c, trace_from("id,submit,run_time,ntasks,array_job,array_task,dependency\n"
                                  "10,0,100,1,10,0,\n11,0,200,1,10,1,\n12,0,10,1,,,afterok:10\n13,0,10,1,,,afterok:10_0\n"));
  EXPECT_EQ(r.jobs[2].start, 200);  // every element
  EXPECT_EQ(r.jobs[3].start, 100);  // element 0 only
}

TEST(Driver, SwfFeedbackDelaysTheSubmit) {
  auto c = cluster_from(four_nodes(kEasy));
  auto t = read_swf("1 0 -1 100 1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1 -1\n"
                    "2 10 -1 50 1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 1 30\n",
                    "f.swf", {});
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(apply_trace_options(*t, {}).ok());
  SimResult r = run(c, *t);
  EXPECT_EQ(r.jobs[1].submit, 130);  // job 1 ended at 100, then 30 s of think time
  EXPECT_EQ(r.jobs[1].start, 130);
}

TEST(Driver, BeginTimeWakesTheScheduler) {
  auto c = cluster_from(four_nodes(kEasy));
  SimResult r = run(c, trace_from("id,submit,run_time,ntasks,begin\n1,0,10,1,500\n"));
  EXPECT_EQ(r.jobs[0].start, 500);
}

// Fair share: user a has used the machine, so b's job, submitted later,
// goes first once both wait.
TEST(Driver, FairShareOrdersTheQueue) {
  auto c = cluster_from(four_nodes("SchedulerType=sched/backfill\nSchedulerParameters=bf_interval=0\n"
                                   "PriorityType=priority/multifactor\nPriorityWeightFairshare=10000"));
  SimOptions o;
  o.fairshare_interval = 60;
  SimResult r = run(c, trace_from("id,submit,run_time,ntasks,user\n"
                                  "1,0,1000,4,a\n2,500,100,4,a\n3,600,100,4,b\n"),
                    o);
  EXPECT_EQ(r.jobs[2].start, 1000);
  EXPECT_EQ(r.jobs[1].start, 1100);
}

// One GPU node: a CPU job takes every core, so the 8 GPUs are stranded for its 2 hours.
TEST(Driver, StrandedGpus) {
  auto c = cluster_from(
      "GresTypes=gpu\nSchedulerType=sched/backfill\nSelectTypeParameters=CR_Core_Memory\n"
      "NodeName=g1 CPUs=8 Sockets=1 CoresPerSocket=8 RealMemory=8000 Gres=gpu:8\n"
      "PartitionName=p Nodes=g1 Default=YES MaxTime=INFINITE\n",
      "NodeName=g1 Name=gpu File=/dev/nvidia[0-7]\n");
  SimResult r = run(c, trace_from("id,submit,run_time,ntasks,mem,gres\n1,0,7200,8,1000,\n2,7200,3600,1,1000,gpu:2\n"));
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.nodes[0].stranded_gpu_s, 8.0 * 7200);
  EXPECT_DOUBLE_EQ(r.nodes[0].cpu_s, 8.0 * 7200 + 1.0 * 3600);
  EXPECT_DOUBLE_EQ(r.nodes[0].gpu_s, 2.0 * 3600);
  EXPECT_EQ(r.jobs[1].gpus, 2);
}

TEST(Driver, ProgressAndCycleHooks) {
  auto c = cluster_from(four_nodes(kEasy));
  int64_t cycles = 0, last_done = -1;
  SimOptions o;
  o.on_cycle = [&](const core::CycleInput&, const core::CycleOptions&, const core::CycleResult&) { ++cycles; };
  o.progress = [&](const Progress& p) { last_done = p.done; };
  SimResult r = run(c, trace_from(kTextbook), o);
  EXPECT_EQ(cycles, r.stats.full_passes + r.stats.quick_passes);
  EXPECT_EQ(last_done, 5);
}

TEST(Driver, EmptyTrace) {
  auto c = cluster_from(four_nodes(kEasy));
  SimResult r = run(c, Trace{});
  EXPECT_TRUE(r.jobs.empty());
  EXPECT_EQ(r.last_end, 0);
}

}  // namespace
}  // namespace drover::sim
