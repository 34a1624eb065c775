// End to end: slurm.conf's Prolog and Epilog on a live cluster, as Slurm
// 22.05 ran them on the anchor cluster: the environment they get, the job
// COMPLETING on its node while the Epilog runs, and a node drained
// ("Prolog error", "Epilog error") with the job requeued held when its
// Prolog fails.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

class ScriptDir {
 public:
  // With node_scripts, the nodes' Prolog and Epilog are written too.
  explicit ScriptDir(bool node_scripts = true) {
    char tmpl[] = "/tmp/drover-scripts-XXXXXX";
    dir_ = mkdtemp(tmpl);
    chmod(dir_.c_str(), 0755);
    if (!node_scripts) return;
    // Each leaves its environment where the test can read it; a flag file
    // makes it fail (or the Epilog wait).
    write("prolog.sh",
          "/usr/bin/env | /usr/bin/sort > " + dir_ + "/prolog.$SLURM_JOB_ID.$SLURMD_NODENAME\n"
          "n=0; while [ -e " + dir_ + "/prolog_hold ] && [ $n -lt 300 ]; do /bin/sleep 0.1; n=$((n+1)); done\n"
          "if [ -e " + dir_ + "/prolog_fail ]; then echo 'no scratch space' >&2; exit 3; fi\n");
    write("epilog.sh",
          "/usr/bin/env | /usr/bin/sort > " + dir_ + "/epilog.$SLURM_JOB_ID.$SLURMD_NODENAME\n"
          "n=0; while [ -e " + dir_ + "/epilog_hold ] && [ $n -lt 300 ]; do /bin/sleep 0.1; n=$((n+1)); done\n"
          "if [ -e " + dir_ + "/epilog_fail ]; then exit 4; fi\n");
  }
  ~ScriptDir() { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }
  void flag(const std::string& name, bool on) const {
    if (on) {
      std::ofstream(path(name)) << "";
    } else {
      std::filesystem::remove(path(name));
    }
  }
  // A shell script, executable.
  void write(const std::string& name, const std::string& body) const {
    std::ofstream(path(name)) << "#!/bin/sh\n" << body;
    chmod(path(name).c_str(), 0755);
  }

 private:
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
  EXPECT_EQ(srun.rc, 182) << "Slurm's srun exit status then";
  EXPECT_NE(srun.err.find(" failed on node cpu2: Job prolog failed\nsrun: error: Application launch failed: Job prolog "
                          "failed\nsrun: Job step aborted\nsrun: Prolog failure on node cpu2\n"),
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

// TaskProlog and TaskEpilog around each task (the batch script's and each
// srun task's), and srun's own --task-prolog/--task-epilog, as Slurm 22.05
// ran them on the anchor cluster: as the job's user, in its directory; the
// prolog's export/unset/print lines steer the task; a failed prolog ends the
// task with its exit code; an epilog's stderr goes to the task's stderr.
TEST(TaskScripts, TaskPrologAndEpilogRunAsTheUserAroundEachTask) {
  auto user = ensure_user("drovere2ea");
  if (!user) GTEST_SKIP() << "needs root to create a test user";
  char tmpl[] = "/tmp/drover-task-scripts-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  chmod(dir.c_str(), 0777);
  auto write = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir + "/" + name) << "#!/bin/sh\n" << body;
    chmod((dir + "/" + name).c_str(), 0755);
  };
  write("tprolog.sh",
        "echo \"export TP_VAR=hello world=x\"\n"
        "echo \"print tprolog rank=$SLURM_PROCID pid=$SLURM_TASK_PID user=$(/usr/bin/id -un) cwd=$PWD\"\n"
        "echo 'unset UNSET_ME'\n"
        "echo 'tprolog stderr' >&2\n"
        "if [ -e " + dir + "/fail ]; then exit 3; fi\n");
  write("tepilog.sh",
        "echo \"tepilog stderr rank=$SLURM_PROCID user=$(/usr/bin/id -un)\" >&2\n"
        "echo \"$SLURM_TASK_PID\" >> " + dir + "/epilog_pids\n");
  write("uprolog.sh", "echo \"export U_VAR=from-user\"\necho 'print uprolog'\n");
  write("uepilog.sh", "echo 'uepilog stderr' >&2\nexit 6\n");
  ClusterDef def = small_cluster();
  def.extra = {"TaskProlog=" + dir + "/tprolog.sh", "TaskEpilog=" + dir + "/tepilog.sh"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::string script = c.work() + "/tasks.sh";
  std::ofstream(script) << "#!/bin/bash\n"
                        << "echo \"batch TP_VAR=${TP_VAR:-unset} UNSET_ME=${UNSET_ME:-unset} pid=$$ "
                           "task_pid=$SLURM_TASK_PID\"\n"
                        << "srun -n2 -o step.%t.out bash -c 'echo \"step rank=$SLURM_PROCID TP_VAR=$TP_VAR\"'\n"
                        << "srun -n1 --task-prolog=" << dir << "/uprolog.sh --task-epilog=" << dir
                        << "/uepilog.sh bash -c 'echo \"user U_VAR=$U_VAR TP_VAR=$TP_VAR\"'\n"
                        << "echo srun-exit=$?\n";
  chmod(script.c_str(), 0755);
  const RunAs as = user->as();
  const int64_t job = c.submit({"-p", "compute", "-w", "cpu1", "-n2", "-o", "tasks.out", "--export=ALL,UNSET_ME=set",
                                script}, as);
  ASSERT_GT(job, 0) << c.last_error();
  ASSERT_TRUE(c.wait_done(std::to_string(job)));
  const std::string out = read_file(c.work() + "/tasks.out");
  EXPECT_EQ(c.state(std::to_string(job)), "COMPLETED") << out;
  const std::vector<std::string> lines = lines_of(out);
  ASSERT_GE(lines.size(), 2u) << out;
  // The batch script's prolog ran in its process, as the user, in its directory.
  const std::string pid = lines[1].substr(lines[1].find(" pid=") + 5, lines[1].find(' ', lines[1].find(" pid=") + 1) -
                                                                          lines[1].find(" pid=") - 5);
  EXPECT_EQ(lines[0], "tprolog rank=0 pid=" + pid + " user=drovere2ea cwd=" + c.work()) << out;
  EXPECT_EQ(lines[1], "batch TP_VAR=hello world=x UNSET_ME=unset pid=" + pid + " task_pid=" + pid) << out;
  EXPECT_EQ(out.find("tprolog stderr"), std::string::npos) << "a prolog's stderr is not the task's";
  for (int r = 0; r < 2; ++r) {
    const std::string step = read_file(c.work() + "/step." + std::to_string(r) + ".out");
    EXPECT_NE(step.find("tprolog rank=" + std::to_string(r) + " "), std::string::npos) << step;
    EXPECT_NE(step.find("step rank=" + std::to_string(r) + " TP_VAR=hello world=x\n"), std::string::npos) << step;
    EXPECT_NE(step.find("tepilog stderr rank=" + std::to_string(r) + " user=drovere2ea\n"), std::string::npos) << step;
  }
  // srun's own: after TaskProlog, before TaskEpilog; its failure is only reported.
  EXPECT_NE(out.find("uprolog\nuser U_VAR=from-user TP_VAR=hello world=x\nuepilog stderr\n"
                     "slurmstepd-cpu1: error: --task-epilog failed status=1536\ntepilog stderr rank=0"),
            std::string::npos) << out;
  EXPECT_NE(out.find("srun-exit=0\n"), std::string::npos) << out;
  EXPECT_EQ(lines.back(), "tepilog stderr rank=0 user=drovere2ea") << "the batch script's epilog comes last";
  EXPECT_EQ(lines_of(read_file(dir + "/epilog_pids")).size(), 4u)
      << "one per task: batch, 2 + 1 step tasks\n" << read_file(dir + "/epilog_pids") << out;

  // A TaskProlog that fails: the task does not run and ends with its exit code.
  std::ofstream(dir + "/fail") << "";
  const int64_t failed = c.submit({"-p", "compute", "-w", "cpu1", "-o", "failed.out", "--wrap", "echo ran"}, as);
  ASSERT_GT(failed, 0) << c.last_error();
  ASSERT_TRUE(c.wait_done(std::to_string(failed)));
  const std::string fout = read_file(c.work() + "/failed.out");
  EXPECT_EQ(fout.find("\nran\n"), std::string::npos) << fout;
  EXPECT_NE(fout.find("slurmstepd-cpu1: error: TaskProlog failed status=3\n"), std::string::npos) << fout;
  EXPECT_EQ(c.run("sacct", {"-n", "-X", "-P", "-j", std::to_string(failed), "-o", "State,ExitCode"}).out,
            "FAILED|3:0\n");
  auto srun = c.run("srun", {"-p", "compute", "-w", "cpu1", "-n2", "true"}, as);
  EXPECT_EQ(srun.rc, 3) << srun.err;
  EXPECT_NE(srun.err.find("slurmstepd-cpu1: error: TaskProlog failed status=3\n"), std::string::npos) << srun.err;
  EXPECT_NE(srun.err.find("srun: error: cpu1: tasks 0-1: Exited with exit code 3\n"), std::string::npos) << srun.err;
  std::filesystem::remove_all(dir);
}

// SrunProlog/SrunEpilog and srun's --prolog/--epilog, as Slurm 22.05's srun
// ran them on the anchor cluster: on srun's host, as the user, the step's
// command as arguments, srun's environment with the job's variables and
// SLURM_SCRIPT_CONTEXT; a failed epilog is reported and leaves srun's exit
// status; a program that cannot be run is skipped with "Access denied".
// Drover's difference: a failed prolog runs no step (exit 1).
TEST(SrunScripts, SrunPrologAndEpilogRunOnSrunsHostAroundTheStep) {
  const ScriptDir sd(false);
  const std::string dir = sd.dir();
  auto write = [&](const std::string& name, const std::string& body) { sd.write(name, body); };
  write("prolog.sh", "echo \"prolog $SLURM_SCRIPT_CONTEXT job=$SLURM_JOB_ID nodes=$SLURM_NODELIST "
                     "step=${SLURM_STEP_ID:-none} args=$*\" >> " + dir + "/log\nexit ${PROLOG_RC:-0}\n");
  write("epilog.sh", "echo \"epilog $SLURM_SCRIPT_CONTEXT job=$SLURM_JOB_ID step=$SLURM_STEP_ID args=$*\" >> " +
                         dir + "/log\necho 'epilog says' >&2\nexit ${EPILOG_RC:-0}\n");
  write("other.sh", "echo \"other $SLURM_SCRIPT_CONTEXT\" >> " + dir + "/log\n");
  ClusterDef def = small_cluster();
  def.extra = {"SrunProlog=" + dir + "/prolog.sh", "SrunEpilog=" + dir + "/epilog.sh"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  auto ok = c.run("srun", {"-p", "compute", "-w", "cpu1", "echo", "hi", "there"});
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(ok.out, "hi there\n");
  EXPECT_EQ(ok.err, "epilog says\n");
  const std::vector<std::string> log = lines_of(read_file(dir + "/log"));
  ASSERT_EQ(log.size(), 2u) << read_file(dir + "/log");
  const std::string job = log[0].substr(log[0].find("job=") + 4, log[0].find(' ', log[0].find("job=")) - log[0].find("job=") - 4);
  EXPECT_EQ(log[0], "prolog prolog_srun job=" + job + " nodes=cpu1 step=none args=echo hi there");
  EXPECT_EQ(log[1], "epilog epilog_srun job=" + job + " step=0 args=echo hi there");
  std::filesystem::remove(dir + "/log");

  // --prolog/--epilog win over slurm.conf's; "none" runs none.
  auto own = c.run("srun", {"-p", "compute", "--prolog=" + dir + "/other.sh", "--epilog=none", "true"});
  EXPECT_EQ(own.rc, 0) << own.err;
  EXPECT_EQ(read_file(dir + "/log"), "other prolog_srun\n");
  std::filesystem::remove(dir + "/log");

  // A failed epilog is reported; srun's exit status stays the step's.
  auto epi = c.run_program("/bin/sh", {"-c", "EPILOG_RC=4 " + c.bin() + "/srun -p compute sh -c 'exit 2'"});
  EXPECT_EQ(epi.rc, 2) << epi.err;
  EXPECT_NE(epi.err.find("srun: error: srun epilog failed status=4\n"), std::string::npos) << epi.err;
  // A failed prolog: no step runs.
  auto pro = c.run_program("/bin/sh", {"-c", "PROLOG_RC=3 " + c.bin() + "/srun -p compute echo ran"});
  EXPECT_EQ(pro.rc, 1) << pro.err;
  EXPECT_EQ(pro.out, "");
  EXPECT_NE(pro.err.find("srun: error: srun prolog failed rc = 3. Aborting step.\n"), std::string::npos) << pro.err;
  // A program that is not there is skipped.
  auto gone = c.run("srun", {"-p", "compute", "--prolog=" + dir + "/nonexistent", "--epilog=none", "echo", "ran"});
  EXPECT_EQ(gone.rc, 0) << gone.err;
  EXPECT_EQ(gone.out, "ran\n");
  EXPECT_EQ(gone.err, "srun: Access denied for " + dir + "/nonexistent: No such file or directory\n");
}

// PrologSlurmctld and EpilogSlurmctld: the controller runs them with the
// job's variables; the job is CONFIGURING (squeue CF) while the prolog runs
// and its batch script (or srun's step) only then; one that fails requeues
// the job held.
TEST(CtldScripts, PrologSlurmctldRunsBeforeTheJobAndEpilogSlurmctldAfter) {
  const ScriptDir sd(false);
  const std::string dir = sd.dir();
  auto write = [&](const std::string& name, const std::string& body) { sd.write(name, body); };
  write("prolog.sh", "echo \"prolog $SLURM_SCRIPT_CONTEXT job=$SLURM_JOB_ID user=$SLURM_JOB_USER "
                     "nodes=$SLURM_NODELIST\" >> " + dir + "/log\n"
                     "while [ -e " + dir + "/hold ]; do /bin/sleep 0.05; done\n"
                     "if [ -e " + dir + "/fail ]; then exit 3; fi\n");
  write("epilog.sh", "echo \"epilog $SLURM_SCRIPT_CONTEXT job=$SLURM_JOB_ID exit=$SLURM_JOB_EXIT_CODE2\" >> " + dir +
                         "/log\n");
  ClusterDef def = small_cluster();
  def.extra = {"PrologSlurmctld=" + dir + "/prolog.sh", "EpilogSlurmctld=" + dir + "/epilog.sh"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  std::ofstream(dir + "/hold") << "";
  const int64_t job = c.submit({"-p", "compute", "-w", "cpu1", "-o", "ctld.out", "--wrap", "echo ran; exit 2"});
  ASSERT_GT(job, 0) << c.last_error();
  const std::string id = std::to_string(job);
  std::string state;
  for (int i = 0; i < 100 && state != "CF"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    state = c.run("squeue", {"-h", "-j", id, "-o", "%t"}).out;
    if (!state.empty() && state.back() == '\n') state.pop_back();
  }
  EXPECT_EQ(state, "CF") << "CONFIGURING while the prolog runs";
  EXPECT_EQ(c.job_fields(id)["JobState"], "CONFIGURING");
  EXPECT_FALSE(std::filesystem::exists(c.work() + "/ctld.out")) << "the script waits for the prolog";
  std::filesystem::remove(dir + "/hold");
  ASSERT_TRUE(c.wait_done(id));
  EXPECT_EQ(read_file(c.work() + "/ctld.out"), "ran\n");
  for (int i = 0; i < 100 && lines_of(read_file(dir + "/log")).size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const struct passwd* me = getpwuid(geteuid());
  EXPECT_EQ(read_file(dir + "/log"), "prolog prolog_slurmctld job=" + id + " user=" + std::string(me ? me->pw_name : "?") +
                                         " nodes=cpu1\nepilog epilog_slurmctld job=" + id + " exit=2:0\n");
  // srun outside an allocation waits for it too, and then runs.
  auto srun = c.run("srun", {"-p", "compute", "echo", "step ran"});
  EXPECT_EQ(srun.rc, 0) << srun.err;
  EXPECT_EQ(srun.out, "step ran\n");
  // One that fails: the job is requeued held and never ran.
  std::ofstream(dir + "/fail") << "";
  const int64_t bad = c.submit({"-p", "compute", "-o", "bad.out", "--wrap", "echo ran"});
  ASSERT_GT(bad, 0) << c.last_error();
  EXPECT_TRUE(c.wait_state(std::to_string(bad), {"PENDING"}, std::chrono::seconds(10)));
  std::string reason;
  for (int i = 0; i < 100 && reason != "launch failed requeued held"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    reason = c.reason(std::to_string(bad));
  }
  EXPECT_EQ(reason, "launch failed requeued held");
  EXPECT_FALSE(std::filesystem::exists(c.work() + "/bad.out"));
  c.run("scancel", {std::to_string(bad)});
}

// PrologFlags=Alloc: the Prolog runs on every node of a job as it starts,
// and the batch script only once each has ended (squeue's reason "Prolog"
// meanwhile), as Slurm 22.05 did on the anchor cluster.
TEST(JobScripts, PrologFlagsAllocRunsThePrologOnEveryNodeBeforeTheScript) {
  ScriptDir s;
  ClusterDef def = small_cluster();
  def.extra = {"Prolog=" + s.path("prolog.sh"), "PrologFlags=Alloc"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  s.flag("prolog_hold", true);
  const std::string id = std::to_string(
      c.submit({"-w", "cpu[1-2]", "-N2", "-o", "alloc.out", "--wrap",
                "ls " + s.path("prolog.$SLURM_JOB_ID.cpu1") + " " + s.path("prolog.$SLURM_JOB_ID.cpu2")}));
  ASSERT_TRUE(eventually([&] { return sq(c, id, "%t %r") == "R Prolog\n"; }, 20s)) << sq(c, id, "%t %r");
  ASSERT_TRUE(eventually([&] {
    return std::filesystem::exists(s.path("prolog." + id + ".cpu1")) &&
           std::filesystem::exists(s.path("prolog." + id + ".cpu2"));
  }, 20s)) << "both nodes' Prologs run at the start, before any step";
  std::this_thread::sleep_for(500ms);
  EXPECT_FALSE(std::filesystem::exists(c.work() + "/alloc.out")) << "the script waits for the Prologs";
  s.flag("prolog_hold", false);
  ASSERT_TRUE(c.wait_done(id));
  EXPECT_EQ(c.state(id), "COMPLETED") << read_file(c.work() + "/alloc.out");
  const std::string config = c.run("scontrol", {"show", "config"}).out;
  EXPECT_NE(config.find("PrologFlags             = Alloc\n"), std::string::npos) << config;
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
