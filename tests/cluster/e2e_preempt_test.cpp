// Preemption on a live cluster, as Slurm 22.05 did it on the anchor cluster
// (PreemptType=preempt/qos, PreemptMode=REQUEUE; a QOS with
// PreemptMode=CANCEL): the preempted job's steps are told "... CANCELLED AT
// ... DUE TO PREEMPTION ***"; under REQUEUE it goes back to the queue
// (BeginTime) and sacct -D records its run PREEMPTED; under CANCEL it ends
// PREEMPTED 0:0 (squeue PR); the preemptor starts on its nodes.
#include <gtest/gtest.h>

#include <regex>
#include <thread>

#include "harness.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

std::string state_of(const TestCluster& c, const std::string& id) {
  return c.run("squeue", {"-h", "-t", "all", "-j", id, "-o", "%t %r"}).out;
}

TEST(Preemption, QosPreemptsByRequeueOrCancelAndThePreemptorStarts) {
  ClusterDef def = small_cluster();
  def.extra = {"PreemptType=preempt/qos", "PreemptMode=REQUEUE"};
  def.qos_conf =
      "Name=normal Priority=10\n"
      "Name=fragile Priority=10 PreemptMode=CANCEL\n"
      "Name=urgent Priority=100 Preempt=normal,fragile\n";
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::string out = c.work() + "/victim.out";
  const std::string requeued = std::to_string(c.submit(
      {"-w", "cpu1", "-c", "16", "--mem=1000", "-o", out, "--open-mode=append", "--wrap",
       "echo run=${SLURM_RESTART_COUNT:-0}; srun sleep 300"}));
  const std::string cancelled = std::to_string(
      c.submit({"--qos=fragile", "-w", "cpu2", "-c", "16", "--mem=1000", "-o", "/dev/null", "--wrap", "srun sleep 300"}));
  ASSERT_TRUE(eventually(
      [&] { return lines_of(sacct_p(c, {"-j", requeued + "," + cancelled, "-o", "JobID"})).size() == 6; }, 20s))
      << "both run, with their steps";

  // A job of the same QOS waits.
  const std::string peer = std::to_string(c.submit({"-w", "cpu1", "-c", "16", "--mem=1000", "-o", "/dev/null", "--wrap", "true"}));
  EXPECT_TRUE(eventually([&] { return state_of(c, peer) == "PD Resources\n"; }, 5s)) << state_of(c, peer);
  EXPECT_EQ(state_of(c, requeued), "R None\n");
  ASSERT_EQ(c.run("scancel", {peer}).rc, 0);

  const std::string boss = std::to_string(
      c.submit({"--qos=urgent", "-w", "cpu1", "-c", "16", "--mem=1000", "-o", "/dev/null", "--wrap", "sleep 2"}));
  EXPECT_TRUE(eventually([&] { return state_of(c, requeued) == "PD BeginTime\n"; }, 10s)) << state_of(c, requeued);
  ASSERT_TRUE(c.wait_done(boss, 20s));
  EXPECT_EQ(sacct_p(c, {"-X", "-j", boss, "-o", "State,NodeList"}), "COMPLETED|cpu1\n");
  // Back after its BeginTime, run again.
  ASSERT_TRUE(eventually([&] { return read_file(out).find("run=1") != std::string::npos; }, 20s)) << read_file(out);
  const std::string said = read_file(out);
  EXPECT_TRUE(std::regex_search(
      said, std::regex("slurmstepd-cpu1: error: \\*\\*\\* JOB " + requeued + " ON cpu1 CANCELLED AT [0-9T:-]+ DUE TO "
                       "PREEMPTION \\*\\*\\*\n")))
      << said;
  EXPECT_TRUE(std::regex_search(
      said, std::regex("slurmstepd-cpu1: error: \\*\\*\\* STEP " + requeued + ".0 ON cpu1 CANCELLED AT [0-9T:-]+ DUE "
                       "TO PREEMPTION \\*\\*\\*\n")))
      << said;
  EXPECT_EQ(sacct_p(c, {"-D", "-X", "-j", requeued, "-o", "JobID,State,ExitCode"}),
            requeued + "|PREEMPTED|0:0\n" + requeued + "|RUNNING|0:0\n");
  const std::string show = c.run("scontrol", {"show", "job", requeued}).out;
  EXPECT_NE(show.find("Restarts=1"), std::string::npos) << show;

  // Its QOS says CANCEL: it ends PREEMPTED.
  const std::string boss2 = std::to_string(
      c.submit({"--qos=urgent", "-w", "cpu2", "-c", "16", "--mem=1000", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_done(boss2, 20s));
  EXPECT_EQ(state_of(c, cancelled), "PR None\n");
  EXPECT_EQ(sacct_p(c, {"-X", "-j", cancelled, "-o", "State,ExitCode"}), "PREEMPTED|0:0\n");
  EXPECT_NE(c.run("scontrol", {"show", "job", cancelled}).out.find("JobState=PREEMPTED "), std::string::npos);
  EXPECT_EQ(c.run("scancel", {requeued}).rc, 0);
}

// The whole queue is not preempted for one job: a job that needs one node's
// CPUs ends the youngest job of the preemptable QOS there, and only it.
TEST(Preemption, OnlyTheJobsTheStartNeedsArePreempted) {
  ClusterDef def = small_cluster();
  def.extra = {"PreemptType=preempt/qos", "PreemptMode=CANCEL"};
  def.qos_conf = "Name=normal Priority=10\nName=urgent Priority=100 Preempt=normal\n";
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  std::vector<std::string> low;
  for (const char* node : {"cpu1", "cpu1", "cpu2", "cpu2"}) {
    low.push_back(std::to_string(
        c.submit({"-w", node, "-c", "8", "--mem=1000", "-o", "/dev/null", "--wrap", "sleep 300"})));
    ASSERT_TRUE(eventually([&] { return state_of(c, low.back()) == "R None\n"; }, 10s));
    std::this_thread::sleep_for(1100ms);  // distinct start times: the youngest is the last
  }
  const std::string boss =
      std::to_string(c.submit({"--qos=urgent", "-p", "compute", "-c", "8", "--mem=1000", "-o", "/dev/null",
                               "-x", "lgpu1", "--wrap", "sleep 1"}));
  ASSERT_TRUE(c.wait_done(boss, 20s));
  EXPECT_EQ(state_of(c, low[3]), "PR None\n");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(state_of(c, low[static_cast<size_t>(i)]), "R None\n") << i;
  EXPECT_EQ(sacct_p(c, {"-X", "-j", boss, "-o", "NodeList"}), "cpu2\n");
  for (const auto& id : low) c.run("scancel", {id});
}

// GraceTime (the preempted job's QOS's, in seconds): the job chosen is sent
// SIGTERM at once and keeps running through its grace, then it is ended as
// its PreemptMode says, with its notice; the preemptor waits until then.
TEST(Preemption, GraceTimeSendsSigtermFirstAndEndsTheJobAfterIt) {
  ClusterDef def = small_cluster();
  def.extra = {"PreemptType=preempt/qos", "PreemptMode=CANCEL"};
  def.qos_conf = "Name=normal GraceTime=3\nName=urgent Preempt=normal\n";
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  EXPECT_EQ(c.run("sacctmgr", {"-n", "-P", "show", "qos", "normal", "format=Name,GraceTime"}).out,
            "normal|00:00:03\n");
  const std::string out = c.work() + "/grace.out";
  const std::string low = std::to_string(c.submit(
      {"-w", "cpu1", "-c", "16", "--mem=1000", "-o", out, "--wrap",
       "n=0; trap 'n=$((n+1)); echo got TERM $n; [ $n -ge 2 ] && exit 0' TERM; echo started; "
       "while true; do sleep 0.1; done"}));
  ASSERT_TRUE(eventually([&] { return read_file(out).find("started") != std::string::npos; }, 10s));
  // Counted from before the preemptor's submission, which the preemption
  // (and its GraceTime, whole seconds) can only follow: when the test sees
  // the first TERM may lag it by as much as the host is loaded.
  const auto term = std::chrono::steady_clock::now();
  const std::string high = std::to_string(
      c.submit({"--qos=urgent", "-w", "cpu1", "-c", "16", "--mem=1000", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(eventually([&] { return read_file(out).find("got TERM 1") != std::string::npos; }, 5s)) << read_file(out);
  EXPECT_EQ(state_of(c, low), "R None\n") << "in its grace";
  EXPECT_EQ(state_of(c, high), "PD Resources\n");
  ASSERT_TRUE(eventually([&] { return state_of(c, low) == "PR None\n"; }, 10s)) << state_of(c, low);
  EXPECT_GE(std::chrono::steady_clock::now() - term, 2s) << "ended before its GraceTime was over";
  ASSERT_TRUE(c.wait_done(high, 10s));
  const std::string said = read_file(out);
  EXPECT_TRUE(std::regex_search(
      said, std::regex("got TERM 1\n(.*\n)*slurmstepd-cpu1: error: \\*\\*\\* JOB " + low +
                       " ON cpu1 CANCELLED AT [0-9T:-]+ DUE TO PREEMPTION \\*\\*\\*\n(.*\n)*got TERM 2\n")))
      << said;
}

// sacctmgr edits a QOS's Preempt list as Slurm 22.05's did on the anchor
// cluster (=, +=, -=, a bad name refused, a deleted QOS leaves the lists),
// and the scheduler acts on the change at once.
TEST(Preemption, SacctmgrSetsWhoPreemptsWhom) {
  ClusterDef def = small_cluster();
  def.extra = {"PreemptType=preempt/qos", "PreemptMode=CANCEL"};
  def.qos_conf = "Name=normal\nName=training\nName=debug\n";
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  auto preempt_of = [&](const std::string& q) {
    return c.run("sacctmgr", {"-n", "-P", "show", "qos", q, "format=Name,Preempt,PreemptMode,PreemptExemptTime"}).out;
  };
  EXPECT_EQ(c.run("sacctmgr", {"-i", "modify", "qos", "debug", "set", "preempt=training"}).rc, 0);
  EXPECT_EQ(c.run("sacctmgr", {"-i", "modify", "qos", "debug", "set", "preempt+=normal"}).rc, 0);
  EXPECT_EQ(preempt_of("debug"), "debug|normal,training|cluster|\n");
  EXPECT_EQ(c.run("sacctmgr", {"-i", "modify", "qos", "debug", "set", "preempt-=training"}).rc, 0);
  EXPECT_EQ(preempt_of("debug"), "debug|normal|cluster|\n");
  const CmdResult bad = c.run("sacctmgr", {"-i", "modify", "qos", "debug", "set", "preempt=nosuch"});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.err.find("You gave a bad qos 'nosuch'. Valid QOS's are normal,training,debug"), std::string::npos)
      << bad.err;
  // Kept, but said not to act.
  const CmdResult suspend = c.run("sacctmgr", {"-i", "modify", "qos", "training", "set", "preemptmode=suspend"});
  EXPECT_EQ(suspend.rc, 0);
  EXPECT_NE(suspend.out.find("Note: PreemptMode=suspend is not built in Drover"), std::string::npos) << suspend.out;
  EXPECT_EQ(c.run("sacctmgr", {"-i", "modify", "qos", "training", "set", "preemptmode=requeue",
                               "preemptexempttime=00:01:00"}).rc,
            0);
  EXPECT_EQ(preempt_of("training"), "training||requeue|00:01:00\n");

  // The change is in force: a debug job preempts a normal one.
  const std::string low =
      std::to_string(c.submit({"-w", "cpu1", "-c", "16", "--mem=1000", "-o", "/dev/null", "--wrap", "sleep 300"}));
  ASSERT_TRUE(eventually([&] { return state_of(c, low) == "R None\n"; }, 10s));
  const std::string high = std::to_string(
      c.submit({"--qos=debug", "-w", "cpu1", "-c", "16", "--mem=1000", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_done(high, 20s));
  EXPECT_EQ(state_of(c, low), "PR None\n");

  EXPECT_EQ(c.run("sacctmgr", {"-i", "delete", "qos", "normal"}).rc, 0);
  EXPECT_EQ(preempt_of("debug"), "debug||cluster|\n");
}

}  // namespace
}  // namespace drover::e2e
