// End to end: accounting (sacct) on a live cluster: finished, running and
// pending jobs, batch steps, arrays, cancelled jobs, and history that
// survives a controller restart after the jobs left memory (MinJobAge).
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <csignal>
#include <ctime>
#include <regex>
#include <sstream>
#include <thread>

#include "common/duration.hpp"
#include "common/strings.hpp"
#include "drover/v1/accounting.pb.h"
#include "drover/v1/jobs.pb.h"
#include "common/user_db.hpp"
#include "harness.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

TEST(Accounting, SacctListsJobsStepsAndKeepsThemAcrossARestart) {
  ClusterDef def = small_cluster();
  def.extra = {"MinJobAge=2"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  int64_t gpu = c.submit({"-p", "gpu", "--gres=gpu:h100:2", "-c", "1", "--mem=4G", "-J", "env-gpu", "-C", "h100",
                          "--wrap", "true"});
  int64_t bad = c.submit({"-J", "bad", "--mem=1G", "--wrap", "exit 3"});
  int64_t held = c.submit({"-J", "arr", "-H", "--mem=1G", "--array=2-4%25", "--wrap", "true"});
  int64_t gone = c.submit({"-J", "gone", "-H", "--mem=1G", "--wrap", "true"});
  ASSERT_GT(gpu, 0);
  ASSERT_GT(bad, 0);
  ASSERT_GT(held, 0);
  ASSERT_GT(gone, 0);
  ASSERT_TRUE(c.wait_done(std::to_string(gpu)));
  ASSERT_TRUE(c.wait_done(std::to_string(bad)));
  ASSERT_EQ(c.run("scancel", {std::to_string(gone)}).rc, 0);
  std::string g = std::to_string(gpu), b = std::to_string(bad), h = std::to_string(held), x = std::to_string(gone);

  // The anchor's column layout (sacct_gpu_job.txt): header, dashes, job and batch step.
  auto wide = c.run("sacct", {"-j", g, "--format=JobID,JobName,Partition,State,ExitCode,Elapsed,AllocTRES%60"});
  ASSERT_EQ(wide.rc, 0) << wide.err;
  auto wl = lines_of(wide.out);
  ASSERT_EQ(wl.size(), 4u) << wide.out;
  EXPECT_EQ(wl[0], "JobID           JobName  Partition      State ExitCode    Elapsed "
                   "                                                   AllocTRES ");
  EXPECT_TRUE(std::regex_match(wl[2], std::regex(g + " +env-gpu +gpu +COMPLETED +0:0 +00:00:0\\d +"
                                                 "billing=1,cpu=1,gres/gpu:h100=2,gres/gpu=2,mem=4G,node=1 ")))
      << wl[2];
  EXPECT_TRUE(std::regex_match(wl[3], std::regex(g + "\\.batch +batch +COMPLETED +0:0 +00:00:0\\d +"
                                                 "cpu=1,gres/gpu:h100=2,gres/gpu=2,mem=4G,node=1 ")))
      << wl[3];

  // QOSRAW is the QOS's id (normal: 1, as in Slurm 22.05's database); a step's is blank.
  EXPECT_EQ(sacct_p(c, {"-j", g, "--format=JobID,QOS,QOSRAW"}), g + "|normal|1\n" + g + ".batch||\n");
  auto fields = "--format=JobID,JobIDRaw,JobName,State,ExitCode,DerivedExitCode,NNodes,NCPUS,NodeList,ReqTRES,"
                "Constraints,Reason,Timelimit,WorkDir,User,Account,QOS";
  std::string before = sacct_p(c, {"-j", g + "," + b + "," + h + "," + x, fields});
  auto rows = lines_of(before);
  ASSERT_EQ(rows.size(), 6u) << before;
  EXPECT_EQ(rows[0].substr(0, rows[0].find("|hgpu1")), g + "|" + g + "|env-gpu|COMPLETED|0:0|0:0|1|1");
  EXPECT_NE(rows[0].find("|billing=1,cpu=1,gres/gpu:h100=2,gres/gpu=2,mem=4G,node=1|h100|None|1-00:00:00|" +
                         c.work() + "|root|"),
            std::string::npos)
      << rows[0];
  EXPECT_EQ(rows[2].substr(0, rows[2].find("|cpu")), b + "|" + b + "|bad|FAILED|3:0|0:0|1|1");
  // sacct's Reason of an ended job is None (squeue's NonZeroExitCode is not recorded), as Slurm 22.05's.
  EXPECT_NE(rows[2].find("|None|"), std::string::npos) << rows[2];
  // A step's DerivedExitCode (and ReqTRES) is blank, as Slurm 22.05's.
  EXPECT_EQ(rows[3].substr(0, rows[3].find("|cpu")), b + ".batch|" + b + ".batch|batch|FAILED|3:0||1|1");
  // The held array's pending elements are one record; the cancelled pending job says by whom.
  EXPECT_EQ(rows[4].substr(0, rows[4].find("|0:0")), h + "_[2-4%25]|" + h + "|arr|PENDING") << rows[4];
  EXPECT_NE(rows[4].find("|None assigned|"), std::string::npos) << rows[4];
  EXPECT_EQ(rows[5].substr(0, rows[5].find("|0:0")), x + "|" + x + "|gone|CANCELLED by 0") << rows[5];

  // Layout: Unknown for a batch step (an srun step's distribution, see
  // StepRows); WCKeyID 0 on the job's line; as Slurm 22.05's.
  EXPECT_EQ(sacct_p(c, {"-j", b, "-o", "JobID,Layout,WCKeyID"}), b + "||0\n" + b + ".batch|Unknown|\n");

  // Selection: -X leaves the steps out, -s, --name, -u, and -j N_T.
  EXPECT_EQ(lines_of(sacct_p(c, {"-X", "-j", g + "," + b, "-o", "JobID"})), (std::vector<std::string>{g, b}));
  // -s alone looks at this moment (sacct(1)'s default window: see
  // SacctSelect.StatesAreJobsInThatStateWithinTheWindow); a window that
  // holds the job's end finds it.
  EXPECT_EQ(lines_of(sacct_p(c, {"-X", "-s", "F", "-S", "now-1hour", "-E", "now", "-o", "JobID,State"})),
            (std::vector<std::string>{b + "|FAILED"}));
  // The held array never became eligible: only -j lists it (Slurm 22.05's
  // rule); -s CA lists the job cancelled while held all the same.
  EXPECT_EQ(lines_of(sacct_p(c, {"-X", "--state=cancelled,pending", "-S", "now-1hour", "-E", "now", "-o", "JobID"})),
            (std::vector<std::string>{x}));
  EXPECT_EQ(lines_of(sacct_p(c, {"--name=env-gpu", "-o", "JobID"})), (std::vector<std::string>{g, g + ".batch"}));
  EXPECT_EQ(lines_of(sacct_p(c, {"-j", h + "_3", "-o", "JobID"})), (std::vector<std::string>{h + "_[2-4%25]"}));
  EXPECT_TRUE(lines_of(sacct_p(c, {"-u", "nobody", "-o", "JobID"})).empty());

  // The jobs leave memory (MinJobAge=2) and the controller restarts: sacct reads them from the store.
  std::this_thread::sleep_for(3s);
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller());
  ASSERT_TRUE(c.wait_nodes_responding());
  EXPECT_EQ(c.state(g), "") << "a finished job older than MinJobAge is out of squeue";
  EXPECT_EQ(sacct_p(c, {"-j", g + "," + b + "," + h + "," + x, fields}), before);
  EXPECT_EQ(lines_of(sacct_p(c, {"-X", "-o", "JobID"})), (std::vector<std::string>{g, b}))
      << "default window: since midnight, jobs that became eligible (not the two held ones)";
  EXPECT_TRUE(lines_of(sacct_p(c, {"-X", "-S", "now+1hour", "-E", "now+2hours", "-s", "CD", "-o", "JobID"})).empty());
}

// sacct -D: a requeued job's earlier run stays in the history, REQUEUED with
// its batch step CANCELLED 0:15 and its srun step CANCELLED with how its
// tasks ended (0:15, the requeue's SIGTERM), before the job's current
// record, as Slurm 22.05's sacct -D showed it on the anchor cluster; without
// -D only the current run; kept across a controller restart. The step's
// srun says how its tasks ended, as Slurm's did.
TEST(Accounting, SacctDuplicatesListsARequeuedJobsEarlierRuns) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string out = c.work() + "/requeued.out";
  std::string id =
      std::to_string(c.submit({"-o", out, "--open-mode=append", "--wrap", "srun sleep 300; echo srun=$?"}));
  ASSERT_TRUE(eventually([&] { return lines_of(sacct_p(c, {"-j", id, "-o", "JobID"})).size() == 3; }, 20s));
  ASSERT_EQ(c.run("scontrol", {"requeue", id}).rc, 0);
  // Back in the queue, it waits out the credential lifetime (AuthInfo
  // cred_expire=4 in these tests) as Slurm's requeued jobs do.
  EXPECT_TRUE(eventually([&] { return c.run("squeue", {"-h", "-j", id, "-o", "%t %r"}).out == "PD BeginTime\n"; }, 3s))
      << "CG while its processes end, then PD";
  ASSERT_TRUE(eventually([&] { return lines_of(sacct_p(c, {"-j", id, "-o", "JobID"})).size() == 3; }, 20s))
      << "the job runs again, with its step";
  const std::string now_running = id + "|RUNNING|0:0\n" + id + ".batch|RUNNING|0:0\n" + id + ".0|RUNNING|0:0\n";
  EXPECT_EQ(sacct_p(c, {"-j", id, "-o", "JobID,State,ExitCode"}), now_running);
  const std::string earlier = id + "|REQUEUED|0:0\n" + id + ".batch|CANCELLED|0:15\n" + id + ".0|CANCELLED|0:15\n";
  const std::string said = read_file(out);
  EXPECT_NE(said.find("srun: Job step aborted: Waiting up to "), std::string::npos) << said;
  EXPECT_TRUE(std::regex_search(said, std::regex("srun: error: [a-z0-9]+: task 0: Terminated\n"))) << said;
  EXPECT_EQ(sacct_p(c, {"-D", "-j", id, "-o", "JobID,State,ExitCode"}), earlier + now_running);
  EXPECT_EQ(sacct_p(c, {"-D", "-X", "-j", id, "-o", "JobID,State"}), id + "|REQUEUED\n" + id + "|RUNNING\n");
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller());
  ASSERT_TRUE(c.wait_nodes_responding());
  EXPECT_EQ(sacct_p(c, {"-D", "-j", id, "-o", "JobID,State,ExitCode"}), earlier + now_running);
  EXPECT_EQ(c.run("scancel", {id}).rc, 0);
}

// RequeueExit=3 and RequeueExitHold=4, as Slurm 22.05 did them on the
// anchor cluster: a script that exits 3 puts its job back in the queue
// (--no-requeue or not), its run REQUEUED 3:0 with its batch step FAILED
// 3:0, and it runs again with SLURM_RESTART_COUNT; one that exits 4 is held
// in SPECIAL_EXIT (SE, JobHeldUser) keeping ExitCode=4:0 for scontrol; one a
// signal ended and one exiting 5 end as before.
TEST(Accounting, RequeueExitPutsTheJobBackAndRequeueExitHoldHoldsIt) {
  ClusterDef def = small_cluster();
  def.extra = {"RequeueExit=3,10-12", "RequeueExitHold=4"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::string again = std::to_string(c.submit(
      {"--no-requeue", "-o", "/dev/null", "--wrap", "[ \"${SLURM_RESTART_COUNT:-0}\" -ge 1 ] && exit 0; exit 3"}));
  const std::string held = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "exit 4"}));
  const std::string killed = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "kill -9 $$"}));
  const std::string failed = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "exit 5"}));
  ASSERT_TRUE(eventually([&] { return c.run("squeue", {"-h", "-j", held, "-o", "%t %r"}).out == "SE JobHeldUser\n"; },
                         20s))
      << c.run("squeue", {"-j", held}).out;
  const std::string show = c.run("scontrol", {"show", "job", held}).out;
  EXPECT_NE(show.find("JobState=SPECIAL_EXIT Reason=JobHeldUser"), std::string::npos) << show;
  EXPECT_NE(show.find("Restarts=1"), std::string::npos) << show;
  EXPECT_NE(show.find(" ExitCode=4:0"), std::string::npos) << show;
  EXPECT_EQ(sacct_p(c, {"-D", "-j", held, "-o", "JobID,State,ExitCode"}),
            held + "|REQUEUED|4:0\n" + held + ".batch|FAILED|4:0\n" + held + "|PENDING|0:0\n");
  ASSERT_TRUE(c.wait_done(again, 30s));
  EXPECT_EQ(sacct_p(c, {"-D", "-j", again, "-o", "JobID,State,ExitCode"}),
            again + "|REQUEUED|3:0\n" + again + ".batch|FAILED|3:0\n" + again + "|COMPLETED|0:0\n" + again +
                ".batch|COMPLETED|0:0\n");
  ASSERT_TRUE(c.wait_done(killed));
  ASSERT_TRUE(c.wait_done(failed));
  EXPECT_EQ(sacct_p(c, {"-D", "-X", "-j", killed + "," + failed, "-o", "JobID,State,ExitCode"}),
            killed + "|FAILED|0:9\n" + failed + "|FAILED|5:0\n");
  EXPECT_EQ(c.run("scancel", {held}).rc, 0);
}

}  // namespace
}  // namespace drover::e2e

namespace drover::e2e {
namespace {

const char* kSeedQos =
    "Name=normal GrpTRES=cpu=16000,gres/gpu=256 Priority=1000\n"
    "Name=training GrpTRES=gres/gpu=128 Priority=3000\n"
    "Name=debug MaxTime=04:00:00 Priority=5000\n";

std::string fmt_pad(const std::string& s) { return std::string(10 - std::min<std::size_t>(10, s.size()), ' ') + s; }

std::string cluster_of(const TestCluster& c) {
  auto r = c.run("scontrol", {"show", "config"});
  std::smatch m;
  std::regex_search(r.out, m, std::regex(R"(ClusterName\s*=\s*(\S+))"));
  return m[1];
}

// sacct's Reason is what the accounting recorded: the last reason a job
// waited for other than None, Priority and Resources, as Slurm 22.05's sacct
// showed Dependency for jobs that waited on afterok/afterany and then ran,
// JobHeldUser for one held and released, None for one that never waited
// (anchor cluster, 2026-12-07).
TEST(Accounting, SacctReasonIsTheLastReasonTheJobWaitedFor) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string first = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "sleep 1"}));
  const std::string after = std::to_string(c.submit({"-o", "/dev/null", "-d", "afterok:" + first, "--wrap", "true"}));
  const std::string held = std::to_string(c.submit({"-H", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(eventually([&] { return c.reason(held) == "JobHeldUser" && c.reason(after) == "Dependency"; }, 10s));
  EXPECT_EQ(sacct_p(c, {"-X", "-j", held + "," + first, "-o", "JobID,State,Reason"}),
            first + "|RUNNING|None\n" + held + "|PENDING|JobHeldUser\n");
  ASSERT_EQ(c.run("scontrol", {"release", held}).rc, 0);
  ASSERT_TRUE(c.wait_done(after));
  ASSERT_TRUE(c.wait_done(held));
  EXPECT_EQ(sacct_p(c, {"-X", "-j", first + "," + after + "," + held, "-o", "JobID,State,Reason"}),
            first + "|COMPLETED|None\n" + after + "|COMPLETED|Dependency\n" + held + "|COMPLETED|JobHeldUser\n");
}

TEST(Sacctmgr, SeedsQosOnceThenManagesQosAccountsAndUsersDurably) {
  ClusterDef def = small_cluster();
  def.qos_conf = kSeedQos;
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  // The anchor's view of the seed's QOS (sacctmgr_show_qos.txt), byte for byte.
  auto qos = c.run("sacctmgr", {"show", "qos", "format=Name,Priority,GrpTRES%40,MaxWall,MaxTRESPU%20"});
  ASSERT_EQ(qos.rc, 0) << qos.err;
  EXPECT_EQ(qos.out,
            "      Name   Priority                                  GrpTRES     MaxWall            MaxTRESPU \n"
            "---------- ---------- ---------------------------------------- ----------- -------------------- \n"
            "    normal       1000                   cpu=16000,gres/gpu=256                                  \n"
            "  training       3000                             gres/gpu=128                                  \n"
            "     debug       5000                                             04:00:00                      \n");
  // The anchor's setup.sh starts with its cluster: this controller's is there already.
  auto mine = c.run("sacctmgr", {"-i", "add", "cluster", cluster_of(c)});
  EXPECT_EQ(mine.rc, 0) << mine.err;
  auto other = c.run("sacctmgr", {"-i", "add", "cluster", "elsewhere"});
  EXPECT_EQ(other.rc, 1);
  EXPECT_NE(other.err.find("serves one cluster, " + cluster_of(c)), std::string::npos) << other.err;
  // The anchor's accounts and users, made with sacctmgr -i (alice need not exist here).
  for (const auto& args : std::vector<std::vector<std::string>>{{"-i", "add", "account", "research", "Fairshare=1"},
                                                                {"-i", "add", "user", "alice", "Account=research"},
                                                                {"-i", "add", "user", "root", "Account=research"}}) {
    auto r = c.run("sacctmgr", args);
    EXPECT_EQ(r.rc, 0) << r.err;
  }
  auto assoc = c.run("sacctmgr", {"show", "assoc", "format=Cluster,Account,User,Partition,QOS%30,DefaultQOS"});
  ASSERT_EQ(assoc.rc, 0) << assoc.err;
  std::string golden =
      "   Cluster    Account       User  Partition                            QOS   Def QOS \n"
      "---------- ---------- ---------- ---------- ------------------------------ --------- \n"
      "    anchor       root                                debug,normal,training    normal \n"
      "    anchor       root       root                     debug,normal,training    normal \n"
      "    anchor   research                                debug,normal,training    normal \n"
      "    anchor   research      alice                     debug,normal,training    normal \n"
      "    anchor   research       root                     debug,normal,training    normal \n";
  std::string name = cluster_of(c);
  std::string shown = name.size() > 10 ? name.substr(0, 9) + "+" : name;
  for (std::size_t at; (at = golden.find("    anchor")) != std::string::npos;) {
    golden.replace(at, 10, fmt_pad(shown));
  }
  EXPECT_EQ(assoc.out, golden);
  // snakemake's and Open OnDemand's calls.
  auto sm = c.run("sacctmgr", {"-n", "-s", "list", "user", "root", "format=account%20"});
  EXPECT_EQ(sm.out, "            research \n                root \n") << sm.err;  // by account name, as Slurm 22.05
  auto accounts = c.run("sacctmgr", {"-nP", "show", "account", "format=account"});
  EXPECT_EQ(accounts.out, "research\nroot\n") << accounts.err;
  auto ood = c.run("sacctmgr", {"-nP", "show", "users", "withassoc", "format=account,qos", "where", "user=alice",
                                "cluster=" + name});
  EXPECT_EQ(ood.out, "research|debug,normal,training\n") << ood.err;

  // Without -i sacctmgr asks; "n" (or nothing) discards, "y" commits.
  auto no = c.run("sacctmgr", {"add", "qos", "low", "Priority=10"}, {}, "n\n");
  EXPECT_NE(no.out.find("Would you like to commit changes? (You have 30 seconds to decide)"), std::string::npos);
  EXPECT_NE(no.out.find("Changes Discarded"), std::string::npos) << no.out;
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "qos", "low", "format=name"}).out, "");
  auto yes = c.run("sacctmgr", {"add", "qos", "low", "Priority=10", "MaxTRESPerUser=cpu=4"}, {}, "y\n");
  EXPECT_EQ(yes.rc, 0) << yes.err;
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "qos", "low", "format=name,priority,maxtrespu"}).out, "low|10|cpu=4\n");
  // Bad input names what is wrong.
  auto bad = c.run("sacctmgr", {"-i", "modify", "qos", "debug", "set", "MaxWall=banana"});
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("MaxWall"), std::string::npos) << bad.err;
  auto unknown = c.run("sacctmgr", {"-i", "add", "user", "bob", "Account=nosuch"});
  EXPECT_NE(unknown.rc, 0);
  // In Slurm 22.05's own lines (anchor cluster, 2026-12-08).
  EXPECT_EQ(unknown.err, " This account 'nosuch' doesn't exist.\n        Contact your admin to add this account.\n"
                         " No associations or wckeys created.\n");
  // An entity or command sacctmgr does not know: Slurm 22.05's lines, exit 1.
  auto entity = c.run("sacctmgr", {"add", "bogus", "x"});
  EXPECT_EQ(entity.rc, 1);
  EXPECT_EQ(entity.err, "No valid entity in add command\nInput line must include \"Account\", \"Cluster\", "
                        "\"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\"\n");
  auto listed = c.run("sacctmgr", {"list"});
  EXPECT_EQ(listed.rc, 1);
  EXPECT_EQ(listed.err.rfind("No valid entity in list command\n", 0), 0u) << listed.err;
  auto keyword = c.run("sacctmgr", {"bogus"});
  EXPECT_EQ(keyword.rc, 1);
  EXPECT_EQ(keyword.err, "invalid keyword: bogus\n");
  // A condition or a field it does not know: Slurm 22.05's lines (anchor
  // cluster, 2026-12-06), the condition and every one after it, exit 1.
  auto cond = c.run("sacctmgr", {"show", "assoc", "where", "user=root", "bogus=1", "account=root"});
  EXPECT_EQ(cond.rc, 1);
  EXPECT_EQ(cond.out, "");
  EXPECT_EQ(cond.err, " Unknown condition: bogus=1\n Unknown condition: account=root\n");
  auto user_cond = c.run("sacctmgr", {"show", "user", "where", "bogus=1"});
  EXPECT_EQ(user_cond.err, " Unknown condition: bogus=1\n Use keyword 'set' to modify value\n");
  auto field = c.run("sacctmgr", {"show", "assoc", "format=Bogus"});
  EXPECT_EQ(field.rc, 1);
  EXPECT_EQ(field.err, "Unknown field 'bogus'\n");
  // Its cluster's controller by address, as Slurm's registered one.
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "cluster", "format=ControlHost"}).out, "127.0.0.1\n");
  // Slurm's QOS Flags column is 40 wide.
  EXPECT_NE(c.run("sacctmgr", {"show", "qos"}).out.find(" PreemptMode                                    Flags "),
            std::string::npos);
  // As Slurm's: options after the command, a change that touches nothing
  // (exit 1), QOS+= on a list, and the trackable resources.
  EXPECT_EQ(c.run("sacctmgr", {"show", "qos", "low", "format=name,priority", "-P"}).out, "Name|Priority\nlow|10\n");
  auto again = c.run("sacctmgr", {"-i", "add", "qos", "low"});
  EXPECT_EQ(again.rc, 1);
  EXPECT_EQ(again.out, " Nothing new added.\n");
  auto plus = c.run("sacctmgr", {"-i", "modify", "user", "alice", "set", "qos+=low"});
  EXPECT_EQ(plus.rc, 0) << plus.err;
  std::string left = cluster_of(c);  // the cluster's name, left in ten columns
  left.resize(std::max<std::size_t>(10, left.size()), ' ');
  EXPECT_EQ(plus.out, " Modified user associations...\n  C = " + left + " A = research             U = alice    \n");
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "assoc", "user=alice", "format=qos"}).out, "debug,low,normal,training\n");
  EXPECT_EQ(c.run("sacctmgr", {"-i", "modify", "user", "alice", "set", "qos-=low"}).rc, 0);
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "assoc", "user=alice", "format=qos"}).out, "debug,normal,training\n");
  auto tres = c.run("sacctmgr", {"show", "tres", "-nP"});
  EXPECT_EQ(tres.out, "cpu||1\nmem||2\nenergy||3\nnode||4\nbilling||5\nfs|disk|6\nvmem||7\npages||8\n"
                      "gres|gpu|1001\ngres|gpu:h100|1002\ngres|gpu:a100|1003\n")
      << tres.err;
  // The anchor's widths (Type 8, Name 15: Slurm 22.05 printed "    gres        gpu:a100   1003 " on
  // 2026-12-05), and its clusters' columns.
  EXPECT_EQ(lines_of(c.run("sacctmgr", {"show", "tres"}).out).back(), "    gres        gpu:a100   1003 ");
  std::string port;
  for (const auto& l : lines_of(c.run("scontrol", {"show", "config"}).out)) {
    if (l.rfind("SlurmctldPort ", 0) == 0) port = l.substr(l.find("= ") + 2);
  }
  auto clusters = c.run("sacctmgr", {"-nP", "list", "clusters", "format=cluster,controlport,rpc,share,qos,defaultqos"});
  EXPECT_EQ(clusters.out, cluster_of(c) + "|" + port + "|9728|1|debug,normal,training|normal\n") << clusters.err;
  // Entities of Slurm's that Drover's sacctmgr has not: said so; runaway jobs: none, ever.
  auto wckeys = c.run("sacctmgr", {"show", "wckeys"});
  EXPECT_EQ(wckeys.rc, 1);
  EXPECT_EQ(wckeys.err, "sacctmgr: error: `show wckeys` is not implemented yet in this version of Drover (its "
                        "sacctmgr has qos, account, user, association, cluster, event, tres, problem and "
                        "runawayjobs)\n");
  // show problem: an account with neither users nor sub-accounts, a user this
  // host does not know (Slurm 22.05's lines on the anchor cluster).
  const std::string alice = user_by_name("alice") ? "" : "||alice|User does not have a uid\n";
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "problem"}).out, alice);
  ASSERT_FALSE(user_by_name("nouid99"));
  for (const auto& args : std::vector<std::vector<std::string>>{{"-i", "add", "account", "empty1"},
                                                                {"-i", "add", "account", "parent2"},
                                                                {"-i", "add", "account", "child2", "parent=parent2"},
                                                                {"-i", "add", "user", "nouid99", "account=research"}}) {
    EXPECT_EQ(c.run("sacctmgr", args).rc, 0);
  }
  EXPECT_EQ(c.run("sacctmgr", {"-P", "show", "problem"}).out,
            "Cluster|Account|User|Problem\n" + cluster_of(c) + "|child2||Account has no users\n" + cluster_of(c) +
                "|empty1||Account has no users\n" + alice + "||nouid99|User does not have a uid\n");
  for (const auto& args : std::vector<std::vector<std::string>>{{"-i", "delete", "user", "nouid99"},
                                                                {"-i", "delete", "account", "child2"},
                                                                {"-i", "delete", "account", "parent2"},
                                                                {"-i", "delete", "account", "empty1"}}) {
    EXPECT_EQ(c.run("sacctmgr", args).rc, 0);
  }
  EXPECT_EQ(c.run("sacctmgr", {"show", "runawayjobs"}).out,
            "Runaway Jobs: No runaway jobs found on cluster " + cluster_of(c) + "\n");

  // The scheduler uses a QOS change from its next cycle: a 2-hour job in debug now waits on MaxWall.
  ASSERT_EQ(c.run("sacctmgr", {"-i", "modify", "qos", "debug", "set", "MaxWall=01:00:00"}).rc, 0);
  int64_t job = c.submit({"--qos=debug", "-t", "2:00:00", "--wrap", "true"});
  ASSERT_GT(job, 0) << c.last_error();
  EXPECT_TRUE(eventually([&] { return c.reason(std::to_string(job)) == "QOSMaxWallDurationPerJobLimit"; }, 10s))
      << c.reason(std::to_string(job));
  // A job without -A gets the user's default account.
  auto acct = c.run("sacct", {"-nP", "-X", "-j", std::to_string(job), "-o", "Account,QOS"});
  EXPECT_EQ(acct.out, "root|debug\n");

  // Durable: after kill -9 the store's records stand, and qos.conf is not read again.
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller());
  ASSERT_TRUE(c.wait_nodes_responding());
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "qos", "format=name,maxwall"}).out,
            "normal|\ntraining|\ndebug|01:00:00\nlow|\n");
  EXPECT_EQ(c.run("sacctmgr", {"-n", "show", "assoc", "format=Cluster,Account,User,Partition,QOS%30,DefaultQOS"}).out,
            golden.substr(golden.find('\n', golden.find('\n') + 1) + 1));
  // Deleting.
  EXPECT_EQ(c.run("sacctmgr", {"-i", "delete", "user", "alice"}).rc, 0);
  EXPECT_EQ(c.run("sacctmgr", {"-i", "delete", "qos", "low"}).rc, 0);
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "user", "format=user"}).out, "root\n");
  // An account with a user: deleted with the user's association there, the
  // user kept (Slurm 22.05's sacctmgr on the anchor cluster, 2026-12-08).
  auto with_user = c.run("sacctmgr", {"-i", "delete", "account", "research"});
  EXPECT_EQ(with_user.rc, 0) << with_user.err;
  EXPECT_EQ(with_user.out, " Deleting accounts...\n  research\n");
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "user", "format=user"}).out, "root\n");
  auto root_assocs = c.run("sacctmgr", {"-nP", "show", "assoc", "where", "user=root", "format=account"});
  EXPECT_EQ(root_assocs.out.find("research"), std::string::npos) << root_assocs.out;
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "account", "format=account"}).out.find("research"), std::string::npos);
}

// sacct -B / --env-vars: a job's script and environment as submitted, kept
// in the store (a kill -9 of the controller loses nothing), for its owner and
// root; another user gets nothing.
TEST(Sacct, BatchScriptAndEnvVarsAreKeptForTheOwner) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string script = "#!/bin/bash\n#SBATCH -J scr\necho hi\n";
  std::string id = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "true"}));
  ASSERT_NE(id, "-1") << c.last_error();
  auto sb = c.run("sbatch", {"--parsable", "-o", "/dev/null"}, {}, script);
  ASSERT_EQ(sb.rc, 0) << sb.err;
  std::string sid = sb.out.substr(0, sb.out.find_first_of(";\n"));
  ASSERT_TRUE(c.wait_done(sid));
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller()) << c.error();
  const std::string rule(80, '-');
  EXPECT_EQ(c.run("sacct", {"-B", "-j", sid}).out, "Batch Script for " + sid + "\n" + rule + "\n" + script + "\n");
  auto env = c.run("sacct", {"--env-vars", "-j", id});
  EXPECT_EQ(env.out.rfind("Environment used for " + id + " (must be batch to display)\n" + rule + "\n", 0), 0u)
      << env.out;
  EXPECT_NE(env.out.find("\nPATH="), std::string::npos) << env.out;
  // The command line that submitted each job, its words joined by blanks (Slurm 22.05's SubmitLine).
  auto line = c.run("sacct", {"-n", "-P", "-o", "JobID,SubmitLine", "-j", id + "," + sid});
  EXPECT_TRUE(std::regex_search(line.out, std::regex("^" + id + "\\|\\S*sbatch --parsable -o /dev/null --wrap true\n" + id +
                                                      "\\.batch\\|\n" + sid + "\\|\\S*sbatch --parsable -o /dev/null\n")))
      << line.out;
  auto no_ids = c.run("sacct", {"-B"});
  EXPECT_EQ(no_ids.rc, 1);
  if (auto user = ensure_user("drover-e2e-acct")) {
    auto theirs = c.run("sacct", {"-B", "-j", sid}, user->as());
    EXPECT_EQ(theirs.rc, 0);
    EXPECT_EQ(theirs.out, "");
  }
}

// Association limits through the commands, under AccountingStorageEnforce=limits:
// MaxJobs on root's association holds its second job with Slurm's reason, the
// account's MaxWall becomes the time limit of a job that gives none, and a
// restart of the controller keeps the limits.
TEST(Sacctmgr, AssociationLimitsHoldJobsAsSlurmsDo) {
  ClusterDef def = small_cluster();
  def.extra.push_back("AccountingStorageEnforce=associations,limits");
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  ASSERT_EQ(c.run("sacctmgr", {"-i", "add", "account", "lab"}).rc, 0);
  ASSERT_EQ(c.run("sacctmgr", {"-i", "add", "user", "root", "account=lab"}).rc, 0);
  auto set = c.run("sacctmgr", {"-i", "modify", "account", "lab", "set", "MaxWall=2:00:00", "GrpJobs=5"});
  ASSERT_EQ(set.rc, 0) << set.err;
  ASSERT_EQ(c.run("sacctmgr", {"-i", "modify", "user", "root", "where", "account=lab", "set", "MaxJobs=1"}).rc, 0);
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "assoc", "account=lab", "format=user,grpjobs,maxjobs,maxwall"}).out,
            "|5||02:00:00\nroot||1|02:00:00\n");
  std::string first = std::to_string(c.submit({"-A", "lab", "-o", "/dev/null", "--wrap", "sleep 30"}));
  std::string second = std::to_string(c.submit({"-A", "lab", "-o", "/dev/null", "--wrap", "sleep 30"}));
  EXPECT_TRUE(eventually([&] { return c.state(first) == "RUNNING"; }, 10s));
  EXPECT_TRUE(eventually([&] { return c.reason(second) == "AssocMaxJobsLimit"; }, 10s)) << c.reason(second);
  EXPECT_EQ(c.job_fields(second)["TimeLimit"], "02:00:00") << "the account's MaxWall, not the partition's 7 days";
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller()) << c.error();
  ASSERT_TRUE(c.wait_nodes_responding());
  EXPECT_TRUE(eventually([&] { return c.reason(second) == "AssocMaxJobsLimit"; }, 10s)) << c.reason(second);
  ASSERT_EQ(c.run("sacctmgr", {"-i", "modify", "user", "root", "set", "MaxJobs=-1"}).rc, 0);
  EXPECT_TRUE(eventually([&] { return c.state(second) == "RUNNING"; }, 10s)) << c.reason(second);
}

// sacctmgr lines as public scripts write them, answered as Slurm 22.05's sacctmgr answered them on the
// anchor cluster (2026-12-05): verbs and keys by their shorter names (mod, Descr=, Org=), a TRES limit given
// twice adds up, Preempt= is kept and shown, `tree` indents accounts under their parents, `withsubaccounts`
// takes the accounts below, descriptions are kept in lower case, an admin level reads Administrator, and
// `show user` without withassoc has no account.
TEST(Sacctmgr, TakesTheLinesScriptsWrite) {
  ClusterDef def = small_cluster();
  def.qos_conf = kSeedQos;
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  auto r = c.run("sacctmgr", {"-i", "create", "account", "labs", "Descr=Scientists", "Org=Various"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("  Description     = scientists\n  Organization    = various\n"), std::string::npos) << r.out;
  r = c.run("sacctmgr", {"-i", "create", "account", "sponsor", "FairShare=5", "Descr=sponsor", "Parent=labs"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(" Settings\n  Fairshare     = 5\n  Parent        = labs\n"), std::string::npos) << r.out;
  r = c.run("sacctmgr", {"-i", "mod", "account", "where", "name=sponsor", "set", "Org=Other"});
  EXPECT_EQ(r.out, " Modified accounts...\n  sponsor\n") << r.err;
  auto tree = lines_of(c.run("sacctmgr", {"-n", "show", "assoc", "tree", "where", "account=labs", "withsubaccounts",
                                          "format=Account,Share"}).out);
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree[0].rfind("labs                         1", 0), 0u) << tree[0];
  EXPECT_EQ(tree[1].rfind(" sponsor                     5", 0), 0u) << tree[1];
  ASSERT_EQ(c.run("sacctmgr", {"-i", "add", "qos", "job25"}).rc, 0);
  r = c.run("sacctmgr", {"-i", "modify", "qos", "job25", "set", "MaxTRESPerUser=mem=512G", "MaxTRESPerUser=cpu=100",
                         "Preempt=normal"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "qos", "job25", "format=Name,MaxTRESPerUser,Preempt"}).out,
            "job25|cpu=100,mem=512G|normal\n");
  ASSERT_EQ(c.run("sacctmgr", {"-i", "modify", "user", "where", "user=root", "set", "adminlevel=admin"}).rc, 0);
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "user", "root", "format=User,Account,Admin"}).out, "root||Administrator\n");
  r = c.run("sacctmgr", {"-i", "modify", "account", "sponsor", "set", "qos=training"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("don't have access to their default qos"), std::string::npos) << r.err;
}

TEST(Sacctmgr, OnlyOperatorsChangeAccounting) {
  auto user = ensure_user("drover-e2e-acct");
  if (!user) GTEST_SKIP() << "needs root to create a test user";
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  // Slurm 22.05's words for each refusal (alice on the anchor cluster), then Drover's line; exit 1.
  auto r = c.run("sacctmgr", {"-i", "add", "account", "mine"}, user->as());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.rfind(" Problem adding accounts: Access/permission denied\nsacctmgr: error: drover: only root", 0), 0u)
      << r.err;
  EXPECT_EQ(r.out.rfind(" Adding Account(s)\n  mine\n", 0), 0u) << "what it would have added: " << r.out;
  const std::string no_privilege =
      "sacctmgr: error: Your user doesn't have privilege to perform this action\n Error with request: "
      "Access/permission denied\n";
  for (const auto& words : std::vector<std::vector<std::string>>{{"modify", "qos", "normal", "set", "priority=5"},
                                                                 {"delete", "qos", "normal"}}) {
    std::vector<std::string> args{"-i"};
    args.insert(args.end(), words.begin(), words.end());
    r = c.run("sacctmgr", args, user->as());
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err.rfind(no_privilege, 0), 0u) << r.err;
  }
  ASSERT_EQ(c.run("sacctmgr", {"-i", "add", "account", "a1,a2"}).rc, 0);
  ASSERT_EQ(c.run("sacctmgr", {"-i", "add", "user", user->name, "account=a1,a2", "defaultaccount=a1"}).rc, 0);
  r = c.run("sacctmgr", {"-i", "modify", "user", user->name, "set", "qos=normal"}, user->as());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, " Nothing modified\n");
  EXPECT_EQ(r.err.rfind("sacctmgr: accounting_storage/slurmdbd: acct_storage_p_modify_assocs: Request didn't affect "
                        "anything or your user doesn't have privilege to perform this action\n",
                        0),
            0u)
      << r.err;
  // A user's own default account is theirs to set, as Slurm's.
  r = c.run("sacctmgr", {"-i", "modify", "user", "where", "name=" + user->name, "set", "defaultaccount=a2"}, user->as());
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "user", user->name, "format=User,DefaultAccount"}).out,
            user->name + "|a2\n");
  EXPECT_EQ(c.run("sacctmgr", {"-nP", "show", "account", "format=account"}, user->as()).out, "a1\na2\nroot\n");
}

}  // namespace
}  // namespace drover::e2e

namespace drover::e2e {
namespace {

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

// sprio and sshare on the anchor's priority weights: Slurm's headers, factors that add up to the
// priority the scheduler ordered by, usage from the jobs that ran, the exporter's sshare call.
TEST(PriorityAndShares, SprioAndSshareShowTheSchedulersFigures) {
  ClusterDef def = small_cluster();
  def.qos_conf = kSeedQos;
  def.extra = {"PriorityType=priority/multifactor", "PriorityDecayHalfLife=7-0", "PriorityMaxAge=7-0",
               "PriorityWeightAge=1000", "PriorityWeightFairshare=10000", "PriorityWeightJobSize=1000",
               "PriorityWeightPartition=1000", "PriorityWeightQOS=10000",
               "PriorityWeightTRES=CPU=1000,GRES/gpu=5000"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  int64_t ran = c.submit({"-c", "2", "--wrap", "sleep 2"});
  ASSERT_GT(ran, 0);
  ASSERT_TRUE(c.wait_done(std::to_string(ran)));
  // Every node busy, so that the two jobs below wait for resources: sprio
  // lists the pending jobs that compete for them, as Slurm's (not a held
  // job, nor one waiting for its begin time or another job).
  for (const char* node : {"hgpu1", "lgpu1", "cpu1", "cpu2"}) {
    int64_t busy = c.submit({"-p", std::string(node) == "hgpu1" ? "gpu" : "compute", "-w", node, "--exclusive",
                             "-t", "10", "-o", "/dev/null", "--wrap", "sleep 60"});
    ASSERT_GT(busy, 0) << c.last_error();
    ASSERT_TRUE(c.wait_state(std::to_string(busy), {"RUNNING"})) << node;
  }
  int64_t a = c.submit({"-p", "gpu", "--gres=gpu:h100:2", "-c", "2", "--qos=training", "--wrap", "true"});
  int64_t b = c.submit({"-c", "4", "--wrap", "true"});
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  auto sp = c.run("sprio", {});
  ASSERT_EQ(sp.rc, 0) << sp.err;
  auto lines = lines_of(sp.out);
  ASSERT_EQ(lines.size(), 3u) << sp.out;
  EXPECT_EQ(lines[0], "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION"
                      "        QOS                 TRES");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto w = words_of(lines[i]);
    ASSERT_EQ(w.size(), 10u) << lines[i];
    int64_t sum = 0;
    for (int k = 3; k <= 8; ++k) sum += std::stoll(w[k]);
    for (const auto& t : split(w[9], ',')) sum += std::stoll(t.substr(t.find('=') + 1));
    EXPECT_NEAR(static_cast<double>(std::stoll(w[2])), static_cast<double>(sum), 3.0) << lines[i];
  }
  auto aw = words_of(lines[1]);
  EXPECT_EQ(aw[0], std::to_string(a));
  EXPECT_EQ(aw[8], "6000") << "training: Priority 3000 of the largest 5000, weight 10000";
  // %t (sprio -n): each TRES factor before its weight, two decimals, as Slurm 22.05's ("cpu=0.00,gres/gpu=0.03").
  auto tres = split(trim(c.run("sprio", {"-h", "-j", std::to_string(a), "-o", "%T|%t"}).out), '|');
  ASSERT_EQ(tres.size(), 2u);
  auto weighted = split(tres[0], ','), normalized = split(tres[1], ',');
  ASSERT_EQ(weighted.size(), 2u) << tres[0];
  ASSERT_EQ(normalized.size(), 2u) << tres[1];
  EXPECT_EQ(normalized[1], "gres/gpu=0.17") << "2 of the partition's 12 GPUs";
  EXPECT_EQ(weighted[1], "gres/gpu=833");
  EXPECT_EQ(normalized[0].rfind("cpu=0.0", 0), 0u) << tres[1];
  auto l = c.run("sprio", {"-l"});
  EXPECT_EQ(lines_of(l.out).at(0),
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  FAIRSHARE    JOBSIZE  "
            "PARTITION        QOS        NICE                 TRES");
  auto wts = c.run("sprio", {"-w"});
  EXPECT_NE(wts.out.find("Weights"), std::string::npos) << wts.out;
  EXPECT_NE(wts.out.find("10000"), std::string::npos) << wts.out;
  auto only = c.run("sprio", {"-h", "--jobs=" + std::to_string(b), "-o", "%i %Y"});  // -j takes its value attached, as Slurm's
  EXPECT_EQ(words_of(only.out).at(0), std::to_string(b)) << only.out;
  // %y: the priority over 2^32 - 1, as Slurm 22.05's (9738 gave 0.00000226740916 on the anchor cluster).
  auto norm = c.run("sprio", {"-h", "--jobs=" + std::to_string(b), "-o", "%Y %.20y"});
  auto nw = words_of(norm.out);
  ASSERT_EQ(nw.size(), 2u) << norm.out;
  char expected[64];
  std::snprintf(expected, sizeof expected, "%.14f", std::stod(nw[0]) / 4294967295.0);
  EXPECT_EQ(nw[1], expected) << norm.out;
  // TRESRunMins: what the running jobs hold times the minutes left of their
  // limits (10 minutes, begun minutes counted), every TRES in Slurm's order;
  // root's NormUsage blank, as Slurm 22.05's sshare on the anchor cluster.
  auto run_mins = c.run("sshare", {"-n", "-P", "-o", "Account,User,NormUsage,TRESRunMins"});
  ASSERT_EQ(run_mins.rc, 0) << run_mins.err;
  auto top = split(lines_of(run_mins.out).at(0), '|');
  ASSERT_EQ(top.size(), 4u) << run_mins.out;
  EXPECT_EQ(top[0] + "|" + top[1] + "|" + top[2], "root||");
  const std::regex order("cpu=[0-9]+,mem=[0-9]+,energy=0,node=([0-9]+),billing=[0-9]+,fs/disk=0,vmem=0,pages=0,"
                         "gres/gpu=[0-9]+.*");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(top[3], m, order)) << top[3];
  const int64_t node_mins = std::stoll(m[1].str());
  EXPECT_TRUE(node_mins >= 36 && node_mins <= 40) << "four one-node jobs, 9 or 10 minutes left each: " << top[3];

  // Usage is charged by the full pass (every bf_interval=2 s here, as Slurm
  // charges it every PriorityCalcPeriod): the job's last seconds show once
  // one has run after it ended, so wait for one.
  std::vector<std::string> sl, root_user;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  do {
    auto sh = c.run("sshare", {"-a"});
    ASSERT_EQ(sh.rc, 0) << sh.err;
    sl = lines_of(sh.out);
    ASSERT_GE(sl.size(), 4u) << sh.out;
    root_user = words_of(sl[3]);
    ASSERT_EQ(root_user.size(), 7u) << sl[3];
    if (std::stoll(root_user[4]) >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(sl[0], "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare ");
  EXPECT_EQ(root_user[0], "root");
  EXPECT_EQ(root_user[1], "root");
  EXPECT_GE(std::stoll(root_user[4]), 2) << "the sleep 2 job's CPU-seconds: " << sl[3];
  // The exporter: sshare -n -P -o account,fairshare, split on '|'.
  auto ex = c.run("sshare", {"-n", "-P", "-o", "account,fairshare"});
  ASSERT_EQ(ex.rc, 0) << ex.err;
  for (const auto& line : lines_of(ex.out)) EXPECT_EQ(split(line, '|').size(), 2u) << line;
}

}  // namespace
}  // namespace drover::e2e

namespace drover::e2e {
namespace {

// The cluster's events (sacctmgr show event; what sreport counts as Down and
// Reported): the TRES the cluster registered at its first start, and each
// stretch a node spent drained or down, with its reason and who set it, as
// Slurm 22.05's lists them. They survive a kill -9 of the controller; the
// cluster's TRES event is not repeated by a restart with the same nodes.
TEST(Accounting, EventsKeepWhenNodesWereDownAndTheClustersTres) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto events = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> a{"-P", "-n", "show", "event"};
    a.insert(a.end(), extra.begin(), extra.end());
    auto r = c.run("sacctmgr", a);
    EXPECT_EQ(r.rc, 0) << r.err;
    return lines_of(r.out);
  };
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu1", "State=DRAIN", "Reason=bad dimm"}).rc, 0);
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu1", "State=RESUME"}).rc, 0);
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu2", "State=DOWN", "Reason=gone"}).rc, 0);
  const std::string tres = "billing=64,cpu=64,gres/gpu:a100=4,gres/gpu:h100=8,gres/gpu=12,mem=262144M,node=4";
  auto check = [&] {
    auto rows = events({"format=NodeName,State,Reason,User,End"});
    ASSERT_EQ(rows.size(), 3u) << join(rows, "\n");
    EXPECT_EQ(rows[0], "||Cluster Registered TRES||Unknown");
    EXPECT_TRUE(std::regex_match(rows[1], std::regex("cpu1\\|DRAIN\\|bad dimm\\|root\\(0\\)\\|20\\d\\d-.*")))
        << rows[1];
    EXPECT_EQ(rows[2], "cpu2|DOWN|gone|root(0)|Unknown");
    EXPECT_EQ(events({"event=cluster", "format=TRES,ClusterNodes"}),
              (std::vector<std::string>{tres + "|cpu[1-2],hgpu1,lgpu1"}));
    EXPECT_EQ(events({"states=down", "format=NodeName"}), (std::vector<std::string>{"cpu2"}));
    EXPECT_EQ(events({"nodes=cpu1", "format=NodeName"}), (std::vector<std::string>{"cpu1"}));
    EXPECT_TRUE(events({"start=now-3hours", "end=now-2hours"}).empty());
  };
  check();
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller());
  ASSERT_TRUE(c.wait_nodes_responding());
  check();
  // Resumed: its event ends; nothing is open any more but the cluster's.
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu2", "State=RESUME"}).rc, 0);
  EXPECT_EQ(events({"condflags=open", "format=Event,NodeName"}), (std::vector<std::string>{"Cluster|"}));
  auto bad = c.run("sacctmgr", {"show", "event", "bogus=1"});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(bad.err, " Unknown condition: bogus=1\n");

  // A reservation's window is kept too (sreport's reservation report and
  // its Allocated/PLND Down): deleted early, it ends then. sacctmgr does
  // not list it, as Slurm's does not.
  const int64_t before = std::time(nullptr);
  ASSERT_EQ(c.run("scontrol", {"create", "reservation", "ReservationName=fix", "StartTime=now", "Duration=60",
                               "Nodes=cpu1", "Users=root", "Flags=MAINT"}).rc, 0);
  ASSERT_EQ(c.run("scontrol", {"delete", "ReservationName=fix"}).rc, 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((c.dir() + "/state/state.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db, "SELECT payload FROM events WHERE key LIKE '@fix%'", -1, &q, nullptr);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  v1::ClusterEvent fix;
  ASSERT_TRUE(fix.ParseFromArray(sqlite3_column_blob(q, 0), sqlite3_column_bytes(q, 0)));
  sqlite3_finalize(q);
  sqlite3_close(db);
  EXPECT_EQ(fix.reservation(), "fix");
  EXPECT_EQ(fix.flags(), "MAINT,SPEC_NODES");
  EXPECT_EQ(fix.nodes(), "cpu1");
  EXPECT_EQ(fix.tres().at("cpu"), 16);
  EXPECT_GE(fix.start_time(), before - 1);
  EXPECT_LT(fix.end_time(), fix.start_time() + 60) << "deleted at once, it ends then (not at its hour's end)";
  EXPECT_EQ(events({"condflags=open", "format=Event,NodeName"}), (std::vector<std::string>{"Cluster|"}));

  // sreport reads the same history: whole hours only, so a cluster started
  // minutes ago has no row yet, but the report and its layout are there.
  auto r = c.run("sreport", {"cluster", "utilization", "start=now-4hours", "end=now-2hours"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 6u) << r.out;
  EXPECT_EQ(lines[0], std::string(80, '-'));
  EXPECT_EQ(lines[1].rfind("Cluster Utilization ", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2], "Usage reported in CPU Minutes");
  EXPECT_EQ(lines[4], "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported ");
}

}  // namespace
}  // namespace drover::e2e

namespace drover::e2e {
namespace {

// Rewrites the store's job `id` and events so that they lie in whole past
// hours (sreport reports only hours that have ended): the cluster registered
// at `h0`, the job ran from h0+10 min to h0+30 min, cpu2 was drained from
// h0+60 min for 10 minutes.
bool move_history(const std::string& db_path, int64_t id, int64_t h0) {
  sqlite3* db = nullptr;
  if (sqlite3_open(db_path.c_str(), &db) != SQLITE_OK) return false;
  auto rewrite = [&](const char* select, const char* update, auto&& change) {
    std::vector<std::pair<std::string, std::string>> rows;  // key text, payload
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(db, select, -1, &q, nullptr);
    while (sqlite3_step(q) == SQLITE_ROW) {
      rows.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)),
                        std::string(static_cast<const char*>(sqlite3_column_blob(q, 1)),
                                    static_cast<std::size_t>(sqlite3_column_bytes(q, 1))));
    }
    sqlite3_finalize(q);
    bool ok = true;
    for (auto& [key, payload] : rows) {
      int64_t end = 0;
      std::string out;
      if (!change(payload, out, end)) continue;
      sqlite3_prepare_v2(db, update, -1, &q, nullptr);
      sqlite3_bind_blob(q, 1, out.data(), static_cast<int>(out.size()), SQLITE_TRANSIENT);
      sqlite3_bind_int64(q, 2, end);
      sqlite3_bind_text(q, 3, key.c_str(), -1, SQLITE_TRANSIENT);
      ok = ok && sqlite3_step(q) == SQLITE_DONE;
      sqlite3_finalize(q);
    }
    return ok;
  };
  bool ok = rewrite("SELECT CAST(key AS TEXT), payload FROM jobs", "UPDATE jobs SET payload=?, end_time=? WHERE key=CAST(? AS INTEGER)",
                    [&](const std::string& in, std::string& out, int64_t& end) {
                      v1::JobRecord r;
                      if (!r.ParseFromString(in) || r.job_id() != id) return false;
                      r.set_submit_time(h0 + 600);
                      r.set_eligible_time(h0 + 600);
                      r.set_start_time(h0 + 600);
                      r.set_end_time(end = h0 + 1800);
                      return r.SerializeToString(&out);
                    });
  ok = ok && rewrite("SELECT key, payload FROM events", "UPDATE events SET payload=?, end_time=? WHERE key=?",
                     [&](const std::string& in, std::string& out, int64_t& end) {
                       v1::ClusterEvent e;
                       if (!e.ParseFromString(in)) return false;
                       if (e.node().empty()) {
                         e.set_start_time(h0);
                       } else {
                         e.set_start_time(h0 + 3600);
                         e.set_end_time(h0 + 4200);
                       }
                       end = e.end_time();
                       return e.SerializeToString(&out);
                     });
  sqlite3_close(db);
  return ok;
}

// sreport over hours that have ended, from the store's own history: the
// cluster's 64 CPUs for two hours (7,680 CPU-minutes), a 4-CPU job for 20
// minutes (80), a 16-CPU node drained for 10 minutes (160 Down).
TEST(Accounting, SreportCountsTheHoursThatEnded) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  int64_t job = c.submit({"-n", "4", "--mem=1G", "-J", "four", "--wrap", "true"});
  ASSERT_GT(job, 0);
  ASSERT_TRUE(c.wait_done(std::to_string(job)));
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu2", "State=DRAIN", "Reason=fan"}).rc, 0);
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu2", "State=RESUME"}).rc, 0);
  auto acct = c.run("sacct", {"-n", "-P", "-X", "-j", std::to_string(job), "-o", "Account"});
  ASSERT_EQ(acct.rc, 0) << acct.err;
  const std::string account(trim(acct.out));
  c.kill_controller(SIGTERM);
  const int64_t now = std::time(nullptr);
  const int64_t h0 = now - now % 3600 - 4 * 3600;  // whole hours in every time zone Drover runs in but half-hour ones
  ASSERT_TRUE(move_history(c.dir() + "/state/state.db", job, h0));
  ASSERT_TRUE(c.start_controller());
  ASSERT_TRUE(c.wait_nodes_responding());
  const std::string start = "start=" + format_timestamp(h0), end = "end=" + format_timestamp(h0 + 7200);
  auto r = c.run("sreport", {"-n", "-P", "cluster", "utilization", start, end});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, cluster_of(c) + "|80|160|0|7440|0|7680\n");
  r = c.run("sreport", {"-n", "-P", "-T", "cpu,node", "cluster", "utilization", start, end,
                        "format=tresname,allocated,down,reported"});
  EXPECT_EQ(r.out, "cpu|80|160|7680\nnode|20|10|480\n");
  r = c.run("sreport", {"-n", "-P", "cluster", "UserUtilizationByAccount", start, end});
  EXPECT_EQ(r.out, cluster_of(c) + "|root|root|" + account + "|80|0\n");
  r = c.run("sreport", {"-n", "-P", "job", "SizesByAccount", start, end});
  EXPECT_EQ(r.out, cluster_of(c) + "|root|80|0|0|0|0|100.00%\n");
  // The hour after has the cluster alone: all idle.
  r = c.run("sreport", {"-n", "-P", "-t", "percent", "cluster", "utilization", "start=" + format_timestamp(h0 + 7200),
                        "end=" + format_timestamp(h0 + 10800)});
  EXPECT_EQ(r.out, cluster_of(c) + "|0.00%|0.00%|0.00%|100.00%|0.00%|100.00%\n");
}

// sacct -P --noconvert rows by JobID.
std::map<std::string, std::vector<std::string>> usage_rows(const TestCluster& c, const std::string& job,
                                                           const std::string& fields) {
  std::map<std::string, std::vector<std::string>> rows;
  for (const auto& l : lines_of(sacct_p(c, {"-j", job, "--noconvert", "-o", fields}))) {
    auto f = split(l, '|');
    rows[f[0]] = f;
  }
  return rows;
}

double cpu_seconds(const std::string& t) {  // "MM:SS.mmm" or "HH:MM:SS"
  auto parts = split(t, ':');
  double s = 0;
  for (const auto& p : parts) s = s * 60 + std::stod(p);
  return s;
}

// sacct's usage fields (Slurm's jobacct_gather): each step's memory peak, CPU
// time and bytes read and written, with the task and node of the largest;
// the job's CPU time is its steps'. The memory is a bash variable of 40 MB
// (the batch script) and of 10 MB (each of two srun tasks). Then sstat on a
// running script that holds 30 MB, and what is kept once it is cancelled.
TEST(Accounting, SacctAndSstatReportWhatTheTasksUsed) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string hog = "x=$(head -c 40000000 /dev/zero | tr '\\0' a); i=0; while [ $i -lt 30000 ]; do "
                          "i=$((i+1)); done; head -c 20971520 /dev/zero > /dev/null; "
                          "srun -n 2 bash -c 'y=$(head -c 10000000 /dev/zero | tr \"\\0\" b); echo ${#y}'";
  int64_t job = c.submit({"-p", "compute", "-w", "cpu1", "-n", "2", "--mem=2G", "-o", "/dev/null", "--wrap", hog});
  ASSERT_GT(job, 0) << c.last_error();
  ASSERT_TRUE(c.wait_done(std::to_string(job), std::chrono::seconds(60)));
  const std::string j = std::to_string(job);
  auto rows = usage_rows(c, j, "JobID,State,NTasks,MaxRSS,MaxRSSNode,MaxRSSTask,TotalCPU,UserCPU,MaxDiskRead,"
                               "MaxDiskWrite,AveRSS,MinCPUNode,ConsumedEnergy");
  ASSERT_EQ(rows.size(), 3u);
  const auto& top = rows[j];
  const auto& batch = rows[j + ".batch"];
  const auto& step = rows[j + ".0"];
  ASSERT_EQ(top.size(), 13u);
  EXPECT_EQ(top[1], "COMPLETED");
  // The job's line: no task figures, its steps' CPU time.
  EXPECT_EQ(top[2] + top[3] + top[4] + top[5], "");
  EXPECT_EQ(top[12], "0");
  // --noconvert: bytes.
  EXPECT_GE(std::stoll(batch[3]), 40000000) << batch[3];
  EXPECT_EQ(batch[2], "1");
  EXPECT_EQ(batch[4], "cpu1");
  EXPECT_EQ(batch[5], "0");
  EXPECT_GE(std::stoll(step[3]), 10000000) << step[3];
  EXPECT_LT(std::stoll(step[3]), std::stoll(batch[3])) << step[3];
  EXPECT_EQ(step[2], "2");
  EXPECT_EQ(step[4], "cpu1");
  EXPECT_EQ(step[11], "cpu1");
  EXPECT_GE(std::stoll(step[10]), 10000000) << step[10];
  // CPU: the loop and the copies took some; the job's is the sum of its steps'.
  EXPECT_GT(cpu_seconds(batch[6]), 0.05) << batch[6];
  EXPECT_GT(cpu_seconds(step[6]), 0.0) << step[6];
  EXPECT_NEAR(cpu_seconds(top[6]), cpu_seconds(batch[6]) + cpu_seconds(step[6]), 0.002) << top[6];
  EXPECT_NEAR(cpu_seconds(top[7]), cpu_seconds(batch[7]) + cpu_seconds(step[7]), 0.002) << top[7];
  // What head read from /dev/zero (60 MB) and wrote on (20 MB), in megabytes.
  EXPECT_GE(std::stod(batch[8]), 60.0) << batch[8];
  EXPECT_EQ(batch[8].back(), 'M');
  EXPECT_GE(std::stod(batch[9]), 20.0) << batch[9];

  // sstat: a running batch script holding 30 MB.
  int64_t run = c.submit({"-p", "compute", "-w", "cpu2", "--mem=1G", "-o", "/dev/null", "--wrap",
                          "x=$(head -c 30000000 /dev/zero | tr '\\0' a); sleep 120"});
  ASSERT_GT(run, 0) << c.last_error();
  const std::string r = std::to_string(run);
  ASSERT_TRUE(c.wait_state(r, {"RUNNING"}));
  std::string seen;
  EXPECT_TRUE(eventually(
      [&] {
        auto s = c.run("sstat", {"-a", "-j", r, "-n", "-P", "--noconvert", "-o", "JobID,NTasks,MaxRSS,Nodelist,Pids"});
        seen = s.out + s.err;
        auto f = split(std::string(trim(s.out)), '|');
        return s.rc == 0 && f.size() == 5 && f[0] == r + ".batch" && f[1] == "1" && std::stoll(f[2]) >= 30000000 &&
               f[3] == "cpu2" && !f[4].empty();
      },
      std::chrono::seconds(15)))
      << seen;
  // An array's element by N_M.
  int64_t arr = c.submit({"-p", "compute", "-w", "cpu2", "--mem=100M", "--array=3-3", "-o", "/dev/null", "--wrap",
                          "sleep 120"});
  ASSERT_GT(arr, 0) << c.last_error();
  const std::string element = std::to_string(arr) + "_3";
  ASSERT_TRUE(c.wait_state(element, {"RUNNING"}));
  EXPECT_TRUE(eventually(
      [&] {
        auto s = c.run("sstat", {"-a", "-j", element, "-n", "-P", "-o", "JobID,NTasks"});
        seen = s.out + s.err;
        return s.rc == 0 && s.out.ends_with(".batch|1\n");
      },
      std::chrono::seconds(10)))
      << seen;
  EXPECT_EQ(c.run("sstat", {"-a", "-j", std::to_string(arr) + "_9", "-n"}).err,
            "sstat: error: couldn't get steps for job " + std::to_string(arr) + "_9\n");
  ASSERT_EQ(c.run("scancel", {std::to_string(arr)}).rc, 0);
  // Without -a only srun steps are listed: none here, and no error (Slurm's).
  auto none = c.run("sstat", {"-j", r, "-n", "-o", "JobID"});
  EXPECT_EQ(none.rc, 0);
  EXPECT_EQ(none.out + none.err, "");
  // Another user may not look (Slurm's step daemons answer only the owner and admins).
  if (auto user = ensure_user("droveruser")) {
    auto other = c.run("sstat", {"-a", "-j", r, "-n", "-o", "JobID"}, user->as());
    EXPECT_EQ(other.out, "");
    EXPECT_EQ(other.err, "sstat: error: Access/permission denied\n");
  }
  auto unknown = c.run("sstat", {"-j", "999999", "-n"});
  EXPECT_EQ(unknown.err, "sstat: error: couldn't get steps for job 999999\n");
  // The table's head comes first, as Slurm 22.05's sstat printed it on one stream.
  auto merged = c.run("/bin/sh", {"-c", "\"$0\" -j 999999 -o JobID,NTasks 2>&1", c.bin() + "/sstat"});
  EXPECT_EQ(merged.out, "JobID          NTasks \n------------ -------- \nsstat: error: couldn't get steps for job 999999\n");
  auto nojob = c.run("sstat", {});
  EXPECT_EQ(nojob.rc, 1);
  EXPECT_EQ(nojob.err, "sstat: error: You didn't give me any jobs to stat.\n");
  // Cancelled, the script's use is still recorded with its step.
  ASSERT_EQ(c.run("scancel", {r}).rc, 0);
  ASSERT_TRUE(c.wait_done(r));
  auto ended = c.run("sstat", {"-a", "-j", r, "-n"});
  EXPECT_EQ(ended.out, "");
  EXPECT_EQ(ended.err, "sstat: error: No steps running for job " + r + "\n");
  EXPECT_TRUE(eventually(
      [&] {
        auto b = usage_rows(c, r, "JobID,MaxRSS")[r + ".batch"];
        return b.size() == 2 && !b[1].empty() && std::stoll(b[1]) >= 30000000;
      },
      std::chrono::seconds(10)));
}

}  // namespace
}  // namespace drover::e2e
