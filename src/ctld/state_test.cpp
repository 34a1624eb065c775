// ControllerState without RPC or disk: operations in, effects out.
#include "ctld/state.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <tuple>
#include <unistd.h>

#include "common/strings.hpp"
#include "config/debug_levels.hpp"
#include "config/parse.hpp"
#include "ctld/persist.hpp"
#include "ctld/state_test_support.hpp"

namespace drover::ctld {
namespace {

using state_testing::kConf;
using state_testing::make_state;
using state_testing::heard_all;
using state_testing::register_all;
using state_testing::report;

Caller user(uint32_t uid, const std::string& name) { return Caller{uid, uid, name, false}; }

v1::JobDescriptor wrap(const std::string& cmd) {
  v1::JobDescriptor d;
  d.set_batch(true);
  d.set_name("wrap");
  d.set_script("#!/bin/sh\n" + cmd + "\n");
  d.set_work_dir("/tmp");
  return d;
}

// Job 1, alice's `sleep 1000`, submitted and started by a full pass at `at`.
void start_alices_sleep(ControllerState& st, int64_t at) {
  Effects fx;
  ASSERT_TRUE(st.submit(user(1000, "alice"), wrap("sleep 1000"), false, at, fx));
  Effects go;
  st.schedule(core::PassKind::kFull, at, go);
  ASSERT_EQ(st.jobs().at(1).rec.state(), v1::RUNNING);
}

v1::StepReport step(int64_t job, bool ended, const std::string& state = "RUNNING", int code = 0) {
  v1::StepReport s;
  s.mutable_step()->set_job_id(job);
  s.mutable_step()->set_step_id(-2);
  s.set_ended(ended);
  s.set_state(state);
  s.set_exit_code(code);
  return s;
}

// scontrol update of one job's one field: its error, empty when made.
std::string update_one(ControllerState& st, const Caller& who, int64_t job, const std::string& key,
                       const std::string& value, int64_t now) {
  v1::UpdateJobRequest req;
  req.add_targets()->set_job_id(job);
  (*req.mutable_fields())[key] = value;
  req.add_field_order(key);
  Effects e;
  auto out = st.update(who, req, now, e);
  return out.size() == 1 ? out[0].error() : "expected one result";
}

int launches(const Effects& fx) {
  int n = 0;
  for (const auto& c : fx.commands) n += c.kind == AgentCommand::kLaunch;
  return n;
}

TEST(ControllerState, SubmitRecordsDurablyAndArraysTakeConsecutiveIds) {
  auto st = make_state();
  Effects fx;
  auto r = st->submit(user(1000, "alice"), wrap("true"), false, 1000, fx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->job_id(), 1);
  EXPECT_EQ(fx.batch.mutations.size(), 2u);  // the job and next_job_id
  v1::JobDescriptor arr = wrap("true");
  for (int i : {0, 1, 2, 5}) arr.mutable_array()->add_task_ids(i);
  arr.mutable_array()->set_max_running(2);
  Effects fx2;
  auto a = st->submit(user(1000, "alice"), arr, false, 1000, fx2);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->job_id(), 2);
  EXPECT_EQ(st->next_job_id(), 6);
  const auto& j = st->jobs().at(5);
  EXPECT_EQ(j.rec.array_job_id(), 2);
  EXPECT_EQ(j.rec.array_task_id(), 5);
  EXPECT_EQ(j.rec.array_task_count(), 4);
  EXPECT_EQ(j.rec.user(), "alice");
  EXPECT_EQ(j.rec.partition(), "cpu");
}

// A job waiting for its --begin runs no pass at submission; it is priced
// as it is submitted all the same (as Slurm prices jobs), a held one is 0.
TEST(ControllerState, AJobWaitingForItsBeginShowsItsPriorityAtOnce) {
  auto st = make_state("PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\n");
  Effects fx;
  v1::JobDescriptor later = wrap("true");
  later.set_begin_time(5000);
  auto r = st->submit(user(1000, "alice"), later, false, 1000, fx);
  ASSERT_TRUE(r) << r.error().message;
  const Job& j = st->jobs().at(r->job_id());
  EXPECT_EQ(j.rec.reason(), "BeginTime");
  const int64_t shown = st->job_for_display(j, false, false, 1000).priority();
  EXPECT_GT(shown, 0);
  EXPECT_EQ(shown, st->priority_now(j, 1000).total);
  later.set_hold(true);
  auto held = st->submit(user(1000, "alice"), later, false, 1000, fx);
  ASSERT_TRUE(held);
  EXPECT_EQ(st->job_for_display(st->jobs().at(held->job_id()), false, false, 1000).priority(), 0);
}

// --priority from a plain user: taken without it (Slurm 22.05 on the anchor
// cluster gave alice's job the priority its neighbours had), with a warning;
// root's sets it.
TEST(ControllerState, APlainUsersPriorityIsIgnoredAndRootsIsKept) {
  auto st = make_state("PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\n");
  v1::JobDescriptor d = wrap("true");
  d.set_hold(true);  // kept pending: its priority is the one asked for or the computed one
  d.set_priority(10);
  Effects fx;
  auto mine = st->submit(user(1000, "alice"), d, false, 1000, fx);
  ASSERT_TRUE(mine) << mine.error().message;
  ASSERT_EQ(mine->warnings_size(), 1);
  EXPECT_EQ(mine->warnings(0),
            "warning: --priority ignored: only root, SlurmUser or an operator may set a job's priority");
  EXPECT_FALSE(st->jobs().at(mine->job_id()).rec.desc().has_priority());
  auto roots = st->submit(Caller{0, 0, "root", true}, d, false, 1000, fx);
  ASSERT_TRUE(roots) << roots.error().message;
  EXPECT_EQ(roots->warnings_size(), 0);
  EXPECT_EQ(st->jobs().at(roots->job_id()).rec.desc().priority(), 10);
}

// scontrol update NumNodes= of a held `-N 1` job, as Slurm 22.05 took each on
// the anchor cluster: a count alone moves the minimum under the job's
// maximum; a minimum above it, below 1 or a reversed range is refused.
TEST(ControllerState, NumNodesKeepsTheMaximumAndRefusesAMinimumAboveIt) {
  auto st = make_state();
  v1::JobDescriptor d = wrap("true");
  d.set_hold(true);
  d.set_min_nodes(1);
  d.set_max_nodes(1);
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), d, false, 1000, fx));
  const Caller alice = user(1000, "alice");
  const v1::JobDescriptor& now = st->jobs().at(1).rec.desc();
  for (const char* bad : {"2", "3-2", "0", "0-2", "x", "2-x"}) {
    EXPECT_EQ(update_one(*st, alice, 1, "NumNodes", bad, 1001), "Node count specification invalid") << bad;
    EXPECT_EQ(now.min_nodes(), 1) << bad;
    EXPECT_EQ(now.max_nodes(), 1) << bad;
  }
  EXPECT_EQ(update_one(*st, alice, 1, "NumNodes", "2-3", 1001), "");
  EXPECT_EQ(st->jobs().at(1).rec.desc().min_nodes(), 2);
  EXPECT_EQ(st->jobs().at(1).rec.desc().max_nodes(), 3);
  EXPECT_EQ(update_one(*st, alice, 1, "NumNodes", "3", 1001), "");
  EXPECT_EQ(st->jobs().at(1).rec.desc().min_nodes(), 3);
  EXPECT_EQ(st->jobs().at(1).rec.desc().max_nodes(), 3);
}

// Age: a job waiting for resources ages from its submission; one waiting on
// its dependency or its --begin time does not (Slurm 22.05 on the anchor
// cluster: after two minutes, 6590 for the first, 6393 for the other two),
// unless PriorityFlags=ACCRUE_ALWAYS, when all three age from submission
// (there 13255 for the dependent and the --begin job alike).
TEST(ControllerState, OnlyAJobThatCouldRunAgesUnlessAccrueAlways) {
  for (bool always : {false, true}) {
    auto st = make_state(std::string("PriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
                                     "PriorityWeightJobSize=1000\nPriorityMaxAge=0-0:10\n") +
                         (always ? "PriorityFlags=ACCRUE_ALWAYS\n" : ""));
    register_all(*st, 1000);
    Effects fx;
    v1::JobDescriptor wide = wrap("sleep 1000");
    wide.set_ntasks(8);
    ASSERT_TRUE(st->submit(user(1000, "alice"), wide, false, 1000, fx));  // 1: both cpu nodes
    Effects go;
    st->schedule(core::PassKind::kFull, 1001, go);
    ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
    v1::JobDescriptor waits = wrap("true");
    waits.set_ntasks(4);
    ASSERT_TRUE(st->submit(user(1000, "alice"), waits, false, 1002, fx));  // 2: Resources
    v1::JobDescriptor dep = waits;
    v1::DepItem* d = dep.mutable_dependency()->add_items();
    d->set_type(v1::DEP_AFTER_OK);
    d->set_job_id(1);
    d->set_array_task(-1);
    ASSERT_TRUE(st->submit(user(1000, "alice"), dep, false, 1002, fx));  // 3: Dependency
    v1::JobDescriptor later = waits;
    later.set_begin_time(5000);
    ASSERT_TRUE(st->submit(user(1000, "alice"), later, false, 1002, fx));  // 4: BeginTime
    heard_all(*st, 1302);
    Effects e;
    st->schedule(core::PassKind::kFull, 1302, e);
    const auto& jobs = st->jobs();
    EXPECT_EQ(jobs.at(2).rec.reason(), "Resources");
    EXPECT_EQ(jobs.at(3).rec.reason(), "Dependency");
    EXPECT_EQ(jobs.at(4).rec.reason(), "BeginTime");
    const int64_t aged = jobs.at(2).rec.priority();
    const int64_t age = always ? 0 : 500;  // 300 s of PriorityMaxAge's 600, of 1000
    for (core::JobId id : {3, 4}) {
      EXPECT_EQ(jobs.at(id).rec.priority(), aged - age) << "job " << id << " always=" << always;
      EXPECT_EQ(st->job_for_display(jobs.at(id), false, false, 1302).priority(), aged - age) << "job " << id;
    }
    EXPECT_EQ(st->job_for_display(jobs.at(2), false, false, 1302).priority(), aged);
  }
}

// PriorityFlags=CALCULATE_RUNNING: a running job's priority moves on with
// its age at each full pass; without the flag it keeps its start's, as Slurm
// 22.05's did on the anchor cluster (6393, then 6586 two minutes on with
// the flag; 6586 kept once it was dropped).
TEST(ControllerState, CalculateRunningMovesARunningJobsPriority) {
  for (bool calc : {false, true}) {
    SCOPED_TRACE(calc ? "CALCULATE_RUNNING" : "without");
    auto st = make_state(std::string("PriorityType=priority/multifactor\nPriorityWeightAge=1000\n"
                                     "PriorityWeightJobSize=1000\nPriorityMaxAge=0-0:10\n") +
                         (calc ? "PriorityFlags=CALCULATE_RUNNING\n" : ""));
    register_all(*st, 1000);
    ASSERT_NO_FATAL_FAILURE(start_alices_sleep(*st, 1000));
    const int64_t at_start = st->jobs().at(1).rec.priority();
    heard_all(*st, 1300);
    Effects later;
    st->schedule(core::PassKind::kFull, 1300, later);
    ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
    // 300 s of PriorityMaxAge's 600: half the age weight more.
    EXPECT_EQ(st->jobs().at(1).rec.priority(), calc ? at_start + 500 : at_start);
    EXPECT_EQ(st->job_for_display(st->jobs().at(1), false, false, 1300).priority(), calc ? at_start + 500 : at_start);
  }
}

// A pending job with more tasks than the nodes it asks for shows the nodes
// it would start on were the cluster idle, as Slurm 22.05's squeue and
// scontrol did (`-n 200` on 64-CPU nodes: 4, not 1); one node's worth shows 1.
// With -N it shows the minimum asked for, and a maximum above -n's tasks as
// their count (Slurm 22.05: `-N 1-4 -n 8` 1-4, `-N 1-4 -n 2` 1-2, `-N 2-4` 2-4).
TEST(ControllerState, APendingJobShowsTheNodesItsTasksNeed) {
  auto st = make_state();
  register_all(*st, 1000);
  Effects fx;
  auto pending = [&](int32_t tasks, int32_t cpus_per_task, int32_t min_nodes, int32_t max_nodes = 0) {
    v1::JobDescriptor d = wrap("true");
    if (tasks > 0) d.set_ntasks(tasks);
    d.set_cpus_per_task(cpus_per_task);
    if (min_nodes > 0) d.set_min_nodes(min_nodes);
    d.set_max_nodes(max_nodes);
    d.set_begin_time(5000);
    auto r = st->submit(user(1000, "alice"), d, false, 1000, fx);
    EXPECT_TRUE(r) << r.error().message;
    const auto shown = st->job_for_display(st->jobs().at(r->job_id()), false, false, 1000).display();
    return std::to_string(shown.num_nodes()) + "-" + std::to_string(shown.max_nodes());
  };
  EXPECT_EQ(pending(4, 1, 0), "1-0");  // c1 (4 CPUs) holds it
  EXPECT_EQ(pending(6, 1, 0), "2-0");
  EXPECT_EQ(pending(3, 2, 0), "2-0");  // 6 CPUs
  EXPECT_EQ(pending(2, 1, 2), "2-0");  // -N2 as asked
  EXPECT_EQ(pending(6, 1, 1, 3), "1-3");
  EXPECT_EQ(pending(2, 1, 1, 3), "1-2");
  EXPECT_EQ(pending(0, 1, 2, 3), "2-3");
}

// A partition whose Nodes= names a NodeSet shows its nodes, sorted and
// ranged (Slurm 22.05 on the anchor cluster: `Nodes=twocpu,h100s,cpu01`
// showed `cpu[01,03-04],gpu[01-02]`); one of host lists shows them as written.
TEST(ControllerState, APartitionThroughANodeSetShowsItsNodes) {
  auto st = make_state("NodeSet=gpus Feature=h100\nPartitionName=ns Nodes=gpus,c2,c1\n");
  std::map<std::string, std::string> shown;
  for (const auto& p : st->partitions()) shown[p.name()] = p.nodes_expr();
  EXPECT_EQ(shown.at("ns"), "c[1-2],g1");
  EXPECT_EQ(shown.at("cpu"), "c[1-2]");
}

// A dependency on JOB_TASK names a task of an array: one that is no such
// task (of a job that is no array, or a task the array lacks) is dropped at
// submission as an unknown job is (Slurm 22.05 ran `afterok:A_1`, A no
// array, at once on the anchor cluster).
TEST(ControllerState, ADependencyOnATaskNeedsThatTask) {
  auto st = make_state();
  Effects fx;
  v1::JobDescriptor plain = wrap("true");
  plain.set_hold(true);
  ASSERT_TRUE(st->submit(user(1000, "alice"), plain, false, 1000, fx));  // job 1
  v1::JobDescriptor arr = plain;
  for (int i : {0, 1}) arr.mutable_array()->add_task_ids(i);
  ASSERT_TRUE(st->submit(user(1000, "alice"), arr, false, 1000, fx));  // jobs 2, 3: 2_0, 2_1
  auto kept = [&](int64_t job, int64_t task) {
    v1::JobDescriptor d = plain;
    v1::DepItem* item = d.mutable_dependency()->add_items();
    item->set_type(v1::DEP_AFTER_OK);
    item->set_job_id(job);
    item->set_array_task(task);
    auto r = st->submit(user(1000, "alice"), d, false, 1000, fx);
    EXPECT_TRUE(r) << r.error().message;
    return st->jobs().at(r->job_id()).rec.desc().dependency().items_size() == 1;
  };
  EXPECT_TRUE(kept(1, -1));
  EXPECT_FALSE(kept(1, 1));
  EXPECT_TRUE(kept(2, 1));
  EXPECT_TRUE(kept(2, -1));
  EXPECT_FALSE(kept(2, 5));
  EXPECT_FALSE(kept(99, -1));
}

// A client that lost the reply sends the same submission again with the
// same request id: it gets the job already made, and no second one, also
// after a restart; another user's id, or none, makes a job as before.
TEST(ControllerState, ASubmissionSentAgainWithItsRequestIdIsAnsweredWithTheJobItMade) {
  const std::string id(32, 'a');
  auto st = make_state();
  v1::JobDescriptor arr = wrap("true");
  for (int i : {0, 1, 2}) arr.mutable_array()->add_task_ids(i);
  Effects fx;
  auto first = st->submit(user(1000, "alice"), arr, false, 1000, fx, id);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->job_id(), 1);
  Effects again;
  auto second = st->submit(user(1000, "alice"), arr, false, 1001, again, id);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->job_id(), 1);
  EXPECT_EQ(st->jobs().size(), 3u);
  EXPECT_EQ(st->next_job_id(), 4);
  // The answer waits for a commit of its own, behind the one that made the job.
  EXPECT_FALSE(again.batch.empty());
  EXPECT_FALSE(again.reschedule);
  // --test-only makes nothing and is answered as always.
  Effects t;
  auto test_only = st->submit(user(1000, "alice"), wrap("true"), true, 1001, t, id);
  ASSERT_TRUE(test_only);
  EXPECT_EQ(test_only->job_id(), 4);
  // The same id from another user, and a submission without one, are new jobs.
  Effects other;
  auto bob = st->submit(user(1001, "bob"), wrap("true"), false, 1001, other, id);
  ASSERT_TRUE(bob);
  EXPECT_EQ(bob->job_id(), 4);
  auto plain = st->submit(user(1000, "alice"), wrap("true"), false, 1001, other, "");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->job_id(), 5);
  // A restart recovers the id with the job.
  std::vector<std::pair<int64_t, std::string>> jobs;
  for (const auto& [jid, j] : st->jobs()) jobs.emplace_back(jid, j.rec.SerializeAsString());
  auto after = make_state();
  ASSERT_TRUE(after->recover(jobs, {}, 6, 1010));
  Effects e;
  auto retry = after->submit(user(1000, "alice"), arr, false, 1011, e, id);
  ASSERT_TRUE(retry);
  EXPECT_EQ(retry->job_id(), 1);
  EXPECT_EQ(after->next_job_id(), 6);
  EXPECT_EQ(after->jobs().size(), 5u);
}

// Each --test-only is planned for what it asks: one after another (the
// same next job id each time) they name their own partitions and nodes.
TEST(ControllerState, EachTestOnlySubmissionIsPlannedForItsOwnRequest) {
  auto st = make_state();
  register_all(*st, 1000);
  v1::JobDescriptor on_gpu = wrap("true");
  on_gpu.add_partitions("gpu");
  on_gpu.set_cpus_per_task(2);
  v1::JobDescriptor on_cpu = wrap("true");
  on_cpu.add_partitions("cpu");
  for (int round = 0; round < 2; ++round) {
    Effects a;
    auto g = st->submit(user(1000, "alice"), on_gpu, true, 1001, a);
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(g->planned_partition(), "gpu");
    EXPECT_EQ(g->planned_nodes(), "g1");
    EXPECT_EQ(g->planned_cpus(), 2);
    Effects b;
    auto c = st->submit(user(1000, "alice"), on_cpu, true, 1001, b);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->planned_partition(), "cpu");
    EXPECT_EQ(c->planned_nodes(), "c1");
    EXPECT_EQ(c->planned_cpus(), 1);
  }
  EXPECT_TRUE(st->jobs().empty());
}

// --ntasks-per-node gives each node room for that many tasks, also when -n
// asks fewer: `sbatch -n 2 --ntasks-per-node=4 --test-only` planned 4
// processors on Slurm 22.05 (the anchor cluster).
TEST(ControllerState, NtasksPerNodeTakesItsCpusEvenWithFewerTasks) {
  auto st = make_state();
  register_all(*st, 1000);
  v1::JobDescriptor d = wrap("true");
  d.set_ntasks(2);
  d.set_ntasks_per_node(4);
  Effects fx;
  auto r = st->submit(user(1000, "alice"), d, true, 1001, fx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->planned_cpus(), 4);
  EXPECT_EQ(r->planned_nodes(), "c1");
}

// More nodes than the partition has: the submission waits (PartitionNodeLimit),
// --test-only is Slurm 22.05's allocation failure (anchor cluster: -N20 in a
// four-node partition).
TEST(ControllerState, TestOnlyBeyondThePartitionsNodesIsAnAllocationFailure) {
  auto st = make_state();
  register_all(*st, 1000);
  v1::JobDescriptor d = wrap("true");
  d.set_min_nodes(3);  // partition cpu has c[1-2]
  Effects fx;
  auto r = st->submit(user(1000, "alice"), d, true, 1001, fx);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("Batch job submission failed: Requested node configuration is not available\n", 0),
            0u)
      << r.error().message;
  auto queued = st->submit(user(1000, "alice"), d, false, 1001, fx);
  ASSERT_TRUE(queued) << queued.error().message;
  st->schedule(core::PassKind::kFull, 1002, fx);
  EXPECT_EQ(st->jobs().at(queued->job_id()).rec.reason(), "PartitionNodeLimit");
}

// --cpus-per-gpu without a GPU is refused as Slurm 22.05 refuses it, with
// what to add; with GPUs it is taken.
TEST(ControllerState, CpusPerGpuWithoutGpusIsRefused) {
  auto st = make_state();
  v1::JobDescriptor d = wrap("true");
  d.set_cpus_per_gpu(2);
  Effects fx;
  auto r = st->submit(user(1000, "alice"), d, false, 1000, fx);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "Batch job submission failed: Requested node configuration is not available\n"
            "drover: --cpus-per-gpu gives CPUs per GPU, and the job asks for no GPU (add --gpus, --gpus-per-node, "
            "--gpus-per-task or --gres=gpu:N)");
  EXPECT_TRUE(fx.batch.empty());
  d.add_partitions("gpu");
  d.mutable_gpus_per_node()->set_count(1);
  auto ok = st->submit(user(1000, "alice"), d, false, 1000, fx);
  ASSERT_TRUE(ok) << ok.error().message;
}

// MinCPUsNode / squeue %c: a task's CPUs, times --ntasks-per-node when
// given, at least --mincpus (Slurm 22.05 on the anchor cluster: -n 4 shows
// 1, -n 4 --ntasks-per-node=2 -N 2 shows 2, -c 3 shows 3).
TEST(ControllerState, MinCpusPerNodeIsATasksCpusTimesTasksPerNode) {
  auto st = make_state();
  auto shown = [&](const std::function<void(v1::JobDescriptor&)>& ask) {
    v1::JobDescriptor d = wrap("true");
    d.set_hold(true);
    ask(d);
    Effects fx;
    auto r = st->submit(user(1000, "alice"), d, false, 1000, fx);
    EXPECT_TRUE(r) << r.error().message;
    return r ? st->job_for_display(st->jobs().at(r->job_id()), false, false, 1001).display().min_cpus_per_node() : -1;
  };
  EXPECT_EQ(shown([](v1::JobDescriptor& d) { d.set_ntasks(4); }), 1);
  EXPECT_EQ(shown([](v1::JobDescriptor& d) {
              d.set_ntasks(4);
              d.set_ntasks_per_node(2);
              d.set_min_nodes(2);
            }),
            2);
  EXPECT_EQ(shown([](v1::JobDescriptor& d) { d.set_cpus_per_task(3); }), 3);
  EXPECT_EQ(shown([](v1::JobDescriptor& d) { d.set_min_cpus_per_node(4); }), 4);
}

TEST(ControllerState, RefusalsAreSlurmsLinesAndChangeNothing) {
  auto st = make_state();
  Effects fx;
  v1::JobDescriptor d = wrap("true");
  d.add_partitions("nope");
  auto r = st->submit(user(1000, "alice"), d, false, 1000, fx);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.substr(0, r.error().message.find('\n', r.error().message.find('\n') + 1)),
            "invalid partition specified: nope\nBatch job submission failed: Invalid partition name specified");
  EXPECT_TRUE(fx.batch.empty());
  EXPECT_TRUE(st->jobs().empty());
  EXPECT_EQ(st->next_job_id(), 1);
}

TEST(ControllerState, StartsOnlyOnRespondingNodesAndLaunchesAfterTheStartIsRecorded) {
  auto st = make_state();
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("true"), false, 1000, fx));
  Effects none;
  st->schedule(core::PassKind::kQuick, 1000, none);
  EXPECT_EQ(launches(none), 0) << "no node has registered";
  register_all(*st, 1001);
  Effects go;
  st->schedule(core::PassKind::kQuick, 1001, go);
  ASSERT_EQ(launches(go), 1);
  EXPECT_FALSE(go.batch.empty()) << "the start is in the same batch the launch waits for";
  const auto& cmd = go.commands.front();
  EXPECT_EQ(cmd.node, "c1");
  EXPECT_EQ(cmd.launch.step().job_id(), 1);
  EXPECT_EQ(cmd.launch.cpus(), 1);
  EXPECT_EQ(cmd.launch.mem_limit_mb(), 100);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
}

// A registered node gone silent shows Slurm's "*" (idle*) once it has
// missed SlurmdTimeout/3 (Slurm's controller pings every SlurmdTimeout/3
// and flags a node whose ping fails; the anchor's hm01, its slurmd stopped,
// was idle* before down*), and is DOWN "Not responding" after SlurmdTimeout.
TEST(ControllerState, ASilentNodeShowsNotRespondingBeforeItIsDown) {
  auto st = make_state("SlurmdTimeout=300\n");
  register_all(*st, 1000);
  auto c1 = [&](int64_t now) {
    for (const auto& n : st->node_infos(now)) {
      if (n.name() == "c1") return std::string(n.not_responding() ? "*" : "") + (n.reason().empty() ? "" : n.reason());
    }
    return std::string("?");
  };
  EXPECT_EQ(c1(1000 + 99), "") << "silent for less than SlurmdTimeout/3";
  EXPECT_EQ(c1(1000 + 101), "*");
  // It takes no new job meanwhile (Slurm's controller takes a node whose
  // ping failed out of the available ones); heard again, it does.
  Effects fx;
  v1::JobDescriptor d = wrap("true");
  d.set_nodelist("c1");
  ASSERT_TRUE(st->submit(user(1000, "alice"), d, false, 1000 + 101, fx));
  Effects none;
  st->schedule(core::PassKind::kQuick, 1000 + 101, none);
  EXPECT_EQ(launches(none), 0);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "ReqNodeNotAvail, UnavailableNodes:c1");
  Effects heard;
  ASSERT_TRUE(st->node_report(report("c1"), false, 1000 + 102, heard));
  EXPECT_EQ(c1(1000 + 102), "");
  Effects go;
  st->schedule(core::PassKind::kQuick, 1000 + 102, go);
  EXPECT_EQ(launches(go), 1);
  Effects hk;
  st->housekeeping(1000 + 102 + 301, hk);
  EXPECT_EQ(c1(1000 + 102 + 301), "*Not responding");
}

// sbatch --deadline, as Slurm 22.05 on the anchor cluster: a pending job
// that could not end by its deadline if it started now ends DEADLINE without
// running (Reason DeadLine); a held one waits for its release; --time-min
// lets it start with its limit cut to the deadline; a --time-min that does
// not fit, in whole minutes, is refused at submission.
TEST(ControllerState, DeadlineEndsJobsThatCouldNotFinishInTimeAndCutsTimeMinJobs) {
  auto st = make_state();
  register_all(*st, 1000);
  Effects fx;
  auto job = [&](int64_t limit, int64_t deadline, int64_t time_min, bool hold) {
    v1::JobDescriptor d = wrap("sleep 100");
    d.set_time_limit_s(limit);
    d.set_deadline(deadline);
    if (time_min > 0) d.set_time_min_s(time_min);
    d.set_hold(hold);
    return st->submit(user(1000, "alice"), d, false, 1000, fx);
  };
  ASSERT_TRUE(job(300, 1020, 0, false));   // 1: 5 minutes do not fit in 20 s
  ASSERT_TRUE(job(300, 1020, 0, true));    // 2: held
  ASSERT_TRUE(job(300, 1120, 60, false));  // 3: runs 2 minutes, to its deadline
  ASSERT_TRUE(job(60, 1120, 0, false));    // 4: fits
  auto late = job(300, 1020, 10, false);   // 10 s counts as a minute: past the deadline
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().message.substr(0, late.error().message.find('\n')),
            "Batch job submission failed: Invalid time-min specification (exceeds job's time or other limits)");
  EXPECT_FALSE(job(300, 0, 600, false));   // longer than the time limit
  Effects e;
  st->schedule(core::PassKind::kFull, 1001, e);
  const auto& j1 = st->jobs().at(1).rec;
  EXPECT_EQ(j1.state(), v1::DEADLINE);
  EXPECT_EQ(j1.reason(), "DeadLine");
  EXPECT_EQ(j1.start_time(), 1001);
  EXPECT_EQ(j1.end_time(), 1001);
  EXPECT_EQ(st->jobs().at(2).rec.state(), v1::PENDING);
  EXPECT_EQ(st->jobs().at(3).rec.state(), v1::RUNNING);
  EXPECT_EQ(st->jobs().at(3).rec.time_limit_s(), 119);
  EXPECT_EQ(st->jobs().at(3).rec.end_time(), 1120);
  EXPECT_EQ(st->jobs().at(4).rec.state(), v1::RUNNING);
  EXPECT_EQ(st->jobs().at(4).rec.time_limit_s(), 60);
  // scontrol update TimeMin= / Deadline= of a pending job.
  EXPECT_EQ(update_one(*st, user(1000, "alice"), 2, "TimeMin", "10", 1002),
            "Invalid time-min specification (exceeds job's time or other limits)");
  EXPECT_EQ(update_one(*st, user(1000, "alice"), 2, "TimeMin", "2", 1002), "");
  EXPECT_EQ(st->jobs().at(2).rec.desc().time_min_s(), 120);
  EXPECT_EQ(update_one(*st, user(1000, "alice"), 2, "Deadline", "2030-01-01T00:00:00", 1002), "");
  EXPECT_GT(st->jobs().at(2).rec.desc().deadline(), 1002);
}

TEST(ControllerState, EndReportFinishesTheJobOnceAndIsAcknowledged) {
  auto st = make_state();
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("exit 3"), false, 1000, fx));
  register_all(*st, 1000);
  st->schedule(core::PassKind::kQuick, 1000, fx);
  v1::NodeReport r = report("c1");
  *r.add_steps() = step(1, true, "FAILED", 3);
  for (int i = 0; i < 2; ++i) {  // the second time is a repeat: acknowledged, nothing changes
    Effects e;
    auto reply = st->node_report(r, false, 1002, e);
    ASSERT_TRUE(reply);
    ASSERT_EQ(reply->acknowledged_size(), 1);
    EXPECT_EQ(i == 0, !e.batch.empty());
  }
  const auto& j = st->jobs().at(1);
  EXPECT_EQ(j.rec.state(), v1::FAILED);
  EXPECT_EQ(j.rec.exit_code(), 3);
  EXPECT_EQ(j.rec.reason(), "NonZeroExitCode");
  EXPECT_FALSE(holds_resources(j));
}

// A batch script its agent could not start (its output file could not be
// opened, say), whether the node's report or the launch's answer says so
// first: FAILED, JobLaunchFailure, ExitCode 0:53, as Slurm 22.05 showed it.
TEST(ControllerState, ALaunchFailureIsJobLaunchFailure) {
  auto st = make_state();
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("true"), false, 1000, fx));
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("true"), false, 1000, fx));
  register_all(*st, 1000);
  st->schedule(core::PassKind::kQuick, 1000, fx);
  v1::NodeReport r = report(st->jobs().at(1).rec.batch_host());
  v1::StepReport s = step(1, true, "FAILED", 1);
  s.set_launch_failed(true);
  s.set_reason("launch failed: cannot open /nowhere/x.out as user alice: No such file or directory");
  *r.add_steps() = s;
  Effects e;
  ASSERT_TRUE(st->node_report(r, false, 1002, e));
  v1::LaunchReply failed;
  failed.set_failure("launch failed: cannot open /nowhere/y.out as user alice: No such file or directory");
  st->launch_result(2, 0, failed, 1002, e);
  for (int64_t id : {1, 2}) {
    const auto& j = st->jobs().at(id).rec;
    EXPECT_EQ(j.state(), v1::FAILED) << id;
    EXPECT_EQ(j.reason(), "JobLaunchFailure") << id;
    EXPECT_EQ(j.exit_code(), 0) << id;
    EXPECT_EQ(j.exit_signal(), 53) << id;
    EXPECT_EQ(j.state_desc().rfind("launch failed: cannot open /nowhere/", 0), 0u) << j.state_desc();
  }
}

// sbatch --deadline already past: Slurm 22.05's refusal (anchor cluster).
TEST(ControllerState, APastDeadlineIsRefused) {
  auto st = make_state();
  Effects fx;
  v1::JobDescriptor d = wrap("true");
  d.set_deadline(999);
  auto r = st->submit(user(1000, "alice"), d, false, 1000, fx);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.substr(0, r.error().message.find('\n')),
            "Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit)");
  EXPECT_TRUE(st->jobs().empty());
}

// A batch script over SchedulerParameters=max_script_size (4 MiB by
// default) is refused in Slurm 22.05's words (the anchor refused a 6.9 MB
// script and took a 4.1 MB one); one at the limit is taken.
TEST(ControllerState, AScriptOverMaxScriptSizeIsRefused) {
  auto st = make_state("SchedulerParameters=max_script_size=1000\n");
  Effects fx;
  v1::JobDescriptor d = wrap("true");
  d.set_script("#!/bin/sh\n" + std::string(1000 - 10, '#'));
  ASSERT_EQ(d.script().size(), 1000u);
  EXPECT_TRUE(st->submit(user(1000, "alice"), d, false, 1000, fx));
  d.mutable_script()->push_back('\n');
  Effects fx2;
  auto r = st->submit(user(1000, "alice"), d, false, 1000, fx2);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "Batch job submission failed: Pathname of a file, directory or other parameter too long\n"
            "the batch script is 1001 bytes; SchedulerParameters=max_script_size=1000 (slurm.conf) bounds it");
  EXPECT_TRUE(fx2.batch.empty());
  EXPECT_EQ(make_state()->settings().max_script_size, 4194304);
}

// What a user may change and in which words they are refused, as Slurm
// 22.05 on the anchor cluster: a pending job's limit may grow up to its
// partition's MaxTime, a running one's only shrink; Priority= of a held job
// says it is held; another user's job is "Invalid user id" to update, hold
// and release, "Access/permission denied" to requeue.
TEST(ControllerState, UsersChangesAndRefusalsAreSlurms) {
  auto st = make_state();
  Effects fx;
  v1::JobDescriptor d = wrap("sleep 100");
  d.set_time_limit_s(600);
  d.set_hold(true);
  ASSERT_TRUE(st->submit(user(1000, "alice"), d, false, 1000, fx));
  const Caller alice = user(1000, "alice"), bob = user(1001, "bob");
  EXPECT_EQ(update_one(*st, alice, 1, "TimeLimit", "20", 1001), "");
  EXPECT_EQ(st->jobs().at(1).rec.time_limit_s(), 1200);
  EXPECT_EQ(update_one(*st, alice, 1, "TimeLimit", "2:00:00", 1001), kAccessDenied);  // over cpu's MaxTime=1:00:00
  EXPECT_EQ(update_one(*st, alice, 1, "TimeLimit", "UNLIMITED", 1001), kAccessDenied);
  {  // with a change of partition in the same update, the new one's MaxTime counts
    v1::UpdateJobRequest req;
    req.add_targets()->set_job_id(1);
    (*req.mutable_fields())["Partition"] = "cpu";
    (*req.mutable_fields())["TimeLimit"] = "2:00:00";
    req.add_field_order("Partition");
    req.add_field_order("TimeLimit");
    Effects e;
    auto out = st->update(alice, req, 1001, e);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].error(), kAccessDenied);
  }
  EXPECT_EQ(update_one(*st, alice, 1, "Priority", "100", 1001), kJobHeld);
  EXPECT_EQ(update_one(*st, bob, 1, "TimeLimit", "5", 1001), kInvalidUserId);
  auto control = [&](v1::ControlAction a, const Caller& who) {
    v1::ControlRequest req;
    req.set_action(a);
    req.add_targets()->set_job_id(1);
    req.mutable_targets(0)->set_text("1");
    Effects e;
    auto r = st->control(who, req, 1001, e);
    return r.size() == 1 ? r[0].error() : "expected one result";
  };
  EXPECT_EQ(control(v1::HOLD, Caller{0, 0, "root", true}), "");
  EXPECT_EQ(control(v1::USER_HOLD, alice), "");  // accepted, and the operator's hold stays
  EXPECT_EQ(st->jobs().at(1).rec.hold(), v1::HOLD_ADMIN);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "JobHeldAdmin");
  EXPECT_EQ(control(v1::RELEASE, alice), kAccessDenied);
  EXPECT_EQ(control(v1::RELEASE, Caller{0, 0, "root", true}), "");
  EXPECT_EQ(control(v1::HOLD, bob), kInvalidUserId);
  EXPECT_EQ(control(v1::RELEASE, bob), kInvalidUserId);
  EXPECT_EQ(control(v1::REQUEUE, bob), kAccessDenied);
  EXPECT_EQ(control(v1::RELEASE, alice), "");
  register_all(*st, 1001);
  Effects go;
  st->schedule(core::PassKind::kQuick, 1002, go);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  EXPECT_EQ(update_one(*st, alice, 1, "TimeLimit", "30", 1003), kAccessDenied);
  EXPECT_EQ(update_one(*st, alice, 1, "TimeLimit", "10", 1003), "");
}

TEST(ControllerState, OnlyTheOwnerOrAnOperatorMayCancel) {
  auto st = make_state();
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("sleep 9"), false, 1000, fx));
  v1::CancelRequest req;
  auto* t = req.add_targets();
  t->set_job_id(1);
  t->set_text("1");
  Effects e;
  auto refused = st->cancel(user(1001, "bob"), req, 1001, e);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].error(), kAccessDenied);
  EXPECT_TRUE(e.batch.empty());
  Caller root{0, 0, "root", true};
  auto ok = st->cancel(root, req, 1001, e);
  EXPECT_TRUE(ok[0].ok());
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::CANCELLED);
  EXPECT_EQ(st->jobs().at(1).rec.cancelled_by(), 0u);
}

// Recovery after a crash: a running job the node does not report was
// launched again when its launch was never confirmed, and NODE_FAIL when it was.
TEST(ControllerState, RecoveredRunningJobsAreRelaunchedOrFailedByTheNodesFirstReport) {
  auto before = make_state();
  Effects fx;
  ASSERT_TRUE(before->submit(user(1000, "alice"), wrap("sleep 9"), false, 1000, fx));
  ASSERT_TRUE(before->submit(user(1000, "alice"), wrap("sleep 9"), false, 1000, fx));
  register_all(*before, 1000);
  before->schedule(core::PassKind::kQuick, 1000, fx);
  v1::LaunchReply started;
  started.set_started(true);
  before->launch_result(2, 0, started, 1000, fx);  // job 2 confirmed, job 1 not
  std::vector<std::pair<int64_t, std::string>> jobs;
  for (const auto& [id, j] : before->jobs()) jobs.emplace_back(id, j.rec.SerializeAsString());
  auto after = make_state();
  ASSERT_TRUE(after->recover(jobs, {}, 3, 1010));
  Effects e;
  ASSERT_TRUE(after->node_report(report("c1"), false, 1010, e));
  EXPECT_EQ(launches(e), 1);
  EXPECT_EQ(e.commands.front().job_id, 1);
  EXPECT_EQ(after->jobs().at(1).rec.state(), v1::RUNNING);
  EXPECT_EQ(after->jobs().at(2).rec.state(), v1::NODE_FAIL);
}

TEST(ControllerState, RecoveryKeepsWhatMinJobAgeKeepsAndCountsIdsPastWhatItForgot) {
  auto before = make_state();
  Effects fx;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(before->submit(user(1000, "alice"), wrap("true"), false, 1000, fx));
  std::map<int64_t, v1::JobRecord> recs;
  for (const auto& [id, j] : before->jobs()) recs[id] = j.rec;
  recs[1].set_state(v1::COMPLETED);  // ended 1,100 s before the restart (MinJobAge=600): forgotten
  recs[1].set_end_time(900);
  recs[2].set_state(v1::CANCELLED);  // as old, but still completing: kept
  recs[2].set_end_time(900);
  recs[2].set_completing(true);
  recs[3].set_state(v1::COMPLETED);  // ended 100 s before: kept
  recs[3].set_end_time(1900);
  // job 4 is still pending

  auto after = make_state();
  ASSERT_TRUE(after->recover_nodes({}));
  for (const auto& [id, r] : recs) ASSERT_TRUE(after->recover_job(id, r.SerializeAsString(), 2000));
  after->recover_next_job_id(2);  // a stored counter behind the records: the records win
  for (int64_t id : {1, 3}) {
    v1::StepInfo s;
    s.set_job_id(id);
    s.set_step_id(kBatchStepId);
    s.set_name("batch");
    ASSERT_TRUE(after->recover_step(std::to_string(id) + ".batch", s.SerializeAsString()));
  }
  std::vector<int64_t> kept;
  for (const auto& [id, j] : after->jobs()) kept.push_back(id);
  EXPECT_EQ(kept, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(after->next_job_id(), 5);
  EXPECT_EQ(after->steps().count(1), 0u) << "the forgotten job's step stays in the store only";
  EXPECT_EQ(after->steps().count(3), 1u);
  EXPECT_EQ(after->active(), (std::set<core::JobId>{2, 4}));

  auto bad = after->recover_job(9, "\xff\xff\xff", 2000);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "state store: job record 9 is unreadable");
  auto bad_step = after->recover_step("3.0", "\xff\xff\xff");
  ASSERT_FALSE(bad_step);
  EXPECT_EQ(bad_step.error().message, "state store: step record 3.0 is unreadable");
}

TEST(ControllerState, AReportedStepIsAdoptedNotRelaunched) {
  auto st = make_state();
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("sleep 9"), false, 1000, fx));
  register_all(*st, 1000);
  st->schedule(core::PassKind::kQuick, 1000, fx);
  v1::NodeReport r = report("c1", 200);  // the agent restarted (new session) and still runs it
  *r.add_steps() = step(1, false);
  Effects e;
  auto reply = st->node_report(r, true, 1005, e);
  ASSERT_TRUE(reply);
  EXPECT_EQ(launches(e), 0);
  EXPECT_EQ(reply->terminate_size(), 0);
  EXPECT_TRUE(st->jobs().at(1).rec.launched());
}

TEST(ControllerState, NodeShortOfGpusIsDrainedWithTheAgentsReason) {
  auto st = make_state();
  v1::NodeReport r = report("g1");
  r.set_drain_reason("gres/gpu count reported lower than configured (1 < 2)");
  Effects e;
  ASSERT_TRUE(st->node_report(r, true, 1000, e));
  auto nodes = st->node_infos(1000);
  const auto& g1 = nodes[2];
  EXPECT_EQ(g1.name(), "g1");
  EXPECT_TRUE(g1.drain());
  EXPECT_TRUE(g1.invalid_reg());
  EXPECT_EQ(g1.reason(), "gres/gpu count reported lower than configured (1 < 2)");
  EXPECT_FALSE(e.batch.empty()) << "the drain is durable";
}

// The agent's GPU health check (Fabric Manager not registered): the node is
// drained (not "inval": it has what it declares) with the agent's reason; once
// the agent reports the GPUs healthy the drain is lifted. A drain an admin
// made is neither replaced nor lifted by it.
TEST(ControllerState, GpuHealthDrainsTheNodeAndLiftsOnlyItsOwnDrain) {
  auto st = make_state();
  const std::string sick =
      "gpu health: GPU 1 Fabric Manager not-started; CUDA refuses such a GPU until nvidia-fabricmanager has "
      "registered it";
  v1::NodeReport r = report("g1");
  r.set_gpu_health(sick);
  Effects e;
  ASSERT_TRUE(st->node_report(r, true, 1000, e));
  auto g1 = st->node_infos(1000)[2];
  EXPECT_TRUE(g1.drain());
  EXPECT_FALSE(g1.invalid_reg());
  EXPECT_EQ(g1.reason(), sick);
  EXPECT_FALSE(e.batch.empty()) << "the drain is durable";
  Effects again;
  ASSERT_TRUE(st->node_report(r, false, 1010, again));
  EXPECT_TRUE(again.batch.empty()) << "the same report changes nothing";
  r.set_gpu_health("");
  Effects healed;
  ASSERT_TRUE(st->node_report(r, false, 1020, healed));
  g1 = st->node_infos(1020)[2];
  EXPECT_FALSE(g1.drain());
  EXPECT_EQ(g1.reason(), "");
  EXPECT_FALSE(healed.batch.empty());

  v1::UpdateNodeRequest drain;
  drain.set_nodes("g1");
  drain.set_state("DRAIN");
  drain.set_reason("bad fan");
  Effects admin;
  ASSERT_TRUE(st->update_node(Caller{0, 0, "root", true}, drain, 1030, admin));
  r.set_gpu_health(sick);
  Effects other;
  ASSERT_TRUE(st->node_report(r, false, 1040, other));
  EXPECT_EQ(st->node_infos(1040)[2].reason(), "bad fan");
  r.set_gpu_health("");
  ASSERT_TRUE(st->node_report(r, false, 1050, other));
  EXPECT_TRUE(st->node_infos(1050)[2].drain()) << "an admin's drain stays";
}

// scontrol update NodeName=NODES State=STATE [Reason=REASON].
v1::UpdateNodeRequest node_state_request(const std::string& nodes, const std::string& state,
                                         const std::string& reason = "") {
  v1::UpdateNodeRequest req;
  req.set_nodes(nodes);
  req.set_state(state);
  req.set_reason(reason);
  return req;
}

// A job that names (-w) nodes some of which cannot take jobs waits saying
// which, as Slurm's did ("ReqNodeNotAvail, UnavailableNodes:cpu04"); one
// whose named nodes are only busy waits for Resources.
TEST(ControllerState, AJobNamingAnUnavailableNodeSaysWhich) {
  auto st = make_state();
  register_all(*st, 1000);
  Effects e;
  ASSERT_TRUE(st->update_node(Caller{0, 0, "root", true}, node_state_request("c1", "DRAIN", "disk"), 1000, e));
  v1::JobDescriptor whole = wrap("sleep 60");
  whole.set_nodelist("c2");
  whole.set_min_cpus_per_node(4);
  ASSERT_TRUE(st->submit(user(1000, "alice"), whole, false, 1000, e));  // takes c2 whole
  v1::JobDescriptor named = wrap("true");
  named.set_nodelist("c[1-2]");
  ASSERT_TRUE(st->submit(user(1000, "alice"), named, false, 1000, e));
  v1::JobDescriptor busy = wrap("true");
  busy.set_nodelist("c2");
  ASSERT_TRUE(st->submit(user(1000, "alice"), busy, false, 1000, e));
  st->schedule(core::PassKind::kFull, 1001, e);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  EXPECT_EQ(st->jobs().at(2).rec.reason(), "ReqNodeNotAvail, UnavailableNodes:c1");
  EXPECT_NE(st->jobs().at(3).rec.reason().rfind("ReqNodeNotAvail", 0), 0u) << st->jobs().at(3).rec.reason();
}

// A job whose partition has too few nodes that take jobs waits with
// Slurm's words (the anchor's highmem partition, its one node drained, then
// down): "Nodes required for job are DOWN, DRAINED or reserved for jobs in
// higher priority partitions", "ReqNodeNotAvail, UnavailableNodes:hm01".
// A two-node job beside one drained node of two says the first too; one
// node up is enough for a one-node job (Resources, Priority as usual).
TEST(ControllerState, AJobShortOfNodesThatTakeJobsSaysSo) {
  auto st = make_state();
  register_all(*st, 1000);
  const Caller root{0, 0, "root", true};
  Effects e;
  ASSERT_TRUE(st->update_node(root, node_state_request("c1", "DRAIN", "disk"), 1000, e));
  v1::JobDescriptor two = wrap("true");
  two.set_min_nodes(2);
  ASSERT_TRUE(st->submit(user(1000, "alice"), two, false, 1000, e));
  Effects pass;
  st->schedule(core::PassKind::kFull, 1001, pass);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), ControllerState::kNodesRequiredUnavailable);
  ASSERT_TRUE(st->update_node(root, node_state_request("c2", "DOWN", "gone"), 1001, e));
  st->schedule(core::PassKind::kFull, 1002, pass);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "ReqNodeNotAvail, UnavailableNodes:c2");
  ASSERT_TRUE(st->update_node(root, node_state_request("c2", "DRAIN", "gone"), 1002, e));  // DOWN+DRAIN
  st->schedule(core::PassKind::kFull, 1002, pass);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), ControllerState::kNodesRequiredUnavailable);
  ASSERT_TRUE(st->update_node(root, node_state_request("c[1-2]", "RESUME", ""), 1002, e));
  heard_all(*st, 1002);
  st->schedule(core::PassKind::kFull, 1003, pass);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  EXPECT_EQ(st->jobs().at(1).rec.db_reason(), "ReqNodeNotAvail") << "what Slurm's accounting keeps of it";
}

// State=FAIL takes a node out of use as a drain does but is its own flag
// (Slurm 22.05: IDLE+FAIL, sinfo's fail, anchor cluster); it is kept across a
// restart, and RESUME clears it.
TEST(ControllerState, AFailedNodeTakesNoJobsAndShowsFail) {
  auto st = make_state();
  register_all(*st, 1000);
  Effects e;
  ASSERT_TRUE(st->update_node(Caller{0, 0, "root", true}, node_state_request("c1", "FAIL", "failing disk"), 1000, e));
  v1::NodeInfo c1 = st->node_infos(1000)[0];
  EXPECT_TRUE(c1.fail());
  EXPECT_FALSE(c1.drain());
  EXPECT_EQ(c1.reason(), "failing disk");
  v1::JobDescriptor named = wrap("true");
  named.set_nodelist("c1");
  ASSERT_TRUE(st->submit(user(1000, "alice"), named, false, 1000, e));
  st->schedule(core::PassKind::kFull, 1001, e);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "ReqNodeNotAvail, UnavailableNodes:c1");
  auto again = make_state();
  std::vector<std::pair<std::string, std::string>> stored;
  for (const auto& m : e.batch.mutations) {
    const auto* put = std::get_if<store::Put>(&m);
    if (put && put->table == kNodesTable) stored.emplace_back(std::get<std::string>(put->key), put->payload);
  }
  ASSERT_TRUE(again->recover({}, stored, std::nullopt, 1002));
  EXPECT_TRUE(again->node_infos(1002)[0].fail()) << "durable";
  ASSERT_TRUE(st->update_node(Caller{0, 0, "root", true}, node_state_request("c1", "RESUME"), 1003, e));
  EXPECT_FALSE(st->node_infos(1003)[0].fail());
  st->schedule(core::PassKind::kFull, 1004, e);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
}

TEST(ControllerState, DrainNeedsAReasonAndAnOperator) {
  auto st = make_state();
  v1::UpdateNodeRequest req;
  req.set_nodes("c1");
  req.set_state("DRAIN");
  Effects e;
  auto r = st->update_node(Caller{0, 0, "root", true}, req, 1000, e);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("You must specify a reason"), std::string::npos);
  req.set_reason("disk");
  EXPECT_FALSE(st->update_node(user(1000, "alice"), req, 1000, e));
  EXPECT_TRUE(st->update_node(Caller{0, 0, "root", true}, req, 1000, e));
  EXPECT_EQ(st->node_infos(1000)[0].reason(), "disk");
  // Nodes slurm.conf does not have, or a list that does not parse, are refused.
  for (const auto& [nodes, why] : std::vector<std::pair<std::string, std::string>>{
           {"c[1-3]", "Invalid node name specified"}, {"c[1-", "Invalid node name specified"}}) {
    req.set_nodes(nodes);
    auto bad = st->update_node(Caller{0, 0, "root", true}, req, 1000, e);
    ASSERT_FALSE(bad) << nodes;
    EXPECT_EQ(bad.error().message, why) << nodes;
  }
}

// scontrol update NodeName= Weight=, AvailableFeatures=, ActiveFeatures=,
// Comment=: applied at once (jobs' constraints match the active features),
// kept in the node's stored record and laid over slurm.conf after a restart.
TEST(ControllerState, NodeSettingsFromScontrolApplyAtOnceAndOutliveARestart) {
  auto st = make_state();
  register_all(*st, 1000);
  const Caller root{0, 0, "root", true};
  auto update = [&](std::map<std::string, std::string> other, Effects& fx) {
    v1::UpdateNodeRequest req;
    req.set_nodes("c2");
    for (const auto& [k, v] : other) (*req.mutable_other())[k] = v;
    return st->update_node(root, req, 1001, fx);
  };
  Effects fx;
  ASSERT_TRUE(update({{"Weight", "5"}, {"AvailableFeatures", "fast,big"}, {"Comment", "new dimms"}}, fx));
  ASSERT_TRUE(update({{"activefeatures", "fast"}}, fx));
  v1::NodeInfo c2 = st->node_infos(1001)[1];
  EXPECT_EQ(c2.weight(), 5u);
  EXPECT_EQ(join({c2.features().begin(), c2.features().end()}, ","), "fast,big");
  EXPECT_EQ(join({c2.active_features().begin(), c2.active_features().end()}, ","), "fast");
  EXPECT_EQ(c2.comment(), "new dimms");
  // Refusals change nothing: available features must keep the active ones, a
  // key scontrol cannot change, a weight that is no number.
  Effects no;
  auto dropped = update({{"AvailableFeatures", "big"}}, no);
  ASSERT_FALSE(dropped);
  EXPECT_EQ(dropped.error().message, "Active features not subset of available features");
  EXPECT_FALSE(update({{"ActiveFeatures", "slow"}}, no));
  EXPECT_FALSE(update({{"NodeAddr", "10.0.0.2"}}, no));
  EXPECT_FALSE(update({{"Weight", "heavy"}}, no));
  EXPECT_TRUE(no.batch.empty());
  EXPECT_EQ(st->config().find_node("c2")->weight, 5u);

  v1::JobDescriptor fast = wrap("true");
  fast.set_constraint("fast");
  ASSERT_TRUE(st->submit(user(1000, "alice"), fast, false, 1002, fx));
  st->schedule(core::PassKind::kFull, 1003, fx);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  EXPECT_EQ(st->jobs().at(1).rec.alloc().nodes(0).node(), "c2");

  // A restarted controller: slurm.conf, then the nodes' stored records.
  std::vector<std::pair<std::string, std::string>> stored;
  for (const auto& m : fx.batch.mutations) {
    if (const auto* put = std::get_if<store::Put>(&m); put && put->table == kNodesTable) {
      stored.emplace_back(std::get<std::string>(put->key), put->payload);
    }
  }
  auto again = make_state();
  ASSERT_TRUE(again->recover({}, stored, 1, 1010));
  c2 = again->node_infos(1010)[1];
  EXPECT_EQ(c2.weight(), 5u);
  EXPECT_EQ(join({c2.active_features().begin(), c2.active_features().end()}, ","), "fast");
  EXPECT_EQ(c2.comment(), "new dimms");
  EXPECT_EQ(again->bridge().cluster().nodes[1].features, std::vector<std::string>{"fast"});
}

// ---- job steps (steps.cpp, step_launch.cpp) ----

v1::JobDescriptor allocation(int nodes, const std::string& partition = "cpu") {
  v1::JobDescriptor d;
  d.set_batch(false);  // salloc / srun outside an allocation
  d.set_name("alloc");
  d.set_min_nodes(nodes);
  d.add_partitions(partition);
  d.set_work_dir("/tmp");
  return d;
}

v1::StepReport srun_step(int64_t job, int64_t id, const std::string& state, int code) {
  v1::StepReport s = step(job, true, state, code);
  s.mutable_step()->set_step_id(id);
  return s;
}

// What Slurm 22.05 did on the anchor cluster when salloc or srun was killed
// (kill -9): with InactiveLimit=30 its running allocation ended TIMEOUT,
// Reason=InactiveLimit; one granted after its salloc was gone ended FAILED
// 1:0 (InactiveLimit or not); salloc --no-shell's allocation stayed.
TEST(ControllerState, AnAllocationWhoseSallocOrSrunIsGoneEnds) {
  auto st = make_state("InactiveLimit=30\nPartitionName=root Nodes=g1 RootOnly=YES\n");
  register_all(*st, 1000);
  auto granted = [&](const Caller& who, const std::string& partition, int64_t at) {
    Effects fx;
    auto sub = st->submit(who, allocation(1, partition), false, at, fx);
    EXPECT_TRUE(sub) << sub.error().message;
    st->allocator_heard(who, sub->job_id(), at);
    Effects go;
    st->schedule(core::PassKind::kQuick, at, go);
    EXPECT_EQ(st->jobs().at(sub->job_id()).rec.state(), v1::RUNNING);
    return sub->job_id();
  };
  auto sweep = [&](int64_t at) {
    Effects fx;
    st->housekeeping(at, fx);
  };
  const Caller alice = user(1000, "alice");
  const int64_t quiet = granted(alice, "cpu", 1000);
  Effects fx;
  auto no_shell = st->submit(alice, allocation(1), false, 1000, fx);  // never asks
  ASSERT_TRUE(no_shell);
  Effects go;
  st->schedule(core::PassKind::kQuick, 1000, go);
  const int64_t rooted = granted(Caller{0, 0, "root", true}, "root", 1000);
  st->allocator_heard(user(1001, "bob"), quiet, 1020);  // not bob's to keep
  sweep(1030);
  EXPECT_EQ(st->jobs().at(quiet).rec.state(), v1::RUNNING);
  sweep(1031);
  const v1::JobRecord& timed_out = st->jobs().at(quiet).rec;
  EXPECT_EQ(timed_out.state(), v1::TIMEOUT);
  EXPECT_EQ(timed_out.reason(), "InactiveLimit");
  EXPECT_EQ(timed_out.exit_code(), 0);
  EXPECT_EQ(st->jobs().at(no_shell->job_id()).rec.state(), v1::RUNNING);
  EXPECT_EQ(st->jobs().at(rooted).rec.state(), v1::RUNNING);  // RootOnly partitions: never

  // Asked while it waited, gone before the grant.
  Effects later;
  auto pending = st->submit(alice, allocation(1), false, 1040, later);
  ASSERT_TRUE(pending);
  st->allocator_heard(alice, pending->job_id(), 1040);
  heard_all(*st, 1100);
  Effects go2;
  st->schedule(core::PassKind::kQuick, 1100, go2);
  ASSERT_EQ(st->jobs().at(pending->job_id()).rec.state(), v1::RUNNING);
  sweep(1109);
  EXPECT_EQ(st->jobs().at(pending->job_id()).rec.state(), v1::RUNNING);
  sweep(1110);
  const v1::JobRecord& failed = st->jobs().at(pending->job_id()).rec;
  EXPECT_EQ(failed.state(), v1::FAILED);
  EXPECT_EQ(failed.exit_code(), 1);
  EXPECT_EQ(failed.reason(), "NonZeroExitCode");
}

TEST(ControllerState, AnAllocationRunsNothingUntilAStepIsLaidOutOverItsNodes) {
  auto st = make_state();
  Effects fx;
  v1::JobDescriptor d = allocation(2);
  d.set_ntasks(4);
  ASSERT_TRUE(st->submit(user(1000, "alice"), d, false, 1000, fx));
  register_all(*st, 1000);
  Effects go;
  st->schedule(core::PassKind::kQuick, 1000, go);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  EXPECT_EQ(launches(go), 0);
  v1::CreateStepRequest req;
  req.set_job_id(1);
  req.set_ntasks(3);
  req.add_argv("hostname");
  Effects sfx;
  auto r = st->create_step(user(1000, "alice"), req, 1001, sfx);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->step().step_id(), 0);
  ASSERT_EQ(r->step().nodes_size(), 2);
  EXPECT_EQ(r->step().nodes(0).tasks(), 2);  // spread evenly, the first node takes one more
  EXPECT_EQ(r->step().nodes(1).tasks(), 1);
  ASSERT_EQ(launches(sfx), 2);
  EXPECT_EQ(sfx.commands[1].launch.layout().global_task_ids(0), 2);
  EXPECT_EQ(sfx.commands[1].launch.layout().node_index(), 1);
  EXPECT_FALSE(sfx.batch.empty());  // the step record is durable with the launch
  // Another user may not start steps in alice's allocation.
  Effects denied;
  EXPECT_FALSE(st->create_step(user(1001, "bob"), req, 1001, denied));
  // Each node's end; the step ends with the last one, with the worst exit.
  v1::NodeReport a = report(r->step().nodes(0).node());
  *a.add_steps() = srun_step(1, 0, "FAILED", 4);
  Effects e1;
  ASSERT_TRUE(st->node_report(a, false, 1002, e1));
  EXPECT_EQ(st->steps().at(1).steps.at(0).state(), "RUNNING");
  v1::NodeReport b = report(r->step().nodes(1).node());
  *b.add_steps() = srun_step(1, 0, "COMPLETED", 0);
  Effects e2;
  ASSERT_TRUE(st->node_report(b, false, 1003, e2));
  const v1::StepInfo& done = st->steps().at(1).steps.at(0);
  EXPECT_EQ(done.state(), "FAILED");
  EXPECT_EQ(done.exit_code(), 4);
  EXPECT_EQ(done.end_time(), 1003);
  // The allocation ends when its srun or salloc says so.
  v1::CompleteJobRequest c;
  c.set_job_id(1);
  c.set_exit_code(4);
  Effects e3;
  ASSERT_TRUE(st->complete_job(user(1000, "alice"), c, 1004, e3));
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::FAILED);
  EXPECT_FALSE(holds_resources(st->jobs().at(1)));
}

TEST(ControllerState, GpuStepsTakeDistinctGpusAndWaitWhenNoneIsFree) {
  auto st = make_state();
  Effects fx;
  v1::JobDescriptor d = allocation(1, "gpu");
  d.add_gres("gpu:h100:2");
  d.set_ntasks(4);
  ASSERT_TRUE(st->submit(user(1000, "alice"), d, false, 1000, fx));
  register_all(*st, 1000);
  Effects go;
  st->schedule(core::PassKind::kQuick, 1000, go);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  v1::CreateStepRequest req;
  req.set_job_id(1);
  req.set_exact(true);  // one CPU each: only the GPUs can make them wait
  req.set_gpus_per_node(1);
  req.add_argv("true");
  std::vector<int32_t> got;
  for (int i = 0; i < 2; ++i) {
    Effects e;
    auto r = st->create_step(user(1000, "alice"), req, 1001, e);
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_TRUE(r->busy().empty());
    ASSERT_EQ(r->step().nodes(0).gpus_size(), 1);
    got.push_back(r->step().nodes(0).gpus(0));
  }
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1}));
  Effects e;
  auto third = st->create_step(user(1000, "alice"), req, 1001, e);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->busy(), "Requested nodes are busy");
  EXPECT_TRUE(e.batch.empty());
  // A step without a GPU request sees every GPU of the job.
  v1::CreateStepRequest all;
  all.set_job_id(1);
  all.add_argv("true");
  auto r = st->create_step(user(1000, "alice"), all, 1001, e);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->step().nodes(0).gpus_size(), 2);
}

// Job 1 (`d`), submitted at 1000 by alice and started on the registered nodes.
std::unique_ptr<ControllerState> running_job(const v1::JobDescriptor& d) {
  auto st = make_state();
  Effects fx;
  EXPECT_TRUE(st->submit(user(1000, "alice"), d, false, 1000, fx));
  register_all(*st, 1000);
  Effects go;
  st->schedule(core::PassKind::kQuick, 1000, go);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  return st;
}

// Runs a salloc-like allocation of `nodes` nodes and `tasks` tasks (CPUs).
std::unique_ptr<ControllerState> running_allocation(int nodes, int tasks, bool no_kill = false) {
  v1::JobDescriptor d = allocation(nodes);
  d.set_ntasks(tasks);
  d.set_no_kill(no_kill);
  return running_job(d);
}

// srun --mem / --mem-per-cpu inside a job, as Slurm 22.05 on the anchor
// cluster: more than the job has on the node is refused, more than the
// running steps left waits, and the step's memory is its TRES and its limit.
TEST(ControllerState, StepsHoldTheMemoryTheyAskFor) {
  v1::JobDescriptor d = allocation(1);
  d.set_ntasks(3);
  d.set_mem_per_node_mb(2048);
  auto st = running_job(d);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  auto step_with = [&](int64_t per_node, int64_t per_cpu, Effects& e) {
    v1::CreateStepRequest req;
    req.set_job_id(1);
    req.set_ntasks(1);
    req.set_exact(true);
    req.set_mem_per_node_mb(per_node);
    req.set_mem_per_cpu_mb(per_cpu);
    req.add_argv("true");
    return st->create_step(user(1000, "alice"), req, 1001, e);
  };
  Effects e;
  auto too_big = step_with(4096, 0, e);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().message.substr(0, too_big.error().message.find('\n')),
            "Memory required by task is not available");
  auto first = step_with(1500, 0, e);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(first->busy().empty());
  EXPECT_EQ(first->step().nodes(0).mem_mb(), 1500);
  EXPECT_NE(first->step().tres().find("mem=1500M"), std::string::npos) << first->step().tres();
  ASSERT_FALSE(e.commands.empty());
  EXPECT_EQ(e.commands.back().launch.mem_limit_mb(), 1500);
  auto waits = step_with(1024, 0, e);
  ASSERT_TRUE(waits);
  EXPECT_EQ(waits->busy(), "Requested nodes are busy");
  auto per_cpu_too_big = step_with(0, 4096, e);  // Slurm's words for it
  ASSERT_FALSE(per_cpu_too_big);
  EXPECT_EQ(per_cpu_too_big.error().message.substr(0, per_cpu_too_big.error().message.find('\n')),
            "More processors requested than permitted");
  auto per_cpu = step_with(0, 512, e);  // 548 MB are left: one CPU's worth
  ASSERT_TRUE(per_cpu) << per_cpu.error().message;
  ASSERT_TRUE(per_cpu->busy().empty());
  EXPECT_EQ(per_cpu->step().nodes(0).mem_mb(), 512);
}

TEST(ControllerState, ABatchJobHasABatchStepThatEndsWithIt) {
  auto st = make_state();
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("exit 3"), false, 1000, fx));
  register_all(*st, 1000);
  Effects go;
  st->schedule(core::PassKind::kQuick, 1000, go);
  ASSERT_EQ(st->steps().at(1).steps.at(kBatchStepId).state(), "RUNNING");
  v1::NodeReport r = report(st->jobs().at(1).rec.batch_host());
  *r.add_steps() = step(1, true, "FAILED", 3);
  Effects e;
  ASSERT_TRUE(st->node_report(r, false, 1002, e));
  const v1::StepInfo& b = st->steps().at(1).steps.at(kBatchStepId);
  EXPECT_EQ(b.state(), "FAILED");
  EXPECT_EQ(b.exit_code(), 3);
  EXPECT_EQ(step_name(1, kBatchStepId), "1.batch");
}


v1::CreateStepRequest step_req(int ntasks, int nodes = 0) {
  v1::CreateStepRequest r;
  r.set_job_id(1);
  r.set_ntasks(ntasks);
  r.set_nodes(nodes);
  r.add_argv("sleep");
  return r;
}

// The step `req` makes beside the job's others (--overlap) at t=1001: one
// number per node from `per_node` ("4,1"), or its refusal's first line.
template <class PerNode>
std::string step_per_node(ControllerState& st, v1::CreateStepRequest req, PerNode per_node) {
  req.set_overlap(true);
  Effects e;
  auto r = st.create_step(user(1000, "alice"), req, 1001, e);
  if (!r) return r.error().message.substr(0, r.error().message.find('\n'));
  std::string out;
  for (const auto& n : r->step().nodes()) out += (out.empty() ? "" : ",") + std::to_string(per_node(n));
  return out;
}

void end_step_on(ControllerState& st, int64_t step_id, const std::string& node, int64_t now) {
  v1::NodeReport r = report(node);
  *r.add_steps() = srun_step(1, step_id, "COMPLETED", 0);
  Effects e;
  ASSERT_TRUE(st.node_report(r, false, now, e));
}

// A batch job's script ends right after an srun step did: the report of the
// script's end can reach the controller before another node's report of the
// step's end (each agent reports on its own). The step waits for that report
// and ends COMPLETED, not CANCELLED; a node that never reports has its part
// closed CANCELLED after KillWait + SlurmdTimeout.
TEST(StepEnds, AStepThatEndedBeforeTheScriptIsSettledByTheLateReport) {
  for (bool late_report : {true, false}) {
    v1::JobDescriptor d = wrap("srun hostname");
    d.set_min_nodes(2);
    d.set_ntasks(2);
    auto st = running_job(d);
    ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
    Effects e;
    ASSERT_TRUE(st->create_step(user(1000, "alice"), step_req(2), 1001, e));
    const std::string host = st->jobs().at(1).rec.batch_host();
    const std::string other = host == "c1" ? "c2" : "c1";
    end_step_on(*st, 0, host, 1002);
    v1::NodeReport r = report(host);
    *r.add_steps() = step(1, true, "COMPLETED", 0);
    Effects end;
    ASSERT_TRUE(st->node_report(r, false, 1002, end));
    EXPECT_EQ(st->jobs().at(1).rec.state(), v1::COMPLETED);
    EXPECT_EQ(st->steps().at(1).steps.at(0).state(), "RUNNING") << "decided before its last node reported";
    if (late_report) {
      end_step_on(*st, 0, other, 1003);
      EXPECT_EQ(st->steps().at(1).steps.at(0).state(), "COMPLETED");
    } else {
      Effects hk;
      st->housekeeping(1002 + 29, hk);  // within KillWait (30 s) + SlurmdTimeout: still waiting
      EXPECT_EQ(st->steps().at(1).steps.at(0).state(), "RUNNING");
      st->housekeeping(1002 + 30 + 300, hk);
      EXPECT_EQ(st->steps().at(1).steps.at(0).state(), "CANCELLED");
      EXPECT_FALSE(hk.batch.empty());
    }
  }
}

// A job of -N2 -n5 on 4-CPU nodes holds 4 and 1 CPUs (the core packs its
// first node, as Slurm 22.05 did); its steps are dealt over the nodes in
// turn, each node up to its CPUs, and checked against the CPUs of their
// nodes together. On the anchor cluster, in a job of 5 and 1 CPUs, Slurm
// ran -n3 -c2 as 2,1 and -n2 -c3 as 1,1 (its second node's task given the
// one CPU there) and refused -n4 -c2 and -n1 -c6.
TEST(StepLayout, StepsOfAPackedJobFollowItsCpusAsSlurmsDid) {
  auto st = running_allocation(2, 5);
  const auto& alloc = st->jobs().at(1).rec.alloc();
  ASSERT_EQ(alloc.nodes_size(), 2);
  ASSERT_EQ(alloc.nodes(0).cpus(), 4);
  ASSERT_EQ(alloc.nodes(1).cpus(), 1);
  auto layout = [&](int ntasks, int cpt) {
    v1::CreateStepRequest req = step_req(ntasks);
    req.set_cpus_per_task(cpt);
    return step_per_node(*st, req, [](const v1::StepNode& n) { return n.tasks(); });
  };
  EXPECT_EQ(layout(5, 1), "4,1");
  EXPECT_EQ(layout(2, 1), "1,1");
  EXPECT_EQ(layout(3, 1), "2,1");
  EXPECT_EQ(layout(2, 2), "1,1");
  EXPECT_EQ(layout(2, 3), "More processors requested than permitted");
  EXPECT_EQ(layout(1, 5), "More processors requested than permitted");
  EXPECT_EQ(layout(6, 1), "More processors requested than permitted");
}

// A job's --gpus over two nodes are 4 and 1 (the core packs its first
// node), and a step's --gpus are dealt the same way within them: Slurm
// 22.05 ran a step's --gpus=4 over its job's 3 and 1 GPUs as 3,1.
TEST(StepLayout, AStepsGpusFollowItsJobsAsSlurmsDid) {
  auto st = make_state("NodeName=q[1-2] CPUs=8 RealMemory=8000 Gres=gpu:h100:4\nPartitionName=gpu4 Nodes=q[1-2]\n");
  register_all(*st, 1000, {"q1", "q2"});
  v1::JobDescriptor d = allocation(2, "gpu4");
  d.mutable_gpus()->set_count(5);
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), d, false, 1000, fx));
  st->schedule(core::PassKind::kQuick, 1000, fx);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  auto layout = [&](int gpus) {
    v1::CreateStepRequest req = step_req(2);
    req.set_gpus(gpus);
    return step_per_node(*st, req, [](const v1::StepNode& n) { return n.gpus_size(); });
  };
  EXPECT_EQ(layout(5), "4,1");
  EXPECT_EQ(layout(3), "2,1");
  EXPECT_EQ(layout(2), "1,1");
  EXPECT_EQ(layout(6), "Requested node configuration is not available");
}

// An allocation (salloc) past its time limit ends TIMEOUT with Slurm's
// Reason=TimeLimit (squeue's %R shows "(TimeLimit)"), as a batch job does.
TEST(StepEnds, AnAllocationPastItsTimeLimitEndsWithReasonTimeLimit) {
  auto st = running_allocation(1, 1);
  const int64_t end = st->jobs().at(1).rec.end_time();
  ASSERT_GT(end, 1000);
  register_all(*st, end);
  Effects fx;
  st->housekeeping(end, fx);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::TIMEOUT);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "TimeLimit");
}

// Slurm 22.05 (srun(1) --exact, --overlap, --exclusive): a step holds every
// CPU of the job still free on its nodes unless --exact; a step that needs
// held CPUs waits; --overlap neither holds nor waits.
TEST(StepSharing, ADefaultStepHoldsItsNodesCpusAndTheNextOneWaits) {
  auto st = running_allocation(1, 4);
  Effects e;
  auto a = st->create_step(user(1000, "alice"), step_req(1), 1001, e);
  ASSERT_TRUE(a && a->busy().empty());
  EXPECT_EQ(a->step().cpus(), 4);  // all the job's CPUs there, not -n x -c
  EXPECT_EQ(e.commands.at(0).launch.cpus(), 4);
  Effects wait;
  auto b = st->create_step(user(1000, "alice"), step_req(1), 1001, wait);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->busy(), "Requested nodes are busy");
  EXPECT_TRUE(wait.batch.empty());
  EXPECT_TRUE(wait.commands.empty());
  v1::CreateStepRequest over = step_req(2);
  over.set_overlap(true);
  auto c = st->create_step(user(1000, "alice"), over, 1001, e);
  ASSERT_TRUE(c && c->busy().empty());
  EXPECT_EQ(c->step().cpus(), 4);
  EXPECT_TRUE(c->step().overlap());
  // The first step ends: its CPUs are free again (the overlapping one holds none).
  end_step_on(*st, 0, a->step().nodes(0).node(), 1002);
  auto b2 = st->create_step(user(1000, "alice"), step_req(1), 1003, e);
  ASSERT_TRUE(b2);
  EXPECT_TRUE(b2->busy().empty());
  EXPECT_EQ(b2->step().step_id(), 2);
}

TEST(StepSharing, ExactStepsShareANodeUntilItsCpusAreTaken) {
  auto st = running_allocation(1, 4);
  Effects e;
  v1::CreateStepRequest one = step_req(1);
  one.set_exact(true);
  auto a = st->create_step(user(1000, "alice"), one, 1001, e);
  ASSERT_TRUE(a && a->busy().empty());
  EXPECT_EQ(a->step().cpus(), 1);
  v1::CreateStepRequest two = step_req(1);
  two.set_cpus_per_task(2);
  two.set_exclusive(true);  // --exclusive implies --exact
  auto b = st->create_step(user(1000, "alice"), two, 1001, e);
  ASSERT_TRUE(b && b->busy().empty());
  EXPECT_EQ(b->step().cpus(), 2);
  auto c = st->create_step(user(1000, "alice"), two, 1001, e);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->busy(), "Requested nodes are busy");
  // A step without --exact that fits takes what is left (one CPU).
  auto d = st->create_step(user(1000, "alice"), step_req(1), 1001, e);
  ASSERT_TRUE(d && d->busy().empty());
  EXPECT_EQ(d->step().cpus(), 1);
  // More than the job has there can never run: refused, not busy.
  v1::CreateStepRequest big = step_req(5);
  big.set_exact(true);
  auto never = st->create_step(user(1000, "alice"), big, 1001, e);
  ASSERT_FALSE(never);
  EXPECT_NE(never.error().message.find("More processors requested than permitted"), std::string::npos);
}

TEST(StepSharing, AOneNodeStepGoesToAFreeNodeAndTheBatchStepBlocksNothing) {
  auto st = running_allocation(2, 2);
  Effects e;
  auto a = st->create_step(user(1000, "alice"), step_req(1, 1), 1001, e);
  ASSERT_TRUE(a && a->busy().empty());
  auto b = st->create_step(user(1000, "alice"), step_req(1, 1), 1001, e);
  ASSERT_TRUE(b && b->busy().empty());
  EXPECT_NE(a->step().nodes(0).node(), b->step().nodes(0).node());
  auto c = st->create_step(user(1000, "alice"), step_req(1, 1), 1001, e);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->busy(), "Requested nodes are busy");
  // A batch job: its batch step overlaps, so a step gets the node at once.
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("srun hostname"), false, 1002, fx));
  Effects go;
  st->schedule(core::PassKind::kQuick, 1002, go);
  ASSERT_EQ(st->jobs().at(2).rec.state(), v1::RUNNING);
  v1::CreateStepRequest in_batch = step_req(1);
  in_batch.set_job_id(2);
  auto d = st->create_step(user(1000, "alice"), in_batch, 1003, e);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_TRUE(d->busy().empty());
}

// squeue -s: running steps, numbered ones first, the batch step last.
TEST(StepSharing, GetStepsListsRunningStepsOfRunningJobs) {
  auto st = running_allocation(2, 2);
  Effects e;
  ASSERT_TRUE(st->create_step(user(1000, "alice"), step_req(1, 1), 1001, e));
  ASSERT_TRUE(st->create_step(user(1000, "alice"), step_req(1, 1), 1001, e));
  end_step_on(*st, 0, st->steps().at(1).steps.at(0).nodes(0).node(), 1002);
  v1::GetStepsRequest req;
  auto rep = st->get_steps(req, 1003);
  ASSERT_EQ(rep.steps_size(), 1);
  EXPECT_EQ(rep.steps(0).step_id(), 1);
  EXPECT_EQ(rep.now(), 1003);
  req.add_job_ids(7);
  EXPECT_EQ(st->get_steps(req, 1003).steps_size(), 0);
}

// A step its srun waits to create is listed (Slurm's N.TDB, PENDING) while
// that srun keeps asking, and no longer once it is created or its srun has
// not asked for over 2 s.
TEST(StepSharing, GetStepsListsTheStepsSrunsWaitFor) {
  auto st = running_allocation(1, 2);
  Effects e;
  ASSERT_TRUE(st->create_step(user(1000, "alice"), step_req(2), 1001, e));
  v1::CreateStepRequest waits = step_req(1);
  waits.set_cpus_per_task(1);
  waits.set_srun_host("login1");
  waits.set_srun_pid(4242);
  auto busy = st->create_step(user(1000, "alice"), waits, 1001, e);
  ASSERT_TRUE(busy);
  ASSERT_EQ(busy->busy(), "Requested nodes are busy");
  auto rep = st->get_steps(v1::GetStepsRequest{}, 1002);
  ASSERT_EQ(rep.steps_size(), 2);
  const v1::StepInfo& w = rep.steps(1);
  EXPECT_EQ(w.step_id(), kPendingStepId);
  EXPECT_EQ(w.state(), "PENDING");
  EXPECT_EQ(w.ntasks(), 1);
  EXPECT_EQ(w.cpus(), 1);
  EXPECT_EQ(w.srun_host(), "login1");
  EXPECT_EQ(w.srun_pid(), 4242);
  ASSERT_EQ(w.nodes_size(), 1);
  EXPECT_EQ(st->get_steps(v1::GetStepsRequest{}, 1004).steps_size(), 1) << "its srun stopped asking";
  ASSERT_TRUE(st->create_step(user(1000, "alice"), waits, 1004, e));  // asks again, still busy
  EXPECT_EQ(st->get_steps(v1::GetStepsRequest{}, 1004).steps_size(), 2);
  end_step_on(*st, 0, st->steps().at(1).steps.at(0).nodes(0).node(), 1005);
  auto made = st->create_step(user(1000, "alice"), waits, 1005, e);
  ASSERT_TRUE(made && made->busy().empty());
  rep = st->get_steps(v1::GetStepsRequest{}, 1005);
  ASSERT_EQ(rep.steps_size(), 1);
  EXPECT_EQ(rep.steps(0).step_id(), 1);
}

// --signal=USR1@30 without B: (PyTorch Lightning's auto-requeue asks for
// it): once the job is within 30 s of its limit, its running steps are
// signalled, once, durably, and not its batch shell; a step started later
// is not (as Slurm 22.05's, whose srun task died of the signal on the
// anchor). With B: the batch step's daemon sends it, the controller nothing.
TEST(StepSignal, ASignalWithoutBGoesToTheStepsOnceNearTheLimit) {
  for (bool batch_only : {false, true}) {
    v1::JobDescriptor d = allocation(2);
    d.set_ntasks(2);
    d.set_time_limit_s(100);
    d.mutable_signal()->set_signal(SIGUSR1);
    d.mutable_signal()->set_seconds_before(30);
    d.mutable_signal()->set_batch_shell_only(batch_only);
    auto st = running_job(d);
    Effects e;
    ASSERT_TRUE(st->create_step(user(1000, "alice"), step_req(2), 1001, e));
    const int64_t start = st->jobs().at(1).rec.start_time();
    auto signals = [](const Effects& fx) {
      std::vector<std::pair<std::string, int64_t>> out;
      for (const auto& c : fx.commands) {
        if (c.kind == AgentCommand::kSignal && c.signal == SIGUSR1) out.emplace_back(c.node, c.step_id);
      }
      return out;
    };
    state_testing::heard_all(*st, start + 69);
    Effects early;
    st->housekeeping(start + 69, early);
    EXPECT_TRUE(signals(early).empty());
    EXPECT_FALSE(st->jobs().at(1).rec.warn_sent());
    state_testing::heard_all(*st, start + 70);
    Effects due;
    st->housekeeping(start + 70, due);
    if (batch_only) {
      EXPECT_TRUE(signals(due).empty());
      continue;
    }
    auto sent = signals(due);
    ASSERT_EQ(sent.size(), 2u);
    for (const auto& [node, step] : sent) EXPECT_EQ(step, 0) << node;
    EXPECT_NE(sent[0].first, sent[1].first);
    EXPECT_TRUE(st->jobs().at(1).rec.warn_sent());
    EXPECT_FALSE(due.batch.empty());  // kept, so a restarted controller does not send it again
    v1::CreateStepRequest second = step_req(2);
    second.set_overlap(true);
    auto made = st->create_step(user(1000, "alice"), second, start + 71, e);
    ASSERT_TRUE(made && made->busy().empty());
    Effects later;
    st->housekeeping(start + 71, later);
    EXPECT_TRUE(signals(later).empty());
  }
}

// scancel N.S: the step's nodes are told to kill it at once (SIGKILL, as
// Slurm 22.05's scancel of a step), who cancelled it is recorded, the job
// goes on; a step that does not run and a job that is over get errors that
// scancel words as Slurm's.
TEST(StepCancel, ScancelOfAStepTerminatesItOnItsNodesOnly) {
  auto st = running_allocation(2, 2);
  Effects e;
  ASSERT_TRUE(st->create_step(user(1000, "alice"), step_req(2), 1001, e));
  v1::SignalStepRequest req;
  req.set_job_id(1);
  req.set_step_id(0);
  req.set_cancel(true);
  Effects fx;
  ASSERT_TRUE(st->signal_step(user(1000, "alice"), req, 1002, fx));
  EXPECT_FALSE(fx.batch.empty());  // cancelled, durably, before the answer
  ASSERT_EQ(fx.commands.size(), 2u);
  for (const auto& c : fx.commands) {
    EXPECT_EQ(c.kind, AgentCommand::kTerminate);
    EXPECT_EQ(c.step_id, 0);
    EXPECT_EQ(c.state, "CANCELLED");
    EXPECT_TRUE(c.kill_now);
  }
  EXPECT_TRUE(st->steps().at(1).steps.at(0).cancelled());
  EXPECT_EQ(st->steps().at(1).steps.at(0).cancelled_by(), 1000u);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  // --signal: that signal, nothing recorded.
  v1::SignalStepRequest sig = req;
  sig.set_cancel(false);
  sig.set_signal(SIGUSR1);
  Effects fs;
  ASSERT_TRUE(st->signal_step(user(1000, "alice"), sig, 1002, fs));
  ASSERT_EQ(fs.commands.size(), 2u);
  EXPECT_EQ(fs.commands[0].kind, AgentCommand::kSignal);
  EXPECT_EQ(fs.commands[0].signal, SIGUSR1);
  // Another user, an unknown step, an unknown job.
  Effects none;
  EXPECT_FALSE(st->signal_step(user(1001, "bob"), req, 1002, none));
  req.set_step_id(9);
  auto unknown = st->signal_step(user(1000, "alice"), req, 1002, none);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message.substr(0, unknown.error().message.find('\n')), "Job step not running");
  req.set_job_id(99);
  auto no_job = st->signal_step(user(1000, "alice"), req, 1002, none);
  ASSERT_FALSE(no_job);
  EXPECT_EQ(no_job.error().message, "Invalid job id specified");
  EXPECT_TRUE(none.commands.empty());
}

// A node of the allocation fails: without --no-kill the job ends NODE_FAIL;
// with it the job runs on, the step's part on the node fails, and a step
// without srun -k is ended on its other nodes; new steps avoid the node.
TEST(NoKill, ANodeFailureEndsTheJobUnlessNoKill) {
  for (bool no_kill : {false, true}) {
    auto st = running_allocation(2, 2, no_kill);
    Effects e;
    ASSERT_TRUE(st->create_step(user(1000, "alice"), step_req(2), 1001, e));
    v1::CreateStepRequest keep = step_req(2);
    keep.set_overlap(true);
    keep.set_no_kill(true);
    ASSERT_TRUE(st->create_step(user(1000, "alice"), keep, 1001, e));
    // The allocation's first node (its "batch host"; an allocation has no script there).
    const std::string lost = st->steps().at(1).steps.at(0).nodes(0).node();
    const std::string alive = st->steps().at(1).steps.at(0).nodes(1).node();
    ASSERT_EQ(st->jobs().at(1).rec.batch_host(), lost);
    v1::UpdateNodeRequest down;
    down.set_nodes(lost);
    down.set_state("DOWN");
    down.set_reason("test");
    Effects fx;
    ASSERT_TRUE(st->update_node(Caller{0, 0, "root", true}, down, 1002, fx));
    const v1::StepInfo& s0 = st->steps().at(1).steps.at(0);
    if (!no_kill) {
      EXPECT_EQ(st->jobs().at(1).rec.state(), v1::NODE_FAIL);
      EXPECT_EQ(s0.state(), "NODE_FAIL");
      continue;
    }
    EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
    EXPECT_EQ(s0.nodes(0).state(), "NODE_FAIL");
    EXPECT_TRUE(s0.kill_requested());
    int kills = 0;
    for (const auto& c : fx.commands) kills += c.kind == AgentCommand::kSignal && c.node == alive && c.step_id == 0;
    EXPECT_EQ(kills, 1);
    const v1::StepInfo& s1 = st->steps().at(1).steps.at(1);
    EXPECT_FALSE(s1.kill_requested());  // srun -k: it goes on where it runs
    EXPECT_EQ(s1.nodes(0).state(), "NODE_FAIL");
    EXPECT_FALSE(s1.nodes(1).ended());
    // New steps run on the remaining node; naming the failed one is refused.
    v1::CreateStepRequest next = step_req(1);
    next.set_overlap(true);
    auto n = st->create_step(user(1000, "alice"), next, 1003, e);
    ASSERT_TRUE(n) << n.error().message;
    ASSERT_EQ(n->step().nodes_size(), 1);
    EXPECT_EQ(n->step().nodes(0).node(), alive);
    next.set_nodelist(lost);
    auto refused = st->create_step(user(1000, "alice"), next, 1003, e);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("is DOWN"), std::string::npos) << refused.error().message;
    // The other node fails too: nothing is left, the job ends.
    down.set_nodes(alive);
    ASSERT_TRUE(st->update_node(Caller{0, 0, "root", true}, down, 1004, fx));
    EXPECT_EQ(st->jobs().at(1).rec.state(), v1::NODE_FAIL);
  }
}


// A batch job losing a node other than its script's: ended on its other
// nodes (terminate, then NODE_FAIL) unless --no-kill.
TEST(NoKill, ABatchJobLosingAnotherNode) {
  for (bool no_kill : {false, true}) {
    v1::JobDescriptor d = wrap("srun sleep 60");
    d.set_min_nodes(2);
    d.add_partitions("cpu");
    d.set_no_kill(no_kill);
    auto st = running_job(d);
    const v1::JobRecord& rec = st->jobs().at(1).rec;
    ASSERT_EQ(rec.state(), v1::RUNNING);
    ASSERT_EQ(rec.batch_host(), "c1");
    v1::UpdateNodeRequest down;
    down.set_nodes("c2");
    down.set_state("DOWN");
    down.set_reason("test");
    Effects e;
    ASSERT_TRUE(st->update_node(Caller{0, 0, "root", true}, down, 1001, e));
    int terminates = 0;
    for (const auto& c : e.commands) terminates += c.kind == AgentCommand::kTerminate && c.node == "c1";
    EXPECT_EQ(rec.state(), no_kill ? v1::RUNNING : v1::NODE_FAIL);
    EXPECT_EQ(rec.completing(), !no_kill);
    EXPECT_EQ(terminates, no_kill ? 0 : 1);
  }
}

// With TRESBillingWeights, fair share charges the job's billing (its
// fraction kept) per second, and its TRES show the billing cut to a whole
// number, as slurm.conf(5) says usage is calculated from the billing.
TEST(ControllerState, FairShareChargesTheBilledTres) {
  auto st = make_state("PriorityType=priority/multifactor\nPriorityWeightFairshare=1000\n"
                       "PartitionName=billed Nodes=c[1-2] TRESBillingWeights=CPU=2.0,Mem=1G\n");
  register_all(*st, 1000);
  Effects fx;
  v1::JobDescriptor d = wrap("sleep 1000");
  d.add_partitions("billed");
  ASSERT_TRUE(st->submit(user(1000, "alice"), d, false, 1000, fx));
  Effects go;
  st->schedule(core::PassKind::kFull, 1000, go);
  const Job& j = st->jobs().at(1);
  ASSERT_EQ(j.rec.state(), v1::RUNNING);
  EXPECT_EQ(st->job_for_display(j, false, false, 1000).display().tres().at("billing"), 2);  // 2 + 100 MB of 1 G
  Effects p1;
  st->schedule(core::PassKind::kFull, 1600, p1);
  auto it = st->usage().find({j.rec.account(), "alice"});
  ASSERT_NE(it, st->usage().end());
  EXPECT_DOUBLE_EQ(it->second, (2.0 + 100.0 / 1024) * 600);
  // A node's CfgTRES billing: the most its partitions' weights make of it
  // (c1: 4 CPUs and 4000 MB, 8 + 3.9); g1, in no weighted partition, its CPUs.
  std::map<std::string, int64_t> billing;
  for (const auto& n : st->node_infos(1600)) billing[n.name()] = n.cfg_tres().at("billing");
  EXPECT_EQ(billing, (std::map<std::string, int64_t>{{"c1", 11}, {"c2", 11}, {"g1", 8}}));
}

// Fair share: a running job's CPU-seconds are charged at each full pass,
// the ledger halves every PriorityDecayHalfLife, and each charging pass
// stores it, so a restarted controller goes on from the stored figures.
TEST(ControllerState, FairShareUsageIsChargedDecayedAndStored) {
  const std::string conf = "PriorityType=priority/multifactor\nPriorityDecayHalfLife=10\nPriorityWeightFairshare=1000\n";
  auto st = make_state(conf);
  register_all(*st, 1000);
  ASSERT_NO_FATAL_FAILURE(start_alices_sleep(*st, 1000));
  const std::string account = st->jobs().at(1).rec.account();
  auto usage = [](const ControllerState& s, const std::string& acct) {
    auto it = s.usage().find({acct, "alice"});
    return it == s.usage().end() ? -1.0 : it->second;
  };
  Effects p1;
  st->schedule(core::PassKind::kFull, 1600, p1);  // 600 s on 1 CPU
  EXPECT_DOUBLE_EQ(usage(*st, account), 600.0);
  v1::NodeReport r = report("c1");
  *r.add_steps() = step(1, true, "COMPLETED", 0);
  Effects end;
  ASSERT_TRUE(st->node_report(r, false, 1600, end));
  Effects p2;
  st->schedule(core::PassKind::kFull, 2200, p2);  // nothing more to charge; one half-life later
  EXPECT_DOUBLE_EQ(usage(*st, account), 300.0);
  // What the pass stored.
  std::map<std::pair<std::string, std::string>, double> stored;
  int64_t charged = 0, decayed = 0;
  for (const auto& m : p2.batch.mutations) {
    if (const auto* put = std::get_if<store::Put>(&m); put && put->table == kUsageTable) {
      const std::string& key = std::get<std::string>(put->key);
      stored[{key.substr(0, key.find('\t')), key.substr(key.find('\t') + 1)}] = std::stod(put->payload);
    }
    if (const auto* meta = std::get_if<store::SetMeta>(&m)) {
      if (meta->key == kUsageChargedMeta) charged = std::get<int64_t>(meta->value);
      if (meta->key == kUsageDecayMeta) decayed = std::get<int64_t>(meta->value);
    }
  }
  EXPECT_DOUBLE_EQ((stored[{account, "alice"}]), 300.0);
  EXPECT_EQ(charged, 2200);
  EXPECT_EQ(decayed, 2200);
  // A restarted controller goes on from the stored ledger: another half-life
  // with a new job running on 1 CPU.
  auto after = make_state(conf);
  after->recover_usage(stored, decayed, charged);
  register_all(*after, 2200);
  Effects f2;
  ASSERT_TRUE(after->submit(user(1000, "alice"), wrap("sleep 1000"), false, 2200, f2));
  Effects p3;
  after->schedule(core::PassKind::kFull, 2200, p3);
  ASSERT_EQ(after->jobs().begin()->second.rec.state(), v1::RUNNING);
  Effects p4;
  after->schedule(core::PassKind::kFull, 2800, p4);
  EXPECT_DOUBLE_EQ(usage(*after, account), 150.0 + 600.0);
}

// Job 1 takes both 4-CPU nodes of partition cpu for 1,800 s from 1001 (the
// pass `first` starts it); job 2 (4 CPUs for 600 s, submitted at 1002) waits.
std::unique_ptr<ControllerState> wide_job_and_one_behind(core::PassKind first) {
  auto st = make_state("SchedulerParameters=bf_resolution=1\n");
  register_all(*st, 1000);
  Effects fx;
  v1::JobDescriptor wide = wrap("sleep 100");
  wide.set_ntasks(8);
  wide.set_time_limit_s(1800);
  EXPECT_TRUE(st->submit(user(1000, "alice"), wide, false, 1000, fx));
  Effects go;
  st->schedule(first, 1001, go);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  v1::JobDescriptor next = wrap("true");
  next.set_ntasks(4);
  next.set_time_limit_s(600);
  EXPECT_TRUE(st->submit(user(1000, "alice"), next, false, 1002, fx));
  return st;
}

// A node that registers anew (here: its agent restarted; a restarted
// controller sees every node so) gets the stop of each suspended job it
// runs again, since the suspend's SIGSTOP may never have reached it.
TEST(ControllerState, ASuspendedJobIsStoppedAgainWhenItsNodeRegisters) {
  auto st = wide_job_and_one_behind(core::PassKind::kFull);  // job 1 runs, 8 CPUs on one node
  v1::ControlRequest req;
  req.set_action(v1::SUSPEND);
  req.add_targets()->set_job_id(1);
  req.mutable_targets(0)->set_text("1");
  Effects fx;
  auto r = st->control(Caller{0, 0, "root", true}, req, 1005, fx);
  ASSERT_EQ(r.size(), 1u);
  ASSERT_TRUE(r[0].ok()) << r[0].error();
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::SUSPENDED);
  const std::string node = st->jobs().at(1).rec.batch_host();
  auto stops = [](const Effects& e) {
    int n = 0;
    for (const auto& c : e.commands) n += c.kind == AgentCommand::kSignal && c.signal == SIGSTOP && c.job_id == 1;
    return n;
  };
  Effects same;
  ASSERT_TRUE(st->node_report(report(node), false, 1006, same));
  EXPECT_EQ(stops(same), 0) << "the same agent, reporting as usual";
  Effects anew;
  ASSERT_TRUE(st->node_report(report(node, 200), true, 1007, anew));
  EXPECT_GE(stops(anew), 1);
}

// The scheduler keeps what running jobs hold from one cycle to the next
// (RunningJob::stamp); a running job whose record changes must be counted
// again. Lowering a running job's time limit moves the planned start of
// the job waiting for its nodes, cycle after cycle.
TEST(ControllerState, ARunningJobsNewTimeLimitMovesThePlanOfTheJobBehindIt) {
  auto st = wide_job_and_one_behind(core::PassKind::kFull);
  for (int64_t now : {1003, 1004}) {  // the second cycle starts from what the first kept
    Effects e;
    st->schedule(core::PassKind::kFull, now, e);
    EXPECT_EQ(st->jobs().at(2).planned_start, 1001 + 1800) << "cycle at " << now;
  }
  v1::UpdateJobRequest req;
  req.add_targets()->set_job_id(1);
  (*req.mutable_fields())["TimeLimit"] = "10:00";
  req.add_field_order("TimeLimit");
  Effects u;
  auto results = st->update(user(1000, "alice"), req, 1005, u);
  ASSERT_EQ(results.size(), 1u);
  for (int64_t now : {1006, 1007}) {
    Effects e;
    st->schedule(core::PassKind::kFull, now, e);
    EXPECT_EQ(st->jobs().at(2).planned_start, 1001 + 600) << "cycle at " << now;
  }
  // A leading - or + changes the limit it has (scontrol(1)); only an
  // operator may make it longer; below nothing is refused.
  auto change = [&](const Caller& who, const std::string& v) {
    v1::UpdateJobRequest r;
    r.add_targets()->set_job_id(1);
    (*r.mutable_fields())["TimeLimit"] = v;
    r.add_field_order("TimeLimit");
    Effects e;
    auto out = st->update(who, r, 1008, e);
    return out.size() == 1 && !out[0].ok() ? out[0].error() : std::string();
  };
  EXPECT_EQ(change(user(1000, "alice"), "-5"), "");
  EXPECT_EQ(st->jobs().at(1).rec.time_limit_s(), 300);
  EXPECT_EQ(change(user(1000, "alice"), "+1"), "Access/permission denied");
  EXPECT_EQ(change(Caller{0, 0, "root", true}, "+1:00"), "");
  EXPECT_EQ(st->jobs().at(1).rec.time_limit_s(), 360);
  EXPECT_EQ(change(user(1000, "alice"), "-6"), "Invalid time limit specification");
  EXPECT_EQ(st->jobs().at(1).rec.time_limit_s(), 360);
}

// scontrol hold/release of a running job, as Slurm 22.05 did on the anchor
// cluster: it keeps running, shown at priority 0 with reason JobHeldUser;
// release brings its priority back; a requeue while held leaves it pending
// held; a finished job is "Job has already finished".
TEST(ControllerState, ARunningJobCanBeHeldAndComesBackHeldWhenRequeued) {
  auto st = wide_job_and_one_behind(core::PassKind::kFull);  // job 1 runs
  auto act = [&](v1::ControlAction a, int64_t job, int64_t now) {
    v1::ControlRequest req;
    req.set_action(a);
    req.add_targets()->set_job_id(job);
    req.mutable_targets(0)->set_text(std::to_string(job));
    Effects fx;
    auto r = st->control(user(1000, "alice"), req, now, fx);
    EXPECT_EQ(r.size(), 1u);
    return r.empty() || r[0].ok() ? std::string() : r[0].error();
  };
  const v1::JobRecord& r = st->jobs().at(1).rec;
  ASSERT_EQ(r.state(), v1::RUNNING);
  const int64_t running_priority = r.priority();
  ASSERT_GT(running_priority, 0);
  EXPECT_EQ(act(v1::RELEASE, 1, 1005), "") << "releasing a job not held is no error";
  EXPECT_EQ(r.reason(), "None");
  EXPECT_EQ(act(v1::HOLD, 1, 1006), "");
  EXPECT_EQ(r.state(), v1::RUNNING);
  EXPECT_EQ(r.reason(), "JobHeldUser");
  EXPECT_EQ(r.priority(), 0);
  EXPECT_EQ(act(v1::RELEASE, 1, 1007), "");
  EXPECT_EQ(r.reason(), "None");
  EXPECT_GT(r.priority(), 0);
  EXPECT_EQ(act(v1::HOLD, 1, 1008), "");
  EXPECT_EQ(act(v1::REQUEUE, 1, 1009), "");
  EXPECT_EQ(r.state(), v1::PENDING);
  EXPECT_EQ(r.hold(), v1::HOLD_USER);
  EXPECT_EQ(r.reason(), "JobHeldUser");
  Effects e;
  st->schedule(core::PassKind::kFull, 1010, e);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::PENDING) << "held: not started again";
  v1::CancelRequest cancel;
  cancel.add_targets()->set_job_id(2);
  Effects ce;
  ASSERT_TRUE(st->cancel(user(1000, "alice"), cancel, 1011, ce)[0].ok());
  ASSERT_EQ(st->jobs().at(2).rec.state(), v1::CANCELLED);
  EXPECT_EQ(act(v1::HOLD, 2, 1012), "Job has already finished");
  EXPECT_EQ(act(v1::RELEASE, 2, 1012), "Job has already finished");
}

// scontrol requeue, as Slurm 22.05's on the anchor cluster: the job is
// submitted anew (SubmitTime is the requeue's) and waits, BeginTime, until
// its launch credential's lifetime (AuthInfo cred_expire, 120 s by default)
// and a second have passed; a --no-requeue job is refused, to root too.
TEST(ControllerState, ARequeuedJobWaitsOutTheCredentialLifetime) {
  auto st = make_state("AuthInfo=cred_expire=30\n");
  Effects fx;
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("sleep 100"), false, 1000, fx));
  v1::JobDescriptor once = wrap("sleep 100");
  once.set_requeue(false);
  ASSERT_TRUE(st->submit(user(1000, "alice"), once, false, 1000, fx));
  register_all(*st, 1000);
  st->schedule(core::PassKind::kQuick, 1000, fx);
  const v1::JobRecord& r = st->jobs().at(1).rec;
  ASSERT_EQ(r.state(), v1::RUNNING);
  ASSERT_EQ(st->jobs().at(2).rec.state(), v1::RUNNING);
  const std::string host = r.batch_host();
  auto requeue = [&](int64_t job, int64_t now) {
    v1::ControlRequest req;
    req.set_action(v1::REQUEUE);
    req.add_targets()->set_job_id(job);
    req.mutable_targets(0)->set_text(std::to_string(job));
    Effects e;
    auto res = st->control(Caller{0, 0, "root", true}, req, now, e);
    return res.size() == 1 && !res[0].ok() ? res[0].error() : std::string();
  };
  EXPECT_EQ(requeue(2, 1010), "Requested operation is presently disabled");
  EXPECT_EQ(st->jobs().at(2).rec.state(), v1::RUNNING);
  ASSERT_EQ(requeue(1, 1010), "");
  EXPECT_EQ(r.state(), v1::PENDING);
  EXPECT_EQ(r.reason(), "BeginTime");
  EXPECT_EQ(r.submit_time(), 1010);
  EXPECT_EQ(r.desc().begin_time(), 1041);
  EXPECT_EQ(r.restart_count(), 1);
  v1::NodeReport ended = report(host);
  *ended.add_steps() = step(1, true, "CANCELLED", 0);
  Effects e;
  ASSERT_TRUE(st->node_report(ended, false, 1011, e));
  Effects early;
  st->schedule(core::PassKind::kFull, 1040, early);
  EXPECT_EQ(launches(early), 0);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "BeginTime");
  Effects go;
  st->schedule(core::PassKind::kFull, 1041, go);
  EXPECT_EQ(launches(go), 1);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
}

// SLURM_WORKING_CLUSTER as Slurm 22.05 set it on the anchor cluster
// ("anchor:localhost:6817:9728:109" for select/cons_tres), sent with each launch.
TEST(ControllerState, LaunchesCarrySlurmsWorkingCluster) {
  auto s = settings_from_config(
      config::parse_slurm_conf_text(std::string(kConf) + "SlurmctldPort=6817\nSelectType=select/cons_tres\n", "t.conf"),
      "t.conf");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->working_cluster, "t:localhost:6817:9728:109");
  auto linear = settings_from_config(
      config::parse_slurm_conf_text(std::string(kConf) + "SlurmctldPort=7000\nSelectType=select/linear\n", "t.conf"),
      "t.conf");
  ASSERT_TRUE(linear);
  EXPECT_EQ(linear->working_cluster, "t:localhost:7000:9728:102");
  auto st = make_state();
  register_all(*st, 1000);
  Effects e;
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("true"), false, 1000, e));
  st->schedule(core::PassKind::kFull, 1001, e);
  bool launched = false;
  for (const auto& cmd : e.commands) {
    if (cmd.kind != AgentCommand::kLaunch) continue;
    launched = true;
    EXPECT_EQ(cmd.launch.working_cluster().rfind("t:localhost:", 0), 0u) << cmd.launch.working_cluster();
  }
  EXPECT_TRUE(launched);
}

// A cred_expire that is not a number of seconds stops the controller, naming the line.
TEST(ControllerState, ABadCredExpireIsRefusedWithItsLine) {
  auto s = settings_from_config(
      config::parse_slurm_conf_text(std::string(kConf) + "AuthInfo=cred_expire=soon\n", "test.conf"), "test.conf");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "test.conf:10:1: AuthInfo cred_expire=soon is not a number of seconds (1 or more)");
}

// Memory beyond every node: Slurm 22.05's "Memory specification can not be satisfied" line comes only
// when what the job wrote is beyond every node (--mem, one CPU's --mem-per-cpu), not when its CPUs
// times a per-CPU amount are (anchor cluster: -c 64 at DefMemPerCPU=4096, and --exclusive, on 250G nodes).
TEST(ControllerState, MemoryBeyondEveryNodeIsWordedAsSlurmWordedIt) {
  auto st = make_state();
  auto refusal = [&](int cpus, int64_t mem_per_cpu, bool exclusive) {
    v1::JobDescriptor d = wrap("true");
    d.set_cpus_per_task(cpus);
    d.set_mem_per_cpu_mb(mem_per_cpu);
    d.set_exclusive(exclusive);
    Effects fx;
    auto r = st->submit(user(1000, "alice"), d, false, 1000, fx);
    return r ? std::string("taken") : r.error().message;
  };
  const std::string cpus = refusal(4, 1500, false);
  EXPECT_NE(cpus.find("Requested node configuration is not available\n"), std::string::npos) << cpus;
  EXPECT_EQ(cpus.find("Memory specification"), std::string::npos) << cpus;
  EXPECT_NE(cpus.find("the job needs 6000M of memory on one node"), std::string::npos) << cpus;
  const std::string whole = refusal(1, 1500, true);
  EXPECT_EQ(whole.find("Memory specification"), std::string::npos) << whole;
  EXPECT_NE(whole.find("the job needs 6000M of memory on one node"), std::string::npos)
      << "an --exclusive job asks for every CPU's share: " << whole;
  const std::string own = refusal(1, 5000, false);
  EXPECT_NE(own.find("Memory specification can not be satisfied\n"), std::string::npos) << own;
}

// A held job no node can ever hold is taken, as Slurm 22.05 took one on the anchor cluster (--hold
// --mem=500G on 250G nodes): JobHeldUser while held, LastSchedEval its submit time; released, it pends
// with BadConstraints. Unheld, or planned with --test-only, it is refused.
TEST(ControllerState, AHeldJobBeyondEveryNodeIsTakenAndPendsBadConstraintsOnceReleased) {
  auto st = make_state();
  v1::JobDescriptor big = wrap("true");
  big.set_mem_per_node_mb(int64_t{100} << 30);
  Effects fx;
  auto refused = st->submit(user(1000, "alice"), big, false, 1000, fx);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("Memory specification can not be satisfied\n"), std::string::npos)
      << refused.error().message;
  big.set_hold(true);
  Effects planned;
  auto test_only = st->submit(user(1000, "alice"), big, true, 1000, planned);
  ASSERT_FALSE(test_only);
  EXPECT_EQ(test_only.error().message.rfind("Batch job submission failed: Requested node configuration is not available", 0),
            0u)
      << "--test-only says no detail line: " << test_only.error().message;
  Effects taken;
  auto held = st->submit(user(1000, "alice"), big, false, 1001, taken);
  ASSERT_TRUE(held) << held.error().message;
  const v1::JobRecord& r = st->jobs().at(held->job_id()).rec;
  EXPECT_EQ(r.reason(), "JobHeldUser");
  EXPECT_EQ(r.last_sched_eval(), 1001);
  Effects e;
  st->schedule(core::PassKind::kFull, 1002, e);
  EXPECT_EQ(r.reason(), "JobHeldUser");
  v1::ControlRequest release;
  release.set_action(v1::RELEASE);
  release.add_targets()->set_job_id(held->job_id());
  Effects rfx;
  ASSERT_TRUE(st->control(user(1000, "alice"), release, 1003, rfx)[0].ok());
  Effects e2;
  st->schedule(core::PassKind::kFull, 1004, e2);
  EXPECT_EQ(r.state(), v1::PENDING);
  EXPECT_EQ(r.reason(), "BadConstraints");
}

// scontrol update as Slurm 22.05 answered it on the anchor cluster: a held job's Priority= is refused
// ("Job is in held state, pending scheduler release") and changes nothing; MailType= and MailUser= are
// set (NONE clears); an array element changed or released by itself (JobId=N_T) is split out of the
// array's pending record, while a change to the whole array splits nothing.
TEST(ControllerState, UpdatesAsSlurmsHeldPriorityMailAndArrayElements) {
  auto st = make_state();
  const Caller root{0, 0, "root", true};
  v1::JobDescriptor held = wrap("true");
  held.set_hold(true);
  Effects fx;
  auto h = st->submit(user(1000, "alice"), held, false, 1000, fx);
  ASSERT_TRUE(h) << h.error().message;
  auto update = [&](const Caller& who, int64_t job, std::vector<int64_t> tasks,
                    std::vector<std::pair<std::string, std::string>> fields) {
    v1::UpdateJobRequest req;
    v1::JobTarget* t = req.add_targets();
    t->set_job_id(job);
    for (int64_t task : tasks) t->add_array_tasks(task);
    for (const auto& [k, v] : fields) {
      (*req.mutable_fields())[k] = v;
      req.add_field_order(k);
    }
    Effects e;
    auto r = st->update(who, req, 1001, e);
    std::string errors;
    for (const auto& one : r) errors += one.ok() ? "" : one.error() + ";";
    return errors;
  };
  const v1::JobRecord& hr = st->jobs().at(h->job_id()).rec;
  EXPECT_EQ(update(root, h->job_id(), {}, {{"TimeLimit", "45"}, {"Priority", "500"}}),
            "Job is in held state, pending scheduler release;");
  EXPECT_FALSE(hr.has_admin_priority());
  EXPECT_NE(hr.time_limit_s(), 45 * 60) << "a refused update changes nothing";
  EXPECT_EQ(update(user(1000, "alice"), h->job_id(), {}, {{"MailType", "time_limit_80,end"}, {"MailUser", "bob"}}), "");
  EXPECT_EQ(hr.desc().mail_type(), "END,TIME_LIMIT_80");
  EXPECT_EQ(hr.desc().mail_user(), "bob");
  EXPECT_EQ(update(user(1000, "alice"), h->job_id(), {}, {{"MailType", "none"}}), "");
  EXPECT_EQ(hr.desc().mail_type(), "");

  v1::JobDescriptor arr = wrap("true");
  arr.set_hold(true);
  for (int i : {1, 2, 3, 4}) arr.mutable_array()->add_task_ids(i);
  Effects afx;
  auto a = st->submit(user(1000, "alice"), arr, false, 1000, afx);
  ASSERT_TRUE(a) << a.error().message;
  auto split = [&](int task) {
    for (const auto& [id, j] : st->jobs()) {
      if (j.rec.array_job_id() == a->job_id() && j.rec.array_task_id() == task) return j.rec.array_split();
    }
    ADD_FAILURE() << "no task " << task;
    return false;
  };
  EXPECT_EQ(update(user(1000, "alice"), a->job_id(), {}, {{"Comment", "all"}}), "");
  EXPECT_FALSE(split(1) || split(2) || split(3) || split(4)) << "the whole array stays one record";
  EXPECT_EQ(update(user(1000, "alice"), a->job_id(), {2}, {{"JobName", "arturo"}}), "");
  EXPECT_TRUE(split(2));
  v1::ControlRequest release;
  release.set_action(v1::RELEASE);
  v1::JobTarget* t = release.add_targets();
  t->set_job_id(a->job_id());
  t->add_array_tasks(3);
  Effects rfx;
  ASSERT_TRUE(st->control(user(1000, "alice"), release, 1002, rfx)[0].ok());
  EXPECT_TRUE(split(3));
  EXPECT_FALSE(split(1) || split(4));

  // A running job's new priority shows at once (Slurm 22.05: squeue %Q 77 after Priority=77);
  // ArrayTaskThrottle= of a job that is no array changes nothing and is no error, as there.
  Effects sfx;
  auto run = st->submit(user(1000, "alice"), wrap("sleep 100"), false, 1003, sfx);
  ASSERT_TRUE(run) << run.error().message;
  register_all(*st, 1003);
  Effects go;
  st->schedule(core::PassKind::kQuick, 1003, go);
  const v1::JobRecord& rr = st->jobs().at(run->job_id()).rec;
  ASSERT_EQ(rr.state(), v1::RUNNING);
  EXPECT_EQ(update(root, run->job_id(), {}, {{"Priority", "77"}}), "");
  EXPECT_EQ(rr.priority(), 77);
  EXPECT_EQ(update(root, run->job_id(), {}, {{"ArrayTaskThrottle", "x"}}), "");
}

// scontrol requeuehold of a running job: pending, held, with Slurm 22.05's
// reason (anchor cluster: "job requeued in held state"), also after a pass;
// release clears it.
TEST(ControllerState, RequeueHoldShowsSlurmsReason) {
  auto st = wide_job_and_one_behind(core::PassKind::kFull);  // job 1 runs
  const v1::JobRecord& r = st->jobs().at(1).rec;
  ASSERT_EQ(r.state(), v1::RUNNING);
  const std::string host = r.batch_host();
  auto act = [&](v1::ControlAction a, int64_t now) {
    v1::ControlRequest req;
    req.set_action(a);
    req.add_targets()->set_job_id(1);
    Effects fx;
    auto res = st->control(Caller{0, 0, "root", true}, req, now, fx);
    return res.size() == 1 && res[0].ok();
  };
  ASSERT_TRUE(act(v1::REQUEUE_HOLD, 1005));
  Effects e;
  st->schedule(core::PassKind::kFull, 1006, e);
  EXPECT_EQ(r.hold(), v1::HOLD_ADMIN);
  EXPECT_EQ(r.reason(), "job requeued in held state");
  ASSERT_TRUE(act(v1::RELEASE, 1007));
  EXPECT_EQ(r.reason(), "None") << "Slurm's at once, though it waits out the requeue's credential lifetime";
  v1::NodeReport ended = report(host);
  *ended.add_steps() = step(1, true, "CANCELLED", 0);
  Effects end;
  ASSERT_TRUE(st->node_report(ended, false, 1007, end));
  Effects pass;
  st->schedule(core::PassKind::kFull, 1008, pass);
  EXPECT_EQ(r.reason(), "BeginTime");
  EXPECT_EQ(r.state(), v1::PENDING);
  EXPECT_FALSE(r.special_exit());
}

// scontrol requeuehold State=SpecialExit: the job is marked SPECIAL_EXIT
// (squeue SE, as Slurm 22.05 showed it on the anchor cluster) until it is
// released.
TEST(ControllerState, RequeueHoldSpecialExitLastsUntilRelease) {
  auto st = wide_job_and_one_behind(core::PassKind::kFull);  // job 1 runs
  const v1::JobRecord& r = st->jobs().at(1).rec;
  ASSERT_EQ(r.state(), v1::RUNNING);
  v1::ControlRequest req;
  req.set_action(v1::REQUEUE_HOLD);
  req.set_special_exit(true);
  req.add_targets()->set_job_id(1);
  Effects fx;
  auto res = st->control(Caller{0, 0, "root", true}, req, 1005, fx);
  ASSERT_TRUE(res.size() == 1 && res[0].ok());
  EXPECT_TRUE(r.special_exit());
  EXPECT_EQ(r.state(), v1::PENDING);
  EXPECT_EQ(r.hold(), v1::HOLD_ADMIN);
  req.set_action(v1::RELEASE);
  req.set_special_exit(false);
  res = st->control(Caller{0, 0, "root", true}, req, 1006, fx);
  ASSERT_TRUE(res.size() == 1 && res[0].ok());
  EXPECT_FALSE(r.special_exit());
  EXPECT_EQ(r.hold(), v1::HOLD_NONE);
}

// scontrol suspend/resume, as Slurm's: operators only, with Slurm's words;
// a suspended job's processes get SIGSTOP on its nodes, its CPUs go to the
// next job while its memory stays its own, its batch host stops counting
// its time; on resume SIGCONT, and the end moves on by the pause.
TEST(ControllerState, SuspendLendsTheCpusAndResumeMovesTheEndOn) {
  auto st = wide_job_and_one_behind(core::PassKind::kFull);  // job 1 holds c1 and c2 until 1001+1800
  const Caller root{0, 0, "root", true};
  auto act = [&](const Caller& who, v1::ControlAction a, int64_t job, int64_t now, Effects& fx) {
    v1::ControlRequest req;
    req.set_action(a);
    req.add_targets()->set_job_id(job);
    req.mutable_targets(0)->set_text(std::to_string(job));
    auto r = st->control(who, req, now, fx);
    EXPECT_EQ(r.size(), 1u);
    return r.empty() || r[0].ok() ? std::string() : r[0].error();
  };
  Effects none;
  EXPECT_EQ(act(user(1000, "alice"), v1::SUSPEND, 1, 1005, none), "Access/permission denied");
  EXPECT_EQ(act(root, v1::SUSPEND, 2, 1005, none), "Job is pending execution");
  EXPECT_EQ(act(root, v1::RESUME, 1, 1005, none), "Job is not suspended");
  EXPECT_EQ(act(root, v1::SUSPEND, 99, 1005, none), "Unexpected message received") << "Slurm 22.05's words";
  EXPECT_TRUE(none.commands.empty());
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);

  Effects sus;
  EXPECT_EQ(act(root, v1::SUSPEND, 1, 1010, sus), "");
  const v1::JobRecord& r = st->jobs().at(1).rec;
  EXPECT_EQ(r.state(), v1::SUSPENDED);
  EXPECT_EQ(r.suspend_time(), 1010);
  EXPECT_EQ(r.pre_suspend_s(), 9);
  int stops = 0, unlimited = 0;
  for (const auto& c : sus.commands) {
    stops += c.kind == AgentCommand::kSignal && c.signal == SIGSTOP && c.every_step && c.node == r.batch_host();
    unlimited += c.kind == AgentCommand::kSetTimeLimit && c.time_limit_s == 0;
  }
  EXPECT_EQ(stops, 1);
  EXPECT_EQ(unlimited, 1);
  for (const auto& n : st->node_infos(1010)) {
    if (n.name() == "c1") {
      EXPECT_EQ(n.alloc_cpus(), 0);
      EXPECT_GT(n.alloc_memory_mb(), 0);  // memory stays the suspended job's
      EXPECT_EQ(n.base(), v1::NODE_IDLE);
    }
  }
  Effects again;  // suspending a suspended job changes nothing and is no error
  EXPECT_EQ(act(root, v1::SUSPEND, 1, 1015, again), "");
  EXPECT_EQ(r.pre_suspend_s(), 9);
  EXPECT_EQ(r.suspend_time(), 1010);

  Effects go;
  st->schedule(core::PassKind::kFull, 1016, go);
  EXPECT_EQ(st->jobs().at(2).rec.state(), v1::RUNNING) << "the suspended job's CPUs were not lent";

  Effects res;
  EXPECT_EQ(act(root, v1::RESUME, 1, 1030, res), "");
  EXPECT_EQ(r.state(), v1::RUNNING);
  EXPECT_EQ(r.suspended_s(), 20);
  EXPECT_EQ(r.suspend_time(), 1030);
  EXPECT_EQ(r.end_time(), 1001 + 1800 + 20);
  int conts = 0, limits = 0;
  for (const auto& c : res.commands) {
    conts += c.kind == AgentCommand::kSignal && c.signal == SIGCONT && c.every_step;
    limits += c.kind == AgentCommand::kSetTimeLimit && c.time_limit_s == 1800 + 20;
  }
  EXPECT_EQ(conts, 1);
  EXPECT_EQ(limits, 1);

  Effects sus2, cancel;
  EXPECT_EQ(act(root, v1::SUSPEND, 1, 1040, sus2), "");
  EXPECT_EQ(r.pre_suspend_s(), 9 + 10);
  v1::CancelRequest c;
  c.add_targets()->set_job_id(1);
  c.mutable_targets(0)->set_text("1");
  st->cancel(root, c, 1045, cancel);
  EXPECT_EQ(r.state(), v1::CANCELLED);
  EXPECT_EQ(r.suspended_s(), 25);  // the last pause counts too
}

// sprio: the pending jobs that compete for resources; held ones, those that
// wait for another job or for their begin time are left out, as Slurm does.
TEST(ControllerState, SprioListsOnlyTheJobsThatCompeteForResources) {
  auto st = wide_job_and_one_behind(core::PassKind::kQuick);  // job 2 waits for resources
  Effects fx;
  v1::JobDescriptor held = wrap("true");
  held.set_hold(true);
  ASSERT_TRUE(st->submit(user(1000, "alice"), held, false, 1003, fx));  // 3
  v1::JobDescriptor dep = wrap("true");
  v1::DepItem* d = dep.mutable_dependency()->add_items();
  d->set_type(v1::DEP_AFTER_OK);
  d->set_job_id(1);
  d->set_array_task(-1);
  ASSERT_TRUE(st->submit(user(1000, "alice"), dep, false, 1003, fx));  // 4
  v1::JobDescriptor later = wrap("true");
  later.set_begin_time(5000);
  ASSERT_TRUE(st->submit(user(1000, "alice"), later, false, 1003, fx));  // 5
  Effects e;
  st->schedule(core::PassKind::kQuick, 1004, e);
  std::vector<int64_t> listed;
  v1::GetPrioritiesReply sprio = st->priorities(1004);
  for (const auto& f : sprio.jobs()) listed.push_back(f.job_id());
  EXPECT_EQ(listed, (std::vector<int64_t>{2}));
}

// A pending job of several partitions has an sprio row for each, in the
// order it names them, with its priority there: one CPU weighs more against
// a small partition's total (Slurm 22.05's sprio on the anchor cluster).
TEST(ControllerState, SprioListsEachPartitionOfAJobOfSeveral) {
  auto st = make_state("PriorityType=priority/multifactor\nPriorityWeightTRES=CPU=1000\n"
                       "NodeName=c3 CPUs=16 RealMemory=16000\nPartitionName=big Nodes=c3\n");
  register_all(*st, 1000, {"c3"});
  Effects fx;
  for (const char* part : {"cpu", "big"}) {
    v1::JobDescriptor all = wrap("sleep 60");
    all.add_partitions(part);
    all.set_min_nodes(part == std::string("cpu") ? 2 : 1);
    all.set_exclusive(true);
    ASSERT_TRUE(st->submit(user(1000, "alice"), all, false, 1000, fx));  // 1, 2: every node of both
  }
  st->schedule(core::PassKind::kFull, 1000, fx);
  ASSERT_EQ(st->jobs().at(2).rec.state(), v1::RUNNING);
  v1::JobDescriptor both = wrap("true");
  both.add_partitions("big");
  both.add_partitions("cpu");
  ASSERT_TRUE(st->submit(user(1000, "alice"), both, false, 1001, fx));  // 3: waits
  st->schedule(core::PassKind::kFull, 1002, fx);
  ASSERT_EQ(st->jobs().at(3).rec.state(), v1::PENDING);
  v1::GetPrioritiesReply sprio = st->priorities(1003);
  ASSERT_EQ(sprio.jobs_size(), 2);
  EXPECT_EQ(sprio.jobs(0).partition(), "big");
  EXPECT_EQ(sprio.jobs(1).partition(), "cpu");
  EXPECT_EQ(sprio.jobs(0).tres().at("cpu"), 1000.0 / 16);  // 1 of big's 16 CPUs
  EXPECT_EQ(sprio.jobs(1).tres().at("cpu"), 1000.0 / 8);   // 1 of cpu's 8
}

// A pending --exclusive job shows and is weighed by what it asked for, as
// Slurm 22.05 showed on the anchor cluster (NumCPUs=1, TRES cpu=1 and the
// CPUs' default memory, the job size and TRES priority of one CPU); once it
// runs it holds whole nodes.
TEST(ControllerState, APendingExclusiveJobShowsWhatItAskedFor) {
  auto st = make_state("PriorityType=priority/multifactor\nPriorityWeightJobSize=1000\nPriorityWeightTRES=CPU=1000\n");
  register_all(*st, 1000);
  Effects fx;
  v1::JobDescriptor both = wrap("sleep 60");
  both.set_min_nodes(2);
  both.set_exclusive(true);
  ASSERT_TRUE(st->submit(user(1000, "alice"), both, false, 1000, fx));  // 1: runs on c1 and c2
  v1::JobDescriptor ex = wrap("true");
  ex.set_exclusive(true);
  ASSERT_TRUE(st->submit(user(1000, "alice"), ex, false, 1001, fx));  // 2: waits
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("true"), false, 1001, fx));  // 3: waits
  st->schedule(core::PassKind::kFull, 1002, fx);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  ASSERT_EQ(st->jobs().at(2).rec.state(), v1::PENDING);
  const v1::JobDisplay running = st->job_for_display(st->jobs().at(1), false, false, 1002).display();
  EXPECT_EQ(running.num_cpus(), 8) << "whole nodes";
  const v1::JobDisplay waiting = st->job_for_display(st->jobs().at(2), false, false, 1002).display();
  EXPECT_EQ(waiting.num_cpus(), 1);
  EXPECT_EQ(waiting.tres().at("cpu"), 1);
  EXPECT_EQ(waiting.tres().at("mem"), 100);
  std::map<int64_t, double> size, cpu;
  const v1::GetPrioritiesReply sprio = st->priorities(1002);
  for (const auto& f : sprio.jobs()) {
    size[f.job_id()] = f.job_size();
    cpu[f.job_id()] = f.tres().at("cpu");
  }
  ASSERT_EQ(size.size(), 2u);
  EXPECT_GT(size[2], 0);
  EXPECT_EQ(size[2], size[3]);
  EXPECT_EQ(cpu[2], 1000.0 / 8) << "one CPU of the partition's 8";
  EXPECT_EQ(cpu[2], cpu[3]);
}

// A controller whose accounting database is the first start's (QOS normal,
// account and user root), with `extra` slurm.conf lines.
std::unique_ptr<ControllerState> state_with_accounting(const std::string& extra = "") {
  auto st = make_state(extra);
  st->set_accounting(AccountingDb::seed(config::parse_slurm_conf_text(kConf + extra, "test.conf")));
  return st;
}

// One sacctmgr change, made by root.
Result<AssocChange> sacctmgr(ControllerState& st, const std::string& verb, const std::string& entity,
                                          const std::string& name, const std::map<std::string, std::string>& set) {
  v1::ModifyAssociationsRequest r;
  r.set_verb(verb);
  r.set_entity(entity);
  r.add_names(name);
  for (const auto& [k, v] : set) (*r.mutable_set())[k] = v;
  Effects fx;
  return st.modify_associations(Caller{0, 0, "root", true}, r, 1000, fx);
}

// QOS= and DefaultQOS= follow the parent account unless set on the
// association itself, as Slurm 22.05's sacctmgr showed on the anchor cluster:
// a new account takes its parent's, `modify account set QOS=` reaches its
// users and sub-accounts, but not a user given QOS= of their own.
TEST(ControllerState, AssociationsInheritTheirAccountsQosUntilGivenTheirOwn) {
  auto st = state_with_accounting();
  ASSERT_TRUE(sacctmgr(*st, "add", "qos", "debug", {}));
  ASSERT_TRUE(sacctmgr(*st, "add", "qos", "training", {}));
  ASSERT_TRUE(sacctmgr(*st, "modify", "account", "root", {{"QOS", "normal,debug,training"}}));
  ASSERT_TRUE(sacctmgr(*st, "add", "account", "acct3", {}));
  ASSERT_TRUE(sacctmgr(*st, "add", "account", "sub", {{"Parent", "acct3"}}));
  ASSERT_TRUE(sacctmgr(*st, "add", "user", "bob", {{"Account", "acct3"}}));
  ASSERT_TRUE(sacctmgr(*st, "add", "user", "carol", {{"Account", "acct3"}}));
  auto qos_of = [&](const std::string& user) {
    const v1::UserRecord* u = st->accounting().user(user);
    if (!u || u->assocs().empty()) return std::string("none");
    std::vector<std::string> q(u->assocs(0).qos().begin(), u->assocs(0).qos().end());
    std::sort(q.begin(), q.end());
    return join(q, ",");
  };
  auto account_qos = [&](const std::string& name) {
    const v1::GetAssociationsReply all = st->accounting().snapshot();
    for (const auto& a : all.accounts()) {
      if (a.name() != name) continue;
      std::vector<std::string> q(a.qos().begin(), a.qos().end());
      std::sort(q.begin(), q.end());
      return join(q, ",");
    }
    return std::string("none");
  };
  EXPECT_EQ(account_qos("acct3"), "debug,normal,training");
  EXPECT_EQ(qos_of("bob"), "debug,normal,training");
  ASSERT_TRUE(sacctmgr(*st, "modify", "account", "acct3", {{"QOS", "normal,debug"}}));
  EXPECT_EQ(qos_of("bob"), "debug,normal");
  EXPECT_EQ(account_qos("sub"), "debug,normal");
  ASSERT_TRUE(sacctmgr(*st, "modify", "user", "bob", {{"QOS", "normal"}}));
  ASSERT_TRUE(sacctmgr(*st, "modify", "account", "acct3", {{"QOS", "normal,training"}}));
  EXPECT_EQ(qos_of("bob"), "normal") << "set on his association: his own";
  EXPECT_EQ(qos_of("carol"), "normal,training");
  EXPECT_EQ(account_qos("sub"), "normal,training");
  ASSERT_TRUE(sacctmgr(*st, "modify", "account", "acct3", {{"Description", "d"}}));
  EXPECT_EQ(qos_of("bob"), "normal");
}

// AccountingStorageEnforce=associations (or limits, qos, ...): a user needs an
// association to submit, and may use only the accounts it has (Slurm's
// "Invalid account or account/partition combination specified").
TEST(ControllerState, EnforcedAssociationsGateSubmissions) {
  auto st = state_with_accounting("AccountingStorageEnforce=limits,qos\n");
  Effects fx;
  auto refused = st->submit(user(1000, "alice"), wrap("true"), false, 1000, fx);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "Batch job submission failed: Invalid account or account/partition combination specified\n"
            "drover: user alice has no association (add one with sacctmgr add user)");
  Caller root{0, 0, "root", true};
  ASSERT_TRUE(sacctmgr(*st, "add", "account", "research", {{"Description", "research"}}));
  ASSERT_TRUE(sacctmgr(*st, "add", "user", "alice", {{"Account", "research"}}));
  auto ok = st->submit(user(1000, "alice"), wrap("true"), false, 1001, fx);
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(st->jobs().at(ok->job_id()).rec.account(), "research");
  v1::JobDescriptor other = wrap("true");
  other.set_account("root");
  auto not_hers = st->submit(user(1000, "alice"), other, false, 1002, fx);
  ASSERT_FALSE(not_hers);
  EXPECT_NE(not_hers.error().message.find("Invalid account or account/partition combination specified"),
            std::string::npos);
  EXPECT_TRUE(st->submit(root, wrap("true"), false, 1003, fx)) << "root's association comes with the cluster";
  // scontrol update Account= of her pending job: only an account she has,
  // whoever asks (Slurm 22.05 refused Account=nosuch on the anchor cluster).
  v1::JobDescriptor held = wrap("true");
  held.set_hold(true);
  auto h = st->submit(user(1000, "alice"), held, false, 1004, fx);
  ASSERT_TRUE(h) << h.error().message;
  ASSERT_TRUE(sacctmgr(*st, "add", "account", "physics", {{"Description", "physics"}}));
  for (const auto& [who, account, error] :
       std::vector<std::tuple<Caller, std::string, std::string>>{
           {root, "nosuch", "Invalid account or account/partition combination specified"},
           {user(1000, "alice"), "physics", "Invalid account or account/partition combination specified"},
           {user(1000, "alice"), "research", ""}}) {
    EXPECT_EQ(update_one(*st, who, h->job_id(), "Account", account, 1005), error) << account;
  }
  auto plain = make_state();  // not enforced: anyone submits
  EXPECT_TRUE(plain->submit(user(1000, "alice"), wrap("true"), false, 1000, fx));
}

// A job that names no QOS takes its association's DefaultQOS (as Slurm's);
// with AccountingStorageEnforce=qos its QOS must be one the association
// allows ("Invalid qos specification").
TEST(ControllerState, AssociationsGiveTheDefaultQosAndEnforceTheirList) {
  auto st = state_with_accounting("AccountingStorageEnforce=associations,limits,qos\n");
  Effects fx;
  ASSERT_TRUE(sacctmgr(*st, "add", "qos", "debug", {}));
  ASSERT_TRUE(sacctmgr(*st, "add", "qos", "long", {}));
  ASSERT_TRUE(sacctmgr(*st, "add", "account", "research", {{"Description", "research"}}));
  ASSERT_TRUE(sacctmgr(*st, "add", "user", "alice", {{"Account", "research"}, {"QOS", "normal,debug"}, {"DefaultQOS", "debug"}}));
  auto plain = st->submit(user(1000, "alice"), wrap("true"), false, 1001, fx);
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(st->jobs().at(plain->job_id()).rec.qos(), "debug") << "the association's DefaultQOS";
  v1::JobDescriptor normal = wrap("true");
  normal.set_qos("normal");
  auto asked = st->submit(user(1000, "alice"), normal, false, 1002, fx);
  ASSERT_TRUE(asked) << asked.error().message;
  EXPECT_EQ(st->jobs().at(asked->job_id()).rec.qos(), "normal");
  v1::JobDescriptor other = wrap("true");
  other.set_qos("long");
  auto refused = st->submit(user(1000, "alice"), other, false, 1003, fx);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message,
            "Batch job submission failed: Invalid qos specification\n"
            "drover: user alice's association with account research allows QOS debug,normal, not long "
            "(sacctmgr modify user ... set QOS=)");
}

// As Slurm's accounting database, Drover's starts with a QOS named normal
// (when qos.conf does not define one), which associations default to; the
// anchor's setup.sh then sets a user's DefaultQOS with sacctmgr.
TEST(ControllerState, AccountingStartsWithQosNormalAndUsersTakeADefaultQos) {
  auto st = state_with_accounting();
  std::vector<std::string> qos;
  for (const auto& q : st->accounting().qos_specs()) qos.push_back(q.name);
  EXPECT_EQ(qos, (std::vector<std::string>{"normal"}));
  ASSERT_NE(st->accounting().user("root"), nullptr);
  EXPECT_EQ(st->accounting().user("root")->assocs(0).default_qos(), "normal");
  ASSERT_TRUE(sacctmgr(*st, "add", "qos", "debug", {}));
  ASSERT_TRUE(sacctmgr(*st, "add", "account", "research", {{"Description", "research"}}));
  ASSERT_TRUE(sacctmgr(*st, "add", "user", "alice", {{"Account", "research"}, {"DefaultQOS", "normal"}}));
  EXPECT_EQ(st->accounting().user("alice")->assocs(0).default_qos(), "normal");
  ASSERT_TRUE(sacctmgr(*st, "modify", "user", "alice", {{"QOS", "normal,debug"}, {"DefaultQOS", "debug"}}));
  EXPECT_EQ(st->accounting().user("alice")->assocs(0).default_qos(), "debug");
  auto bad = sacctmgr(*st, "modify", "user", "alice", {{"DefaultQOS", "nosuch"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "QOS nosuch does not exist");
  EXPECT_EQ(st->accounting().user("alice")->assocs(0).default_qos(), "debug") << "a refused change changes nothing";
}

// sacctmgr's lines and outcomes as Slurm 22.05's printed them on the anchor
// cluster: names already there (add) or not there (modify, delete) are
// passed over, and a change that touches nothing says so (sacctmgr exits 1);
// QOS+= and QOS-= edit a list; a bad QOS names the valid ones.
TEST(ControllerState, SacctmgrChangesSayWhatTheyTouched) {
  auto st = state_with_accounting();
  using Lines = std::vector<std::string>;
  auto added = sacctmgr(*st, "add", "qos", "debug", {{"priority", "10"}, {"MaxWall", "1:00:00"}});
  ASSERT_TRUE(added);
  EXPECT_EQ(added->lines, (Lines{" Adding QOS(s)", "  debug", " Settings", "  Description    = debug",
                                 "  MaxWall                  = 01:00:00", "  Priority                 = 10"}));
  auto again = sacctmgr(*st, "add", "qos", "debug", {});
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->unchanged);
  EXPECT_EQ(again->lines, (Lines{" Nothing new added."}));
  auto gone = sacctmgr(*st, "delete", "qos", "nosuch", {});
  ASSERT_TRUE(gone);
  EXPECT_TRUE(gone->unchanged);
  EXPECT_EQ(gone->lines, (Lines{" Nothing deleted"}));
  auto nobody = sacctmgr(*st, "modify", "user", "nosuch", {{"QOS", "normal"}});
  ASSERT_TRUE(nobody);
  EXPECT_EQ(nobody->lines, (Lines{" Nothing modified"}));

  ASSERT_TRUE(sacctmgr(*st, "add", "account", "research", {}));
  auto alice = sacctmgr(*st, "add", "user", "alice", {{"Account", "research"}});
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->lines, (Lines{" Adding User(s)", "  alice", " Associations =",
                                 "  U = alice     A = research   C = t         ", " Non Default Settings"}));
  EXPECT_TRUE(sacctmgr(*st, "add", "user", "alice", {{"Account", "research"}})->unchanged);
  // A default account the user is not in, or that does not exist: Slurm's lines, nothing changed.
  ASSERT_TRUE(sacctmgr(*st, "add", "account", "physics", {}));
  for (const char* acc : {"physics", "nosuch"}) {
    auto def = sacctmgr(*st, "modify", "user", "alice", {{"DefaultAccount", acc}});
    ASSERT_TRUE(def) << def.error().message;
    EXPECT_TRUE(def->unchanged);
    EXPECT_EQ(def->lines, (Lines{std::string(" Can't modify because these users aren't associated with new default "
                                             "account '") + acc + "'...",
                                 "  U = alice C = t"}));
    EXPECT_EQ(st->accounting().user("alice")->default_account(), "research");
  }
  auto qos = [&] {
    const auto& l = st->accounting().user("alice")->assocs(0).qos();
    return std::vector<std::string>(l.begin(), l.end());
  };
  EXPECT_EQ(qos(), (Lines{"normal"})) << "the account's, which has root's";
  auto plus = sacctmgr(*st, "modify", "user", "alice", {{"qos+", "debug"}});
  ASSERT_TRUE(plus);
  EXPECT_EQ(plus->lines, (Lines{" Modified user associations...", "  C = t          A = research             U = alice    "}));
  EXPECT_EQ(qos(), (Lines{"debug", "normal"}));
  ASSERT_TRUE(sacctmgr(*st, "modify", "user", "alice", {{"QOS-", "normal"}}));
  EXPECT_EQ(qos(), (Lines{"debug"}));
  ASSERT_TRUE(sacctmgr(*st, "modify", "user", "alice", {{"QOS+", "normal"}}));
  auto bad = sacctmgr(*st, "modify", "user", "alice", {{"QOS+", "nosuch"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "You gave a bad qos 'nosuch'. Valid QOS's are normal,debug");
  EXPECT_EQ(qos(), (Lines{"debug", "normal"})) << "a refused change changes nothing";
  auto defaults = sacctmgr(*st, "modify", "user", "alice", {{"DefaultAccount", "research"}});
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->lines, (Lines{" Modified users...", "  alice"}));
  auto account = sacctmgr(*st, "modify", "account", "research", {{"QOS-", "debug"}});
  ASSERT_TRUE(account);
  EXPECT_EQ(account->lines, (Lines{" Modified account associations...", "  C = t          A = research of root"}));
  auto users = sacctmgr(*st, "delete", "user", "alice", {});
  ASSERT_TRUE(users);
  EXPECT_EQ(users->lines, (Lines{" Deleting users...", "  alice"}));
}

// What Slurm 22.05's sacctmgr said on the anchor cluster (2026-12-08): a
// missing parent or account, an unknown option or a bad MaxWall of a modify
// in its own lines; a user's name cut to nine characters in the listing; an
// account deleted with its user's association there, the user kept.
TEST(ControllerState, SacctmgrRefusesAndDeletesInSlurmsWords) {
  auto st = state_with_accounting();
  ASSERT_TRUE(sacctmgr(*st, "add", "account", "research", {}));
  auto parent = sacctmgr(*st, "add", "account", "proj2", {{"Parent", "nosuch"}});
  ASSERT_FALSE(parent);
  EXPECT_EQ(parent.error().message,
            " Parent account 'nosuch' doesn't exist on cluster t\n        Contact your admin to add this account.\n"
            " No associations created.");
  auto missing = sacctmgr(*st, "add", "user", "alice", {{"Account", "nosuchacct"}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message,
            " This account 'nosuchacct' doesn't exist.\n        Contact your admin to add this account.\n"
            " No associations or wckeys created.");
  auto longname = sacctmgr(*st, "add", "user", "nosuchunixuser", {{"Account", "research"}});
  ASSERT_TRUE(longname) << longname.error().message;
  EXPECT_EQ(longname->lines.at(3), "  U = nosuchuni A = research   C = t         ");
  auto bogus = sacctmgr(*st, "modify", "account", "research", {{"bogus", "1"}});
  ASSERT_FALSE(bogus);
  EXPECT_EQ(bogus.error().message.rfind(" Unknown option: bogus=1\n Use keyword 'where' to modify condition\n (", 0), 0u)
      << bogus.error().message;
  auto wall = sacctmgr(*st, "modify", "user", "nosuchunixuser", {{"MaxWall", "bogus"}});
  ASSERT_FALSE(wall);
  EXPECT_EQ(wall.error().message,
            " Bad MaxWall time format: MaxWall=bogus\n Unknown option: MaxWall=bogus\n Use keyword 'where' to modify "
            "condition");
  auto gone = sacctmgr(*st, "delete", "account", "research", {});
  ASSERT_TRUE(gone) << gone.error().message;
  EXPECT_EQ(gone->lines, (std::vector<std::string>{" Deleting accounts...", "  research"}));
  const v1::UserRecord* kept = st->accounting().user("nosuchunixuser");
  ASSERT_NE(kept, nullptr);
  EXPECT_TRUE(kept->assocs().empty());
  EXPECT_EQ(kept->default_account(), "");
}

// Association limits set with sacctmgr hold jobs back under
// AccountingStorageEnforce=limits (Slurm's reasons), MaxSubmitJobs refuses
// at submit, a changed limit counts from the next pass, and without
// "limits" they are kept but not enforced.
TEST(ControllerState, AssociationLimitsFromSacctmgrHoldJobsBack) {
  auto st = state_with_accounting("AccountingStorageEnforce=associations,limits\n");
  register_all(*st, 1000);
  Effects fx;
  ASSERT_TRUE(sacctmgr(*st, "add", "account", "research", {{"GrpJobs", "3"}}));
  ASSERT_TRUE(sacctmgr(*st, "add", "user", "alice", {{"Account", "research"}, {"MaxJobs", "1"}, {"MaxSubmit", "3"}}));
  auto bad = sacctmgr(*st, "modify", "user", "alice", {{"MaxJobs", "many"}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "Invalid MaxJobs 'many': a whole number from 0, or -1 to clear it");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("sleep 60"), false, 1001, fx));
  auto fourth = st->submit(user(1000, "alice"), wrap("sleep 60"), false, 1001, fx);
  ASSERT_FALSE(fourth);
  EXPECT_EQ(fourth.error().message.substr(0, fourth.error().message.rfind('\n')),
            "AssocMaxSubmitJobLimit\nBatch job submission failed: Job violates accounting/QOS policy (job submit "
            "limit, user's size and/or time limits)");
  st->schedule(core::PassKind::kFull, 1002, fx);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  EXPECT_EQ(st->jobs().at(2).rec.reason(), "AssocMaxJobsLimit");
  ASSERT_TRUE(sacctmgr(*st, "modify", "user", "alice", {{"MaxJobs", "-1"}}));  // cleared: the account's GrpJobs=3 holds
  ASSERT_TRUE(sacctmgr(*st, "modify", "account", "research", {{"GrpJobs", "2"}}));
  st->schedule(core::PassKind::kFull, 1003, fx);
  EXPECT_EQ(st->jobs().at(2).rec.state(), v1::RUNNING);
  EXPECT_EQ(st->jobs().at(3).rec.reason(), "AssocGrpJobsLimit");
  // MaxWall=30 is 30 minutes (Slurm's time syntax): a job asking for an hour
  // waits on it, one that asks for no limit gets 30 minutes instead of the
  // partition's hour (as Slurm's did on the anchor cluster).
  ASSERT_TRUE(sacctmgr(*st, "modify", "account", "research", {{"MaxWall", "30"}, {"MaxSubmit", "-1"}}));
  ASSERT_TRUE(sacctmgr(*st, "modify", "user", "alice", {{"MaxSubmit", "-1"}}));
  v1::JobDescriptor hour = wrap("true");
  hour.set_time_limit_s(3600);
  ASSERT_TRUE(st->submit(user(1000, "alice"), hour, false, 1004, fx));
  ASSERT_TRUE(sacctmgr(*st, "modify", "account", "research", {{"GrpJobs", "-1"}}));
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("true"), false, 1004, fx));
  st->schedule(core::PassKind::kFull, 1005, fx);
  EXPECT_EQ(st->jobs().at(4).rec.reason(), "AssocMaxWallDurationPerJobLimit");
  EXPECT_EQ(st->jobs().at(5).rec.state(), v1::RUNNING);
  EXPECT_EQ(st->jobs().at(5).rec.time_limit_s(), 1800);
  auto snap = st->accounting().snapshot();
  for (const auto& a : snap.accounts()) {
    if (a.name() == "research") {
      EXPECT_EQ(a.limits().at("MaxWall"), "00:30:00");
    }
  }
  // Slurm's older spellings set one TRES of a list.
  ASSERT_TRUE(sacctmgr(*st, "modify", "user", "alice", {{"MaxCPUs", "4"}, {"GrpMem", "2G"}}));
  auto limits = [&] { return st->accounting().user("alice")->assocs(0).limits(); };
  EXPECT_EQ(limits().at("MaxTRES"), "cpu=4");
  EXPECT_EQ(limits().at("GrpTRES"), "mem=2G");
  ASSERT_TRUE(sacctmgr(*st, "modify", "user", "alice", {{"MaxCPUs", "-1"}}));
  EXPECT_EQ(limits().count("MaxTRES"), 0u);

  auto loose = state_with_accounting("AccountingStorageEnforce=associations\n");  // no "limits"
  register_all(*loose, 1000);
  ASSERT_TRUE(sacctmgr(*loose, "add", "account", "research", {}));
  ASSERT_TRUE(sacctmgr(*loose, "add", "user", "alice", {{"Account", "research"}, {"MaxJobs", "1"}}));
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(loose->submit(user(1000, "alice"), wrap("sleep 60"), false, 1001, fx));
  loose->schedule(core::PassKind::kFull, 1002, fx);
  EXPECT_EQ(loose->jobs().at(2).rec.state(), v1::RUNNING) << "kept, not enforced";
}

// scontrol update State=RESUME: only a drained or down node resumes; the
// others in the list are passed over and said, a list of only those is refused.
TEST(ControllerState, ResumeTakesOnlyDrainedOrDownNodes) {
  auto st = make_state();
  const Caller root{0, 0, "root", true};
  v1::UpdateNodeRequest req;
  req.set_nodes("c1");
  req.set_state("RESUME");
  Effects e;
  auto idle = st->update_node(root, req, 1000, e);
  ASSERT_FALSE(idle);
  EXPECT_EQ(idle.error().message, "Invalid node state specified");
  req.set_state("DRAIN");
  req.set_reason("disk");
  ASSERT_TRUE(st->update_node(root, req, 1000, e));
  req.set_nodes("c[1-2]");
  req.set_state("RESUME");
  req.clear_reason();
  auto some = st->update_node(root, req, 1001, e);
  ASSERT_TRUE(some);
  EXPECT_EQ(some->updated, (std::vector<std::string>{"c1"}));
  EXPECT_EQ(some->not_resumable, (std::vector<std::string>{"c2"}));
  EXPECT_EQ(st->node_infos(1001)[0].reason(), "");
}

// scontrol show partition: a partition shows its own DefMemPerCPU; under
// only a global one it reads DefMemPerNode=UNLIMITED, as Slurm's.
TEST(ControllerState, PartitionsShowTheirOwnMemoryDefaults) {
  auto st = make_state("PartitionName=big Nodes=c[1-2] DefMemPerCPU=2048\n");
  std::map<std::string, int64_t> def;
  for (const auto& p : st->partitions()) def[p.name()] = p.def_mem_per_cpu_mb();
  EXPECT_EQ(def["cpu"], 0) << "the global DefMemPerCPU=100 is not the partition's";
  EXPECT_EQ(def["big"], 2048);
}

// scontrol show node / sinfo -O GresUsed, as Slurm's: a node's AllocTRES has
// no billing (its CfgTRES has), and a node without GRES shows "gpu:0" used
// when GresTypes=gpu.
TEST(ControllerState, NodeUsageShowsWhatSlurmsDoes) {
  auto st = wide_job_and_one_behind(core::PassKind::kQuick);  // job 1 holds c1 and c2
  for (const auto& n : st->node_infos(1003)) {
    if (n.name() != "c1") continue;
    EXPECT_EQ(n.alloc_tres().count("billing"), 0u);
    EXPECT_EQ(n.alloc_tres().at("cpu"), 4);
    ASSERT_EQ(n.gres_used_size(), 1);
    EXPECT_EQ(n.gres_used(0).name(), "gpu");
    EXPECT_EQ(n.gres_used(0).count(), 0);
    EXPECT_EQ(n.cfg_tres().at("billing"), 4);
  }
}

// scontrol -d show job: a running job's GRES in all and what it holds per
// run of nodes alike; only detailed queries carry them, and never for a
// pending job.
TEST(ControllerState, DetailedDisplayListsWhatARunningJobHoldsPerNode) {
  auto st = make_state("NodeName=g2 CPUs=8 RealMemory=8000 Gres=gpu:h100:2 Feature=h100 ThreadsPerCore=2 "
                       "CoresPerSocket=4 Sockets=1\nPartitionName=gpu2 Nodes=g2\n");
  register_all(*st, 1000, {"g2"});
  Effects fx;
  v1::JobDescriptor gpu = wrap("sleep 60");
  gpu.add_partitions("gpu");
  gpu.add_gres("gpu:2");
  gpu.set_cpus_per_task(3);
  ASSERT_TRUE(st->submit(user(1000, "alice"), gpu, false, 1000, fx));
  v1::JobDescriptor cpus = wrap("sleep 60");
  cpus.set_min_nodes(2);
  cpus.set_ntasks(4);
  cpus.set_ntasks_per_node(2);  // without it the first node would take 3 tasks
  ASSERT_TRUE(st->submit(user(1000, "alice"), cpus, false, 1000, fx));
  v1::JobDescriptor smt = wrap("sleep 60");
  smt.add_partitions("gpu2");
  smt.set_ntasks(3);
  ASSERT_TRUE(st->submit(user(1000, "alice"), smt, false, 1000, fx));
  v1::JobDescriptor waits = wrap("sleep 60");
  waits.add_partitions("gpu");
  waits.add_gres("gpu:1");
  ASSERT_TRUE(st->submit(user(1000, "alice"), waits, false, 1000, fx));
  st->schedule(core::PassKind::kQuick, 1001, fx);

  v1::JobDisplay g = st->job_for_display(st->jobs().at(1), true, true, 1002).display();
  EXPECT_EQ(g.job_gres(), "gpu:h100:2");
  ASSERT_EQ(g.node_detail_size(), 1);
  EXPECT_EQ(g.node_detail(0).nodes(), "g1");
  // The node's CPU ids of the cores the allocation took (the core picks them).
  auto ids_of = [](const v1::NodeTake& t, int threads) {
    std::vector<int64_t> ids;
    for (int32_t c : t.cores())
      for (int k = 0; k < threads; ++k) ids.push_back(int64_t{c} * threads + k);
    std::sort(ids.begin(), ids.end());
    return compress_ranges(ids);
  };
  ASSERT_EQ(st->jobs().at(1).rec.alloc().nodes(0).cores_size(), 3);
  EXPECT_EQ(g.node_detail(0).cpu_ids(), ids_of(st->jobs().at(1).rec.alloc().nodes(0), 1));
  EXPECT_EQ(g.node_detail(0).mem_mb(), 300);
  EXPECT_EQ(g.node_detail(0).gres(), "gpu:h100:2(IDX:0-1)");

  v1::JobDisplay c = st->job_for_display(st->jobs().at(2), true, true, 1002).display();
  EXPECT_EQ(c.job_gres(), "");
  ASSERT_EQ(c.node_detail_size(), 1) << "c1 and c2 hold the same: one line";
  EXPECT_EQ(c.node_detail(0).nodes(), "c[1-2]");
  EXPECT_EQ(c.node_detail(0).cpu_ids(), ids_of(st->jobs().at(2).rec.alloc().nodes(0), 1));
  EXPECT_EQ(c.node_detail(0).cpu_ids(), ids_of(st->jobs().at(2).rec.alloc().nodes(1), 1));
  EXPECT_EQ(c.node_detail(0).gres(), "");

  // Two threads per core: whole cores, each core's CPUs numbered together.
  v1::JobDisplay t = st->job_for_display(st->jobs().at(3), true, true, 1002).display();
  ASSERT_EQ(t.node_detail_size(), 1);
  ASSERT_EQ(st->jobs().at(3).rec.alloc().nodes(0).cores_size(), 2) << "3 CPUs are 2 whole cores";
  EXPECT_EQ(t.node_detail(0).cpu_ids(), ids_of(st->jobs().at(3).rec.alloc().nodes(0), 2));
  int64_t listed = 0;
  for (const auto& r : split(t.node_detail(0).cpu_ids(), ',')) {
    auto dash = r.find('-');
    listed += dash == std::string::npos ? 1 : std::stoll(r.substr(dash + 1)) - std::stoll(r.substr(0, dash)) + 1;
  }
  EXPECT_EQ(listed, 4) << t.node_detail(0).cpu_ids();

  EXPECT_EQ(st->job_for_display(st->jobs().at(4), true, true, 1002).display().node_detail_size(), 0) << "pending";
  EXPECT_EQ(st->job_for_display(st->jobs().at(1), false, false, 1002).display().node_detail_size(), 0) << "not asked";
}

// scontrol reconfigure: what the running state can take is applied (the
// next pass plans with it); what the agents or the sockets started with is
// refused whole, naming each difference, and nothing changes.
Result<std::vector<std::string>> reconfigure_to(ControllerState& st, const std::string& conf, Effects& fx) {
  config::ClusterConfig cfg = config::parse_slurm_conf_text(conf, "test.conf");
  auto settings = settings_from_config(cfg, "test.conf");
  EXPECT_TRUE(settings) << settings.error().message;
  return st.reconfigure(std::move(cfg), std::move(*settings), 2000, fx);
}

TEST(ControllerState, ReconfigureAppliesPartitionsFeaturesAndSettings) {
  auto st = make_state();
  register_all(*st, 1000);
  Effects fx;
  v1::JobDescriptor running = wrap("sleep 60");
  running.set_min_nodes(2);
  ASSERT_TRUE(st->submit(user(1000, "alice"), running, false, 1000, fx));
  st->schedule(core::PassKind::kQuick, 1001, fx);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  v1::JobDescriptor long_job = wrap("true");
  long_job.set_time_limit_s(2 * 3600);
  ASSERT_TRUE(st->submit(user(1000, "alice"), long_job, false, 1001, fx));
  st->schedule(core::PassKind::kFull, 1002, fx);
  EXPECT_EQ(st->jobs().at(2).rec.state(), v1::PENDING);
  EXPECT_EQ(st->jobs().at(2).rec.reason(), "PartitionTimeLimit");
  v1::JobDescriptor fresh = wrap("true");
  fresh.add_partitions("debug");
  v1::JobDescriptor a100 = wrap("true");
  a100.add_partitions("gpu");
  a100.set_constraint("a100");
  Effects refused;
  EXPECT_FALSE(st->submit(user(1000, "alice"), fresh, false, 1002, refused)) << "no debug partition yet";
  EXPECT_FALSE(st->submit(user(1000, "alice"), a100, false, 1002, refused)) << "no node has a100 yet";

  std::string conf = kConf;
  conf.replace(conf.find("Feature=h100"), 12, "Feature=a100");
  conf.replace(conf.find("MinJobAge=600"), 13, "MinJobAge=900");
  conf.replace(conf.find("MaxTime=1:00:00"), 15, "MaxTime=3:00:00");
  conf += "PartitionName=debug Nodes=c1 MaxTime=30\n";
  Effects rfx;
  auto changes = reconfigure_to(*st, conf, rfx);
  ASSERT_TRUE(changes) << changes.error().message;
  EXPECT_TRUE(rfx.reschedule);
  std::string said = join(*changes, "\n");
  EXPECT_NE(said.find("PartitionName=debug added"), std::string::npos) << said;
  EXPECT_NE(said.find("NodeName=g1: Features h100 -> a100"), std::string::npos) << said;
  EXPECT_EQ(st->settings().min_job_age_s, 900);
  EXPECT_EQ(st->config_time(), 2000) << "scontrol show config: Configuration data as of the reconfigure";

  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING) << "a running job keeps its allocation";
  for (const auto& n : st->node_infos(2000)) {
    if (n.name() == "c1" || n.name() == "c2") {
      EXPECT_GT(n.alloc_cpus(), 0) << n.name();
    }
  }
  Effects after;
  heard_all(*st, 2001);
  st->schedule(core::PassKind::kFull, 2001, after);
  EXPECT_EQ(st->jobs().at(2).rec.state(), v1::RUNNING) << "the cpu partition's MaxTime is 3 hours now";
  EXPECT_TRUE(st->submit(user(1000, "alice"), fresh, false, 2001, after)) << "the debug partition exists";
  EXPECT_TRUE(st->submit(user(1000, "alice"), a100, false, 2001, after)) << "g1 has the a100 feature";
}

TEST(ControllerState, ReconfigureRefusesWhatNeedsARestartAndChangesNothing) {
  auto st = make_state();
  register_all(*st, 1000);
  Effects fx;
  v1::JobDescriptor waiting = wrap("true");
  waiting.add_partitions("gpu");
  waiting.set_hold(true);
  ASSERT_TRUE(st->submit(user(1000, "alice"), waiting, false, 1000, fx));

  std::string conf = kConf;
  conf.replace(conf.find("NodeName=c[1-2] CPUs=4"), 22, "NodeName=c[1-2] CPUs=8");
  conf.replace(conf.find("PartitionName=gpu Nodes=g1\n"), 26, "");
  conf += "NodeName=c3 CPUs=4 RealMemory=4000\n";
  Effects rfx;
  auto changes = reconfigure_to(*st, conf, rfx);
  ASSERT_FALSE(changes);
  const std::string& why = changes.error().message;
  EXPECT_NE(why.find("the node list changed (added: c3; removed: none)"), std::string::npos) << why;
  EXPECT_NE(why.find("PartitionName=gpu is gone, but job 1 (pending) is in it"), std::string::npos) << why;
  EXPECT_NE(why.find("drover down; drover up"), std::string::npos) << why;
  EXPECT_TRUE(rfx.batch.empty());
  EXPECT_GE(st->bridge().find_partition("gpu"), 0) << "the running configuration stays";

  // Without the added node: a node's CPUs are what its agent started with.
  conf.replace(conf.find("NodeName=c3 CPUs=4 RealMemory=4000\n"), 35, "");
  auto cpus = reconfigure_to(*st, conf, rfx);
  ASSERT_FALSE(cpus);
  EXPECT_NE(cpus.error().message.find("NodeName=c1: CPUs 4 -> 8"), std::string::npos) << cpus.error().message;
  EXPECT_NE(cpus.error().message.find("NodeName=c2: CPUs 4 -> 8"), std::string::npos) << cpus.error().message;
  EXPECT_EQ(st->bridge().cluster().nodes[0].cpus, 4);

  // What the agents read when they start: KillWait, the task and process
  // tracking plugins, DisableRootJobs.
  auto agents = reconfigure_to(*st, std::string(kConf) + "KillWait=60\nTaskPlugin=task/cgroup\nDisableRootJobs=NO\n", rfx);
  ASSERT_FALSE(agents);
  for (const char* line : {"KillWait 30 -> 60", "TaskPlugin (none) -> task/cgroup", "DisableRootJobs (none) -> NO"}) {
    EXPECT_NE(agents.error().message.find(line), std::string::npos) << agents.error().message;
  }
  EXPECT_TRUE(rfx.batch.empty());
}

// scontrol update PartitionName=: operators change a partition while the
// cluster runs; the change is durable (one meta value) and laid over
// slurm.conf again at a restart and at a reconfigure.
// A request naming `name` with Key=Value settings (scontrol's words): the
// partition and reservation changes share the shape.
template <class Request>
Request named_settings(const std::string& name, const std::vector<std::pair<std::string, std::string>>& kv) {
  Request req;
  req.set_name(name);
  for (const auto& [k, v] : kv) {
    auto* s = req.add_settings();
    s->set_key(k);
    s->set_value(v);
  }
  return req;
}

v1::UpdatePartitionRequest partition_update(const std::string& name,
                                            const std::vector<std::pair<std::string, std::string>>& kv) {
  return named_settings<v1::UpdatePartitionRequest>(name, kv);
}

// The text value a batch stores under a meta key.
std::string stored_meta(const Effects& fx, const char* key) {
  for (const auto& m : fx.batch.mutations) {
    if (const auto* meta = std::get_if<store::SetMeta>(&m); meta && meta->key == key) {
      return std::get<std::string>(meta->value);
    }
  }
  return "(not stored)";
}

std::string stored_partition_updates(const Effects& fx) { return stored_meta(fx, kPartitionUpdatesMeta); }

TEST(ControllerState, PartitionUpdatesApplyAtOnceAndOutliveRestartsAndReconfigure) {
  auto st = make_state();
  register_all(*st, 1000);
  const Caller root{0, 0, "root", true};
  Effects fx;
  // Keys in any case, or abbreviated as scontrol allows ("MaxTim").
  ASSERT_TRUE(st->update_partition(root, partition_update("cpu", {{"state", "DOWN"}, {"MaxTim", "2:00:00"}}), 1000, fx));
  EXPECT_TRUE(fx.reschedule);
  EXPECT_EQ(stored_partition_updates(fx), "cpu\tState=DOWN\tMaxTime=2:00:00\n");
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("true"), false, 1001, fx));
  st->schedule(core::PassKind::kFull, 1002, fx);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::PENDING);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "PartitionDown");

  // Refusals change nothing.
  Effects no;
  EXPECT_FALSE(st->update_partition(user(1000, "alice"), partition_update("cpu", {{"State", "UP"}}), 1003, no));
  auto unknown = st->update_partition(root, partition_update("nosuch", {{"State", "UP"}}), 1003, no);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "Invalid partition name specified");
  auto typo = st->update_partition(root, partition_update("cpu", {{"State", "UP"}, {"MaxTme", "10"}}), 1003, no);
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().message.find("did you mean MaxTime?"), std::string::npos) << typo.error().message;
  EXPECT_NE(typo.error().message.find("nothing was changed"), std::string::npos) << typo.error().message;
  EXPECT_TRUE(no.batch.empty());
  EXPECT_EQ(st->config().find_partition("cpu")->state, "DOWN");

  // Default=YES moves the default partition; the old one is recorded as Default=NO.
  Effects d;
  ASSERT_TRUE(st->update_partition(root, partition_update("gpu", {{"Default", "YES"}}), 1004, d));
  EXPECT_EQ(stored_partition_updates(d), "cpu\tState=DOWN\tMaxTime=2:00:00\tDefault=NO\ngpu\tDefault=YES\n");
  EXPECT_EQ(st->bridge().default_partition(), st->bridge().find_partition("gpu"));

  // A restarted controller reads slurm.conf, then the stored updates.
  auto again = make_state();
  auto notes = again->restore_partition_updates(stored_partition_updates(d));
  ASSERT_TRUE(notes);
  EXPECT_TRUE(notes->empty());
  EXPECT_EQ(again->config().find_partition("cpu")->state, "DOWN");
  EXPECT_EQ(again->config().find_partition("cpu")->max_time, 7200);
  EXPECT_EQ(again->bridge().default_partition(), again->bridge().find_partition("gpu"));
  // Updates slurm.conf no longer takes are dropped with a note; the rest apply.
  auto other = make_state();
  auto dropped = other->restore_partition_updates("gone\tState=DOWN\ncpu\tNodes=c9\ngpu\tMaxTime=10\n");
  ASSERT_TRUE(dropped);
  ASSERT_EQ(dropped->size(), 2u);
  EXPECT_NE((*dropped)[0].find("PartitionName=cpu dropped"), std::string::npos) << (*dropped)[0];
  EXPECT_NE((*dropped)[0].find("node c9 is not in slurm.conf"), std::string::npos) << (*dropped)[0];
  EXPECT_NE((*dropped)[1].find("PartitionName=gone dropped: slurm.conf has no such partition"), std::string::npos);
  EXPECT_EQ(other->config().find_partition("gpu")->max_time, 600);
  EXPECT_EQ(other->partition_updates_text(), "gpu\tMaxTime=10\n");

  // A reconfigure keeps them. DRAIN (as in Slurm) refuses new jobs but
  // runs the queued ones; INACTIVE refuses new jobs too.
  Effects r;
  ASSERT_TRUE(reconfigure_to(*st, kConf, r));
  EXPECT_EQ(st->config().find_partition("cpu")->state, "DOWN");
  Effects drain;
  ASSERT_TRUE(st->update_partition(root, partition_update("cpu", {{"State", "DRAIN"}}), 2001, drain));
  EXPECT_EQ(stored_partition_updates(drain), "cpu\tState=DRAIN\tMaxTime=2:00:00\tDefault=NO\ngpu\tDefault=YES\n");
  v1::JobDescriptor to_cpu = wrap("true");
  to_cpu.add_partitions("cpu");
  auto refused = st->submit(user(1000, "alice"), to_cpu, false, 2001, drain);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("Required partition not available (inactive or drain)"), std::string::npos)
      << refused.error().message;
  heard_all(*st, 2002);
  st->schedule(core::PassKind::kFull, 2002, drain);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING) << "a job queued before the drain runs";
  Effects inactive;
  ASSERT_TRUE(st->update_partition(root, partition_update("cpu", {{"State", "INACTIVE"}}), 2003, inactive));
  EXPECT_FALSE(st->submit(user(1000, "alice"), to_cpu, false, 2003, inactive));
  ASSERT_TRUE(st->update_partition(root, partition_update("cpu", {{"State", "UP"}}), 2004, inactive));
  EXPECT_TRUE(st->submit(user(1000, "alice"), to_cpu, false, 2004, inactive));
}

// scontrol create / delete PartitionName=: a partition made or removed while
// the cluster runs, durable in the same meta value as updates ("+NAME" a
// created partition with its settings, "-NAME" a deleted slurm.conf one)
// and laid over slurm.conf at a restart. A partition with a pending or
// running job in it cannot be deleted.
v1::UpdatePartitionRequest partition_change(v1::PartitionAction action, const std::string& name,
                                            const std::vector<std::pair<std::string, std::string>>& kv = {}) {
  v1::UpdatePartitionRequest req = partition_update(name, kv);
  req.set_action(action);
  return req;
}

TEST(ControllerState, PartitionsCreatedAndDeletedByScontrolAreDurable) {
  auto st = make_state();
  register_all(*st, 1000);
  const Caller root{0, 0, "root", true};
  Effects fx;
  ASSERT_TRUE(st->update_partition(root, partition_change(v1::PARTITION_CREATE, "night", {{"Nodes", "c2"}, {"MaxTime", "30"}}),
                                   1000, fx));
  EXPECT_TRUE(fx.reschedule);
  EXPECT_EQ(stored_partition_updates(fx), "+night\tNodes=c2\tMaxTime=30\n");
  ASSERT_EQ(st->config().partitions.size(), 3u);
  EXPECT_EQ(st->config().partitions.back().name, "night");
  EXPECT_EQ(st->config().partitions.back().max_time, 1800);
  EXPECT_GE(st->bridge().find_partition("night"), 0);

  // Refusals change nothing.
  Effects no;
  auto exists = st->update_partition(root, partition_change(v1::PARTITION_CREATE, "cpu"), 1001, no);
  ASSERT_FALSE(exists);
  EXPECT_EQ(exists.error().message, "Invalid partition name specified");
  auto plain = st->update_partition(user(1000, "alice"), partition_change(v1::PARTITION_CREATE, "mine"), 1001, no);
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().message.rfind("Invalid user id", 0), 0u) << plain.error().message;
  auto bad_node = st->update_partition(root, partition_change(v1::PARTITION_CREATE, "x", {{"Nodes", "c9"}}), 1001, no);
  ASSERT_FALSE(bad_node);
  EXPECT_NE(bad_node.error().message.find("node c9 is not in slurm.conf"), std::string::npos);
  auto gone = st->update_partition(root, partition_change(v1::PARTITION_DELETE, "nosuch"), 1001, no);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().message, "Invalid partition name specified");
  EXPECT_FALSE(st->update_partition(user(1000, "alice"), partition_change(v1::PARTITION_DELETE, "gpu"), 1001, no));
  EXPECT_TRUE(no.batch.empty());
  EXPECT_EQ(st->config().partitions.size(), 3u);

  // A pending job keeps its partition from being deleted.
  v1::JobDescriptor to_night = wrap("true");
  to_night.add_partitions("night");
  ASSERT_TRUE(st->submit(user(1000, "alice"), to_night, false, 1002, no));
  auto in_use = st->update_partition(root, partition_change(v1::PARTITION_DELETE, "night"), 1003, no);
  ASSERT_FALSE(in_use);
  EXPECT_EQ(in_use.error().message, "Partition is in use");

  // slurm.conf's gpu goes; a created partition that is deleted leaves no trace.
  Effects del;
  ASSERT_TRUE(st->update_partition(root, partition_change(v1::PARTITION_DELETE, "gpu"), 1004, del));
  ASSERT_TRUE(st->update_partition(root, partition_change(v1::PARTITION_CREATE, "spare", {{"Nodes", "g1"}}), 1004, del));
  ASSERT_TRUE(st->update_partition(root, partition_change(v1::PARTITION_DELETE, "spare"), 1004, del));
  EXPECT_EQ(st->config().find_partition("gpu"), nullptr);
  EXPECT_EQ(st->config().find_partition("spare"), nullptr);
  const std::string stored = stored_partition_updates(del);
  EXPECT_EQ(stored, "-gpu\n+night\tNodes=c2\tMaxTime=30\n");

  // A restarted controller reads slurm.conf, then what scontrol changed.
  auto again = make_state();
  auto notes = again->restore_partition_updates(stored);
  ASSERT_TRUE(notes);
  EXPECT_TRUE(notes->empty());
  EXPECT_EQ(again->config().find_partition("gpu"), nullptr);
  ASSERT_NE(again->config().find_partition("night"), nullptr);
  EXPECT_EQ(again->config().find_partition("night")->nodes, std::vector<std::string>{"c2"});
  EXPECT_EQ(again->partition_updates_text(), stored);
  // A slurm.conf that now defines the created partition wins, with a note.
  auto defined = make_state("PartitionName=night Nodes=c1\n");
  auto dropped = defined->restore_partition_updates(stored);
  ASSERT_TRUE(dropped);
  ASSERT_EQ(dropped->size(), 1u);
  EXPECT_NE((*dropped)[0].find("scontrol create of PartitionName=night dropped"), std::string::npos) << (*dropped)[0];
  EXPECT_EQ(defined->config().find_partition("night")->nodes, std::vector<std::string>{"c1"});
  EXPECT_EQ(defined->partition_updates_text(), "-gpu\n");
}

v1::ChangeReservationRequest resv_change(v1::ReservationAction action, const std::string& name,
                                        const std::vector<std::pair<std::string, std::string>>& kv = {}) {
  auto req = named_settings<v1::ChangeReservationRequest>(name, kv);
  req.set_action(action);
  return req;
}

const Job& job(const ControllerState& st, int64_t id) { return st.jobs().at(id); }

// scontrol create reservation: c1 from 4600 to 8200 for user nobody. A job
// outside it that would run into the window waits for its end; a shorter
// one starts now; the reservation's own job waits for its start
// (Reason=Reservation) and then runs on c1 only. Refusals change nothing;
// the reservations outlive a restart and leave at their end.
TEST(ControllerState, ReservationsHoldTheirNodesOverTheirWindow) {
  auto st = make_state("PartitionName=long Nodes=c[1-2] MaxTime=UNLIMITED\n");
  register_all(*st, 1000);
  const Caller root{0, 0, "root", true};
  Effects fx;
  auto made = st->change_reservation(root, resv_change(v1::RESERVATION_CREATE, "",
                                                        {{"StartTime", "now+3600"}, {"Duration", "60"},
                                                         {"Nodes", "c1"}, {"Users", "nobody"}}),
                                     1000, fx);
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(*made, "nobody_1");
  EXPECT_TRUE(fx.reschedule);
  EXPECT_EQ(stored_meta(fx, kReservationsMeta), "nobody_1\t4600\t8200\tc1\tnobody\t\tSPEC_NODES\t\t1\n");
  auto infos = st->reservation_infos(1000);
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_FALSE(infos[0].active());
  EXPECT_EQ(infos[0].cpu_count(), 4);

  // Refusals, in Slurm's words, change nothing.
  Effects no;
  auto words = [&](std::vector<std::pair<std::string, std::string>> kv, const Caller& who = Caller{0, 0, "root", true}) {
    auto r = st->change_reservation(who, resv_change(v1::RESERVATION_CREATE, "", std::move(kv)), 1000, no);
    return r ? std::string("accepted") : r.error().message.substr(0, r.error().message.find('\n'));
  };
  EXPECT_EQ(words({{"Duration", "5"}, {"Nodes", "c2"}, {"Users", "root"}}), "A start time must be given.");
  EXPECT_EQ(words({{"StartTime", "now"}, {"Nodes", "c2"}, {"Users", "root"}}),
            "An end time or duration must be given.");
  EXPECT_EQ(words({{"StartTime", "now"}, {"Duration", "5"}, {"Nodes", "c2"}}),
            "Either Users/Groups and/or Accounts must be specified.");
  EXPECT_EQ(words({{"StartTime", "now"}, {"Duration", "5"}, {"Nodes", "c9"}, {"Users", "root"}}),
            "Invalid node name specified");
  EXPECT_EQ(words({{"StartTime", "now+3000"}, {"Duration", "20"}, {"Nodes", "c1"}, {"Users", "root"}}),
            "Requested reservation overlaps with another reservation");
  EXPECT_EQ(words({{"StartTime", "now"}, {"Duration", "5"}, {"Nodes", "c2"}, {"Users", "root"}, {"Flags", "BOGUS"}}),
            "Error parsing flags BOGUS.");
  EXPECT_EQ(words({{"StartTime", "now"}, {"Duration", "5"}, {"Nodes", "c2"}, {"Users", "root"}}, user(1000, "alice")),
            kInvalidUserId);  // Slurm 22.05's words for a user's (anchor cluster)
  EXPECT_EQ(words({{"StartTime", "now"}, {"EndTime", "now"}, {"Nodes", "c2"}, {"Users", "root"}}),
            "Invalid time specified");
  EXPECT_TRUE(no.batch.empty());
  EXPECT_EQ(st->reservations().size(), 1u);

  // Outside the reservation: two 2-hour jobs for the two cpu nodes; one
  // runs on c2, the other waits for the window's end; a 30-minute one
  // fits on c1 before the window.
  v1::JobDescriptor two_hours = wrap("sleep 1");
  two_hours.set_time_limit_s(7200);
  two_hours.add_partitions("long");
  two_hours.set_exclusive(true);
  v1::JobDescriptor half = wrap("sleep 1");
  half.set_time_limit_s(1800);
  half.set_exclusive(true);
  ASSERT_TRUE(st->submit(user(1000, "alice"), two_hours, false, 1000, fx));  // job 1
  ASSERT_TRUE(st->submit(user(1000, "alice"), two_hours, false, 1000, fx));  // job 2
  ASSERT_TRUE(st->submit(user(1000, "alice"), half, false, 1000, fx));       // job 3
  v1::JobDescriptor inside = wrap("sleep 1");
  inside.set_reservation("nobody_1");
  inside.set_exclusive(true);
  // Only its users (or accounts) may submit to it; an unknown one is invalid.
  auto denied = st->submit(user(1000, "alice"), inside, false, 1000, no);
  ASSERT_FALSE(denied);
  EXPECT_NE(denied.error().message.find("Access denied to requested reservation"), std::string::npos);
  v1::JobDescriptor unknown = inside;
  unknown.set_reservation("nosuch");
  auto invalid = st->submit(user(65534, "nobody"), unknown, false, 1000, no);
  ASSERT_FALSE(invalid);
  EXPECT_NE(invalid.error().message.find("Requested reservation is invalid"), std::string::npos);
  ASSERT_TRUE(st->submit(user(65534, "nobody"), inside, false, 1000, fx));  // job 4
  Effects run;
  st->schedule(core::PassKind::kFull, 1000, run);
  EXPECT_EQ(job(*st, 1).rec.state(), v1::RUNNING);
  EXPECT_EQ(job(*st, 1).rec.batch_host(), "c2");
  EXPECT_EQ(job(*st, 2).rec.state(), v1::PENDING);
  EXPECT_EQ(job(*st, 2).planned_start, 8200);
  EXPECT_EQ(job(*st, 3).rec.state(), v1::RUNNING);  // 30 minutes on c1 end before 4600
  EXPECT_EQ(job(*st, 3).rec.batch_host(), "c1");
  EXPECT_EQ(job(*st, 4).rec.state(), v1::PENDING);
  EXPECT_EQ(job(*st, 4).rec.reason(), "Reservation");
  // The reservation is in use: it cannot be deleted.
  auto in_use = st->change_reservation(root, resv_change(v1::RESERVATION_DELETE, "nobody_1"), 1000, no);
  ASSERT_FALSE(in_use);
  EXPECT_EQ(in_use.error().message, "Requested reservation is in use");

  // A restarted controller has it back, and the counter that names the next.
  const std::string stored = st->reservations_text();
  auto again = make_state("PartitionName=long Nodes=c[1-2] MaxTime=UNLIMITED\n");
  register_all(*again, 1000);
  EXPECT_TRUE(again->restore_reservations(stored, 1).empty());
  EXPECT_EQ(again->reservations_text(), stored);
  Effects next;
  auto second = again->change_reservation(
      root, resv_change(v1::RESERVATION_CREATE, "", {{"StartTime", "now"}, {"Duration", "5"}, {"NodeCnt", "1"},
                                                     {"PartitionName", "gpu"}, {"Users", "root"}, {"Flags", "MAINT"}}),
      1000, next);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(*second, "root_2");
  // An update's NodeCnt= keeps the nodes it has and adds free ones of its partition: gpu has no second.
  Effects resized;
  auto same = again->change_reservation(root, resv_change(v1::RESERVATION_UPDATE, "root_2", {{"NodeCnt", "1"}}),
                                        1000, resized);
  EXPECT_TRUE(same) << same.error().message;
  auto grown = again->change_reservation(root, resv_change(v1::RESERVATION_UPDATE, "root_2", {{"NodeCnt", "2"}}),
                                         1000, resized);
  ASSERT_FALSE(grown);
  EXPECT_EQ(grown.error().message, "Requested nodes are busy");
  Effects year;
  auto unlimited = again->change_reservation(
      root, resv_change(v1::RESERVATION_CREATE, "",
                        {{"StartTime", "now"}, {"Duration", "UNLIMITED"}, {"Nodes", "c2"}, {"Users", "root"}}),
      1000, year);
  ASSERT_TRUE(unlimited) << unlimited.error().message;
  EXPECT_EQ(again->reservations().at(*unlimited).end, 1000 + 365 * 86400);
  // Listed in the order created, as Slurm lists them (root_2 starts before nobody_1).
  auto listed = again->reservation_infos(1000);
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].name(), "nobody_1");
  EXPECT_EQ(listed[1].name(), "root_2");
  EXPECT_EQ(listed[2].name(), *unlimited);
  auto nodes = again->node_infos(1000);
  for (const auto& n : nodes) {
    EXPECT_EQ(n.reserved(), n.name() == "g1" || n.name() == "c2") << n.name();
    EXPECT_EQ(n.maint(), n.name() == "g1") << n.name();
  }

  // At its start the reservation's job runs, on c1 (job 3 ended at 2800).
  Effects end3;
  v1::NodeReport done = report("c1");
  *done.add_steps() = step(3, true, "COMPLETED");
  ASSERT_TRUE(st->node_report(done, false, 2800, end3));
  Effects at_start;
  for (const char* n : {"c1", "c2", "g1"}) ASSERT_TRUE(st->node_report(report(n), false, 4600, at_start));
  at_start.reschedule = false;
  st->housekeeping(4600, at_start);
  EXPECT_TRUE(at_start.reschedule);
  st->schedule(core::PassKind::kFull, 4600, at_start);
  EXPECT_EQ(job(*st, 4).rec.state(), v1::RUNNING) << job(*st, 4).rec.reason() << " " << job(*st, 4).planned_start;
  EXPECT_EQ(job(*st, 4).rec.batch_host(), "c1");
  EXPECT_EQ(job(*st, 4).rec.desc().reservation(), "nobody_1");
  // At its end it leaves (durably); its job runs on.
  Effects at_end;
  for (const char* n : {"c1", "c2", "g1"}) ASSERT_TRUE(st->node_report(report(n), false, 8200, at_end));
  st->housekeeping(8200, at_end);
  EXPECT_TRUE(st->reservations().empty());
  EXPECT_EQ(stored_meta(at_end, kReservationsMeta), "");
  EXPECT_EQ(job(*st, 4).rec.state(), v1::RUNNING);
}

// What Slurm 22.05 answered on the anchor cluster: NodeCnt= without a
// partition takes (and shows) the default partition's nodes; a name in use
// is a duplicate once the nodes are free, an overlap while not; a MAINT
// reservation may overlap another and be overlapped; under
// AccountingStorageEnforce a user without an association is refused.
TEST(ControllerState, ReservationsNameOverlapAndMembersAsSlurms) {
  auto st = make_state();
  register_all(*st, 1000);
  const Caller root{0, 0, "root", true};
  Effects fx;
  auto create = [&](std::vector<std::pair<std::string, std::string>> kv) {
    kv.insert(kv.begin(), {{"StartTime", "now"}, {"Duration", "60"}, {"Users", "nobody"}});
    auto r = st->change_reservation(root, resv_change(v1::RESERVATION_CREATE, "", std::move(kv)), 1000, fx);
    return r ? *r : r.error().message.substr(0, r.error().message.find('\n'));
  };
  EXPECT_EQ(create({{"ReservationName", "a"}, {"Nodes", "c1"}}), "a");
  EXPECT_EQ(create({{"ReservationName", "b"}, {"NodeCnt", "1"}}), "b");
  EXPECT_EQ(st->reservations().at("b").partition, "cpu");
  ASSERT_EQ(st->reservations().at("b").nodes.size(), 1u);
  EXPECT_EQ(st->node_infos(1000)[static_cast<size_t>(st->reservations().at("b").nodes[0])].name(), "c2");
  EXPECT_EQ(create({{"ReservationName", "a"}, {"Nodes", "c1"}}), "Requested reservation overlaps with another reservation");
  EXPECT_EQ(create({{"ReservationName", "a"}, {"Nodes", "g1"}}), "Duplicate reservation name");
  EXPECT_EQ(create({{"ReservationName", "m"}, {"Nodes", "c1"}, {"Flags", "MAINT"}}), "m");
  EXPECT_EQ(create({{"ReservationName", "n"}, {"Nodes", "g1"}, {"Flags", "MAINT"}}), "n");
  EXPECT_EQ(create({{"ReservationName", "o"}, {"Nodes", "g1"}}), "o");
  EXPECT_EQ(create({{"ReservationName", "p"}, {"Nodes", "c[1-2]"}}), "Requested reservation overlaps with another reservation");

  auto enforced = make_state("AccountingStorageEnforce=associations\n");
  register_all(*enforced, 1000);
  auto r = enforced->change_reservation(
      root, resv_change(v1::RESERVATION_CREATE, "", {{"StartTime", "now"}, {"Duration", "60"}, {"Users", "nobody"},
                                                     {"Nodes", "c1"}}),
      1000, fx);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "Invalid account or account/partition combination specified");
  EXPECT_TRUE(enforced->reservations().empty());
}

// A maintenance reservation over a partition's nodes: its jobs wait with
// Slurm's "Reserved for maintenance"; one that asked for a node of an
// active reservation with -w, "May be reserved for other job".
TEST(ControllerState, JobsKeptWaitingByAReservationSaySo) {
  auto st = make_state();
  register_all(*st, 1000);
  const Caller root{0, 0, "root", true};
  Effects fx;
  ASSERT_TRUE(st->change_reservation(root, resv_change(v1::RESERVATION_CREATE, "",
                                                       {{"ReservationName", "fix"}, {"StartTime", "now"},
                                                        {"Duration", "60"}, {"Nodes", "c[1-2]"}, {"Users", "root"},
                                                        {"Flags", "MAINT"}}),
                                     1000, fx));
  ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("true"), false, 1000, fx));  // job 1
  v1::JobDescriptor on_c1 = wrap("true");
  on_c1.set_nodelist("c1");
  ASSERT_TRUE(st->submit(user(1000, "alice"), on_c1, false, 1000, fx));  // job 2
  st->schedule(core::PassKind::kFull, 1000, fx);
  EXPECT_EQ(job(*st, 1).rec.state(), v1::PENDING);
  EXPECT_EQ(job(*st, 1).rec.reason(), "ReqNodeNotAvail, Reserved for maintenance");
  EXPECT_EQ(job(*st, 1).planned_start, 1000 + 3600);
  EXPECT_EQ(job(*st, 2).rec.reason(), "ReqNodeNotAvail, May be reserved for other job");
  auto nodes = st->node_infos(1000);
  EXPECT_TRUE(nodes[0].maint() && nodes[0].reserved());
  EXPECT_FALSE(nodes[2].reserved());  // g1
  // scontrol update JobId= Reservation=: checked as at submit.
  auto move = [&](const std::string& to) {
    v1::UpdateJobRequest req;
    req.add_targets()->set_job_id(1);
    (*req.mutable_fields())["Reservation"] = to;
    req.add_field_order("Reservation");
    Effects u;
    auto results = st->update(user(1000, "alice"), req, 1001, u);
    return results.size() == 1 && results[0].ok() ? std::string("ok") : results.at(0).error();
  };
  EXPECT_EQ(move("nosuch"), "Requested reservation is invalid");
  EXPECT_EQ(move("fix"), "Access denied to requested reservation");
  EXPECT_EQ(job(*st, 1).rec.desc().reservation(), "");
  EXPECT_EQ(move(""), "ok");
}

// --mail-type through the controller's transitions: the start mails
// Began, housekeeping the TIME_LIMIT_50 once, a requeue Requeued.
TEST(ControllerState, MailTypeMailsAtTheJobsTransitions) {
  auto st = make_state();
  register_all(*st, 1000);
  v1::JobDescriptor d = wrap("sleep 100");
  d.set_time_limit_s(100);
  d.set_mail_type("BEGIN,REQUEUE,TIME_LIMIT_50");
  d.set_requeue(true);
  Effects sub, start, early, half, again, rq;
  ASSERT_TRUE(st->submit(user(1000, "alice"), d, false, 1000, sub));
  EXPECT_TRUE(sub.mails.empty());
  st->schedule(core::PassKind::kFull, 1001, start);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  ASSERT_EQ(start.mails.size(), 1u);
  EXPECT_EQ(start.mails[0].subject, "Slurm Job_id=1 Name=wrap Began, Queued time 00:00:01");
  EXPECT_EQ(start.mails[0].recipient, "alice");
  st->housekeeping(1040, early);
  EXPECT_TRUE(early.mails.empty());
  st->housekeeping(1052, half);
  ASSERT_EQ(half.mails.size(), 1u);
  EXPECT_EQ(half.mails[0].subject, "Slurm Job_id=1 Name=wrap Reached 50% of time limit, Run time 00:00:51");
  st->housekeeping(1060, again);
  EXPECT_TRUE(again.mails.empty()) << "once per run";
  v1::ControlRequest requeue;
  requeue.set_action(v1::REQUEUE);
  requeue.add_targets()->set_job_id(1);
  ASSERT_EQ(st->control(user(1000, "alice"), requeue, 1061, rq).size(), 1u);
  ASSERT_EQ(rq.mails.size(), 1u) << "requeue";
  EXPECT_EQ(rq.mails[0].subject, "Slurm Job_id=1 Name=wrap Requeued, Run time 00:01:00");
}

// squeue --start and SchedNodeList show the full pass's plan: the quick
// passes that every event runs (an agent's heartbeat, a submission) plan
// nothing and leave it, as Slurm's main scheduler leaves the backfill's; a
// job that is then held loses it. A job that starts keeps its priority and
// the time of the pass that started it (scontrol show job: Priority=,
// LastSchedEval=).
TEST(ControllerState, QuickPassesKeepTheFullPassesPlan) {
  auto st = wide_job_and_one_behind(core::PassKind::kQuick);
  EXPECT_EQ(st->jobs().at(1).rec.last_sched_eval(), 1001);
  EXPECT_GT(st->jobs().at(1).rec.priority(), 0);
  Effects e1, e2, e3, e4;
  st->schedule(core::PassKind::kFull, 1003, e1);
  ASSERT_EQ(st->jobs().at(2).planned_start, 1001 + 1800);
  const std::string nodes = st->jobs().at(2).sched_nodes;
  ASSERT_FALSE(nodes.empty());
  EXPECT_EQ(st->jobs().at(2).rec.scheduler(), "Backfill:*") << "the golden's pending job planned by backfill";
  st->schedule(core::PassKind::kQuick, 1004, e2);
  EXPECT_EQ(st->jobs().at(2).planned_start, 1001 + 1800);
  EXPECT_EQ(st->jobs().at(2).sched_nodes, nodes);
  EXPECT_EQ(st->jobs().at(2).rec.reason(), "Resources");
  EXPECT_EQ(st->jobs().at(2).rec.scheduler(), "Backfill:*") << "the quick pass leaves the backfill's mark";
  v1::ControlRequest hold;
  hold.set_action(v1::HOLD);
  hold.add_targets()->set_job_id(2);
  ASSERT_EQ(st->control(user(1000, "alice"), hold, 1005, e3).size(), 1u);
  st->schedule(core::PassKind::kQuick, 1006, e4);
  EXPECT_EQ(st->jobs().at(2).planned_start, 0) << "held: no plan";
  EXPECT_EQ(st->jobs().at(2).sched_nodes, "");
  EXPECT_EQ(st->jobs().at(2).rec.scheduler(), "Main");
}

}  // namespace
}  // namespace drover::ctld

namespace drover::ctld {
namespace {

// scontrol show config: numbers of time keys carry Slurm's unit (golden
// scontrol_show_config.txt: "MinJobAge = 300 sec", "OverTimeLimit = 0 min"),
// whether the key is one the controller acts on or one it keeps as written.
// scontrol show config's keys and values.
std::map<std::string, std::string> config_of(const ControllerState& st) {
  std::map<std::string, std::string> v;
  for (const auto& e : st.config_entries()) v[e.key()] = e.value();
  return v;
}

TEST(ControllerState, ConfigEntriesCarrySlurmsUnits) {
  auto st = make_state("KillWait=30\nSlurmdTimeout=300\nSlurmctldTimeout=120\nInactiveLimit=0\nWaitTime=0\n"
                       "OverTimeLimit=UNLIMITED\nMessageTimeout=10\nSchedulerParameters=bf_interval=30\n");
  std::map<std::string, std::string> v = config_of(*st);
  EXPECT_EQ(v["MinJobAge"], "600 sec");
  EXPECT_EQ(v["KillWait"], "30 sec");
  EXPECT_EQ(v["SlurmdTimeout"], "300 sec");
  EXPECT_EQ(v["SlurmctldTimeout"], "120 sec");
  EXPECT_EQ(v["InactiveLimit"], "0 sec");
  EXPECT_EQ(v["WaitTime"], "0 sec");
  EXPECT_EQ(v["MessageTimeout"], "10 sec");
  EXPECT_EQ(v["OverTimeLimit"], "UNLIMITED") << "a word keeps no unit";
  EXPECT_EQ(v["SchedulerParameters"], "bf_interval=30") << "as written, no unit in a list";
  EXPECT_EQ(v["ClusterName"], "t");
  // Job mail's keys show their defaults, as Slurm's: the controller acts on them.
  EXPECT_EQ(v["MailProg"], "/bin/mail");
  EXPECT_EQ(v["MailDomain"], "(null)");
  std::map<std::string, std::string> w = config_of(*make_state("MailProg=/usr/bin/mail\nMailDomain=example.org\n"));
  EXPECT_EQ(w["MailProg"], "/usr/bin/mail");
  EXPECT_EQ(w["MailDomain"], "example.org");
  // So do the agents' site scripts (golden: "Prolog = (null)", "HealthCheckInterval = 0 sec").
  EXPECT_EQ(v["Prolog"], "(null)");
  EXPECT_EQ(v["Epilog"], "(null)");
  EXPECT_EQ(v["PrologEpilogTimeout"], "65534");
  EXPECT_EQ(v["HealthCheckProgram"], "(null)");
  EXPECT_EQ(v["HealthCheckInterval"], "0 sec");
  EXPECT_EQ(v["HealthCheckNodeState"], "ANY");
  std::map<std::string, std::string> s = config_of(*make_state("Prolog=/etc/slurm/prolog.sh\nHealthCheckInterval=300\n"));
  EXPECT_EQ(s["Prolog"], "/etc/slurm/prolog.sh");
  EXPECT_EQ(s["HealthCheckInterval"], "300 sec");
}

}  // namespace
}  // namespace drover::ctld


namespace drover::ctld {
namespace {

// scontrol top: operators (or owners with enable_user_top) put the named
// pending jobs first among their user's jobs of the same partition, account
// and QOS; the others keep their order, the set of priorities stays, and
// another user's job is not touched.
TEST(ControllerState, TopPutsTheNamedJobsFirstInTheirUsersQueue) {
  for (bool user_top : {false, true}) {
    auto st = make_state(user_top ? "SchedulerParameters=enable_user_top\n" : "PriorityType=priority/basic\n");
    register_all(*st, 1000);
    Effects fx;
    v1::JobDescriptor wide = wrap("sleep 100");
    wide.set_ntasks(8);
    ASSERT_TRUE(st->submit(user(1000, "alice"), wide, false, 1000, fx));
    Effects go;
    st->schedule(core::PassKind::kFull, 1001, go);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(st->submit(user(1000, "alice"), wrap("true"), false, 1002 + i, fx));
    ASSERT_TRUE(st->submit(user(1001, "bob"), wrap("true"), false, 1005, fx));
    v1::JobDescriptor held = wrap("true");
    held.set_hold(true);
    ASSERT_TRUE(st->submit(user(1000, "alice"), held, false, 1006, fx));  // job 6: priority 0 while held
    Effects cycle;
    st->schedule(core::PassKind::kFull, 1010, cycle);
    auto prio = [&](int64_t id) { return st->jobs().at(id).rec.priority(); };
    const int64_t p2 = prio(2), p3 = prio(3), p4 = prio(4), bob = prio(5);
    ASSERT_GE(p2, p3);
    ASSERT_GE(p3, p4);
    auto top = [&](const Caller& who, std::vector<int64_t> ids) {
      v1::ControlRequest req;
      req.set_action(v1::TOP);
      for (int64_t id : ids) {
        auto* t = req.add_targets();
        t->set_job_id(id);
        t->set_text(std::to_string(id));
      }
      Effects e;
      std::string errors;
      for (const auto& r : st->control(who, req, 1011, e)) errors += r.ok() ? "ok;" : r.error() + ";";
      return errors;
    };
    if (!user_top) {
      EXPECT_EQ(top(user(1000, "alice"), {4}), "Access/permission denied;");
      EXPECT_EQ(prio(4), p4);
      EXPECT_EQ(top(Caller{0, 0, "root", true}, {1}), "Job is no longer pending execution;");
    }
    const Caller who = user_top ? user(1000, "alice") : Caller{0, 0, "root", true};
    EXPECT_EQ(top(who, {4, 99}), "ok;Invalid job id specified;");
    EXPECT_EQ(prio(4), p2);  // the highest of the queue now
    EXPECT_EQ(prio(2), p3);
    EXPECT_EQ(prio(3), p4);
    EXPECT_EQ(prio(5), bob);
    EXPECT_EQ(st->jobs().at(5).rec.nice(), 0);
    EXPECT_EQ(st->jobs().at(6).rec.nice(), 0);  // the held job is not part of the rotation
    // Naming it is refused as Slurm 22.05 refuses it, and moves nothing.
    EXPECT_EQ(top(who, {6}), "Job is in held state, pending scheduler release;");
    EXPECT_EQ(st->jobs().at(6).rec.nice(), 0);
    EXPECT_EQ(prio(4), p2);
    EXPECT_EQ(prio(3), p4);
    Effects again;
    st->schedule(core::PassKind::kFull, 1012, again);  // the cycle computes the same from the nice values
    EXPECT_GT(prio(4), prio(2)) << "user_top=" << user_top;
    EXPECT_GT(prio(2), prio(3));
    if (user_top) {
      EXPECT_EQ(top(user(1001, "bob"), {4}), "Access/permission denied;");
    }
  }
}

// FirstJobId: a new cluster's first job takes it; a recovered counter above
// it wins; raised by a reconfigure, the next job takes it; below 1 it is
// refused, naming the file.
TEST(ControllerState, FirstJobIdNumbersTheFirstJobAndIsNeverGoneBelow) {
  auto st = make_state("FirstJobId=5000\n");
  st->recover_next_job_id(std::nullopt);  // a new state directory
  Effects fx;
  auto first = st->submit(user(1000, "alice"), wrap("true"), false, 1000, fx);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->job_id(), 5000);
  auto restarted = make_state("FirstJobId=5000\n");
  restarted->recover_next_job_id(7000);  // the store's counter is past it
  EXPECT_EQ(restarted->next_job_id(), 7000);
  Effects rfx;
  auto moved = reconfigure_to(*st, std::string(kConf) + "FirstJobId=9000\n", rfx);
  ASSERT_TRUE(moved) << moved.error().message;
  EXPECT_EQ(st->submit(user(1000, "alice"), wrap("true"), false, 2000, fx)->job_id(), 9000);
  auto lowered = reconfigure_to(*st, std::string(kConf) + "FirstJobId=10\n", rfx);
  ASSERT_TRUE(lowered) << lowered.error().message;
  EXPECT_EQ(st->submit(user(1000, "alice"), wrap("true"), false, 2000, fx)->job_id(), 9001) << "ids are not given twice";
  auto zero = settings_from_config(config::parse_slurm_conf_text(std::string(kConf) + "FirstJobId=0\n", "test.conf"),
                                   "test.conf");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "FirstJobId=0 in test.conf: must be 1 or more");
}

// SlurmctldDebug and DebugFlags: the controller starts logging at them (and
// scontrol show config shows them); a word Slurm does not know stops it at
// start, naming the line, as it stops Slurm's.
TEST(ControllerState, SettingsReadTheLogLevelAndDebugFlags) {
  const std::string base = "ClusterName=t\nSlurmctldHost=localhost\nNodeName=n1 CPUs=4\nPartitionName=p Nodes=n1\n";
  auto read = [&](const std::string& extra) {
    return settings_from_config(config::parse_slurm_conf_text(base + extra, "test.conf"), "test.conf");
  };
  auto plain = read("");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->log_level, config::kLogInfo);
  EXPECT_EQ(plain->debug_flags, 0u);
  auto set = read("SlurmctldDebug=debug2\nDebugFlags=priority,Backfill\n");
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->log_level, config::kLogDebug2);
  EXPECT_EQ(config::debug_flags_text(set->debug_flags), "Backfill,Priority");
  auto loud = read("SlurmctldDebug=loud\n");
  ASSERT_FALSE(loud);
  EXPECT_EQ(loud.error().message,
            "test.conf:5:1: SlurmctldDebug=loud is not a log level (quiet, fatal, error, info, verbose, debug, debug2 .. "
            "debug5, or 0-9)");
  auto flag = read("DebugFlags=Backfill,Sched\n");
  ASSERT_FALSE(flag);
  EXPECT_EQ(flag.error().message, "test.conf:5:1: DebugFlags=Backfill,Sched: Invalid DebugFlag: Sched");

  auto st = make_state("SlurmctldDebug=debug2\nDebugFlags=priority,Backfill\n");
  std::map<std::string, std::string> shown;
  for (const auto& e : st->config_entries()) shown[e.key()] = e.value();
  EXPECT_EQ(shown["SlurmctldDebug"], "debug2");
  EXPECT_EQ(shown["DebugFlags"], "Backfill,Priority");
  st->set_log_settings(config::kLogQuiet, 0);
  for (const auto& e : st->config_entries()) shown[e.key()] = e.value();
  EXPECT_EQ(shown["SlurmctldDebug"], "quiet");
  EXPECT_EQ(shown["DebugFlags"], "(null)");
}

// Values spelled as Slurm 22.05's scontrol show config spelled them for the
// anchor cluster's slurm.conf (golden scontrol_show_config.txt).
TEST(ControllerState, ConfigEntriesSpellValuesAsSlurms) {
  std::map<std::string, std::string> v = config_of(*make_state(
      "SelectTypeParameters=CR_Core_Memory\nPriorityWeightTRES=CPU=1000,GRES/gpu=5000\n"
      "AccountingStorageTRES=gres/gpu,gres/gpu:h100,gres/gpu:a100\nDisableRootJobs=NO\nDefMemPerCPU=4096\n"
      "SlurmUser=root\nPriorityWeightFairshare=10000\n"));
  EXPECT_EQ(v["SelectTypeParameters"], "CR_CORE_MEMORY");
  EXPECT_EQ(v["PriorityWeightTRES"], "CPU=1000,GRES/gpu=5000");
  EXPECT_EQ(v["SchedulerParameters"], "(null)");
  EXPECT_EQ(v["AccountingStorageTRES"],
            "cpu,mem,energy,node,billing,fs/disk,vmem,pages,gres/gpu,gres/gpu:a100,gres/gpu:h100");
  EXPECT_EQ(v["DisableRootJobs"], "No");
  EXPECT_EQ(v["PriorityFavorSmall"], "No");
  EXPECT_EQ(v["DefMemPerCPU"], "4096");
  EXPECT_EQ(v.count("DefMemPerNode"), 0u);
  EXPECT_EQ(v["MaxMemPerNode"], "UNLIMITED");
  EXPECT_EQ(v.count("MaxMemPerCPU"), 0u);
  EXPECT_EQ(v.count("DefCpuPerGPU"), 0u);
  EXPECT_EQ(v["SlurmUser"], "root(0)");
  EXPECT_EQ(v["PriorityWeightFairShare"], "10000");
  EXPECT_EQ(v.count("PriorityWeightFairshare"), 0u);
  EXPECT_EQ(v["PriorityFlags"], "");  // unwritten: the golden's "PriorityFlags = "
  EXPECT_EQ(v["InactiveLimit"], "0 sec");
  std::map<std::string, std::string> w = config_of(*make_state("MaxMemPerCPU=2000\n"));
  EXPECT_EQ(w["MaxMemPerCPU"], "2000");
  EXPECT_EQ(w.count("MaxMemPerNode"), 0u);
}

}  // namespace
}  // namespace drover::ctld
