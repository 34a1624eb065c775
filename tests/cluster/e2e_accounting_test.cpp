// End to end: accounting (sacct) on a live cluster: finished, running and
// pending jobs, batch steps, arrays, cancelled jobs, and history that
// survives a controller restart after the jobs left memory (MinJobAge).
#include <gtest/gtest.h>

#include <regex>

#include "common/strings.hpp"
#include "harness.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

#define REQUIRE_CLUSTER(c) ASSERT_TRUE((c).error().empty()) << (c).error()

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (auto& l : split(text, '\n')) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

std::string sacct_p(const TestCluster& c, const std::vector<std::string>& args) {
  std::vector<std::string> a{"-P", "-n"};
  a.insert(a.end(), args.begin(), args.end());
  auto r = c.run("sacct", a);
  EXPECT_EQ(r.rc, 0) << r.err;
  return r.out;
}

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
  EXPECT_NE(rows[2].find("|NonZeroExitCode|"), std::string::npos) << rows[2];
  EXPECT_EQ(rows[3].substr(0, rows[3].find("|cpu")), b + ".batch|" + b + ".batch|batch|FAILED|3:0|0:0|1|1");
  // The held array's pending elements are one record; the cancelled pending job says by whom.
  EXPECT_EQ(rows[4].substr(0, rows[4].find("|0:0")), h + "_[2-4%25]|" + h + "|arr|PENDING") << rows[4];
  EXPECT_NE(rows[4].find("|None assigned|"), std::string::npos) << rows[4];
  EXPECT_EQ(rows[5].substr(0, rows[5].find("|0:0")), x + "|" + x + "|gone|CANCELLED by 0") << rows[5];

  // Selection: -X leaves the steps out, -s, --name, -u, and -j N_T.
  EXPECT_EQ(lines_of(sacct_p(c, {"-X", "-j", g + "," + b, "-o", "JobID"})), (std::vector<std::string>{g, b}));
  EXPECT_EQ(lines_of(sacct_p(c, {"-X", "-s", "F", "-o", "JobID,State"})), (std::vector<std::string>{b + "|FAILED"}));
  EXPECT_EQ(lines_of(sacct_p(c, {"-X", "--state=cancelled,pending", "-o", "JobID"})),
            (std::vector<std::string>{h + "_[2-4%25]", x}));
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
  EXPECT_EQ(lines_of(sacct_p(c, {"-X", "-o", "JobID"})).size(), 4u) << "default window: since midnight";
  EXPECT_TRUE(lines_of(sacct_p(c, {"-X", "-S", "now+1hour", "-E", "now+2hours", "-s", "CD", "-o", "JobID"})).empty());
}

}  // namespace
}  // namespace drover::e2e
