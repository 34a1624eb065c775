#include "common/site_script.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace drover {
namespace {

class SiteScript : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("drover-site-script-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string script(const std::string& name, const std::string& body) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  std::filesystem::path dir_;
};

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
