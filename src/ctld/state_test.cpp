// ControllerState without RPC or disk: operations in, effects out.
#include "ctld/state.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include "config/parse.hpp"
#include "ctld/persist.hpp"

namespace drover::ctld {
namespace {

constexpr const char* kConf =
    "ClusterName=t\nSlurmctldHost=localhost\nDefMemPerCPU=100\nMinJobAge=600\nGresTypes=gpu\n"
    "NodeName=c[1-2] CPUs=4 RealMemory=4000\n"
    "NodeName=g1 CPUs=8 RealMemory=8000 Gres=gpu:h100:2 Feature=h100\n"
    "PartitionName=cpu Nodes=c[1-2] Default=YES MaxTime=1:00:00\n"
    "PartitionName=gpu Nodes=g1\n";

std::unique_ptr<ControllerState> make_state() {
  config::ClusterConfig cfg = config::parse_slurm_conf_text(kConf, "test.conf");
  auto settings = settings_from_config(cfg, "test.conf");
  EXPECT_TRUE(settings) << settings.error().message;
  auto bridge = CoreBridge::create(cfg);
  EXPECT_TRUE(bridge) << bridge.error().message;
  return std::make_unique<ControllerState>(cfg, std::move(*bridge), *settings);
}

Caller user(uint32_t uid, const std::string& name) { return Caller{uid, uid, name, false}; }

v1::JobDescriptor wrap(const std::string& cmd) {
  v1::JobDescriptor d;
  d.set_batch(true);
  d.set_name("wrap");
  d.set_script("#!/bin/sh\n" + cmd + "\n");
  d.set_work_dir("/tmp");
  return d;
}

v1::NodeReport report(const std::string& node, int64_t agent_start = 100) {
  v1::NodeReport r;
  r.set_node(node);
  r.set_agent_start_time(agent_start);
  return r;
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

void register_all(ControllerState& st, int64_t now) {
  for (const char* n : {"c1", "c2", "g1"}) {
    Effects fx;
    ASSERT_TRUE(st.node_report(report(n), true, now, fx));
  }
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
}

}  // namespace
}  // namespace drover::ctld
