// slurm.conf's Prolog and Epilog, the controller's side: what a launch and
// an Epilog order carry, the COMPLETING hold on a job's nodes until their
// Epilogs end, and what a failed Prolog or Epilog does (as Slurm 22.05 did
// on the anchor cluster).
#include <gtest/gtest.h>

#include <algorithm>

#include "ctld/state.hpp"
#include "ctld/state_test_support.hpp"

namespace drover::ctld {
namespace {

using state_testing::make_state;
using state_testing::heard_all;
using state_testing::register_all;
using state_testing::report;

constexpr const char* kScripts = "Prolog=/etc/drover/prolog.sh\nEpilog=/etc/drover/epilog.d/*\n";

const Caller kAlice{1000, 1000, "alice", false};

v1::JobDescriptor job(const std::string& nodelist = "", const std::string& partition = "") {
  v1::JobDescriptor d;
  d.set_batch(true);
  d.set_name("wrap");
  d.set_script("#!/bin/sh\ntrue\n");
  d.set_work_dir("/tmp");
  d.set_nodelist(nodelist);
  if (!partition.empty()) d.add_partitions(partition);
  return d;
}

// The batch step's end, as the agent reports it.
v1::NodeReport ended(const std::string& node, int64_t job, int code) {
  v1::NodeReport r = report(node);
  v1::StepReport* s = r.add_steps();
  s->mutable_step()->set_job_id(job);
  s->mutable_step()->set_step_id(-2);
  s->set_ended(true);
  s->set_state(code ? "FAILED" : "COMPLETED");
  s->set_exit_code(code);
  return r;
}

v1::NodeReport epilog_done(const std::string& node, int64_t job, bool failed) {
  v1::NodeReport r = report(node);
  v1::EpilogDone* d = r.add_epilogs();
  d->set_job_id(job);
  d->set_failed(failed);
  if (failed) d->set_message("epilog /etc/drover/epilog.d/10-clean failed: exit 4");
  return r;
}

bool has(const google::protobuf::RepeatedPtrField<std::string>& env, const std::string& var) {
  return std::find(env.begin(), env.end(), var) != env.end();
}

const v1::NodeInfo& node_info(const std::vector<v1::NodeInfo>& all, const std::string& name) {
  return *std::find_if(all.begin(), all.end(), [&](const v1::NodeInfo& n) { return n.name() == name; });
}

std::vector<const AgentCommand*> commands(const Effects& fx, AgentCommand::Kind kind) {
  std::vector<const AgentCommand*> out;
  for (const auto& c : fx.commands) {
    if (c.kind == kind) out.push_back(&c);
  }
  return out;
}

// Prolog and Epilog set, every node registered, and job 1 running on c1 and c2.
std::unique_ptr<ControllerState> two_node_job() {
  auto st = make_state(kScripts);
  register_all(*st, 1000);
  Effects fx;
  v1::JobDescriptor two = job();
  two.set_min_nodes(2);
  EXPECT_TRUE(st->submit(kAlice, two, false, 1000, fx));
  st->schedule(core::PassKind::kQuick, 1000, fx);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  return st;
}

TEST(JobScripts, AnEndedJobHoldsItsNodesCompletingUntilEachEpilogHasEnded) {
  auto st = make_state(kScripts);
  register_all(*st, 1000);
  Effects fx;
  ASSERT_TRUE(st->submit(kAlice, job("", "gpu"), false, 1000, fx));
  Effects go;
  st->schedule(core::PassKind::kQuick, 1000, go);
  auto launched = commands(go, AgentCommand::kLaunch);
  ASSERT_EQ(launched.size(), 1u);
  // The Prolog's environment travels with the launch (Slurm's prolog_slurmd variables).
  const auto& penv = launched[0]->launch.prolog_env();
  EXPECT_TRUE(has(penv, "SLURM_SCRIPT_CONTEXT=prolog_slurmd"));
  EXPECT_TRUE(has(penv, "SLURM_JOB_ID=1"));
  EXPECT_TRUE(has(penv, "SLURM_JOB_USER=alice"));
  EXPECT_TRUE(has(penv, "SLURMD_NODENAME=g1"));
  EXPECT_TRUE(has(penv, "SLURM_JOB_PARTITION=gpu"));
  EXPECT_TRUE(has(penv, "SLURM_JOB_STDIN=/dev/null"));

  Effects end;
  ASSERT_TRUE(st->node_report(ended("g1", 1, 3), false, 1005, end));
  const Job& j = st->jobs().at(1);
  EXPECT_EQ(j.rec.state(), v1::FAILED);
  EXPECT_EQ(j.rec.end_time(), 1005);
  EXPECT_TRUE(j.rec.completing()) << "COMPLETING while the Epilog runs";
  ASSERT_EQ(j.rec.epilog_nodes_size(), 1);
  EXPECT_EQ(j.rec.epilog_nodes(0), "g1");
  auto orders = commands(end, AgentCommand::kEpilog);
  ASSERT_EQ(orders.size(), 1u);
  EXPECT_EQ(orders[0]->node, "g1");
  const auto& eenv = orders[0]->epilog.env();
  EXPECT_TRUE(has(eenv, "SLURM_SCRIPT_CONTEXT=epilog_slurmd"));
  EXPECT_TRUE(has(eenv, "SLURM_JOB_EXIT_CODE2=3:0"));
  EXPECT_TRUE(has(eenv, "SLURM_JOB_EXIT_CODE=768"));
  EXPECT_FALSE(end.batch.empty()) << "the hold is durable";

  // The node shows IDLE+COMPLETING: nothing of it is the job's any more,
  // and nothing new starts there until the Epilog has ended.
  const auto& g1 = node_info(st->node_infos(1005), "g1");
  EXPECT_TRUE(g1.completing());
  EXPECT_EQ(g1.alloc_cpus(), 0);
  Effects fx2;
  ASSERT_TRUE(st->submit(kAlice, job("g1", "gpu"), false, 1006, fx2));
  Effects wait;
  st->schedule(core::PassKind::kFull, 1006, wait);
  EXPECT_TRUE(commands(wait, AgentCommand::kLaunch).empty());
  EXPECT_EQ(st->jobs().at(2).rec.reason(), "Resources");

  // The agent reports the Epilog's end: acknowledged, the node is free.
  for (int i = 0; i < 2; ++i) {  // the second is a repeat: acknowledged, nothing changes
    Effects done;
    auto reply = st->node_report(epilog_done("g1", 1, false), false, 1008, done);
    ASSERT_TRUE(reply);
    ASSERT_EQ(reply->epilogs_acknowledged_size(), 1);
    EXPECT_EQ(reply->epilogs_acknowledged(0).job_id(), 1);
  }
  EXPECT_FALSE(st->jobs().at(1).rec.completing());
  EXPECT_FALSE(holds_resources(st->jobs().at(1)));
  EXPECT_FALSE(st->nodes()[2].drain);
  Effects start;
  st->schedule(core::PassKind::kQuick, 1008, start);
  EXPECT_EQ(commands(start, AgentCommand::kLaunch).size(), 1u);
}

TEST(JobScripts, AFailedEpilogDrainsTheNodeWithSlurmsReason) {
  auto st = make_state(kScripts);
  register_all(*st, 1000);
  Effects fx;
  ASSERT_TRUE(st->submit(kAlice, job("c2"), false, 1000, fx));
  st->schedule(core::PassKind::kQuick, 1000, fx);
  ASSERT_TRUE(st->node_report(ended("c2", 1, 0), false, 1002, fx));
  Effects e;
  ASSERT_TRUE(st->node_report(epilog_done("c2", 1, true), false, 1003, e));
  const NodeRt& c2 = st->nodes()[1];
  EXPECT_TRUE(c2.drain);
  EXPECT_EQ(c2.reason, "Epilog error");
  EXPECT_EQ(c2.reason_time, 1003);
  const Job& j = st->jobs().at(1);
  EXPECT_EQ(j.rec.state(), v1::COMPLETED) << "the job's own end stands";
  EXPECT_FALSE(j.rec.completing());
}

TEST(JobScripts, AFailedPrologDrainsTheNodeAndRequeuesTheJobHeld) {
  auto st = make_state(kScripts);
  register_all(*st, 1000);
  Effects fx;
  ASSERT_TRUE(st->submit(kAlice, job(), false, 1000, fx));
  st->schedule(core::PassKind::kQuick, 1000, fx);
  const std::string host = st->jobs().at(1).rec.batch_host();
  v1::LaunchReply failed;
  failed.set_prolog_failed(true);
  failed.set_failure("prolog /etc/drover/prolog.sh failed: exit 3");
  Effects e;
  st->launch_result(1, 0, failed, 1001, e);
  const Job& j = st->jobs().at(1);
  EXPECT_EQ(j.rec.state(), v1::PENDING);
  EXPECT_EQ(j.rec.hold(), v1::HOLD_USER) << "its owner may release it, as in Slurm";
  EXPECT_EQ(j.rec.reason(), "launch failed requeued held");
  EXPECT_EQ(j.rec.restart_count(), 1);
  EXPECT_FALSE(holds_resources(j));
  core::NodeIndex ni = host == "c1" ? 0 : 1;
  EXPECT_TRUE(st->nodes()[ni].drain);
  EXPECT_EQ(st->nodes()[ni].reason, "Prolog error");
  // It waits, saying why, until released.
  Effects pass;
  st->schedule(core::PassKind::kFull, 1002, pass);
  EXPECT_TRUE(commands(pass, AgentCommand::kLaunch).empty());
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "launch failed requeued held");
  v1::ControlRequest release;
  release.set_action(v1::RELEASE);
  release.add_targets()->set_job_id(1);
  release.mutable_targets(0)->set_text("1");
  Effects r;
  auto res = st->control(kAlice, release, 1003, r);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_TRUE(res[0].ok()) << res[0].error();
  // Released, it still waits out the requeue's credential lifetime (120 s
  // and a second by default, as Slurm's), saying BeginTime.
  Effects early;
  st->schedule(core::PassKind::kQuick, 1003, early);
  EXPECT_TRUE(commands(early, AgentCommand::kLaunch).empty());
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "BeginTime");
  Effects again;
  heard_all(*st, 1001 + 121);
  st->schedule(core::PassKind::kQuick, 1001 + 121, again);
  auto launched = commands(again, AgentCommand::kLaunch);
  ASSERT_EQ(launched.size(), 1u);
  EXPECT_NE(launched[0]->node, host) << "not on the drained node";
}

TEST(JobScripts, NoholdOnPrologFailRequeuesWithoutTheHold) {
  auto st = make_state(std::string(kScripts) + "SchedulerParameters=nohold_on_prolog_fail\n");
  register_all(*st, 1000);
  Effects fx;
  ASSERT_TRUE(st->submit(kAlice, job("c1"), false, 1000, fx));
  st->schedule(core::PassKind::kQuick, 1000, fx);
  v1::LaunchReply failed;
  failed.set_prolog_failed(true);
  failed.set_failure("prolog failed");
  Effects e;
  st->launch_result(1, 0, failed, 1001, e);
  const Job& j = st->jobs().at(1);
  EXPECT_EQ(j.rec.state(), v1::PENDING);
  EXPECT_EQ(j.rec.hold(), v1::HOLD_NONE);
  EXPECT_EQ(j.rec.restart_count(), 1);
  EXPECT_TRUE(st->nodes()[0].drain);
}

// PrologFlags=Alloc: the Prolog on every node as the job starts (squeue's
// reason "Prolog" meanwhile), and the batch script once each has answered;
// a failure on any node is the batch host's failure.
TEST(JobScripts, PrologFlagsAllocRunsEveryNodesPrologBeforeTheBatchScript) {
  auto st = make_state(std::string(kScripts) + "PrologFlags=Alloc,X11\n");
  register_all(*st, 1000);
  Effects fx;
  v1::JobDescriptor two = job();
  two.set_min_nodes(2);
  ASSERT_TRUE(st->submit(kAlice, two, false, 1000, fx));
  Effects start;
  st->schedule(core::PassKind::kQuick, 1000, start);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  auto orders = commands(start, AgentCommand::kLaunch);
  ASSERT_EQ(orders.size(), 2u) << "a Prolog order to each node, no batch launch yet";
  std::vector<std::string> nodes;
  for (const auto* o : orders) {
    EXPECT_TRUE(o->launch.prolog_only());
    EXPECT_EQ(o->launch.step().step_id(), kPrologOrderStep);
    EXPECT_TRUE(o->launch.script().empty());
    EXPECT_TRUE(has(o->launch.prolog_env(), "SLURMD_NODENAME=" + o->node)) << o->node;
    nodes.push_back(o->node);
  }
  std::sort(nodes.begin(), nodes.end());
  EXPECT_EQ(nodes, (std::vector<std::string>{"c1", "c2"}));
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "Prolog");
  v1::LaunchReply ok;
  ok.set_started(true);
  Effects first;
  st->prolog_result(1, 0, "c2", ok, "", 1001, first);
  EXPECT_TRUE(commands(first, AgentCommand::kLaunch).empty()) << "c1's Prolog has not answered";
  Effects last;
  st->prolog_result(1, 0, "c1", ok, "", 1002, last);
  auto launch = commands(last, AgentCommand::kLaunch);
  ASSERT_EQ(launch.size(), 1u);
  EXPECT_EQ(launch[0]->node, st->jobs().at(1).rec.batch_host());
  EXPECT_FALSE(launch[0]->launch.prolog_only());
  EXPECT_FALSE(launch[0]->launch.script().empty());
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "None");
  Effects again;
  st->prolog_result(1, 0, "c1", ok, "", 1003, again);
  EXPECT_TRUE(again.commands.empty()) << "a repeated answer launches nothing more";

  // Another cluster's job: c2's Prolog fails, so the job is requeued held and c2 drains.
  st = make_state(std::string(kScripts) + "PrologFlags=Contain\n");  // Contain implies Alloc
  register_all(*st, 2000);
  ASSERT_TRUE(st->submit(kAlice, two, false, 2000, fx));
  Effects second;
  st->schedule(core::PassKind::kQuick, 2000, second);
  ASSERT_EQ(st->jobs().at(1).rec.state(), v1::RUNNING);
  ASSERT_EQ(commands(second, AgentCommand::kLaunch).size(), 2u);
  v1::LaunchReply failed;
  failed.set_prolog_failed(true);
  failed.set_failure("prolog /etc/drover/prolog.sh failed: exit 3");
  Effects e;
  st->prolog_result(1, 0, "c2", failed, "", 2001, e);
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::PENDING);
  EXPECT_EQ(st->jobs().at(1).rec.reason(), "launch failed requeued held");
  EXPECT_TRUE(st->nodes()[1].drain);
  EXPECT_EQ(st->nodes()[1].reason, "Prolog error");
  Effects late;
  st->prolog_result(1, 0, "c1", ok, "", 2002, late);
  EXPECT_TRUE(commands(late, AgentCommand::kLaunch).empty()) << "the old run's answer launches nothing";
}

// PrologSlurmctld: the controller runs it as a job starts (CONFIGURING
// meanwhile, no launch, a step waits); the batch script is launched once it
// ends well; one that fails requeues the job held. EpilogSlurmctld runs as
// the job ends. A restarted controller runs a CONFIGURING job's prolog again.
TEST(JobScripts, PrologSlurmctldRunsBeforeTheLaunchAndEpilogSlurmctldAtTheEnd) {
  const std::string conf = "PrologSlurmctld=/etc/drover/ctld_prolog.sh\nEpilogSlurmctld=/etc/drover/ctld_epilog.sh\n";
  auto st = make_state(conf);
  register_all(*st, 1000);
  Effects fx;
  ASSERT_TRUE(st->submit(kAlice, job(), false, 1000, fx));
  Effects start;
  st->schedule(core::PassKind::kQuick, 1000, start);
  const v1::JobRecord& r = st->jobs().at(1).rec;
  ASSERT_EQ(r.state(), v1::RUNNING);
  EXPECT_TRUE(r.configuring());
  EXPECT_TRUE(commands(start, AgentCommand::kLaunch).empty()) << "nothing launched while it runs";
  ASSERT_EQ(start.scripts.size(), 1u);
  const CtldScript prolog = start.scripts[0];
  EXPECT_TRUE(prolog.prolog);
  EXPECT_EQ(prolog.program, "/etc/drover/ctld_prolog.sh");
  EXPECT_NE(std::find(prolog.env.begin(), prolog.env.end(), "SLURM_SCRIPT_CONTEXT=prolog_slurmctld"), prolog.env.end());
  EXPECT_NE(std::find(prolog.env.begin(), prolog.env.end(), "SLURM_JOB_ID=1"), prolog.env.end());
  EXPECT_NE(std::find(prolog.env.begin(), prolog.env.end(), "SLURM_JOB_USER=alice"), prolog.env.end());
  EXPECT_TRUE(std::none_of(prolog.env.begin(), prolog.env.end(),
                           [](const std::string& e) { return e.rfind("SLURMD_NODENAME=", 0) == 0; }))
      << "the controller runs it, not a node";
  v1::CreateStepRequest step;
  step.set_job_id(1);
  step.set_ntasks(1);
  Effects se;
  auto busy = st->create_step(kAlice, step, 1000, se);
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->busy(), "the job's PrologSlurmctld is still running");

  // A restarted controller runs it again.
  std::vector<std::pair<int64_t, std::string>> jobs;
  for (const auto& [id, j] : st->jobs()) jobs.emplace_back(id, j.rec.SerializeAsString());
  auto after = make_state(conf);
  ASSERT_TRUE(after->recover(jobs, {}, 2, 1001));
  Effects hk;
  after->housekeeping(1001, hk);
  ASSERT_EQ(hk.scripts.size(), 1u);
  EXPECT_TRUE(hk.scripts[0].prolog);

  ScriptRun ok;
  ok.started = true;
  Effects done;
  st->ctld_script_done(prolog, ok, 1002, done);
  EXPECT_FALSE(r.configuring());
  auto launch = commands(done, AgentCommand::kLaunch);
  ASSERT_EQ(launch.size(), 1u);
  EXPECT_FALSE(launch[0]->launch.script().empty());
  Effects again;
  st->ctld_script_done(prolog, ok, 1003, again);
  EXPECT_TRUE(again.commands.empty()) << "a repeated answer launches nothing more";
  Effects end;
  ASSERT_TRUE(st->node_report(ended(r.batch_host(), 1, 3), false, 1004, end));
  ASSERT_EQ(end.scripts.size(), 1u);
  EXPECT_FALSE(end.scripts[0].prolog);
  EXPECT_NE(std::find(end.scripts[0].env.begin(), end.scripts[0].env.end(), "SLURM_JOB_EXIT_CODE2=3:0"),
            end.scripts[0].env.end());

  // A prolog that fails: the job goes back to the queue held.
  ASSERT_TRUE(st->submit(kAlice, job(), false, 1010, fx));
  Effects second;
  st->schedule(core::PassKind::kQuick, 1010, second);
  ASSERT_EQ(second.scripts.size(), 1u);
  ScriptRun failed;
  failed.started = true;
  failed.exit_code = 3;
  Effects fe;
  st->ctld_script_done(second.scripts[0], failed, 1011, fe);
  const v1::JobRecord& r2 = st->jobs().at(2).rec;
  EXPECT_EQ(r2.state(), v1::PENDING);
  EXPECT_FALSE(r2.configuring());
  EXPECT_EQ(r2.reason(), "launch failed requeued held");
  EXPECT_EQ(r2.state_desc(), "launch failed requeued held: PrologSlurmctld failed (exit 3)");
  EXPECT_TRUE(commands(fe, AgentCommand::kLaunch).empty());

  // A job that may not be requeued is cancelled at once (not COMPLETING: nothing was sent).
  v1::JobDescriptor once = job();
  once.set_requeue(false);
  ASSERT_TRUE(st->submit(kAlice, once, false, 1015, fx));
  Effects fourth;
  st->schedule(core::PassKind::kQuick, 1015, fourth);
  ASSERT_EQ(fourth.scripts.size(), 1u);
  Effects oe;
  st->ctld_script_done(fourth.scripts[0], failed, 1016, oe);
  const v1::JobRecord& r3 = st->jobs().at(3).rec;
  EXPECT_EQ(r3.state(), v1::CANCELLED);
  EXPECT_FALSE(r3.completing());
  EXPECT_FALSE(r3.configuring());
  EXPECT_EQ(r3.state_desc(), "PrologSlurmctld failed (exit 3)");

  // Cancelled while it runs: over at once (no script was sent to wait for);
  // the prolog's end then launches nothing.
  ASSERT_TRUE(st->submit(kAlice, job(), false, 1020, fx));
  Effects third;
  st->schedule(core::PassKind::kQuick, 1020, third);
  ASSERT_EQ(third.scripts.size(), 1u);
  v1::CancelRequest cancel;
  cancel.add_targets()->set_job_id(4);
  Effects ce;
  ASSERT_TRUE(st->cancel(kAlice, cancel, 1021, ce)[0].ok());
  EXPECT_EQ(st->jobs().at(4).rec.state(), v1::CANCELLED);
  EXPECT_FALSE(st->jobs().at(4).rec.completing());
  Effects late;
  st->ctld_script_done(third.scripts[0], ok, 1022, late);
  EXPECT_TRUE(commands(late, AgentCommand::kLaunch).empty());
}

TEST(JobScripts, ARestartedControllerAsksForTheEpilogsStillOwedAndALostNodeOwesNone) {
  auto before = two_node_job();
  Effects end;
  ASSERT_TRUE(before->node_report(ended(before->jobs().at(1).rec.batch_host(), 1, 0), false, 1002, end));
  EXPECT_EQ(commands(end, AgentCommand::kEpilog).size(), 2u) << "every node of the job runs its Epilog";
  std::vector<std::pair<int64_t, std::string>> jobs;
  for (const auto& [id, j] : before->jobs()) jobs.emplace_back(id, j.rec.SerializeAsString());

  auto after = make_state(kScripts);
  ASSERT_TRUE(after->recover(jobs, {}, 2, 1010));
  ASSERT_EQ(after->jobs().at(1).rec.epilog_nodes_size(), 2);
  Effects first;
  after->housekeeping(1010, first);  // the controller's start
  Effects reg;
  auto reply = after->node_report(report("c1"), true, 1010, reg);
  ASSERT_TRUE(reply);
  ASSERT_EQ(reply->epilogs_size(), 1);
  EXPECT_EQ(reply->epilogs(0).job_id(), 1);
  EXPECT_TRUE(has(reply->epilogs(0).env(), "SLURMD_NODENAME=c1"));
  Effects done;
  ASSERT_TRUE(after->node_report(epilog_done("c1", 1, false), false, 1011, done));
  EXPECT_TRUE(after->jobs().at(1).rec.completing()) << "c2's Epilog is still owed";
  // c2 never comes back: after SlurmdTimeout it is lost, and owes nothing.
  Effects later;
  after->housekeeping(1010 + 301 + 1, later);
  EXPECT_FALSE(after->jobs().at(1).rec.completing());
  EXPECT_FALSE(holds_resources(after->jobs().at(1)));
}

// The script runs on its batch host when an srun step's Prolog fails on
// another node: the script is ended there first; the job is back in the
// queue held, COMPLETING until the script's end is reported and the
// Epilogs have run.
TEST(JobScripts, APrologFailingForAnSrunStepEndsTheScriptAndRequeuesTheJobHeld) {
  auto st = two_node_job();
  Effects fx;
  v1::LaunchReply started;
  started.set_started(true);
  st->launch_result(1, 0, started, 1000, fx);
  const std::string host = st->jobs().at(1).rec.batch_host();
  const std::string other = host == "c1" ? "c2" : "c1";
  v1::CreateStepRequest req;
  req.set_job_id(1);
  req.set_ntasks(2);
  req.set_nodes(2);
  req.add_argv("hostname");
  Effects sfx;
  auto step = st->create_step(kAlice, req, 1001, sfx);
  ASSERT_TRUE(step) << step.error().message;
  v1::LaunchReply failed;
  failed.set_prolog_failed(true);
  failed.set_failure("prolog failed: exit 3");
  Effects e;
  st->step_launch_result(1, step->step().step_id(), other, failed, "", 1002, e);
  const Job& j = st->jobs().at(1);
  EXPECT_EQ(j.rec.state(), v1::PENDING);
  EXPECT_EQ(j.rec.hold(), v1::HOLD_USER);
  EXPECT_EQ(j.rec.reason(), "launch failed requeued held");
  EXPECT_TRUE(j.rec.completing()) << "until the script's end is reported";
  bool script_ended = false;
  for (const auto* c : commands(e, AgentCommand::kTerminate)) script_ended = script_ended || c->node == host;
  EXPECT_TRUE(script_ended);
  EXPECT_FALSE(e.batch.empty());
  EXPECT_TRUE(st->nodes()[other == "c1" ? 0 : 1].drain);

  Effects end;
  ASSERT_TRUE(st->node_report(ended(host, 1, 0), false, 1003, end));
  EXPECT_EQ(commands(end, AgentCommand::kEpilog).size(), 2u);
  for (const std::string& n : {host, other}) {
    Effects d;
    ASSERT_TRUE(st->node_report(epilog_done(n, 1, false), false, 1004, d));
  }
  EXPECT_FALSE(st->jobs().at(1).rec.completing());
  EXPECT_FALSE(holds_resources(st->jobs().at(1)));
  EXPECT_EQ(st->jobs().at(1).rec.state(), v1::PENDING);
  EXPECT_EQ(st->jobs().at(1).rec.batch_host(), "");
}

// HealthCheckNodeState other than ANY: each reply tells the agent whether
// its node is IDLE, MIXED or ALLOCATED; otherwise nothing is sent.
TEST(HealthCheck, AgentsAreToldTheirNodesStateWhenHealthCheckNodeStateNamesOne) {
  auto st = make_state("HealthCheckProgram=/usr/sbin/nhc\nHealthCheckNodeState=IDLE\n");
  Effects fx;
  auto reg = st->node_report(report("c1"), true, 1000, fx);
  ASSERT_TRUE(reg);
  EXPECT_EQ(reg->node_state(), "IDLE");
  register_all(*st, 1000);
  ASSERT_TRUE(st->submit(kAlice, job("c1"), false, 1000, fx));
  st->schedule(core::PassKind::kQuick, 1000, fx);
  auto busy = st->node_report(report("c1"), false, 1001, fx);
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->node_state(), "MIXED") << "1 of its 4 CPUs";

  auto plain = make_state("HealthCheckProgram=/usr/sbin/nhc\n");
  auto none = plain->node_report(report("c1"), true, 1000, fx);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->node_state(), "");
}

}  // namespace
}  // namespace drover::ctld
