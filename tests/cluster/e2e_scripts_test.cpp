// End to end: slurm.conf's Prolog and Epilog on a live cluster, as Slurm
// 22.05 ran them on the anchor cluster: the environment they get, the job
// COMPLETING on its node while the Epilog runs, and a node drained
// ("Prolog error", "Epilog error") with the job requeued held when its
// Prolog fails.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

class ScriptDir {
 public:
  ScriptDir() {
    char tmpl[] = "/tmp/drover-scripts-XXXXXX";
    dir_ = mkdtemp(tmpl);
    chmod(dir_.c_str(), 0755);
    // Each leaves its environment where the test can read it; a flag file
    // makes it fail (or the Epilog wait).
    write("prolog.sh",
          "/usr/bin/env | /usr/bin/sort > " + dir_ + "/prolog.$SLURM_JOB_ID.$SLURMD_NODENAME\n"
          "if [ -e " + dir_ + "/prolog_fail ]; then echo 'no scratch space' >&2; exit 3; fi\n");
    write("epilog.sh",
          "/usr/bin/env | /usr/bin/sort > " + dir_ + "/epilog.$SLURM_JOB_ID.$SLURMD_NODENAME\n"
          "n=0; while [ -e " + dir_ + "/epilog_hold ] && [ $n -lt 300 ]; do /bin/sleep 0.1; n=$((n+1)); done\n"
          "if [ -e " + dir_ + "/epilog_fail ]; then exit 4; fi\n");
  }
  ~ScriptDir() { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  void flag(const std::string& name, bool on) const {
    if (on) {
      std::ofstream(path(name)) << "";
    } else {
      std::filesystem::remove(path(name));
    }
  }

 private:
  void write(const std::string& name, const std::string& body) const {
    std::ofstream(path(name)) << "#!/bin/sh\n" << body;
    chmod(path(name).c_str(), 0755);
  }
  std::string dir_;
};

std::string sq(const TestCluster& c, const std::string& id, const char* format) {
  return c.run("squeue", {"-h", "-j", id, "-o", format}).out;
}

TEST(JobScripts, PrologAndEpilogRunAroundEachJobAndTheirFailuresDrainTheNode) {
  ScriptDir s;
  ClusterDef def = small_cluster();
  def.extra = {"Prolog=" + s.path("prolog.sh"), "Epilog=" + s.path("epilog.sh")};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);

  // A job with both: the Epilog holds the node COMPLETING until it ends,
  // and the next job on the node waits for it.
  s.flag("epilog_hold", true);
  const std::string first = std::to_string(c.submit({"-w", "cpu1", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(eventually([&] { return sq(c, first, "%t") == "CG\n"; }, 20s)) << sq(c, first, "%t %r");
  EXPECT_EQ(c.run("sinfo", {"-h", "-N", "-n", "cpu1", "-o", "%t"}).out, "comp\n");
  EXPECT_EQ(c.job_fields(first)["JobState"], "COMPLETING");
  const std::string next = std::to_string(c.submit({"-w", "cpu1", "-o", "/dev/null", "--wrap", "true"}));
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(c.state(next), "PENDING") << "nothing starts on a node whose Epilog runs";
  s.flag("epilog_hold", false);
  ASSERT_TRUE(c.wait_done(first));
  ASSERT_TRUE(c.wait_done(next));
  EXPECT_EQ(c.run("sacct", {"-n", "-X", "-P", "-j", first, "-o", "State,ExitCode"}).out, "COMPLETED|0:0\n");
  const std::string penv = read_file(s.path("prolog." + first + ".cpu1"));
  const std::string eenv = read_file(s.path("epilog." + first + ".cpu1"));
  for (const char* var : {"SLURM_JOB_ID=", "SLURM_JOB_USER=", "SLURM_JOB_UID=", "SLURM_JOB_PARTITION=compute\n",
                          "SLURM_NODELIST=cpu1\n", "SLURMD_NODENAME=cpu1\n", "SLURM_JOB_WORK_DIR="}) {
    EXPECT_NE(penv.find(var), std::string::npos) << var << " in\n" << penv;
    EXPECT_NE(eenv.find(var), std::string::npos) << var << " in\n" << eenv;
  }
  EXPECT_NE(penv.find("SLURM_SCRIPT_CONTEXT=prolog_slurmd\n"), std::string::npos) << penv;
  EXPECT_NE(eenv.find("SLURM_SCRIPT_CONTEXT=epilog_slurmd\n"), std::string::npos) << eenv;
  EXPECT_NE(eenv.find("SLURM_JOB_EXIT_CODE2=0:0\n"), std::string::npos) << eenv;
  EXPECT_EQ(penv.find("PATH="), std::string::npos) << "Slurm gives them no PATH";

  // A failed Prolog: the node drains and the job goes back to the queue held.
  s.flag("prolog_fail", true);
  const std::string held = std::to_string(c.submit({"-w", "cpu2", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(eventually([&] { return sq(c, held, "%t %r") == "PD launch failed requeued held\n"; }, 20s))
      << sq(c, held, "%t %r");
  EXPECT_EQ(c.job_fields(held)["Reason"], "launch_failed_requeued_held");
  EXPECT_EQ(c.job_fields(held)["Restarts"], "1");
  EXPECT_EQ(c.run("sacct", {"-n", "-X", "-P", "-j", held, "-o", "State,Reason"}).out, "PENDING|JobHeldUser\n")
      << "the hold's kind, as Slurm's sacct showed it";
  EXPECT_EQ(c.node_fields("cpu2")["State"], "IDLE+DRAIN");
  EXPECT_EQ(c.run("sinfo", {"-h", "-R", "-o", "%E|%N"}).out, "Prolog error|cpu2\n");
  EXPECT_NE(c.log("controller").find("no scratch space"), std::string::npos) << "its output is in the log";
  // srun's job cannot be requeued: it is cancelled, and srun says why.
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu1", "State=DRAIN", "Reason=keep off"}).rc, 0);
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu2", "State=RESUME"}).rc, 0);
  auto srun = c.run("srun", {"-w", "cpu2", "-t", "1", "true"});
  EXPECT_NE(srun.rc, 0);
  EXPECT_NE(srun.err.find(" failed on node cpu2: Job prolog failed\nsrun: error: Application launch failed: Job prolog "
                          "failed\nsrun: Job step aborted\n"),
            std::string::npos)
      << srun.err;
  EXPECT_EQ(c.run("sinfo", {"-h", "-R", "-o", "%E|%N"}).out, "keep off|cpu1\nProlog error|cpu2\n");
  EXPECT_NE(c.run("sacct", {"-n", "-X", "-P", "-o", "State"}).out.find("CANCELLED by 0\n"), std::string::npos);
  s.flag("prolog_fail", false);
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu1,cpu2", "State=RESUME"}).rc, 0);
  ASSERT_EQ(c.run("scontrol", {"release", held}).rc, 0);
  ASSERT_TRUE(c.wait_done(held));
  EXPECT_EQ(c.state(held), "COMPLETED");

  // A failed Epilog: the job's own end stands, the node drains.
  s.flag("epilog_fail", true);
  const std::string failing = std::to_string(c.submit({"-w", "cpu1", "-o", "/dev/null", "--wrap", "exit 2"}));
  ASSERT_TRUE(eventually([&] { return c.node_fields("cpu1")["State"] == "IDLE+DRAIN"; }, 20s))
      << c.run("scontrol", {"show", "node", "cpu1"}).out;
  EXPECT_EQ(c.node_fields("cpu1")["Reason"], "Epilog");  // "Epilog error [root@...]"
  EXPECT_EQ(c.run("sacct", {"-n", "-X", "-P", "-j", failing, "-o", "State,ExitCode"}).out, "FAILED|2:0\n");
}

// HealthCheckProgram: run by every agent when it starts and then every
// HealthCheckInterval seconds, with SLURMD_NODENAME; it drains its node
// itself through scontrol, as a site's health check does with Slurm.
TEST(HealthCheck, EachAgentRunsItOnItsIntervalAndItDrainsItsNodeItself) {
  char tmpl[] = "/tmp/drover-health-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  chmod(dir.c_str(), 0755);
  const std::string program = dir + "/check.sh";
  ClusterDef def = small_cluster();
  def.extra = {"HealthCheckProgram=" + program, "HealthCheckInterval=1"};
  // The cluster's paths are known once it is made; the script reads them from a file written then.
  std::ofstream(program) << "#!/bin/sh\n"
                         << "echo \"$SLURMD_NODENAME $(/usr/bin/env | /usr/bin/wc -l)\" >> " << dir << "/runs\n"
                         << "if [ -e " << dir << "/bad.$SLURMD_NODENAME ]; then . " << dir << "/paths; "
                         << "$SCONTROL update NodeName=$SLURMD_NODENAME State=DRAIN Reason=\"health check: disk\"; fi\n";
  chmod(program.c_str(), 0755);
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  std::ofstream(dir + "/paths") << "export DROVER_CONF=" << c.conf() << "\nSCONTROL=" << c.bin() << "/scontrol\n";
  auto count = [&](const std::string& node) {
    int n = 0;
    for (const auto& line : lines_of(read_file(dir + "/runs"))) n += line == node + " 2";  // SLURMD_NODENAME, PWD
    return n;
  };
  // Once at the start, then each second: cpu1 has run it at least three times within a few seconds.
  EXPECT_TRUE(eventually([&] { return count("cpu1") >= 3 && count("hgpu1") >= 3; }, 15s)) << read_file(dir + "/runs");
  std::ofstream(dir + "/bad.cpu2") << "";
  EXPECT_TRUE(eventually([&] { return c.run("sinfo", {"-h", "-R", "-o", "%E|%N"}).out == "health check: disk|cpu2\n"; },
                         15s))
      << c.run("sinfo", {"-R"}).out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace drover::e2e
