#include "agent/task_scripts.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "common/script_dir_test_support.hpp"

namespace drover::agent {
namespace {

TEST(TaskScripts, PrologOutputSetsUnsetsAndPrints) {
  std::vector<std::string> env{"PATH=/bin", "UNSET_ME=1", "KEEP=yes"};
  const std::string printed = apply_prolog_output(
      "export TP_VAR=hello world=x\n"  // the value is the rest of the line
      "print from the prolog\n"
      "unset UNSET_ME\n"
      "export PATH=/opt/bin:/bin\r\n"
      "some other line\n"
      "export 1BAD=x\n"
      "export NOVALUE\n"
      "print last",
      env);
  EXPECT_EQ(printed, "from the prolog\nlast\n");
  EXPECT_EQ(env, (std::vector<std::string>{"PATH=/opt/bin:/bin", "KEEP=yes", "TP_VAR=hello world=x"}));
}

TEST(TaskScripts, OrderIsTaskPrologThenSrunsAndSrunsEpilogThenTaskEpilog) {
  auto pro = task_prologs("/etc/slurm/tp", "/home/u/up");
  ASSERT_EQ(pro.size(), 2u);
  EXPECT_EQ(pro[0].label, "TaskProlog");
  EXPECT_EQ(pro[1].label, "--task-prolog");
  auto epi = task_epilogs("/home/u/ue", "/etc/slurm/te");
  ASSERT_EQ(epi.size(), 2u);
  EXPECT_EQ(epi[0].label, "--task-epilog");
  EXPECT_EQ(epi[0].timeout_s, 5);  // srun's is killed after 5 s, as Slurm's
  EXPECT_EQ(epi[1].label, "TaskEpilog");
  EXPECT_EQ(epi[1].timeout_s, 0);
  EXPECT_TRUE(task_prologs("", "").empty());
}

class TaskScriptRuns : public testing_support::ScriptDirTest {};

TEST_F(TaskScriptRuns, PrologsRunInOrderOnTheTasksEnvironment) {
  std::vector<TaskScript> pro{
      {"TaskProlog", script("a", "echo \"export A=from-a\"; echo \"print a saw B=${B:-unset} in $PWD\"; echo noise >&2"), 0},
      {"--task-prolog", script("b", "echo \"print b saw A=$A\"; echo 'unset GONE'"), 0}};
  std::vector<std::string> env{"GONE=1", "B=2"};
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_task_prologs(pro, "n1", dir_.string(), env), 0);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "") << "a prolog's own stderr is not the task's";
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "a saw B=2 in " + dir_.string() + "\nb saw A=from-a\n");
  EXPECT_EQ(env, (std::vector<std::string>{"B=2", "A=from-a"}));
}

TEST_F(TaskScriptRuns, AFailedPrologEndsTheTaskWithItsExitCode) {
  std::vector<TaskScript> pro{{"TaskProlog", script("a", "echo 'print before'; exit 3"), 0},
                              {"--task-prolog", script("b", "echo 'print not reached'"), 0}};
  std::vector<std::string> env;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_task_prologs(pro, "cpu01", "/", env), 3);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "slurmstepd-cpu01: error: TaskProlog failed status=3\n");
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "before\n");
  std::vector<TaskScript> missing{{"--task-prolog", (dir_ / "absent").string(), 0}};
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_task_prologs(missing, "cpu01", "/", env), 127);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "slurmstepd-cpu01: error: --task-prolog failed status=127\n");
}

TEST_F(TaskScriptRuns, EpilogsWriteTheirErrorsToTheTasksStderrAndASlowOneIsKilled) {
  const std::string seen = (dir_ / "seen").string();
  std::vector<TaskScript> epi{{"--task-epilog", script("u", "echo \"$SLURM_TASK_PID\" > " + seen + "; echo out; echo err >&2; exit 4"), 0},
                              {"TaskEpilog", script("slow", "/bin/sleep 30"), 1}};
  const std::string err_path = (dir_ / "stderr").string();
  FILE* err = std::fopen(err_path.c_str(), "w");
  ASSERT_NE(err, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  run_task_epilogs(epi, "cpu01", dir_.string(), {"SLURM_TASK_PID=4242"}, std::nullopt, fileno(err));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  std::fclose(err);
  std::ifstream in(err_path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Slurm's wait statuses: exit 4 is 1024; the one killed for its time, 9.
  EXPECT_EQ(text,
            "err\n"
            "slurmstepd-cpu01: error: --task-epilog failed status=1024\n"
            "slurmstepd-cpu01: error: TaskEpilog failed status=9\n");
  std::ifstream pid(seen);
  std::string line;
  std::getline(pid, line);
  EXPECT_EQ(line, "4242");
}

}  // namespace
}  // namespace drover::agent
