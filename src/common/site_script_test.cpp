#include "common/site_script.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "common/script_dir_test_support.hpp"

namespace drover {
namespace {

class SiteScript : public testing_support::ScriptDirTest {};

TEST_F(SiteScript, RunsWithExactlyTheGivenEnvironmentAndKeepsItsOutput) {
  ScriptOptions so;
  so.env = {"SLURM_JOB_ID=7", "SLURM_SCRIPT_CONTEXT=prolog_slurmd"};
  // No PATH is given (Slurm sets none): the script names its programs in full.
  const ScriptRun run = run_script(script("p", "/usr/bin/env | /usr/bin/sort; echo oops >&2; exit 3"), so);
  EXPECT_TRUE(run.started);
  EXPECT_FALSE(run.ok());
  EXPECT_EQ(run.exit_code, 3);
  // The shell adds PWD (the program runs in /); nothing else is added.
  EXPECT_EQ(run.output, "PWD=/\nSLURM_JOB_ID=7\nSLURM_SCRIPT_CONTEXT=prolog_slurmd\noops\n");
  EXPECT_EQ(run.describe(), "exit 3");
  // For a log line: one line, cut where asked.
  EXPECT_EQ(run.output_suffix(), "; output: PWD=/|SLURM_JOB_ID=7|SLURM_SCRIPT_CONTEXT=prolog_slurmd|oops");
  EXPECT_EQ(run.output_suffix(5), "; output: PWD=/...");
  EXPECT_EQ(ScriptRun{}.output_suffix(), "");
}

TEST_F(SiteScript, AProgramPastItsTimeIsKilledWithWhatItStarted) {
  ScriptOptions so;
  so.timeout_s = 1;
  const std::string marker = (dir_ / "child-still-ran").string();
  const auto t0 = std::chrono::steady_clock::now();
  const ScriptRun run = run_script(script("slow", "(/bin/sleep 3; /usr/bin/touch " + marker + ") &\n/bin/sleep 30"), so);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_TRUE(run.timed_out);
  EXPECT_FALSE(run.ok());
  EXPECT_LT(took, std::chrono::seconds(10));
  ::sleep(3);
  EXPECT_FALSE(std::filesystem::exists(marker)) << "its background child was killed with it";
}

TEST_F(SiteScript, AMissingProgramSaysSo) {
  const ScriptRun run = run_script((dir_ / "absent").string(), {});
  EXPECT_FALSE(run.started);
  EXPECT_FALSE(run.ok());
  EXPECT_NE(run.error.find("absent cannot run: No such file or directory"), std::string::npos) << run.error;
}

TEST_F(SiteScript, StderrGoesWhereAskedAndOnlyStdoutIsKept) {
  const std::string p = script("p", "echo out; echo err >&2");
  ScriptOptions so;
  so.stderr_fd = kStderrDiscard;
  EXPECT_EQ(run_script(p, so).output, "out\n");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  so = {};
  so.keep_output = false;
  so.stderr_fd = fds[1];
  const ScriptRun run = run_script(p, so);
  close(fds[1]);
  EXPECT_EQ(run.output, "");
  char buf[64] = {};
  ASSERT_GT(read(fds[0], buf, sizeof buf - 1), 0);
  close(fds[0]);
  EXPECT_STREQ(buf, "err\n");
  // Not kept: stdout to a descriptor of the caller's (srun's prolog writes to srun's), stderr with it.
  ASSERT_EQ(pipe(fds), 0);
  so = {};
  so.keep_output = false;
  so.stdout_fd = fds[1];
  const ScriptRun both = run_script(p, so);
  close(fds[1]);
  EXPECT_TRUE(both.ok());
  std::string got;
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  EXPECT_EQ(got, "out\nerr\n");
}

TEST_F(SiteScript, RunsAsTheUserItIsGiven) {
  if (geteuid() != 0) GTEST_SKIP() << "taking another user's identity needs root";
  chmod(dir_.c_str(), 0755);
  ScriptOptions so;
  so.user = ScriptUser{65534, 65534, {65534}};
  so.cwd = dir_.string();
  const ScriptRun run = run_script(script("id", "/usr/bin/id -u; /usr/bin/id -g; /usr/bin/id -G; /bin/pwd"), so);
  EXPECT_TRUE(run.ok()) << run.describe() << run.output;
  EXPECT_EQ(run.output, "65534\n65534\n65534\n" + dir_.string() + "\n");
  // One it cannot execute as that user (mode 0700, root's) does not start.
  const std::string own = script("own", "exit 0");
  chmod(own.c_str(), 0700);
  const ScriptRun refused = run_script(own, so);
  EXPECT_FALSE(refused.started);
  EXPECT_NE(refused.error.find("Permission denied"), std::string::npos) << refused.error;
}

TEST_F(SiteScript, AGlobNamesEveryMatchInNameOrder) {
  script("20-second", "true");
  script("10-first", "true");
  EXPECT_EQ(script_programs((dir_ / "*").string()),
            (std::vector<std::string>{(dir_ / "10-first").string(), (dir_ / "20-second").string()}));
  EXPECT_TRUE(script_programs((dir_ / "none-*").string()).empty());
  EXPECT_EQ(script_programs("/etc/drover/prolog.sh"), std::vector<std::string>{"/etc/drover/prolog.sh"});
  EXPECT_TRUE(script_programs("").empty());
}

}  // namespace
}  // namespace drover
