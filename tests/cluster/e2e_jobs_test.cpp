// End to end: the seed's job templates, arrays, dependencies, cancel,
// timeout, drain/resume and refused submissions on a live cluster.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "common/strings.hpp"
#include "harness.hpp"
#include "rpc/testing.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

std::string seed_job(const std::string& name) {
  return std::string(DROVER_SOURCE_DIR) + "/examples/seed/jobs/" + name;
}

// A stand-in for `python infer.py` and `python preprocess.py --input N`
// (the templates' programs), on the jobs' PATH.
void write_programs(const std::string& dir) {
  std::string py = dir + "/bin/python";
  std::ofstream(py) << "#!/bin/sh\n"
                       "case \"$1\" in\n"
                       "  infer.py) echo \"infer $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES $SLURM_CPUS_ON_NODE\" ;;\n"
                       "  preprocess.py) echo \"input $3 $SLURM_ARRAY_TASK_ID\" ;;\n"
                       "esac\n";
  chmod(py.c_str(), 0755);
}

TEST(SeedTemplates, TrainPreprocessInferenceWithH100Constraint) {
  TestCluster c(seed_cluster());
  REQUIRE_CLUSTER(c);
  write_programs(c.work());
  int64_t train = c.submit({"--constraint=h100", seed_job("train.sbatch")});
  ASSERT_GT(train, 0) << c.last_error();
  int64_t pre = c.submit({"--array=0-3", seed_job("preprocess.sbatch")});
  ASSERT_GT(pre, 0) << c.last_error();
  int64_t inf = c.submit({seed_job("inference.sbatch")});
  ASSERT_GT(inf, 0) << c.last_error();
  // J1: four whole h100 nodes, 32 GPUs, as the template asks.
  ASSERT_TRUE(c.wait_done(std::to_string(train)));
  auto t = c.job_fields(std::to_string(train));
  EXPECT_EQ(t["NodeList"], "hgpu[1-4]");
  EXPECT_EQ(t["NumNodes"], "4");
  EXPECT_EQ(t["NumCPUs"], "64");
  EXPECT_NE(t["TRES"].find("gres/gpu=32"), std::string::npos) << t["TRES"];
  EXPECT_EQ(t["Partition"], "training");
  EXPECT_EQ(t["TimeLimit"], "2-00:00:00");
  // Its srun starts 32 tasks of `bash -c "torchrun ..."`; this machine has no
  // torchrun, so each task says so (e2e_steps_test.cpp runs the template with a stand-in).
  std::string out = read_file(c.work() + "/slurm-" + std::to_string(train) + ".out");
  EXPECT_NE(out.find("torchrun: command not found"), std::string::npos) << out;
  // J2: four array elements, 16 CPUs and 64 GB each, on the compute partition.
  for (int i = 0; i < 4; ++i) {
    std::string id = std::to_string(pre) + "_" + std::to_string(i);
    ASSERT_TRUE(c.wait_done(id)) << id;
    EXPECT_EQ(c.state(id), "COMPLETED");
    std::string o = read_file(c.work() + "/slurm-" + std::to_string(pre) + "_" + std::to_string(i) + ".out");
    EXPECT_EQ(o, "input " + std::to_string(i) + " " + std::to_string(i) + "\n");
  }
  // J3: one GPU and 16 CPUs on one node of compute: the a100 node.
  ASSERT_TRUE(c.wait_done(std::to_string(inf)));
  EXPECT_EQ(c.state(std::to_string(inf)), "COMPLETED");
  std::string o = read_file(c.work() + "/slurm-" + std::to_string(inf) + ".out");
  EXPECT_EQ(o, "infer lgpu1 0 16\n");
}

TEST(Jobs, RunAndReportEnvironmentAndExitCodes) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  int64_t ok = c.submit({"-p", "gpu", "--gres=gpu:h100:2", "-c", "4", "-J", "envjob", "-o", "env-%j.out", "--wrap",
                         "env | grep -E '^(SLURM_JOB_ID|SLURM_JOB_NAME|SLURM_CPUS_ON_NODE|CUDA_VISIBLE_DEVICES|"
                         "SLURM_JOB_PARTITION|SLURMD_NODENAME)=' | sort"});
  int64_t bad = c.submit({"--wrap", "exit 3"});
  ASSERT_GT(ok, 0);
  ASSERT_GT(bad, 0);
  ASSERT_TRUE(c.wait_done(std::to_string(ok)));
  ASSERT_TRUE(c.wait_done(std::to_string(bad)));
  EXPECT_EQ(c.state(std::to_string(ok)), "COMPLETED");
  EXPECT_EQ(c.state(std::to_string(bad)), "FAILED");
  EXPECT_EQ(c.job_fields(std::to_string(bad))["ExitCode"], "3:0");
  // AllocNode:Sid= names the submitting host and the submitter's session. setsid gives the submitter a
  // session of its own: under a container's PID namespace the inherited one may read as 0.
  auto sid = c.run_program("setsid", {"--wait", "/bin/bash", "-c",
                              "echo $(sbatch --parsable -H -o /dev/null --wrap true) $(cut -d' ' -f6 /proc/$$/stat)"});
  ASSERT_EQ(sid.rc, 0) << sid.err;
  std::istringstream words(sid.out);
  std::string held, session;
  words >> held >> session;
  std::string alloc = c.job_fields(held)["AllocNode:Sid"];
  EXPECT_EQ(alloc.substr(alloc.find(':') + 1), session) << alloc;
  EXPECT_NE(session, "0");
  std::string env = read_file(c.work() + "/env-" + std::to_string(ok) + ".out");
  EXPECT_EQ(env, "CUDA_VISIBLE_DEVICES=0,1\nSLURMD_NODENAME=hgpu1\nSLURM_CPUS_ON_NODE=4\nSLURM_JOB_ID=" +
                     std::to_string(ok) + "\nSLURM_JOB_NAME=envjob\nSLURM_JOB_PARTITION=gpu\n");
}

// The pids of the step daemons' fork server of NODE's agent in cluster `c`.
std::vector<pid_t> fork_servers_of(const TestCluster& c, const std::string& node) {
  auto cmdline = [](const std::string& pid) {
    std::string words = read_file("/proc/" + pid + "/cmdline");
    std::replace(words.begin(), words.end(), '\0', ' ');
    return words;
  };
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (cmdline(pid).find("--fork-server") == std::string::npos) continue;
    std::ifstream status("/proc/" + pid + "/status");
    std::string line, ppid;
    while (std::getline(status, line)) {
      if (line.rfind("PPid:", 0) == 0) ppid = std::string(trim(line.substr(5)));
    }
    const std::string parent = cmdline(ppid);
    if (parent.find("--node " + node + " ") != std::string::npos && parent.find(c.conf()) != std::string::npos) {
      out.push_back(static_cast<pid_t>(std::stol(pid)));
    }
  }
  return out;
}

// The submitting shell's soft resource limits reach the tasks, as Slurm's
// sbatch and srun carry them (checked side by side on the anchor cluster:
// `ulimit -s unlimited; sbatch ...` runs its script with an unlimited stack):
// all of them unless slurm.conf or --propagate says which; the variables
// carrying them are not in the job's environment; a limit above the node's
// hard one gets the hard one, said on the task's stderr.
TEST(Jobs, TheSubmittingShellsResourceLimitsReachTheTasks) {
  ClusterDef def = small_cluster();
  def.extra = {"PropagateResourceLimitsExcept=STACK"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  struct rlimit stack {}, nofile {};
  ASSERT_EQ(getrlimit(RLIMIT_STACK, &stack), 0);  // the agents', started from this process
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &nofile), 0);
  const std::string agents_stack =
      stack.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(stack.rlim_cur / 1024);
  const std::string smaller_stack = stack.rlim_cur == 2048 * 1024 ? "1024" : "2048";  // KiB, as ulimit -s says
  const std::string show = "ulimit -s; ulimit -n; env | grep -c SLURM_RLIMIT_";
  auto submit = [&](const std::string& opts) {
    auto r = c.run_program("/bin/bash", {"-c", "ulimit -S -n 300; ulimit -S -s " + smaller_stack +
                                                   "; sbatch --parsable " + opts + " --wrap '" + show + "'"});
    EXPECT_EQ(r.rc, 0) << r.err;
    return std::string(trim(r.out));
  };
  const std::string by_conf = submit(""), by_option = submit("--propagate=STACK"), none = submit("--propagate=NONE");
  for (const auto& id : {by_conf, by_option, none}) ASSERT_TRUE(c.wait_done(id)) << id;
  const std::string agents_nofile = std::to_string(nofile.rlim_cur);
  EXPECT_EQ(read_file(c.work() + "/slurm-" + by_conf + ".out"), agents_stack + "\n300\n0\n")
      << "all but the STACK that slurm.conf excepts";
  EXPECT_EQ(read_file(c.work() + "/slurm-" + by_option + ".out"), smaller_stack + "\n" + agents_nofile + "\n0\n")
      << "--propagate wins over slurm.conf";
  EXPECT_EQ(read_file(c.work() + "/slurm-" + none + ".out"), agents_stack + "\n" + agents_nofile + "\n0\n");

  auto step = c.run_program("/bin/bash", {"-c", "ulimit -S -n 200; srun -n1 sh -c 'ulimit -n'"});
  EXPECT_EQ(step.rc, 0) << step.err;
  EXPECT_EQ(step.out, "200\n");
  auto bad = c.run("sbatch", {"--propagate=STACK,BOGUS", "--wrap", "true"});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(bad.err.substr(0, bad.err.find('\n')), "sbatch: error: Bad rlimit name: BOGUS") << bad.err;

  // Above the node's hard limit: the task gets the hard one. The step daemons
  // of cpu1 come from its agent's fork server, whose hard limit is lowered
  // here (lowering needs no privilege).
  ASSERT_GT(nofile.rlim_max, 300u);
  const rlim_t node_hard = 250;
  int lowered = 0;
  for (pid_t server : fork_servers_of(c, "cpu1")) {
    const struct rlimit low {node_hard, node_hard};
    if (prlimit(server, RLIMIT_NOFILE, &low, nullptr) == 0) ++lowered;
  }
  ASSERT_EQ(lowered, 1);
  auto high = c.run_program("/bin/bash", {"-c", "ulimit -S -n 300; srun -w cpu1 -n1 sh -c 'ulimit -n'"});
  EXPECT_EQ(high.rc, 0) << high.err;
  EXPECT_EQ(high.out, "250\n");
  EXPECT_EQ(high.err, "slurmstepd-cpu1: error: RLIMIT_NOFILE of 300 from the submit host is above this node's hard "
                      "limit; the task has 250\n");
}

TEST(Jobs, ArrayThrottleKeepsAtMostTwoRunning) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  // Each element records when it ran; at most 2 may overlap.
  int64_t a = c.submit({"--array=0-5%2", "-o", "/dev/null", "--wrap",
                        "echo start $(date +%s.%N) >> " + c.work() + "/t.$SLURM_ARRAY_TASK_ID; sleep 1; "
                        "echo end $(date +%s.%N) >> " + c.work() + "/t.$SLURM_ARRAY_TASK_ID"});
  ASSERT_GT(a, 0) << c.last_error();
  std::this_thread::sleep_for(300ms);
  auto q = c.run("squeue", {"-h", "-o", "%i %t %r"});
  EXPECT_NE(q.out.find(std::to_string(a) + "_[2-5%2] PD JobArrayTaskLimit"), std::string::npos) << q.out;
  // One pending task on its own, as Slurm 22.05 shows it: the array's id, the task's own output path.
  auto one = c.run("scontrol", {"-o", "show", "job", std::to_string(a) + "_5"});
  EXPECT_EQ(one.out.rfind("JobId=" + std::to_string(a) + " ArrayJobId=" + std::to_string(a) + " ArrayTaskId=5 ", 0), 0u)
      << one.out << one.err;
  EXPECT_NE(one.out.find(" StdOut=/dev/null "), std::string::npos) << one.out;
  // Throttled, it is not eligible yet (Slurm 22.05: EligibleTime=Unknown); it is once it has run.
  EXPECT_NE(one.out.find(" EligibleTime=Unknown "), std::string::npos) << one.out;
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(c.wait_done(std::to_string(a) + "_" + std::to_string(i), 30s));
  std::vector<std::pair<double, int>> events;
  for (int i = 0; i < 6; ++i) {
    std::istringstream in(read_file(c.work() + "/t." + std::to_string(i)));
    std::string what;
    double when;
    while (in >> what >> when) events.emplace_back(when, what == "start" ? 1 : -1);
  }
  ASSERT_EQ(events.size(), 12u);
  std::sort(events.begin(), events.end());
  int running = 0, most = 0;
  for (const auto& [t, d] : events) most = std::max(most, running += d);
  EXPECT_LE(most, 2);
  auto eligible = c.run("sacct", {"-j", std::to_string(a) + "_5", "-X", "-n", "-P", "-o", "Eligible"});
  EXPECT_NE(eligible.out, "Unknown\n");
  EXPECT_EQ(eligible.out.rfind("20", 0), 0u) << eligible.out;
}

TEST(Jobs, Dependencies) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string ok = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "sleep 1"}));
  std::string fail = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "sleep 1; exit 1"}));
  std::string after_ok = std::to_string(c.submit({"-o", "/dev/null", "-d", "afterok:" + ok, "--wrap", "true"}));
  std::string never = std::to_string(c.submit({"-o", "/dev/null", "-d", "afterok:" + fail, "--wrap", "true"}));
  std::string not_ok = std::to_string(c.submit({"-o", "/dev/null", "-d", "afternotok:" + fail, "--wrap", "true"}));
  std::string any = std::to_string(c.submit({"-o", "/dev/null", "-d", "afterany:" + fail + ":" + ok, "--wrap", "true"}));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(c.state(after_ok), "PENDING");
  EXPECT_EQ(c.reason(after_ok), "Dependency");
  for (const auto& id : {after_ok, not_ok, any}) {
    ASSERT_TRUE(c.wait_done(id)) << id;
    EXPECT_EQ(c.state(id), "COMPLETED") << id;
  }
  EXPECT_EQ(c.state(never), "PENDING");
  EXPECT_TRUE(eventually([&] { return c.reason(never) == "DependencyNeverSatisfied"; }, 5s)) << c.reason(never);
  // singleton: the second job of the same name and user waits for the first.
  std::string s1 = std::to_string(c.submit({"-J", "single", "-o", "/dev/null", "-d", "singleton", "--wrap", "sleep 2"}));
  std::string s2 = std::to_string(c.submit({"-J", "single", "-o", "/dev/null", "-d", "singleton", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_state(s1, {"RUNNING"}));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(c.state(s2), "PENDING");
  EXPECT_EQ(c.reason(s2), "Dependency");
  ASSERT_TRUE(c.wait_done(s2));
  auto f1 = c.job_fields(s1), f2 = c.job_fields(s2);
  EXPECT_GE(f2["StartTime"], f1["EndTime"]);
  // scontrol update Dependency=: cleared, the job runs at once.
  std::string blocker = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "sleep 30"}));
  std::string waiting = std::to_string(c.submit({"-o", "/dev/null", "-d", "afterok:" + blocker, "--wrap", "true"}));
  EXPECT_TRUE(eventually([&] { return c.reason(waiting) == "Dependency"; }, 5s));
  auto u = c.run("scontrol", {"update", "JobId=" + waiting, "Dependency="});
  EXPECT_EQ(u.rc, 0) << u.err;
  ASSERT_TRUE(c.wait_done(waiting));
  EXPECT_EQ(c.state(waiting), "COMPLETED");
  EXPECT_EQ(c.state(blocker), "RUNNING");
  // Dependency= as Slurm 22.05 shows it (checked on the anchor): a met item
  // is gone, one that never will be is "(failed)", one met item of a '?'
  // list clears it; a held job shows its own.
  std::string both = std::to_string(c.submit({"-o", "/dev/null", "-d", "afterok:" + ok + ",afterok:" + blocker,
                                              "--wrap", "true"}));
  std::string either = std::to_string(c.submit({"-o", "/dev/null", "-d", "afterok:" + blocker + "?afterok:" + fail,
                                                "--wrap", "true"}));
  std::string held = std::to_string(c.submit({"-H", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_EQ(c.run("scontrol", {"update", "JobId=" + held, "Dependency=afterok:" + blocker}).rc, 0);
  auto deps = [&](const std::string& id) { return c.job_fields(id)["Dependency"]; };
  EXPECT_TRUE(eventually([&] { return c.reason(both) == "Dependency"; }, 5s));
  EXPECT_EQ(deps(both), "afterok:" + blocker + "(unfulfilled)");
  EXPECT_TRUE(eventually([&] { return c.reason(either) == "Dependency"; }, 5s));
  EXPECT_EQ(deps(either), "afterok:" + blocker + "(unfulfilled)?afterok:" + fail + "(failed)");
  EXPECT_EQ(deps(held), "afterok:" + blocker + "(unfulfilled)");
  EXPECT_EQ(deps(never), "afterok:" + fail + "(failed)");
  // A held job's singleton is not looked at while it is held: unfulfilled though no other job has
  // its name (Slurm 22.05 on the anchor); a '+minutes' delay shows with any type.
  std::string lone = std::to_string(c.submit({"-H", "-J", "lonely-name", "-o", "/dev/null", "-d", "singleton",
                                              "--wrap", "true"}));
  EXPECT_EQ(deps(lone), "singleton(unfulfilled)");
  std::string delayed = std::to_string(c.submit({"-o", "/dev/null", "-d", "afterok:" + blocker + "+5", "--wrap", "true"}));
  EXPECT_TRUE(eventually([&] { return c.reason(delayed) == "Dependency"; }, 5s));
  EXPECT_EQ(deps(delayed), "afterok:" + blocker + "+5(unfulfilled)");
  // --kill-on-invalid-dep=yes: cancelled once its dependency never can be met.
  std::string doomed = std::to_string(c.submit({"--kill-on-invalid-dep=yes", "-o", "/dev/null", "-d",
                                                "afterok:" + fail, "--wrap", "true"}));
  ASSERT_TRUE(c.wait_done(doomed));
  auto acct = c.run("sacct", {"-X", "-n", "-P", "-j", doomed, "-o", "State"});
  EXPECT_EQ(acct.out, "CANCELLED\n");
}

// slurm.conf DependencyParameters=kill_invalid_depend: every such job is
// cancelled, unless it asked --kill-on-invalid-dep=no.
TEST(Jobs, KillInvalidDependParameter) {
  ClusterDef def = small_cluster();
  def.extra = {"DependencyParameters=kill_invalid_depend"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  std::string fail = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "exit 1"}));
  ASSERT_TRUE(c.wait_done(fail));
  std::string doomed = std::to_string(c.submit({"-o", "/dev/null", "-d", "afterok:" + fail, "--wrap", "true"}));
  std::string kept = std::to_string(c.submit({"--kill-on-invalid-dep=no", "-o", "/dev/null", "-d", "afterok:" + fail,
                                              "--wrap", "true"}));
  ASSERT_TRUE(c.wait_done(doomed));
  EXPECT_EQ(c.state(doomed), "CANCELLED");
  EXPECT_TRUE(eventually([&] { return c.reason(kept) == "DependencyNeverSatisfied"; }, 5s)) << c.reason(kept);
  EXPECT_EQ(c.state(kept), "PENDING");
}

TEST(Jobs, CancelPendingAndRunning) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string pidfile = c.work() + "/pid";
  std::string run = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "echo $$ > " + pidfile + "; sleep 300"}));
  std::string held = std::to_string(c.submit({"-H", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_state(run, {"RUNNING"}));
  ASSERT_TRUE(eventually([&] { return !read_file(pidfile).empty(); }, 5s));
  pid_t pid = std::atoi(read_file(pidfile).c_str());
  EXPECT_EQ(c.reason(held), "JobHeldUser");
  // Filters that select nothing cancel nothing: no job is in reservation
  // maint; another cluster's name reaches no job here.
  EXPECT_EQ(c.run("scancel", {"-R", "maint"}).rc, 0);
  EXPECT_EQ(c.run("scancel", {"-M", "elsewhere", held}).rc, 1);
  EXPECT_EQ(c.state(held), "PENDING");
  auto r = c.run("scancel", {run, held});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(c.state(held), "CANCELLED");
  ASSERT_TRUE(c.wait_state(run, {"CANCELLED"}));
  EXPECT_TRUE(eventually([&] { return c.run("squeue", {"-h"}).out.empty(); }, 10s));
  EXPECT_TRUE(eventually([&] { return kill(pid, 0) != 0; }, 5s)) << "the job's shell is still alive";
  // Cancelling again, or an unknown id, is no error for Slurm 22.05's
  // scancel (on the anchor cluster): silent, exit 0; -v says what happened.
  // A signal to such a job is an error.
  auto again = c.run("scancel", {run});
  EXPECT_EQ(again.rc, 0);
  EXPECT_EQ(again.err, "");
  auto told = c.run("scancel", {"-v", run});
  EXPECT_EQ(told.rc, 0);
  EXPECT_EQ(told.err, "scancel: Terminating job " + run + "\nscancel: error: Kill job error on job id " + run +
                          ": Job/step already completing or completed\n");
  auto unknown = c.run("scancel", {"99999"});
  EXPECT_EQ(unknown.rc, 0);
  EXPECT_EQ(unknown.err, "");
  auto signal = c.run("scancel", {"--signal=USR1", "99999"});
  EXPECT_EQ(signal.rc, 1);
  // To the ended job too, in the same words (2026-12-08 on the anchor cluster).
  auto ended = c.run("scancel", {"--signal=USR1", run});
  EXPECT_EQ(ended.rc, 1);
  EXPECT_EQ(ended.err, "scancel: error: Kill job error on job id " + run + ": Invalid job id specified\n");
  EXPECT_EQ(signal.err, "scancel: error: Kill job error on job id 99999: Invalid job id specified\n");
  auto bad = c.run("scancel", {"-s", "BOGUS", "99999"});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(bad.err, "Unknown job signal: BOGUS\n");
  // A signal to a pending job: Slurm 22.05's words and exit status (anchor cluster, 2026-12-06).
  std::string waiting = std::to_string(c.submit({"-H", "-o", "/dev/null", "--wrap", "true"}));
  auto pending = c.run("scancel", {"--signal=USR1", waiting});
  EXPECT_EQ(pending.rc, 228);
  EXPECT_EQ(pending.err, "scancel: error: Kill job error on job id " + waiting +
                             ": Job can not be altered now, try again later\n");
  EXPECT_EQ(c.state(waiting), "PENDING");
  c.run("scancel", {waiting});
  // -v with filters that match nothing says which, as Slurm 22.05's does.
  auto none = c.run("scancel", {"-v", "-u", "nobody", "-p", "compute"});
  EXPECT_EQ(none.rc, 0);
  EXPECT_EQ(none.err, "scancel: error: No active jobs match ALL job filters, including: partition=compute user_name=nobody \n");
}

// scancel -i asks about each job it would cancel, by id, name and partition,
// and cancels those answered y; n, or the end of the input, leaves them be.
TEST(Jobs, ScancelInteractiveAsksAboutEachJob) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string a = std::to_string(c.submit({"-H", "-J", "ask", "-o", "/dev/null", "--wrap", "true"}));
  std::string b = std::to_string(c.submit({"-H", "-J", "ask", "-o", "/dev/null", "--wrap", "true"}));
  std::string arr = std::to_string(c.submit({"-H", "-J", "many", "--array=1-3", "-o", "/dev/null", "--wrap", "true"}));
  auto prompt = [](const std::string& id, const std::string& name) {
    return "Cancel job_id=" + id + " name=" + name + " partition=compute [y/n]? ";
  };
  auto no = c.run("scancel", {"-i", a}, {}, "n\n");
  EXPECT_EQ(no.rc, 0) << no.err;
  EXPECT_EQ(no.out, prompt(a, "ask"));
  EXPECT_EQ(c.state(a), "PENDING");
  // By name: both jobs; an answer other than y or n asks again.
  auto some = c.run("scancel", {"-i", "-v", "-n", "ask"}, {}, "maybe\ny\nn\n");
  EXPECT_EQ(some.rc, 0) << some.err;
  EXPECT_EQ(some.out, prompt(a, "ask") + prompt(a, "ask") + prompt(b, "ask"));
  EXPECT_EQ(some.err, "scancel: Terminating job " + a + "\n");
  EXPECT_EQ(c.state(a), "CANCELLED");
  EXPECT_EQ(c.state(b), "PENDING");
  auto eof = c.run("scancel", {"-i", b}, {}, "");
  EXPECT_EQ(eof.out, prompt(b, "ask") + "\n");
  EXPECT_EQ(c.state(b), "PENDING");
  // An array task alone.
  auto task = c.run("scancel", {"-i", arr + "_2"}, {}, "y\n");
  EXPECT_EQ(task.out, prompt(arr + "_2", "many"));
  EXPECT_EQ(c.state(arr + "_2"), "CANCELLED");
  EXPECT_EQ(c.state(arr + "_1"), "PENDING");
}

// slurm.conf's Licenses= (the seed's cluster-wide token pool, e.g. file-system
// bandwidth): jobs take them with -L, wait (Licenses) while too few are free,
// `scontrol show licenses` shows the pool as Slurm 22.05 does, and a request
// the pool can never meet is refused with Slurm's message.
TEST(Jobs, LicensesFromSlurmConfAreTakenWaitedForAndShown) {
  ClusterDef def = small_cluster();
  def.extra = {"Licenses=fsbw:20,matlab"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  std::string big = std::to_string(c.submit({"-L", "fsbw:15", "-o", "/dev/null", "--wrap", "sleep 300"}));
  ASSERT_TRUE(c.wait_state(big, {"RUNNING"}));
  std::string waits = std::to_string(c.submit({"-L", "fsbw:6", "-o", "/dev/null", "--wrap", "true"}));
  std::string fits = std::to_string(c.submit({"-L", "fsbw:5,matlab", "-o", "/dev/null", "--wrap", "sleep 300"}));
  ASSERT_TRUE(c.wait_state(fits, {"RUNNING"}));
  EXPECT_EQ(c.state(waits), "PENDING");
  EXPECT_EQ(c.reason(waits), "Licenses");
  EXPECT_EQ(c.job_fields(big)["Licenses"], "fsbw:15");
  auto r = c.run("scontrol", {"show", "licenses"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "LicenseName=fsbw\n    Total=20 Used=20 Free=0 Reserved=0 Remote=no\n"
                   "LicenseName=matlab\n    Total=1 Used=1 Free=0 Reserved=0 Remote=no\n");
  r = c.run("scontrol", {"-o", "show", "lic", "matlab"});
  EXPECT_EQ(r.out, "LicenseName=matlab Total=1 Used=1 Free=0 Reserved=0 Remote=no\n");
  EXPECT_EQ(c.run("squeue", {"-h", "-L", "matlab", "-o", "%i"}).out, fits + "\n");  // -L: jobs using it
  // The licenses come back with the job's end; the waiting job starts.
  ASSERT_EQ(c.run("scancel", {big}).rc, 0);
  EXPECT_TRUE(c.wait_done(waits));
  EXPECT_EQ(c.state(waits), "COMPLETED");
  for (const char* bad : {"fsbw:21", "nosuch:1"}) {
    r = c.run("sbatch", {"-L", bad, "--wrap", "true"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(lines_of(r.err).at(0), "sbatch: error: Batch job submission failed: Invalid license specification") << bad;
  }
}

// scontrol write batch_script: the script as submitted, to a file or stdout,
// with Slurm's messages; the controller hands another user's script (and
// environment, which may hold secrets) to nobody but its owner and the
// privileged, so a plain user asking for it gets Slurm's refusal.
TEST(Jobs, WriteBatchScriptGivesTheOwnerTheScriptAndNobodyElse) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string script = "#!/bin/bash\n#SBATCH -J kept\necho $((6*7))\n";
  std::ofstream(c.work() + "/job.sh") << script;
  std::string id = std::to_string(c.submit({"-H", "job.sh"}));
  auto r = c.run("scontrol", {"write", "batch_script", id});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "batch script for job " + id + " written to slurm-" + id + ".sh\n");
  EXPECT_EQ(read_file(c.work() + "/slurm-" + id + ".sh"), script);
  r = c.run("scontrol", {"write", "batch_script", id, "-"});
  EXPECT_EQ(r.out, script);
  r = c.run("scontrol", {"write", "batch_script", "99999", "-"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "job script retrieval failed: Invalid job id specified\n");
  r = c.run("scontrol", {"write", "batch_script", id, "/nonexistent/x.sh"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "failed to open file `/nonexistent/x.sh`: No such file or directory\n");
  auto user = ensure_user("droveruser");
  if (!user) GTEST_SKIP() << "another user's view needs root (useradd)";
  r = c.run("scontrol", {"write", "batch_script", id, "-"}, user->as());
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "job script retrieval failed: Invalid user id\n");
  // squeue --me: the invoking user's jobs only.
  EXPECT_EQ(c.run("squeue", {"--me", "-h", "-o", "%i"}, user->as()).out, "");
  EXPECT_EQ(c.run("squeue", {"--me", "-h", "-o", "%i"}).out, id + "\n");
}

// sbatch -W/--wait returns when the job has ended, with its exit code: an
// array's highest, 1 for a job ended by a signal (as Slurm 22.05's, checked
// on the anchor cluster with the same three jobs).
TEST(Jobs, SbatchWaitReturnsWhenTheJobEndsWithItsExitCode) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("sbatch", {"--wait", "-o", "/dev/null", "--wrap", "sleep 1; exit 3"});
  EXPECT_EQ(r.rc, 3) << r.err;
  ASSERT_EQ(r.out.rfind("Submitted batch job ", 0), 0u) << r.out;
  const std::string id = r.out.substr(20, r.out.size() - 21);
  EXPECT_EQ(c.state(id), "FAILED");  // ended before sbatch returned
  r = c.run("sbatch", {"--wait", "-a", "0-2", "-o", "/dev/null", "--wrap", "exit $SLURM_ARRAY_TASK_ID"});
  EXPECT_EQ(r.rc, 2) << r.err;
  r = c.run("sbatch", {"-W", "--parsable", "-o", "/dev/null", "--wrap", "kill -9 $$"});
  EXPECT_EQ(r.rc, 1) << r.err;
  r = c.run("sbatch", {"-W", "-o", "/dev/null", "--wrap", "true"});
  EXPECT_EQ(r.rc, 0) << r.err;
}

// squeue -i / sinfo -i list again every N seconds, a blank line after each
// listing, until interrupted.
TEST(Jobs, SqueueAndSinfoIterate) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string id = std::to_string(c.submit({"-H", "--wrap", "true"}));
  auto r = c.run("/bin/bash", {"-c", "timeout 2.5 squeue -i 1 -h -o %i; timeout 1.5 sinfo -i 1 -h -p gpu -o %P"});
  EXPECT_EQ(r.out.substr(0, 2 * (id.size() + 2)), id + "\n\n" + id + "\n\n") << r.out;
  EXPECT_NE(r.out.find("gpu\n\ngpu\n\n"), std::string::npos) << r.out;
  c.run("scancel", {id});
}

// The state letter of a process in /proc ('T' stopped, 'S' sleeping), or 0 when it is gone.
char proc_state(pid_t pid) {
  std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() ? 0 : stat[close + 2];
}

// scontrol suspend/resume as Slurm 22.05's (the same lines run on the anchor
// cluster): operators only; the job's processes stop, its CPUs go to other
// jobs and its node shows idle; sacct counts the pause; resume continues
// the processes and moves the end on; Slurm's refusals; a suspended job can
// be cancelled.
TEST(Jobs, SuspendStopsTheJobAndLendsItsCpusUntilResume) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string pidfile = c.work() + "/pid";
  const std::string id = std::to_string(c.submit({"-w", "cpu1", "-n", "16", "-t", "10", "-o", "/dev/null", "--wrap",
                                                  "sleep 300 & echo $! > " + pidfile + "; wait"}));
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  ASSERT_TRUE(eventually([&] { return !read_file(pidfile).empty(); }, 5s));
  const pid_t sleeper = std::atoi(read_file(pidfile).c_str());
  const std::string end_before = c.job_fields(id)["EndTime"];
  if (auto user = ensure_user("droveruser")) {
    auto r = c.run("scontrol", {"suspend", id}, user->as());
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "Access/permission denied for job " + id + "\n");
  }
  auto r = c.run("scontrol", {"resume", id});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Job is not suspended for job " + id + "\n");

  r = c.run("scontrol", {"suspend", id});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "");
  EXPECT_EQ(c.run("squeue", {"-h", "-j", id, "-o", "%t"}).out, "S\n");
  EXPECT_TRUE(eventually([&] { return proc_state(sleeper) == 'T'; }, 5s)) << "state " << proc_state(sleeper);
  EXPECT_EQ(c.run("scontrol", {"suspend", id}).rc, 0);  // again: nothing to do, no error
  auto f = c.job_fields(id);
  EXPECT_EQ(f["JobState"], "SUSPENDED");
  EXPECT_NE(f["SuspendTime"], "None");
  EXPECT_EQ(c.run("sinfo", {"-h", "-n", "cpu1", "-o", "%T %C"}).out, "idle 0/16/0/16\n");
  // Its CPUs are lent: a job that needs all of cpu1 starts.
  const std::string other = std::to_string(c.submit({"-w", "cpu1", "-n", "16", "-o", "/dev/null", "--wrap", "sleep 300"}));
  EXPECT_TRUE(c.wait_state(other, {"RUNNING"}));
  std::this_thread::sleep_for(1100ms);  // a pause of at least a second, for the end to move on
  auto acct = c.run("sacct", {"-X", "-n", "-P", "-j", id, "-o", "State,Suspended"});
  EXPECT_EQ(acct.out.substr(0, 10), "SUSPENDED|") << acct.out;
  EXPECT_NE(acct.out, "SUSPENDED|00:00:00\n");

  r = c.run("scontrol", {"resume", id});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(c.state(id), "RUNNING");
  EXPECT_TRUE(eventually([&] { return proc_state(sleeper) == 'S'; }, 5s)) << "state " << proc_state(sleeper);
  EXPECT_GT(c.job_fields(id)["EndTime"], end_before);  // ISO times compare as text

  std::string held = std::to_string(c.submit({"-H", "--wrap", "true"}));
  r = c.run("scontrol", {"suspend", held + "," + id});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Job is pending execution for job " + held + "\n");
  EXPECT_EQ(c.state(id), "SUSPENDED");
  r = c.run("scancel", {id, other, held});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(c.wait_done(id));
  EXPECT_EQ(c.state(id), "CANCELLED");
  EXPECT_TRUE(eventually([&] { return proc_state(sleeper) == 0; }, 10s)) << "the stopped job's process outlived it";
}

// Time spent suspended does not count against the time limit: a 3-second
// job suspended for 4 seconds is still there (across a kill -9 of the
// controller: the suspension was durable), and times out after resuming.
TEST(Jobs, ASuspendedJobsTimeLimitWaitsForTheResume) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string id = std::to_string(c.submit({"-t", "0:03", "-o", "/dev/null", "--wrap", "sleep 60"}));
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(c.run("scontrol", {"suspend", id}).rc, 0);
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller()) << c.error();
  ASSERT_TRUE(c.wait_nodes_responding());
  std::this_thread::sleep_until(t0 + 4s);
  EXPECT_EQ(c.state(id), "SUSPENDED");
  ASSERT_EQ(c.run("scontrol", {"resume", id}).rc, 0);
  EXPECT_EQ(c.state(id), "RUNNING");
  ASSERT_TRUE(c.wait_done(id, 15s));
  EXPECT_EQ(c.state(id), "TIMEOUT");
  auto acct = c.run("sacct", {"-X", "-n", "-P", "-j", id, "-o", "Elapsed,Suspended"});
  ASSERT_EQ(acct.out.size(), 18u) << acct.out;
  EXPECT_LE(acct.out.substr(0, 8), "00:00:04") << acct.out;  // run time: the limit, not the pause
  EXPECT_GE(acct.out.substr(9, 8), "00:00:04") << acct.out;
}

// An srun step's own -t pauses with its job too: the step outlives its limit
// by the time the job was suspended, then times out.
TEST(Jobs, ASuspendedStepsOwnTimeLimitWaitsForTheResume) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  // 6 s: the step may have run a few of them before the suspend lands on a
  // loaded machine (with 3 s, CI once found it ended 0.5 s after the resume).
  std::string id = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "srun -t 0:06 sleep 30"}));
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  auto step_runs = [&] { return c.run("squeue", {"-h", "-s", "-j", id, "-o", "%i"}).out.find(id + ".0") != std::string::npos; };
  ASSERT_TRUE(eventually(step_runs, 10s));
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(c.run("scontrol", {"suspend", id}).rc, 0);
  std::this_thread::sleep_until(t0 + 8s);  // well past the step's 6 s
  ASSERT_EQ(c.run("scontrol", {"resume", id}).rc, 0);
  std::this_thread::sleep_for(500ms);
  EXPECT_TRUE(step_runs()) << "the step ended during the pause";
  ASSERT_TRUE(c.wait_done(id, 20s));
  auto acct = c.run("sacct", {"-n", "-P", "-j", id + ".0", "-o", "State"});
  EXPECT_EQ(acct.out, "TIMEOUT\n");
}

// scontrol update TimeLimit= on a running job moves the end of its srun
// steps whose own -t reached past the old end: a step kept to the job's first
// 4 s runs on once the job has a minute.
TEST(Jobs, ALongerTimeLimitLetsTheJobsStepsRunOn) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  // 8 s: room for the step to start and the update to arrive on a loaded machine.
  std::string id = std::to_string(c.submit({"-t", "0:08", "-o", "/dev/null", "--wrap", "srun -t 5 sleep 30"}));
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  const auto t0 = std::chrono::steady_clock::now();
  auto step_runs = [&] { return c.run("squeue", {"-h", "-s", "-j", id, "-o", "%i"}).out.find(id + ".0") != std::string::npos; };
  ASSERT_TRUE(eventually(step_runs, 3s));
  auto u = c.run("scontrol", {"update", "JobId=" + id, "TimeLimit=1"});
  ASSERT_EQ(u.rc, 0) << u.err;
  std::this_thread::sleep_until(t0 + 11s);  // well past the old end
  EXPECT_EQ(c.state(id), "RUNNING");
  EXPECT_TRUE(step_runs()) << "the step ended at the job's old time limit";
  ASSERT_EQ(c.run("scancel", {id}).rc, 0);
  ASSERT_TRUE(c.wait_done(id, 15s));
  auto acct = c.run("sacct", {"-n", "-P", "-j", id + ".0", "-o", "State"});
  EXPECT_NE(acct.out, "TIMEOUT\n");
}

// scontrol wait_job, as Slurm 22.05 answers it: a running job's nodes are
// ready; a job that is not running (pending included) fails at once. And
// scontrol show daemons.
TEST(Jobs, ScontrolWaitJobAnswersAsSlurms) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string id = std::to_string(c.submit({"-H", "-o", "/dev/null", "--wrap", "sleep 30"}));
  auto pending = c.run("scontrol", {"wait_job", id});
  EXPECT_EQ(pending.rc, 1);
  EXPECT_EQ(pending.err, "scontrol: Job " + id + " no longer running\n");
  ASSERT_EQ(c.run("scontrol", {"release", id}).rc, 0);
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  auto ready = c.run("scontrol", {"wait_job", id});
  EXPECT_EQ(ready.rc, 0);
  EXPECT_EQ(ready.out, "");
  EXPECT_EQ(ready.err, "scontrol: Nodes are ready for job " + id + "\n");
  auto unknown = c.run("scontrol", {"wait_job", "999999"});
  EXPECT_EQ(unknown.rc, 1);
  EXPECT_EQ(unknown.err, "scontrol: Problem running job 999999\n");
  EXPECT_EQ(c.run("scontrol", {"wait_job"}).err, "too few arguments for keyword:wait_job\n");
  ASSERT_EQ(c.run("scancel", {id}).rc, 0);
  // show daemons reads slurm.conf alone: this host runs the controller and the nodes' agents.
  EXPECT_EQ(c.run("scontrol", {"show", "daemons"}).out, "slurmctld slurmd\n");
}

// scontrol with no command reads its commands from stdin (Slurm's
// interactive mode, also how scripts pipe commands into it).
TEST(Jobs, ScontrolReadsCommandsFromStdinWithoutOne) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string id = std::to_string(c.submit({"-H", "-J", "piped", "-o", "/dev/null", "--wrap", "true"}));
  auto r = c.run("scontrol", {}, {},
                 "show job " + id + "\n"
                 "\n"
                 "update JobId=" + id + " Comment=\"from a pipe\"\n"
                 "oneliner\n"
                 "show job " + id + "\n"
                 "show job 999999\n"
                 "quit\n"
                 "release " + id + "\n");
  EXPECT_EQ(r.rc, 1) << "one command failed";
  const auto lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0].rfind("JobId=" + id + " JobName=piped", 0), 0u) << r.out;
  // After `oneliner`, one line per job; the update took; nothing after quit ran.
  EXPECT_EQ(lines.back().rfind("JobId=" + id + " JobName=piped ", 0), 0u) << r.out;
  EXPECT_NE(lines.back().find("Comment=from a pipe"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("Invalid job id specified"), std::string::npos) << r.err;
  EXPECT_EQ(c.state(id), "PENDING") << "the release after quit did not run";
  EXPECT_EQ(c.run("scontrol", {"--version"}).out, "slurm 22.05.8\n");
  // hold, uhold and release name the error twice, as Slurm 22.05's scontrol did on the anchor cluster.
  auto hold = c.run("scontrol", {"hold", "999999"});
  EXPECT_EQ(hold.rc, 1);
  EXPECT_EQ(hold.err, "Invalid job id specified for job 999999\nslurm_suspend error: Invalid job id specified\n");
  auto requeue = c.run("scontrol", {"requeue", "999999"});
  EXPECT_EQ(requeue.err, "Invalid job id specified for job 999999\n") << "requeue names it once";
  // A word that is no job id is said, and the other ids are still acted on (Slurm 22.05: `release abc 12`).
  auto mixed = c.run("scontrol", {"release", "abc", id});
  EXPECT_EQ(mixed.rc, 1);
  EXPECT_EQ(mixed.err, "Invalid job id specified for job abc\nslurm_suspend error: Invalid job id specified\n");
  EXPECT_EQ(c.run("scontrol", {"show", "job", id}).out.find("JobHeld"), std::string::npos) << "the job was released";
  c.run("scancel", {id});
}

// scontrol update and hold/release lines as public scripts write them, answered as Slurm 22.05 answered
// them on the anchor cluster: the entity's key may stand anywhere (`update state=drain nodename=...`); an
// array element named by itself, also in brackets (`N_[1-2]`), is changed alone and then shown as a record
// of its own, and so is the one that leaves alone in the array's record (`N_1`); an element the array lacks is "N_9: Invalid job id specified"; MailType is checked before
// anything is asked.
TEST(Jobs, ScontrolUpdateTakesTheLinesScriptsWrite) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("scontrol", {"update", "state=drain", "nodename=cpu2", "reason=comment here"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(c.run("sinfo", {"-h", "-N", "-n", "cpu2", "-o", "%N %t %E"}).out.substr(0, 29), "cpu2 drain comment here\n");
  ASSERT_EQ(c.run("scontrol", {"update", "nodename=cpu2", "state=resume"}).rc, 0);

  const std::string a = std::to_string(c.submit({"-H", "-a", "1-4", "-o", "/dev/null", "-J", "arr", "--wrap", "true"}));
  r = c.run("scontrol", {"update", "JobID=" + a + "_2", "name=arturo"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(c.run("squeue", {"-h", "-j", a, "-o", "%i %j"}).out, a + "_[1,3-4] arr\n" + a + "_2 arturo\n");
  r = c.run("scontrol", {"update", "JobId=" + a + "_[3-4]", "Comment=both"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(c.run("squeue", {"-h", "-j", a, "-o", "%i %k"}).out,
            a + "_1 (null)\n" + a + "_2 (null)\n" + a + "_3 both\n" + a + "_4 both\n");
  r = c.run("scontrol", {"hold", a + "_9"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, a + "_9: Invalid job id specified\n") << "no slurm_suspend line for an element";
  r = c.run("scontrol", {"release", a + "_[7-8]"});
  EXPECT_EQ(r.err, a + "_7-8: Invalid job id specified\n");
  // A range partly beyond the array: each outcome with its tasks, in task order (Slurm 22.05 on the
  // anchor cluster: "A_5,10: No error" then "A_6-9: Invalid job id specified", exit 1).
  r = c.run("scontrol", {"update", "JobId=" + a + "_[3-6]", "Comment=part"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, a + "_3-4: No error\n" + a + "_5-6: Invalid job id specified\n");
  r = c.run("scontrol", {"hold", a + "_[4-5]"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, a + "_4: No error\n" + a + "_5: Invalid job id specified\n");
  // An ended element, or job: Slurm 22.05's words, each outcome once with
  // its elements as ranges, the ones that went well too (anchor cluster:
  // "A_0,2: No error" beside "A_1: Job is pending execution").
  const std::string b = std::to_string(c.submit({"-a", "0-4", "-o", "/dev/null", "--wrap",
                                                 "case $SLURM_ARRAY_TASK_ID in 2|4) sleep 60;; esac"}));
  for (const char* done : {"_0", "_1", "_3"}) ASSERT_TRUE(c.wait_done(b + done));
  r = c.run("scontrol", {"update", "jobid=" + b, "TimeLimit=50"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, b + "_0-1,3: Job has already finished\n" + b + "_2,4: No error\n");
  r = c.run("scontrol", {"hold", b + "_1"});
  EXPECT_EQ(r.err, b + "_1: Job has already finished\n");
  ASSERT_EQ(c.run("scancel", {b}).rc, 0);
  r = c.run("scontrol", {"update", "jobid=" + a + "+2", "account=abc"});
  EXPECT_EQ(r.err, "Invalid job id specified for job " + a + "+2\n");
  r = c.run("scontrol", {"update", "jobid=" + a + "_1", "mailtype=bogus"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Invalid MailType: bogus\n");
  ASSERT_EQ(c.run("scontrol", {"update", "jobid=" + a + "_1", "mailtype=time_limit_80", "MailUser=bob"}).rc, 0);
  EXPECT_EQ(c.job_fields(a + "_1")["MailType"], "TIME_LIMIT_80");
  EXPECT_EQ(c.job_fields(a + "_1")["MailUser"], "bob");
  ASSERT_EQ(c.run("scancel", {a}).rc, 0);
  // JobName= without JobId= names the jobs to change (scontrol(1)); Slurm's words when none has it.
  const std::string n1 = std::to_string(c.submit({"-H", "-J", "byname", "-t", "10", "--wrap", "true"}));
  const std::string n2 = std::to_string(c.submit({"--begin=now+1hour", "-J", "byname", "-t", "20", "--wrap", "true"}));
  r = c.run("scontrol", {"update", "JobName=byname", "TimeLimit=5"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(c.run("squeue", {"-h", "-n", "byname", "-o", "%j %l"}).out, "byname 5:00\nbyname 5:00\n");
  r = c.run("scontrol", {"update", "JobName=nosuchname", "TimeLimit=5"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "scontrol: error: No jobs with name 'nosuchname'\n");
  // OverSubscribe=NO is --exclusive's whole nodes, YES is shown; other words are refused before asking.
  ASSERT_EQ(c.run("scontrol", {"update", "JobId=" + n1, "OverSubscribe=no"}).rc, 0);
  EXPECT_EQ(c.run("squeue", {"-h", "-j", n1, "-o", "%h"}).out, "NO\n");
  EXPECT_EQ(c.job_fields(n1)["OverSubscribe"], "NO");
  ASSERT_EQ(c.run("scontrol", {"update", "JobId=" + n1, "Shared=1"}).rc, 0);
  EXPECT_EQ(c.run("squeue", {"-h", "-j", n1, "-o", "%h"}).out, "YES\n");
  r = c.run("scontrol", {"update", "JobId=" + n1, "OverSubscribe=maybe"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "scontrol: error: Invalid OverSubscribe value: maybe\n");
  // A job no node can hold, taken while held and pending BadConstraints once
  // released, may still be renamed, as Slurm 22.05 let it be.
  const std::string big = std::to_string(c.submit({"-H", "--mem=100000G", "--wrap", "true"}));
  ASSERT_EQ(c.run("scontrol", {"release", big}).rc, 0);
  ASSERT_TRUE(eventually([&] { return c.run("squeue", {"-h", "-j", big, "-o", "%r"}).out == "BadConstraints\n"; },
                         std::chrono::seconds(10)));
  r = c.run("scontrol", {"update", "JobId=" + big, "Name=renamed"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(c.run("squeue", {"-h", "-j", big, "-o", "%j"}).out, "renamed\n");
  // ... but a job that could run (not held) is not made one that never can.
  r = c.run("scontrol", {"update", "JobId=" + n2, "MinMemoryNode=1G"});  // megabytes only, as Slurm's scontrol
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "scontrol: error: Invalid MinMemoryNode value: 1G\n");
  r = c.run("scontrol", {"update", "JobId=" + n2, "MinMemoryNode=100000000"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')), "Requested node configuration is not available for job " + n2);
  ASSERT_EQ(c.run("scancel", {n1, n2, big}).rc, 0);
}

// What Slurm 22.05's commands said to mistakes on the anchor cluster
// (../shared/anchors/slurm), side by side with Drover's on the same slurm.conf.
TEST(Jobs, CommandsAnswerMistakesAsSlurms) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string held = std::to_string(c.submit({"-H", "-o", "/dev/null", "--wrap", "true"}));
  auto r = c.run("squeue", {"-j", "99999"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "slurm_load_jobs error: Invalid job id specified\n");
  r = c.run("squeue", {"-h", "-j", "99999," + held, "-o", "%i"});
  EXPECT_EQ(r.rc, 0) << "with several ids, the unknown ones are left out";
  EXPECT_EQ(r.out, held + "\n");
  r = c.run("squeue", {"-h", "-u", "nosuchuser"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.err, "squeue: error: Invalid user: nosuchuser\n\n");
  r = c.run("sinfo", {"-t", "idle,bogus"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.rfind("sinfo: error: Bad state string: \"bogus\"\nsinfo: error: valid states: unknown,down,idle,", 0), 0u)
      << r.err;
  EXPECT_EQ(c.run("sinfo", {"-h", "-t", "alloc,mix,drain,idle", "-o", "%P"}).rc, 0) << "words and beginnings of them";
  r = c.run("sbatch", {"-N", "0", "--wrap", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.rfind("sbatch: error: Batch job submission failed: Node count specification invalid\n", 0), 0u) << r.err;
  r = c.run("sacct", {"-j", "abc"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "sacct: fatal: Bad job/step specified: abc\n");
  // Malformed job ids, in each command's words (checked on the anchor cluster on 2026-12-05).
  for (const std::string bad : {"12_ab", "12.0", "12+0"}) {
    r = c.run("squeue", {"-j", bad});
    EXPECT_EQ(r.rc, 1) << bad;
    EXPECT_EQ(r.err, "slurm_load_jobs error: Invalid job id specified\n") << bad;
  }
  r = c.run("scontrol", {"show", "job", "abc"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "scontrol_print_job error: Invalid job id specified\n");
  r = c.run("scontrol", {"hold", "12_ab"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Invalid job id specified for job 12_ab\nslurm_suspend error: Invalid job id specified\n");
  r = c.run("scancel", {"12.x"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(lines_of(r.err).at(0), "scancel: error: Invalid job id 12.x");
  r = c.run("scancel", {"-u", "nosuchuser", "-t", "PENDING"});  // as in public scripts; nothing cancelled
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "scancel: error: Invalid user name: nosuchuser\n");
  EXPECT_EQ(c.state(held), "PENDING");
  r = c.run("sacct", {"-S", "bogus"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.rfind("Invalid time specification (pos=0): bogus\n", 0), 0u) << r.err;
  r = c.run("sprio", {"-j", "99999"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "Unable to find jobs matching user/id(s) specified\n");
  r = c.run("scontrol", {"update", "NodeName=cpu2", "State=DRAIN"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "You must specify a reason when DOWNING or DRAINING a node. Request denied\n");
  r = c.run("scontrol", {"update", "NodeName=cpu2", "State=BOGUS", "Reason=x"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Invalid input: State=BOGUS\nRequest aborted\nValid states are: NoResp DRAIN FAIL FUTURE RESUME "
                   "POWER_DOWN POWER_UP UNDRAIN\nNot all states are valid given a node's prior state\n");
  // A dependency on a job the controller does not know is dropped: the job
  // waits only for the others (Slurm 22.05 ran such a job at once).
  const int64_t free_dep = c.submit({"-d", "afterok:99999", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_GT(free_dep, 0) << c.last_error();
  const int64_t waits = c.submit({"-d", "afterok:99999,afterok:" + held, "-o", "/dev/null", "--wrap", "true"});
  ASSERT_GT(waits, 0) << c.last_error();
  EXPECT_TRUE(c.wait_done(std::to_string(free_dep)));
  EXPECT_EQ(c.state(std::to_string(free_dep)), "COMPLETED");
  EXPECT_EQ(c.run("squeue", {"-h", "-j", std::to_string(waits), "-o", "%r %E"}).out,
            "Dependency afterok:" + held + "(unfulfilled)\n");
  // A negative --nice is for the privileged; srun into no allocation.
  auto user = ensure_user("drovere2ea");
  if (user) {
    r = c.run("sbatch", {"--nice=-5", "-o", "/dev/null", "--wrap", "true"}, user->as());
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err.rfind("sbatch: error: Batch job submission failed: Invalid --nice value\n", 0), 0u) << r.err;
  }
  // scontrol, as Slurm 22.05 answered on the anchor cluster.
  r = c.run("scontrol", {"top", held});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Job is in held state, pending scheduler release for job " + held + "\n");
  r = c.run("scontrol", {"update", "JobId=" + held, "TimeLimit=abc"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "scontrol: error: Invalid TimeLimit value\n");
  // A key scontrol does not know is refused before asking, one it knows but Drover does not build by the controller.
  r = c.run("scontrol", {"update", "JobId=" + held, "NoSuch=1", "Nice=5"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Update of this parameter is not supported: NoSuch=1\nRequest aborted\n");
  r = c.run("scontrol", {"update", "JobId=" + held, "Bogus"});
  EXPECT_EQ(r.err, "Invalid input: Bogus\nRequest aborted\n");
  r = c.run("scontrol", {"update", "JobId=" + held, "NumCPUs=4"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "Update of NumCPUs is not built in Drover for job " + held + "\n");
  EXPECT_EQ(c.job_fields(held)["Nice"], "0") << "nothing of a refused update is made";
  EXPECT_EQ(c.run("scontrol", {"update", "JobId=" + held, "TimeLimit=30"}).rc, 0);
  EXPECT_EQ(c.run("scontrol", {"update", "JobId=" + held, "TimeLimit=-10"}).rc, 0);
  EXPECT_EQ(c.job_fields(held)["TimeLimit"], "00:20:00");
  // Slurm 22.05's scontrol checks a decrease against the limit first, in minutes.
  r = c.run("scontrol", {"update", "JobId=" + held, "TimeLimit=-100"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "scontrol: error: TimeLimit decrement larger than current time limit (100 > 20)\n");
  EXPECT_EQ(c.job_fields(held)["TimeLimit"], "00:20:00");
  EXPECT_EQ(c.job_fields(held)["EligibleTime"], "Unknown");  // not eligible while held
  EXPECT_EQ(c.job_fields(held)["AccrueTime"], "Unknown");
  r = c.run("scontrol", {"show", "licenses"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "No licenses configured in Slurm.\n");
  r = c.run("scontrol", {"show", "frontend"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "No nodes in the system\n");
  // SlurmctldHost=localhost(127.0.0.1): named by this host's short name, as Slurm's ping names it.
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  const std::string shortname = std::string(host).substr(0, std::string(host).find('.'));
  r = c.run("scontrol", {"ping"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "Slurmctld(primary) at " + shortname + " is UP\n");
  r = c.run("srun", {"--jobid=99999", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "srun: error: Unable to confirm allocation for job 99999: Invalid job id specified\n"
                   "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job 99999\n");
  ASSERT_EQ(c.run("scancel", {held, std::to_string(waits)}).rc, 0);
}

// --mail-type: the controller mails through MailProg as Slurm's does
// (`MailProg -s SUBJECT USER`, the subjects captured on the anchor cluster),
// once the change it tells of is durable; an array mails one summary.
TEST(Jobs, MailTypeSendsSlurmsMailThroughMailProg) {
  auto dir = rpc::testing::TempDir::create("drover-mail");
  ASSERT_TRUE(dir) << dir.error().message;
  const std::string log = dir->path() + "/mail.log";
  const std::string prog = dir->path() + "/mailprog";
  std::ofstream(prog) << "#!/bin/sh\necho \"$1|$2|$3|$SLURM_JOB_MAIL_TYPE\" >> " + log + "\n";
  ASSERT_EQ(chmod(prog.c_str(), 0755), 0);
  ClusterDef def = small_cluster();
  def.extra = {"MailProg=" + prog, "MailDomain=example.org"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  std::string ok = std::to_string(c.submit({"-J", "mj", "--mail-type=ALL", "-o", "/dev/null", "--wrap", "true"}));
  std::string bad = std::to_string(c.submit({"-J", "fj", "--mail-type=END,FAIL", "--mail-user=bob@site.org", "-o",
                                             "/dev/null", "--wrap", "exit 3"}));
  std::string held = std::to_string(c.submit({"-J", "hj", "-H", "--mail-type=END", "-o", "/dev/null", "--wrap", "true"}));
  std::string arr = std::to_string(c.submit({"-J", "aj", "-a", "1-3", "--mail-type=END", "-o", "/dev/null", "--wrap",
                                             "exit $SLURM_ARRAY_TASK_ID"}));
  std::string none = std::to_string(c.submit({"-J", "nj", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_done(ok));
  ASSERT_TRUE(c.wait_done(bad));
  ASSERT_TRUE(c.wait_done(none));
  ASSERT_EQ(c.run("scancel", {held}).rc, 0);
  ASSERT_TRUE(eventually([&] { return lines_of(read_file(log)).size() >= 5; }, 15s)) << read_file(log);
  std::this_thread::sleep_for(300ms);  // nothing more comes
  // Run and queued times depend on when the second turned: compared apart.
  auto times_out = [](std::string line) {
    return std::regex_replace(line, std::regex("(Run|Queued) time [0-9:]+"), "$1 time T");
  };
  auto got = lines_of(read_file(log));
  for (auto& g : got) {
    if (g.find(" time ") != std::string::npos) {
      EXPECT_TRUE(std::regex_search(g, std::regex("time 00:00:0[0-2]"))) << g;
    }
    g = times_out(g);
  }
  std::sort(got.begin(), got.end());
  std::vector<std::string> want{
      "-s|Slurm Array Summary Job_id=" + arr + "_* (" + arr + ") Name=aj Ended, FAILED, ExitCode [1-3]|alice@example.org|Ended",
      "-s|Slurm Job_id=" + bad + " Name=fj Failed, Run time 00:00:00, FAILED, ExitCode 3|bob@site.org|Failed",
      "-s|Slurm Job_id=" + held + " Name=hj Ended, Run time 00:00:00, CANCELLED, ExitCode 0|alice@example.org|Ended",
      "-s|Slurm Job_id=" + ok + " Name=mj Began, Queued time 00:00:00|alice@example.org|Began",
      "-s|Slurm Job_id=" + ok + " Name=mj Ended, Run time 00:00:00, COMPLETED, ExitCode 0|alice@example.org|Ended",
  };
  const std::string me = c.run("/usr/bin/id", {"-un"}).out;
  for (auto& w : want) {
    auto at = w.find("alice");
    if (at != std::string::npos) w.replace(at, 5, me.substr(0, me.size() - 1));
    w = times_out(w);
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

// slurm.conf's OverTimeLimit (minutes) lets a job run past its time limit
// before it ends TIMEOUT, as on the anchor cluster (OverTimeLimit=1: a
// `-t 1` job ran 2:22, then TIMEOUT, its EndTime meanwhile the limit's);
// a partition's own OverTimeLimit wins over it. srun's own allocation runs
// on with it; a step's own -t inside a job does not (both as on the anchor).
TEST(Jobs, OverTimeLimitLetsAJobRunPastItsTimeLimit) {
  ClusterDef def = small_cluster();
  def.partitions[1] += " OverTimeLimit=0";
  def.extra = {"OverTimeLimit=1"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::string over = std::to_string(
      c.submit({"-t", "0:02", "-o", "over.out", "--wrap", "sleep 5; srun -t 0:01 sh -c 'sleep 3; echo step'; echo done"}));
  const std::string strict = std::to_string(c.submit({"-p", "gpu", "-t", "0:02", "-o", "/dev/null", "--wrap", "sleep 30"}));
  auto alloc = c.run("srun", {"-t", "0:02", "sh", "-c", "sleep 4; echo alloc"});
  EXPECT_EQ(alloc.rc, 0) << alloc.err;
  EXPECT_EQ(alloc.out, "alloc\n");
  ASSERT_TRUE(c.wait_done(strict, 20s));
  EXPECT_EQ(c.state(strict), "TIMEOUT") << "its partition's OverTimeLimit=0";
  ASSERT_TRUE(c.wait_done(over, 30s));
  EXPECT_EQ(c.state(over), "COMPLETED");
  const std::string text = read_file(c.work() + "/over.out");
  EXPECT_NE(text.find("error: *** STEP " + over + ".0 ON cpu1 CANCELLED AT "), std::string::npos)
      << "an srun step's own -t is not over-timed (as on the anchor cluster)\n" << text;
  EXPECT_EQ(text.find("step\n"), std::string::npos) << text;
  EXPECT_NE(text.find("done\n"), std::string::npos) << text;
  auto fields = c.job_fields(over);
  EXPECT_EQ(fields["TimeLimit"], "00:00:02");
  auto config = c.run("scontrol", {"show", "config"});
  EXPECT_NE(config.out.find("OverTimeLimit           = 1 min\n"), std::string::npos) << config.out;
  auto parts = c.run("scontrol", {"show", "partition", "-o"});
  EXPECT_NE(parts.out.find("PartitionName=compute"), std::string::npos);
  for (const auto& line : lines_of(parts.out)) {
    const bool gpu = line.rfind("PartitionName=gpu ", 0) == 0;
    EXPECT_NE(line.find(gpu ? " OverTimeLimit=0 " : " OverTimeLimit=NONE "), std::string::npos) << line;
  }
}

// The job's output says why it ended, in the step daemon's words of Slurm
// 22.05 (anchor cluster): the batch step's "*** JOB N ON node CANCELLED AT
// time DUE TO TIME LIMIT ***", its srun step's "*** STEP N.0 ... ***" with
// srun's own lines; the step is CANCELLED and leaves the derived code alone.
TEST(Jobs, TimeLimitEndsTheJobAsTimeout) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string out = c.work() + "/timeout.out";
  std::string id = std::to_string(c.submit({"-t", "0:03", "-o", out, "--wrap", "srun sleep 60"}));
  ASSERT_TRUE(c.wait_done(id, 20s));
  EXPECT_EQ(c.state(id), "TIMEOUT");
  EXPECT_EQ(c.job_fields(id)["JobState"], "TIMEOUT");
  const std::string text = read_file(out);
  const std::string node = c.job_fields(id)["BatchHost"];
  const std::string at = " CANCELLED AT 20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9] DUE TO TIME LIMIT \\*\\*\\*\n";
  EXPECT_TRUE(std::regex_search(text, std::regex("slurmstepd-" + node + ": error: \\*\\*\\* JOB " + id + " ON " + node + at)))
      << text;
  EXPECT_TRUE(std::regex_search(text, std::regex("slurmstepd-" + node + ": error: \\*\\*\\* STEP " + id + ".0 ON " + node + at)))
      << text;
  EXPECT_NE(text.find("srun: Job step aborted: Waiting up to "), std::string::npos) << text;
  EXPECT_NE(text.find("srun: forcing job termination\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("Unable to send signal"), std::string::npos) << text;
  auto acct = c.run("sacct", {"-n", "-P", "-j", id, "-o", "JobID,State,DerivedExitCode"});
  EXPECT_EQ(acct.out, id + "|TIMEOUT|0:0\n" + id + ".batch|CANCELLED|\n" + id + ".0|CANCELLED|\n");
}

// A cancel and a requeue are said in the job's output as Slurm 22.05's step
// daemon says them (anchor cluster); an srun that a script left running
// when it ended is ended with SIGTERM, passes it on to its step and says
// how its task ended before it exits.
TEST(Jobs, CancelAndRequeueAreSaidInTheJobsOutput) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string w = c.work();
  std::string cancelled = std::to_string(c.submit({"-o", w + "/c.out", "--wrap", "sleep 300"}));
  std::string requeued = std::to_string(c.submit({"-o", w + "/r.out", "--open-mode=append", "--wrap", "sleep 300"}));
  std::string left = std::to_string(c.submit(
      {"-o", w + "/l.out", "--wrap",
       "srun sleep 300 & until squeue -h -s -j $SLURM_JOB_ID -o %i | grep -q '[.]0$'; do sleep 0.2; done; sleep 0.5"}));
  ASSERT_TRUE(c.wait_state(cancelled, {"RUNNING"}));
  ASSERT_TRUE(c.wait_state(requeued, {"RUNNING"}));
  std::this_thread::sleep_for(1s);  // the scripts are running
  ASSERT_EQ(c.run("scancel", {cancelled}).rc, 0);
  ASSERT_EQ(c.run("scontrol", {"requeue", requeued}).rc, 0);
  ASSERT_TRUE(c.wait_done(cancelled));
  ASSERT_TRUE(c.wait_done(left, 20s));
  auto said = [&](const std::string& file, const std::string& what) {
    return std::regex_search(read_file(file), std::regex("slurmstepd-[a-z0-9]+: error: \\*\\*\\* " + what +
                                                         " ON [a-z0-9]+ CANCELLED AT [0-9T:-]+( DUE TO JOB REQUEUE)? \\*\\*\\*\n"));
  };
  EXPECT_TRUE(said(w + "/c.out", "JOB " + cancelled)) << read_file(w + "/c.out");
  EXPECT_EQ(read_file(w + "/c.out").find("DUE TO"), std::string::npos);
  EXPECT_TRUE(eventually([&] { return read_file(w + "/r.out").find("DUE TO JOB REQUEUE ***\n") != std::string::npos; }, 10s))
      << read_file(w + "/r.out");
  EXPECT_TRUE(std::regex_search(read_file(w + "/l.out"), std::regex("srun: error: [a-z0-9]+: task 0: Terminated\n")))
      << read_file(w + "/l.out");
  auto acct = c.run("sacct", {"-n", "-P", "-j", left, "-o", "JobID,State,ExitCode"});
  EXPECT_EQ(acct.out, left + "|COMPLETED|0:0\n" + left + ".batch|COMPLETED|0:0\n" + left + ".0|CANCELLED|0:15\n");
  c.run("scancel", {requeued});
}

// scontrol requeuehold State=SpecialExit, as Slurm 22.05's on the anchor
// cluster: the job shows SPECIAL_EXIT (SE) with the requeuehold's reason,
// squeue lists it by default and with -t SE, and release makes it PENDING.
TEST(Jobs, RequeueHoldSpecialExitShowsSpecialExitUntilReleased) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string id = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "sleep 300"}));
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  auto r = c.run("scontrol", {"requeuehold", "State=SpecialExit", id});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(eventually([&] { return c.run("squeue", {"-h", "-j", id, "-o", "%t %T %r"}).out ==
                                      "SE SPECIAL_EXIT job requeued in held state\n"; }, 10s))
      << c.run("squeue", {"-h", "-j", id, "-o", "%t %T %r"}).out;
  EXPECT_EQ(c.run("squeue", {"-h", "-t", "SE", "-o", "%i"}).out, id + "\n");
  EXPECT_NE(c.run("scontrol", {"show", "job", id}).out.find("JobState=SPECIAL_EXIT Reason=job_requeued_in_held_state"),
            std::string::npos);
  ASSERT_EQ(c.run("scontrol", {"release", id}).rc, 0);
  EXPECT_EQ(c.run("squeue", {"-h", "-j", id, "-o", "%t"}).out, "PD\n");
  c.run("scancel", {id});
}

TEST(Nodes, DrainAndResume) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto d = c.run("scontrol", {"update", "NodeName=cpu1", "State=DRAIN", "Reason=disk swap"});
  ASSERT_EQ(d.rc, 0) << d.err;
  auto r = c.run("sinfo", {"-h", "-R", "-o", "%E|%N"});
  EXPECT_EQ(r.out, "disk swap|cpu1\n");
  EXPECT_EQ(c.run("sinfo", {"-h", "-n", "cpu1", "-o", "%t"}).out, "drain\n");
  std::string id = std::to_string(c.submit({"-w", "cpu1", "-o", "/dev/null", "--wrap", "true"}));
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(c.state(id), "PENDING");
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu1", "State=RESUME"}).rc, 0);
  ASSERT_TRUE(c.wait_done(id));
  EXPECT_EQ(c.job_fields(id)["NodeList"], "cpu1");
  EXPECT_EQ(c.run("sinfo", {"-h", "-n", "cpu1", "-o", "%t"}).out, "idle\n");
  // UNDRAIN: the drain and its reason go, as Slurm 22.05's (anchor cluster: "mix* mixed* none").
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu1", "State=DRAIN", "Reason=going away"}).rc, 0);
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu1", "State=UNDRAIN"}).rc, 0);
  EXPECT_EQ(c.run("sinfo", {"-h", "-n", "cpu1", "-o", "%t|%E"}).out, "idle|none\n");
  // A state scontrol does not know: its key as typed, as Slurm's.
  auto bogus = c.run("scontrol", {"update", "nodename=cpu1", "state=bogus", "reason=x"});
  EXPECT_EQ(bogus.rc, 1);
  EXPECT_EQ(bogus.err.substr(0, bogus.err.find('\n')), "Invalid input: state=bogus");
  auto no_reason = c.run("scontrol", {"update", "NodeName=cpu2", "State=DRAIN"});
  EXPECT_EQ(no_reason.rc, 1);
  EXPECT_NE(no_reason.err.find("You must specify a reason"), std::string::npos) << no_reason.err;
  // A node's settings: Weight, features (a job's -C matches the active ones),
  // Comment, shown where Slurm 22.05 shows them; what scontrol refuses itself
  // in Slurm's words.
  auto set = c.run("scontrol", {"update", "NodeName=cpu2", "Weight=7", "AvailableFeatures=fast,big",
                                "ActiveFeatures=fast", "Comment=new dimms"});
  ASSERT_EQ(set.rc, 0) << set.err;
  auto node = c.node_fields("cpu2");
  EXPECT_EQ(node["Weight"], "7");
  EXPECT_EQ(node["AvailableFeatures"], "fast,big");
  EXPECT_EQ(node["ActiveFeatures"], "fast");
  auto shown = c.run("scontrol", {"show", "node", "cpu2"}).out;
  EXPECT_NE(shown.find("ExtSensorsTemp=n/s\n   Comment=new dimms\n"), std::string::npos) << shown;
  // Node names as a host list, a comma inside brackets too (as Slurm 22.05's scontrol reads them).
  auto two = c.run("scontrol", {"-o", "show", "node", "cpu[1,2]"});
  EXPECT_EQ(two.rc, 0) << two.err;
  EXPECT_EQ(std::count(two.out.begin(), two.out.end(), '\n'), 2) << two.out;
  auto missing = c.run("scontrol", {"show", "node", "cpu[7,8]"});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_EQ(missing.out, "Node cpu7 not found\n");
  std::string fast = std::to_string(c.submit({"-C", "fast", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_done(fast));
  EXPECT_EQ(c.job_fields(fast)["NodeList"], "cpu2");
  for (const auto& [setting, refusal] : std::vector<std::pair<std::string, std::string>>{
           {"Weight=heavy", "scontrol: error: Weight value (heavy) is not a valid number\nNo changes specified\n"},
           {"CPUs=8", "Update of this parameter is not supported: CPUs=8\nRequest aborted\n"},
           {"AvailableFeatures=big", "slurm_update error: Active features not subset of available features\n"}}) {
    auto refused = c.run("scontrol", {"update", "NodeName=cpu2", setting});
    EXPECT_EQ(refused.rc, 1) << setting;
    EXPECT_EQ(refused.err, refusal);
  }
  EXPECT_EQ(c.node_fields("cpu2")["Weight"], "7") << "nothing changed";
}

// An admin edits slurm.conf and runs `scontrol reconfigure`: a new partition
// and a node's new feature take effect at once, silently as in Slurm; a
// change the agents started with is refused with each difference named, and
// the cluster keeps running as it was.
TEST(Config, ReconfigureAppliesAnEditedSlurmConfOrSaysWhatNeedsARestart) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string running = std::to_string(c.submit({"-p", "gpu", "-o", "/dev/null", "--wrap", "sleep 30"}));
  ASSERT_TRUE(c.wait_state(running, {"RUNNING"}));
  EXPECT_EQ(c.run("sbatch", {"-p", "debug", "--wrap", "true"}).rc, 1);
  std::string original = read_file(c.conf());
  std::string edited = original;
  auto f = edited.find("Feature=h100");
  ASSERT_NE(f, std::string::npos) << edited;
  edited.replace(f, 12, "Feature=h100,nvlink");
  edited += "PartitionName=debug Nodes=cpu1 MaxTime=30\n";
  std::ofstream(c.conf()) << edited;
  auto r = c.run("scontrol", {"reconfigure"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "");
  EXPECT_EQ(c.run("sinfo", {"-h", "-p", "debug", "-o", "%P %N %l"}).out, "debug cpu1 30:00\n");
  EXPECT_EQ(c.node_fields("hgpu1")["AvailableFeatures"], "h100,nvlink");
  std::string debug = std::to_string(c.submit({"-p", "debug", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_done(debug)) << c.last_error();
  EXPECT_EQ(c.state(debug), "COMPLETED");
  EXPECT_NE(c.log("controller").find("PartitionName=debug added"), std::string::npos);

  auto cpus = edited.find("CPUs=", edited.find("NodeName=cpu1"));
  edited.replace(cpus, edited.find(' ', cpus) - cpus, "CPUs=32");
  std::ofstream(c.conf()) << edited;
  auto refused = c.run("scontrol", {"reconfigure"});
  EXPECT_EQ(refused.rc, 1);
  EXPECT_NE(refused.err.find("slurm_reconfigure error: "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("NodeName=cpu1: CPUs 16 -> 32"), std::string::npos) << refused.err;
  // A partition naming a node no NodeName line defines: Slurm's slurmctld
  // will not run with it ("fatal: Invalid node names in partition"), so the
  // reconfigure is refused with its file:line.
  std::ofstream(c.conf()) << original << "PartitionName=zz Nodes=cpu1,nosuch\n";
  auto undefined = c.run("scontrol", {"reconfigure"});
  EXPECT_EQ(undefined.rc, 1);
  EXPECT_NE(undefined.err.find("error: partition zz names nosuch, which no NodeName line defines"), std::string::npos)
      << undefined.err;
  EXPECT_EQ(c.run("sinfo", {"-h", "-p", "zz"}).out, "");
  std::ofstream(c.conf()) << edited;
  if (auto user = ensure_user("droveruser")) {  // Slurm 22.05's words for a user's reconfigure, then why
    auto denied = c.run("scontrol", {"reconfigure"}, user->as());
    EXPECT_EQ(denied.rc, 1);
    EXPECT_EQ(denied.err.rfind("slurm_reconfigure error: Invalid user id: only root, SlurmUser or an operator", 0), 0u)
        << denied.err;
  }
  EXPECT_EQ(c.state(running), "RUNNING");
  EXPECT_EQ(c.node_fields("cpu1")["CPUTot"], "16");

  auto user = ensure_user("droveruser");
  if (user) {
    auto denied = c.run("scontrol", {"reconfigure"}, user->as());
    EXPECT_EQ(denied.rc, 1);
    EXPECT_NE(denied.err.find("only root, SlurmUser or an operator may reconfigure"), std::string::npos) << denied.err;
  }
}

// --exclusive=user, as Slurm 22.05 on the anchor cluster: the job gets the
// CPUs it asks for (not the whole node), OverSubscribe=USER; the same
// user's jobs share its node, another user's wait (Resources) until it ends
// (and may then share the node with the first user's other jobs).
TEST(Jobs, ExclusiveUserSharesANodeOnlyWithTheSameUsersJobs) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string ux = std::to_string(
      c.submit({"-p", "compute", "-w", "cpu1", "--exclusive=user", "-o", "/dev/null", "--wrap", "sleep 30"}));
  ASSERT_TRUE(c.wait_state(ux, {"RUNNING"})) << c.last_error();
  EXPECT_EQ(c.run("squeue", {"-h", "-j", ux, "-o", "%C %h %N"}).out, "1 USER cpu1\n");
  EXPECT_EQ(c.job_fields(ux)["OverSubscribe"], "USER");
  std::string same = std::to_string(c.submit({"-p", "compute", "-w", "cpu1", "-o", "/dev/null", "--wrap", "sleep 30"}));
  ASSERT_TRUE(c.wait_state(same, {"RUNNING"})) << c.reason(same);
  auto user = ensure_user("droveruser");
  if (!user) GTEST_SKIP() << "no second user to submit as";
  auto theirs = c.run("sbatch", {"--parsable", "-p", "compute", "-w", "cpu1", "-o", "/dev/null", "--wrap", "true"},
                      user->as());
  ASSERT_EQ(theirs.rc, 0) << theirs.err;
  std::string other = theirs.out.substr(0, theirs.out.find_first_of(";\n"));
  EXPECT_TRUE(eventually([&] { return c.reason(other) == "Resources"; }, 5s)) << c.reason(other);
  EXPECT_EQ(c.state(other), "PENDING");
  // Root's other job is not user-exclusive: theirs may run beside it.
  ASSERT_EQ(c.run("scancel", {ux}).rc, 0);
  EXPECT_TRUE(c.wait_done(other)) << c.reason(other);
  EXPECT_EQ(c.state(other), "COMPLETED");
  EXPECT_EQ(c.state(same), "RUNNING");

  // --exclusive=mcs without an MCS plugin: shown, and no bar to other users (as Slurm's).
  std::string mcs = std::to_string(
      c.submit({"-p", "compute", "-w", "cpu2", "--exclusive=mcs", "-o", "/dev/null", "--wrap", "sleep 30"}));
  ASSERT_TRUE(c.wait_state(mcs, {"RUNNING"})) << c.last_error();
  EXPECT_EQ(c.job_fields(mcs)["OverSubscribe"], "MCS");
  auto beside = c.run("sbatch", {"--parsable", "-p", "compute", "-w", "cpu2", "-o", "/dev/null", "--wrap", "true"},
                      user->as());
  ASSERT_EQ(beside.rc, 0) << beside.err;
  std::string next = beside.out.substr(0, beside.out.find_first_of(";\n"));
  EXPECT_TRUE(c.wait_done(next)) << c.reason(next);
  EXPECT_EQ(c.state(next), "COMPLETED");
}

// scontrol setdebug / setdebugflags: what the controller logs changes at
// once (quiet hides a job's submitted/started/ended lines; Protocol,
// Backfill and TraceJobs add theirs), scontrol show config shows it, a plain
// user may not change it, and a reconfigure goes back to slurm.conf's, as
// Slurm 22.05 does (its messages checked on the anchor cluster).
TEST(Config, ScontrolSetdebugChangesWhatTheControllerLogsUntilReconfigure) {
  ClusterDef def = small_cluster();
  def.extra = {"SchedulerParameters=bf_interval=1", "DebugFlags=TraceJobs"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  auto config = [&](const std::string& key) {
    for (const auto& line : lines_of(c.run("scontrol", {"show", "config"}).out)) {
      if (line.rfind(key + " ", 0) == 0) return line.substr(line.find("= ") + 2);
    }
    return std::string("(absent)");
  };
  auto logged = [&](const std::string& text) { return c.log("controller").find(text) != std::string::npos; };
  EXPECT_EQ(config("SlurmctldDebug"), "info");
  EXPECT_EQ(config("DebugFlags"), "TraceJobs");

  std::string a = std::to_string(c.submit({"-p", "compute", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_done(a)) << c.last_error();
  EXPECT_TRUE(eventually([&] { return logged("job " + a + " ended: COMPLETED ExitCode=0:0"); }, 5s))
      << c.log("controller");
  EXPECT_TRUE(logged("job " + a + " submitted by root(0): Partition=compute"));
  EXPECT_TRUE(logged("job " + a + " started: NodeList="));

  auto quiet = c.run("scontrol", {"setdebug", "quiet"});
  ASSERT_EQ(quiet.rc, 0) << quiet.err;
  EXPECT_EQ(quiet.out + quiet.err, "");
  EXPECT_EQ(config("SlurmctldDebug"), "quiet");
  std::string b = std::to_string(c.submit({"-p", "compute", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_done(b)) << c.last_error();
  EXPECT_FALSE(logged("job " + b + " submitted")) << c.log("controller");

  ASSERT_EQ(c.run("scontrol", {"setdebug", "info"}).rc, 0);
  auto add = c.run("scontrol", {"setdebugflags", "+backfill,Protocol"});
  ASSERT_EQ(add.rc, 0) << add.err;
  EXPECT_EQ(config("DebugFlags"), "Backfill,Protocol,TraceJobs");
  std::string hog =
      std::to_string(c.submit({"-p", "compute", "-w", "cpu1", "--exclusive", "-o", "/dev/null", "--wrap", "sleep 30"}));
  ASSERT_TRUE(c.wait_state(hog, {"RUNNING"}));
  std::string waits = std::to_string(c.submit({"-p", "compute", "-w", "cpu1", "-o", "/dev/null", "--wrap", "true"}));
  EXPECT_TRUE(eventually([&] { return c.reason(waits) == "Resources"; }, 5s)) << c.reason(waits);
  EXPECT_TRUE(eventually([&] { return logged("trace: job " + waits + " pending, Reason ") && logged("backfill: "); },
                         5s))
      << c.log("controller");
  EXPECT_TRUE(logged("-> Resources")) << c.log("controller");
  EXPECT_TRUE(logged("protocol: drover.v1.SubmitRequest from root(0): OK, ")) << c.log("controller");
  ASSERT_EQ(c.run("scontrol", {"setdebugflags", "-protocol"}).rc, 0);
  EXPECT_EQ(config("DebugFlags"), "Backfill,TraceJobs");

  // Each refusal: exit 1 and Slurm's words.
  auto refused = [](const CmdResult& r, const std::string& err) {
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, err);
  };
  refused(c.run("scontrol", {"setdebug", "loud"}), "invalid debug level: loud\n");
  refused(c.run("scontrol", {"setdebugflags", "+nosuch"}),
          "scontrol: error: Invalid DebugFlag: nosuch\ninvalid debug flag: +nosuch\n");
  refused(c.run("scontrol", {"setdebugflags", "backfill"}),
          "invalid debug flag: backfill\nUsage: setdebugflags [+|-]NAME\n");
  if (auto user = ensure_user("droveruser")) {
    refused(c.run("scontrol", {"setdebug", "debug"}, user->as()), "slurm_set_debug_level error: Permission denied\n");
    refused(c.run("scontrol", {"setdebugflags", "+Gres"}, user->as()),
            "slurm_set_debug_flags error: Permission denied\n");
    EXPECT_EQ(config("DebugFlags"), "Backfill,TraceJobs");
  }

  ASSERT_EQ(c.run("scontrol", {"setdebug", "debug3"}).rc, 0);
  auto re = c.run("scontrol", {"reconfigure"});
  ASSERT_EQ(re.rc, 0) << re.err;
  EXPECT_EQ(config("SlurmctldDebug"), "info");
  EXPECT_EQ(config("DebugFlags"), "TraceJobs");
}

// scontrol update PartitionName=: a partition taken DOWN keeps its jobs
// pending (PartitionDown) and stays down across a kill -9 of the
// controller; State=UP lets them run. A plain user may not do it.
TEST(Config, PartitionUpdateIsDurableAndAppliesAtOnce) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto down = c.run("scontrol", {"update", "PartitionName=compute", "State=DOWN", "MaxTim=1-00:00:00"});
  ASSERT_EQ(down.rc, 0) << down.err;
  EXPECT_EQ(down.out + down.err, "");
  EXPECT_EQ(c.run("sinfo", {"-h", "-p", "compute", "-o", "%P %a %l"}).out, "compute* down 1-00:00:00\n");
  std::string id = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(eventually([&] { return c.reason(id) == "PartitionDown"; }, 5s)) << c.reason(id);
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller()) << c.error();
  EXPECT_EQ(c.run("sinfo", {"-h", "-p", "compute", "-o", "%P %a %l"}).out, "compute* down 1-00:00:00\n");
  EXPECT_EQ(c.state(id), "PENDING");
  // A key Slurm's scontrol does not know: its lines (anchor cluster,
  // 2026-12-06), nothing changed, and the key it may have meant.
  auto bad = c.run("scontrol", {"update", "PartitionName=compute", "MaxTime=2:00:00", "MaxTme=10"});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(bad.err, "scontrol: error: Update of this parameter is not supported: MaxTme=10\n\nscontrol: error: "
                     "Request aborted\nslurm_update error: No error\nscontrol: error: drover: did you mean MaxTime?\n");
  EXPECT_EQ(c.run("sinfo", {"-h", "-p", "compute", "-o", "%P %a %l"}).out, "compute* down 1-00:00:00\n");
  // The server still names a key of Slurm's it does not take.
  auto unbuilt = c.run("scontrol", {"update", "PartitionName=compute", "MaxCPUsPerSocket=4"});
  EXPECT_EQ(unbuilt.rc, 1);
  EXPECT_NE(unbuilt.err.find("slurm_update error:"), std::string::npos) << unbuilt.err;
  auto user = ensure_user("droveruser");
  if (user) {
    auto denied = c.run("scontrol", {"update", "PartitionName=compute", "State=UP"}, user->as());
    EXPECT_EQ(denied.rc, 1);
    EXPECT_EQ(denied.err.rfind("slurm_update error: Invalid user id: only root, SlurmUser or an operator may update a "
                               "partition",
                               0),
              0u)
        << "Slurm 22.05's words first (anchor cluster): " << denied.err;
    // A reservation too: Slurm's line, then Drover's.
    denied = c.run("scontrol", {"create", "reservation", "starttime=now", "duration=10", "nodes=cpu1", "users=root"},
                   user->as());
    EXPECT_EQ(denied.rc, 1);
    EXPECT_EQ(denied.err.rfind("Error creating the reservation: Invalid user id\n", 0), 0u) << denied.err;
  }
  ASSERT_EQ(c.run("scontrol", {"update", "PartitionName=compute", "State=UP"}).rc, 0);
  ASSERT_TRUE(c.wait_done(id));
  EXPECT_EQ(c.state(id), "COMPLETED");
}

// scontrol create / delete PartitionName=, with Slurm 22.05's words (checked
// on a real cluster): a new partition takes jobs at once and outlives a
// kill -9 of the controller; one with a job in it cannot be deleted.
TEST(Config, ScontrolCreatesAndDeletesPartitions) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto made = c.run("scontrol", {"create", "PartitionName=night", "Nodes=cpu2", "MaxTime=30"});
  ASSERT_EQ(made.rc, 0) << made.err;
  EXPECT_EQ(made.out + made.err, "");
  ASSERT_EQ(c.run("scontrol", {"create", "PartitionName=empty"}).rc, 0);
  EXPECT_EQ(c.run("sinfo", {"-h", "-o", "%P %l %D %t %N"}).out,
            "compute* 7-00:00:00 3 idle cpu[1-2],lgpu1\ngpu 1-00:00:00 2 idle hgpu1,lgpu1\nnight 30:00 1 idle cpu2\n"
            "empty infinite 0 n/a \n");
  auto again = c.run("scontrol", {"create", "PartitionName=night", "Nodes=cpu1"});
  EXPECT_EQ(again.rc, 1);
  EXPECT_EQ(again.err, "Error creating the partition: Invalid partition name specified\n");
  auto entity = c.run("scontrol", {"create", "partition", "PartitionName=x"});
  EXPECT_EQ(entity.rc, 1);
  EXPECT_EQ(entity.err, "scontrol: error: Invalid input: partition  Request aborted\n");
  EXPECT_EQ(c.run("scontrol", {"create"}).err, "too few arguments for create keyword\n");

  std::string id = std::to_string(c.submit({"-p", "night", "-o", "/dev/null", "--wrap", "sleep 30"}));
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  EXPECT_EQ(c.job_fields(id)["NodeList"], "cpu2");
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller()) << c.error();
  EXPECT_EQ(c.run("sinfo", {"-h", "-p", "night", "-o", "%P %l %N"}).out, "night 30:00 cpu2\n");
  auto busy = c.run("scontrol", {"delete", "PartitionName=night"});
  EXPECT_EQ(busy.rc, 1);
  EXPECT_EQ(busy.err, "delete_partition PartitionName=night: Partition is in use\n");
  if (auto user = ensure_user("droveruser")) {
    auto denied = c.run("scontrol", {"delete", "PartitionName=empty"}, user->as());
    EXPECT_EQ(denied.rc, 1);
    EXPECT_EQ(denied.err.rfind("delete_partition PartitionName=empty: Invalid user id", 0), 0u) << denied.err;
  }
  EXPECT_EQ(c.run("scontrol", {"delete", "PartitionName=nosuch"}).err,
            "delete_partition PartitionName=nosuch: Invalid partition name specified\n");
  EXPECT_EQ(c.run("scontrol", {"delete", "PartitionName=empty", "extra"}).err,
            "Invalid deletion entity: PartitionName=empty\n");
  ASSERT_EQ(c.run("scancel", {id}).rc, 0);
  ASSERT_TRUE(c.wait_done(id));
  auto gone = c.run("scontrol", {"delete", "partition", "night"});
  EXPECT_EQ(gone.rc, 0) << gone.err;
  ASSERT_EQ(c.run("scontrol", {"delete", "PartitionName=gpu"}).rc, 0);
  EXPECT_EQ(c.run("sinfo", {"-h", "-o", "%P"}).out, "compute*\nempty\n");
  EXPECT_EQ(c.run("sbatch", {"-p", "night", "--wrap", "true"}).rc, 1);
}

// Advance reservations through the commands, with Slurm 22.05's words
// (checked on the anchor cluster): a MAINT reservation on cpu1 shows as
// "maint" in sinfo and in sinfo -T; its user's job runs there; a job that
// asks for cpu1 outside it waits with Slurm's reason; another user may not
// use it; it cannot be deleted while a job is in it, and it outlives a
// kill -9 of the controller. Deleted, its node is everyone's again.
TEST(Config, ScontrolReservationsHoldNodesForTheirJobs) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto made = c.run("scontrol", {"create", "reservation", "ReservationName=maint", "StartTime=now", "Duration=60",
                                 "Nodes=cpu1", "Users=root", "Flags=MAINT"});
  ASSERT_EQ(made.rc, 0) << made.err;
  EXPECT_EQ(made.out, "Reservation created: maint\n");
  auto lacking = c.run("scontrol", {"create", "reservation", "StartTime=now", "Duration=60", "Nodes=cpu2"});
  EXPECT_EQ(lacking.rc, 1);
  EXPECT_EQ(lacking.err,
            "scontrol: error: Either Users/Groups and/or Accounts must be specified.  No reservation created.\n");
  // Over a MAINT reservation's node another may be made (Slurm 22.05 on the anchor cluster, 2026-12-08);
  // over that one (not MAINT) a third may not.
  auto overlap = c.run("scontrol", {"create", "res", "StartTime=now", "Duration=5", "Nodes=cpu1", "Users=root"});
  EXPECT_EQ(overlap.out, "Reservation created: root_2\n") << overlap.err;
  auto third = c.run("scontrol", {"create", "res", "StartTime=now", "Duration=5", "Nodes=cpu1", "Users=root"});
  EXPECT_EQ(third.err, "Error creating the reservation: Requested reservation overlaps with another reservation\n");
  EXPECT_EQ(c.run("scontrol", {"delete", "ReservationName=root_2"}).rc, 0);
  EXPECT_EQ(c.run("sinfo", {"-h", "-p", "compute", "-N", "-o", "%N %t"}).out, "cpu1 maint\ncpu2 idle\nlgpu1 idle\n");
  auto listed = c.run("sinfo", {"-T", "-h"}).out;
  EXPECT_EQ(listed.rfind("maint        ACTIVE  ", 0), 0u) << listed;
  EXPECT_NE(listed.find("01:00:00  cpu1\n"), std::string::npos) << listed;

  std::string outside = std::to_string(c.submit({"-w", "cpu1", "-o", "/dev/null", "--wrap", "true"}));
  const std::string out = c.dir() + "/resv.out";
  std::string inside = std::to_string(
      c.submit({"--reservation=maint", "-o", out, "--wrap", "echo in $SLURM_JOB_RESERVATION; sleep 60"}));
  ASSERT_TRUE(c.wait_state(inside, {"RUNNING"}));
  EXPECT_TRUE(eventually([&] { return read_file(out) == "in maint\n"; }, std::chrono::seconds(10))) << read_file(out);
  EXPECT_EQ(c.job_fields(inside)["NodeList"], "cpu1");
  EXPECT_EQ(c.job_fields(inside)["Reservation"], "maint");
  EXPECT_TRUE(eventually([&] {
    return c.job_fields(outside)["Reason"] == "ReqNodeNotAvail,_May_be_reserved_for_other_job";  // spaces as _, as Slurm prints
  }, std::chrono::seconds(10))) << c.run("scontrol", {"show", "job", outside}).out;
  EXPECT_EQ(c.run("squeue", {"-h", "-j", outside, "-o", "%r"}).out, "ReqNodeNotAvail, May be reserved for other job\n");
  if (auto user = ensure_user("droveruser")) {
    auto denied = c.run("sbatch", {"--reservation=maint", "--wrap", "true"}, user->as());
    EXPECT_EQ(denied.rc, 1);
    EXPECT_EQ(denied.err.rfind("sbatch: error: Batch job submission failed: Access denied to requested reservation\n", 0),
              0u) << denied.err;
    EXPECT_EQ(c.run("scontrol", {"delete", "ReservationName=maint"}, user->as()).rc, 1);
  }
  // srun and salloc word the refusal as Slurm's do.
  EXPECT_EQ(c.run("srun", {"--reservation=nope", "true"}).err.rfind(
                "srun: error: Unable to allocate resources: Requested reservation is invalid\n", 0),
            0u);
  EXPECT_EQ(c.run("salloc", {"--reservation=nope", "true"}).err.rfind(
                "salloc: error: Job submit/allocate failed: Requested reservation is invalid\n", 0),
            0u);
  auto busy = c.run("scontrol", {"delete", "ReservationName=maint"});
  EXPECT_EQ(busy.err, "delete_reservation ReservationName=maint: Requested reservation is in use\n");
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller()) << c.error();
  auto shown = c.run("scontrol", {"show", "reservation", "maint", "-o"});
  ASSERT_EQ(shown.rc, 0) << shown.err;
  EXPECT_NE(shown.out.find(" Nodes=cpu1 NodeCnt=1 "), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find(" Flags=MAINT,SPEC_NODES "), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find(" Users=root "), std::string::npos) << shown.out;
  ASSERT_EQ(c.run("scontrol", {"update", "ReservationName=maint", "Duration=120"}).out, "Reservation updated.\n");
  // As a public script wrote it: a bare "reservation" first, the name after a setting (Slurm 22.05 took it).
  ASSERT_EQ(c.run("scontrol", {"update", "reservation", "Duration=120", "ReservationName=maint", "NodeCnt=1"}).out,
            "Reservation updated.\n");
  // squeue -R and scancel -R select the reservation's jobs only.
  EXPECT_EQ(c.run("squeue", {"-h", "-R", "maint", "-o", "%i %v"}).out, inside + " maint\n");
  ASSERT_EQ(c.run("scancel", {"-R", "maint"}).rc, 0);
  ASSERT_TRUE(c.wait_done(inside));
  EXPECT_EQ(c.state(outside), "PENDING");
  auto gone = c.run("scontrol", {"delete", "reservation", "maint"});
  EXPECT_EQ(gone.rc, 0) << gone.err;
  EXPECT_EQ(c.run("scontrol", {"show", "reservation"}).out, "No reservations in the system\n");
  EXPECT_TRUE(c.wait_done(outside));  // cpu1 is everyone's again
}

// A shell command's exit status and output (stderr with stdout).
std::pair<int, std::string> sh(const std::string& cmd) {
  std::string out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  while (f && fgets(buf, sizeof buf, f)) out += buf;
  int rc = f ? pclose(f) : -1;
  return std::make_pair(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out);
}

// `drover down` when the test ends, however it ends.
struct Down {
  std::string cmd;
  ~Down() { (void)std::system((cmd + " >/dev/null 2>&1").c_str()); }
};

std::string bin_dir() {
  return std::string(std::getenv("DROVER_BINARY_DIR") ? std::getenv("DROVER_BINARY_DIR") : DROVER_BINARY_DIR) + "/bin";
}

// `drover up` run again on a running cluster whose source slurm.conf
// changed rewrites DIR/slurm.conf and has the controller take it (as
// scontrol reconfigure would), or says what needs a restart.
TEST(Config, DroverUpAgainAppliesAChangedSourceToTheRunningCluster) {
  auto tmp = rpc::testing::TempDir::create("drover-up-e2e");
  ASSERT_TRUE(tmp) << tmp.error().message;
  const std::string dir = tmp->path();
  auto ctld = rpc::testing::reserve_tcp_port("127.0.0.1");
  auto agent = rpc::testing::reserve_tcp_port("127.0.0.1");
  ASSERT_TRUE(ctld && agent);
  const std::string bin = bin_dir();
  const std::string source = dir + "/source.conf";
  const std::string base = "ClusterName=up" + std::to_string(*ctld) + "\nSlurmctldHost=localhost(127.0.0.1)\n"
                           "SlurmctldPort=" + std::to_string(*ctld) + "\n"
                           "NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=" + std::to_string(*agent) +
                           " CPUs=2 RealMemory=2000\nPartitionName=p Nodes=n1 Default=YES\n";
  std::ofstream(source) << base;
  const std::string up = bin + "/drover up --config " + source + " --state " + dir + "/c";
  Down stop{bin + "/drover down --state " + dir + "/c"};
  auto first = sh(up);
  ASSERT_EQ(first.first, 0) << first.second;
  const std::string env = "DROVER_CONF=" + dir + "/c/slurm.conf ";
  std::ofstream(source) << base << "PartitionName=q Nodes=n1 MaxTime=10\n";
  auto again = sh(up);
  EXPECT_EQ(again.first, 0) << again.second;
  EXPECT_NE(again.second.find("the running controller applied it"), std::string::npos) << again.second;
  EXPECT_NE(again.second.find("(0 started now)"), std::string::npos) << again.second;
  EXPECT_EQ(sh(env + bin + "/sinfo -h -p q -o '%P %l'").second, "q 10:00\n");
  std::ofstream(source) << base.substr(0, base.find("CPUs=2")) << "CPUs=1 RealMemory=2000\nPartitionName=p Nodes=n1\n";
  auto refused = sh(up);
  EXPECT_EQ(refused.first, 1) << refused.second;
  EXPECT_NE(refused.second.find("NodeName=n1: CPUs 2 -> 1"), std::string::npos) << refused.second;
  // A source with an error is refused with its file:line before anything is
  // written: DIR/slurm.conf keeps what the running controller reads.
  const std::string effective = read_file(dir + "/c/slurm.conf");
  std::ofstream(source) << base << "NodeName=n2 NodeAddr=127.0.0.1 CPUs=abc\n";
  auto bad = sh(up);
  EXPECT_EQ(bad.first, 1) << bad.second;
  EXPECT_NE(bad.second.find(source + ":6:37: error: invalid value \"abc\" for CPUs"), std::string::npos) << bad.second;
  EXPECT_NE(bad.second.find("drover up: " + source + " has 1 error; nothing was started or changed"), std::string::npos)
      << bad.second;
  EXPECT_EQ(read_file(dir + "/c/slurm.conf"), effective);
  // So is a partition naming an undefined node, which Slurm's slurmctld will
  // not start with ("fatal: Invalid node names in partition zz").
  std::ofstream(source) << base << "PartitionName=zz Nodes=n1,nosuch\n";
  auto undefined = sh(up);
  EXPECT_EQ(undefined.first, 1) << undefined.second;
  EXPECT_NE(undefined.second.find(source + ":6:18: error: partition zz names nosuch, which no NodeName line defines"),
            std::string::npos)
      << undefined.second;
  EXPECT_EQ(read_file(dir + "/c/slurm.conf"), effective);
  auto down = sh(bin + "/drover down --state " + dir + "/c");
  EXPECT_EQ(down.first, 0) << down.second;
  EXPECT_EQ(down.second, "drover down: stopped the controller and 1 agents of " + dir + "/c\n");
  // Another program holds the controller's port, then the agent's: drover up
  // says so at once, in the daemon's words, instead of waiting for an answer.
  auto hold = [](int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(static_cast<uint16_t>(port));
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at), 0) << std::strerror(errno);
    EXPECT_EQ(listen(fd, 1), 0);
    return fd;
  };
  auto in_use = [](const std::string& who, int port) {
    return who + " exited at start: cannot listen on TCP 127.0.0.1:" + std::to_string(port) + ": port " +
           std::to_string(port) + " is already in use";
  };
  std::ofstream(source) << base;
  int holder = hold(*ctld);
  auto busy = sh(up);
  close(holder);
  EXPECT_EQ(busy.first, 1) << busy.second;
  EXPECT_NE(busy.second.find("drover up: " + in_use("the controller", *ctld)), std::string::npos) << busy.second;
  EXPECT_EQ(sh(bin + "/drover down --state " + dir + "/c").second,
            "drover down: the controller was not running; stopped 0 agents of " + dir + "/c\n");
  holder = hold(*agent);
  auto agent_busy = sh(up);
  close(holder);
  EXPECT_EQ(agent_busy.first, 1) << agent_busy.second;
  EXPECT_NE(agent_busy.second.find("0 of 1 nodes responding"), std::string::npos) << agent_busy.second;
  EXPECT_NE(agent_busy.second.find("drover up: " + in_use("the agent of n1", *agent)), std::string::npos)
      << agent_busy.second;
  EXPECT_EQ(sh(bin + "/drover down --state " + dir + "/c").second,
            "drover down: stopped the controller and 0 agents of " + dir + "/c\n");
}

// `drover up --detect-gpus`: the agents take this host's devices as gres.conf
// names them instead of emulating what slurm.conf declares. Three character
// devices every host has stand in for GPUs on n1: a job given one can open
// it and not the two others (the devices cgroup or the v2 device filter); n2
// names device files that do not exist and is left out with Slurm's reason.
TEST(Config, DroverUpDetectGpusBindsJobsToThisHostsDevices) {
  auto tmp = rpc::testing::TempDir::create("drover-up-gpus");
  ASSERT_TRUE(tmp) << tmp.error().message;
  const std::string dir = tmp->path();
  auto ctld = rpc::testing::reserve_tcp_port("127.0.0.1");
  auto a1 = rpc::testing::reserve_tcp_port("127.0.0.1");
  auto a2 = rpc::testing::reserve_tcp_port("127.0.0.1");
  ASSERT_TRUE(ctld && a1 && a2);
  const std::string bin = bin_dir();
  std::ofstream(dir + "/slurm.conf")
      << "ClusterName=gpus" << *ctld << "\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=" << *ctld
      << "\nGresTypes=gpu\n"
      << "NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=" << *a1 << " CPUs=2 RealMemory=2000 Gres=gpu:3\n"
      << "NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=" << *a2 << " CPUs=2 RealMemory=2000 Gres=gpu:2\n"
      << "PartitionName=p Nodes=n1,n2 Default=YES\n";
  std::ofstream(dir + "/gres.conf") << "NodeName=n1 Name=gpu File=/dev/null,/dev/zero,/dev/full\n"
                                    << "NodeName=n2 Name=gpu File=" << dir << "/nvidia[0-1]\n";
  Down stop{bin + "/drover down --state " + dir + "/c"};
  auto up = sh(bin + "/drover up --detect-gpus --config " + dir + "/slurm.conf --state " + dir + "/c");
  ASSERT_EQ(up.first, 0) << up.second;
  const std::string env = "DROVER_CONF=" + dir + "/c/slurm.conf ";
  EXPECT_EQ(sh(env + bin + "/sinfo -h -N -o '%N %G %t %E'").second,
            "n1 gpu:3 idle none\nn2 gpu:2 inval gres/gpu count reported lower than configured (0 < 2)\n");
  const std::string script = dir + "/probe.sh";
  std::ofstream(script) << "#!/bin/bash\necho \"gpus=$SLURM_JOB_GPUS cvd=$CUDA_VISIBLE_DEVICES\"\n"
                        << "for f in /dev/null /dev/zero /dev/full; do\n"
                        << "  if ( : < $f ) 2>>" << dir << "/probe.err; then echo \"$f opens\"; else echo \"$f denied\"; fi\n"
                        << "done\n";
  auto sub = sh(env + bin + "/sbatch --parsable -w n1 --gres=gpu:1 -D " + dir + " -o " + dir + "/probe.out " + script);
  ASSERT_EQ(sub.first, 0) << sub.second;
  std::string out;
  for (int i = 0; i < 200 && out.find("/dev/full") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(dir + "/probe.out");
    out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_EQ(out, "gpus=0 cvd=0\n/dev/null opens\n/dev/zero denied\n/dev/full denied\n");
}

// Commands that connect at once, more of them than the controller has
// threads waiting: every one is answered, and no id is given twice.
TEST(Submit, ConcurrentCommandsAreAllAnswered) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("/bin/sh", {"-c",
                             "for k in 1 2 3 4 5 6; do (for i in $(seq 20); do "
                             "sbatch -H --parsable -o /dev/null --wrap true || echo failed; squeue -h >/dev/null; "
                             "done) & done; wait"});
  EXPECT_EQ(r.rc, 0) << r.err;
  std::set<std::string> ids;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    EXPECT_NE(line, "failed") << r.err;
    ids.insert(line);
  }
  EXPECT_EQ(ids.size(), 120u) << r.out << r.err;
  std::istringstream held(c.run("squeue", {"-h", "-t", "PD", "-o", "%i %r"}).out);
  int n = 0;
  for (std::string line; std::getline(held, line); ++n) EXPECT_NE(line.find("JobHeldUser"), std::string::npos) << line;
  EXPECT_EQ(n, 120);
  // Clients that connect and stay (a poller between two requests) each hold
  // a worker; a command that comes after them is still answered at once.
  std::vector<int> open_fds;
  for (int i = 0; i < 12; ++i) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s/state/ctld.wire.sock", c.dir().c_str());
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
    open_fds.push_back(fd);
  }
  std::this_thread::sleep_for(200ms);
  auto t0 = std::chrono::steady_clock::now();
  auto q = c.run("squeue", {"-h", "-t", "PD", "-o", "%i"});
  EXPECT_EQ(q.rc, 0) << q.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s) << "the command waited behind idle connections";
  for (int fd : open_fds) close(fd);
}

TEST(Submit, UnsatisfiableJobsAreRefusedWithSlurmsMessages) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  struct Case {
    std::vector<std::string> args;
    std::string first_lines;
  };
  const Case cases[] = {
      {{"-p", "gpu", "--gres=gpu:16"}, "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"},
      {{"-p", "nonexistent"}, "sbatch: error: invalid partition specified: nonexistent\n"
                              "sbatch: error: Batch job submission failed: Invalid partition name specified\n"},
      {{"-p", "gpu", "--constraint=nonexistent"}, "sbatch: error: Batch job submission failed: Invalid feature specification\n"},
      {{"-c", "65"}, "sbatch: error: CPU count per node can not be satisfied\n"
                     "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"},
      {{"--mem=2000G"}, "sbatch: error: Memory specification can not be satisfied\n"
                        "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"},
      {{"--qos=nosuchqos"}, "sbatch: error: Batch job submission failed: Invalid qos specification\n"},
      // Drover has no advance reservations: a job asking for one is refused, not run outside it.
      {{"--reservation=maint"}, "sbatch: error: Batch job submission failed: Requested reservation is invalid\n"},
      // -M: only this cluster's name (or "all") reaches this controller.
      {{"-M", "elsewhere"}, "sbatch: error: No cluster 'elsewhere' known by database.\n"
                            "sbatch: error: 'elsewhere' can't be reached now, or it is an invalid entry for "
                            "--cluster.  Use 'sacctmgr list clusters' to see available clusters.\n"},
  };
  for (const auto& k : cases) {
    std::vector<std::string> args = k.args;
    args.insert(args.end(), {"--wrap", "true"});
    auto r = c.run("sbatch", args);
    EXPECT_EQ(r.rc, 1) << args[0];
    EXPECT_EQ(r.err.substr(0, k.first_lines.size()), k.first_lines) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  EXPECT_TRUE(c.run("squeue", {"-h", "-t", "all"}).out.empty()) << "a refused job was recorded";
  // -M naming this cluster (among others) submits here and says so.
  std::string cluster;
  for (const auto& line : lines_of(c.run("scontrol", {"show", "config"}).out)) {
    if (line.rfind("ClusterName ", 0) == 0) cluster = line.substr(line.find("= ") + 2);
  }
  ASSERT_FALSE(cluster.empty());
  auto m = c.run("sbatch", {"-M", "elsewhere," + cluster, "-H", "--parsable", "--wrap", "true"});
  EXPECT_EQ(m.rc, 0) << m.err;
  EXPECT_EQ(m.err, "sbatch: error: No cluster 'elsewhere' known by database.\n");
  const std::string held = m.out.substr(0, m.out.find(';'));
  EXPECT_EQ(m.out, held + ";" + cluster + "\n");
  // The listings too: this cluster's name (or all) lists, under Slurm's
  // CLUSTER: line unless -h (sshare's even with -n); another is refused.
  EXPECT_EQ(c.run("squeue", {"-M", cluster, "-h", "-o", "%i"}).out, held + "\n");
  EXPECT_EQ(c.run("squeue", {"-M", cluster, "-o", "%i;%t", "-j", held}).out,
            "CLUSTER: " + cluster + "\nJOBID;ST\n" + held + ";PD\n");
  EXPECT_EQ(c.run("squeue", {"-o", "%i;%t", "-j", held}).out, "JOBID;ST\n" + held + ";PD\n");
  EXPECT_EQ(lines_of(c.run("sinfo", {"--clusters=all", "-o", "%P"}).out).at(0), "CLUSTER: " + cluster);
  EXPECT_EQ(lines_of(c.run("sinfo", {"-M", cluster, "-h", "-o", "%P"}).out).at(0).rfind("CLUSTER", 0), std::string::npos);
  EXPECT_EQ(lines_of(c.run("sshare", {"-M", cluster, "-n", "-P"}).out).at(0), "CLUSTER: " + cluster);
  for (const char* cmd : {"squeue", "sinfo", "sshare", "scontrol"}) {
    std::vector<std::string> args = {"-M", "elsewhere"};
    if (std::string(cmd) == "scontrol") args.insert(args.end(), {"show", "job", held});
    auto other = c.run(cmd, args);
    EXPECT_EQ(other.rc, 1) << cmd;
    EXPECT_EQ(other.out, "") << cmd;
    EXPECT_EQ(lines_of(other.err).at(0), std::string(cmd) + ": error: No cluster 'elsewhere' known by database.");
  }
  // sacct reads the records of the clusters named: none of another's here, and no error.
  auto none = c.run("sacct", {"-M", "elsewhere", "-X", "-n", "-j", held});
  EXPECT_EQ(none.rc, 0) << none.err;
  EXPECT_EQ(none.out + none.err, "");
  EXPECT_EQ(c.run("sacct", {"--clusters", "all", "-X", "-n", "-j", held, "-o", "JobID"}).rc, 0);
  // scontrol takes -M before its command as Slurm's does (Open OnDemand's hold and release).
  EXPECT_EQ(c.run("scontrol", {"-M", cluster, "hold", held}).rc, 0);
  EXPECT_EQ(c.run("scontrol", {"--clusters=" + cluster, "release", held}).rc, 0);
  EXPECT_EQ(c.run("scontrol", {"-M" + cluster, "-o", "show", "job", held}).out.rfind("JobId=" + held + " ", 0), 0u);
  c.run("scancel", {held});
  // Accepted, but pending with a reason that names the limit (Slurm does the same).
  std::string id = std::to_string(c.submit({"-t", "8-00:00:00", "--wrap", "true"}));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(c.reason(id), "PartitionTimeLimit");
}

// --tmp and -B choose nodes by their configuration (TmpDisk; sockets, cores
// per socket, threads per core), --ntasks-per-socket caps a node's tasks, and
// scontrol shows what was asked as Slurm 22.05 does; what no node of the
// partition can give is refused with Slurm's lines (all as on the anchor
// cluster, where Drover used to drop --tmp and -B in silence).
TEST(Submit, TmpDiskAndSocketLayoutChooseNodes) {
  ClusterDef def = small_cluster();
  def.nodes[3].tmp_disk_mb = 2048;  // cpu2
  def.nodes[3].sockets = 4;         // cpu2: 4 x 4 cores
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  auto started = [&](const std::vector<std::string>& args) {
    std::vector<std::string> full = {"-p", "compute", "-o", "/dev/null"};
    full.insert(full.end(), args.begin(), args.end());
    full.insert(full.end(), {"--wrap", "sleep 60"});
    const std::string id = std::to_string(c.submit(full));
    EXPECT_TRUE(c.wait_state(id, {"RUNNING"})) << id << " " << c.reason(id) << " " << c.last_error();
    return id;
  };
  const std::string tmp = started({"--tmp=1G"});
  auto f = c.job_fields(tmp);
  EXPECT_EQ(f["NodeList"], "cpu2");
  EXPECT_EQ(f["MinTmpDiskNode"], "1G");
  EXPECT_EQ(c.run("squeue", {"-h", "-j", tmp, "-o", "%d"}).out, "1G\n") << "-j's list may follow as a word";
  const std::string socks = started({"-B", "4"});
  f = c.job_fields(socks);
  EXPECT_EQ(f["NodeList"], "cpu2");
  EXPECT_EQ(f["NumTasks"], "4");
  EXPECT_EQ(f["Socks/Node"], "4");
  EXPECT_EQ(c.run("squeue", {"-h", "-j", socks, "-o", "%z"}).out, "4:*:*\n");
  // cpu1 has two sockets: two of the three tasks, lgpu1 the third.
  auto capped = c.run("sbatch", {"-p", "compute", "-w", "cpu1", "-N", "1", "-n", "3", "--ntasks-per-socket=1",
                                 "--wrap", "true"});
  EXPECT_EQ(capped.rc, 1);
  EXPECT_EQ(lines_of(capped.err).at(0),
            "sbatch: error: Batch job submission failed: Requested node configuration is not available");
  const std::string two = started({"--ntasks-per-socket=1", "-n", "3", "-x", "cpu2"});
  f = c.job_fields(two);
  EXPECT_EQ(f["NumNodes"], "2");
  EXPECT_EQ(f["NtasksPerN:B:S:C"], "0:0:1:*");
  c.run("scancel", {tmp, socks, two});
  for (const auto& [opt, detail] :
       {std::pair<std::string, std::string>{"--tmp=4G", "Temporary disk specification can not be satisfied"},
        {"--sockets-per-node=8", "Socket, core and/or thread specification can not be satisfied"},
        {"--threads-per-core=2", "Socket, core and/or thread specification can not be satisfied"}}) {
    auto r = c.run("sbatch", {"-p", "compute", opt, "--wrap", "true"});
    EXPECT_EQ(r.rc, 1) << opt;
    auto lines = lines_of(r.err);
    ASSERT_GE(lines.size(), 2u) << r.err;
    EXPECT_EQ(lines[0], "sbatch: error: " + detail) << opt;
    EXPECT_EQ(lines[1], "sbatch: error: Batch job submission failed: Requested node configuration is not available");
  }
  // scontrol: a job named as a word of its own; memory values checked first.
  const std::string held = std::to_string(c.submit({"-H", "--wrap", "true"}));
  EXPECT_EQ(c.run("scontrol", {"update", "job", held, "TimeLimit=5"}).rc, 0);
  EXPECT_EQ(c.job_fields(held)["TimeLimit"], "00:05:00");
  auto bad = c.run("scontrol", {"update", "jobid=" + held, "MinTmpDiskNode=abc"});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(bad.err, "scontrol: error: Invalid MinTmpDiskNode value: abc\n");
  EXPECT_EQ(c.run("scontrol", {"update", "jobid=" + held, "MinTmpDiskNode=512", "ReqSockets=2"}).rc, 0);
  f = c.job_fields(held);
  EXPECT_EQ(f["MinTmpDiskNode"], "512M");
  EXPECT_EQ(f["Socks/Node"], "2");
  // A gres GresTypes does not list is refused by the command itself, as Slurm 22.05's.
  for (const std::string prog : {"sbatch", "srun"}) {
    auto r = c.run(prog, {"--gres=nvme:1", prog == "sbatch" ? "--wrap" : "true", "true"});
    EXPECT_EQ(r.rc, 1) << prog;
    EXPECT_EQ(lines_of(r.err).at(0), prog + ": error: Invalid generic resource (gres) specification") << r.err;
  }
  auto stray = c.run("squeue", {"-h", "-j", held, "12345"});
  EXPECT_EQ(stray.rc, 1);
  EXPECT_EQ(lines_of(stray.err).at(0), "squeue: error: Unrecognized option: 12345");
  c.run("scancel", {held});
}

}  // namespace
}  // namespace drover::e2e

namespace drover::e2e {
namespace {

// A job waiting for its --begin time shows that time as EligibleTime and,
// with no plan yet, as StartTime (EndTime = it + the time limit), held or
// not; sacct's Eligible too; --test-only plans it from then on and ignores
// -H. SLURM_TIME_FORMAT changes how the commands print times. All as Slurm
// 22.05 did on the anchor cluster.
TEST(Submit, ABeginTimeShowsAsTheEligibleAndStartTime) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const int64_t now = std::time(nullptr);
  auto epoch = [&](const std::string& cmd, std::vector<std::string> args) -> int64_t {
    args.insert(args.begin(), {"SLURM_TIME_FORMAT=%s", c.bin() + "/" + cmd});
    auto r = c.run_program("/usr/bin/env", args);
    EXPECT_EQ(r.rc, 0) << r.err;
    try {
      return std::stoll(r.out);
    } catch (...) {
      ADD_FAILURE() << cmd << " printed '" << r.out << "'";
      return 0;
    }
  };
  const std::string held = std::to_string(c.submit({"-H", "--begin=now+2days", "-t", "30", "--wrap", "true"}));
  const std::string later = std::to_string(c.submit({"-p", "compute", "--begin=now+1day", "--wrap", "true"}));
  ASSERT_NE(held, "-1");
  ASSERT_NE(later, "-1");
  const int64_t begin2 = epoch("squeue", {"-h", "-j", held, "-o", "%S"});
  EXPECT_NEAR(begin2, now + 2 * 86400, 10);
  EXPECT_EQ(epoch("squeue", {"-h", "-j", held, "-o", "%e"}), begin2 + 1800);
  EXPECT_EQ(epoch("sacct", {"-X", "-n", "-j", held, "-o", "Eligible"}), begin2);
  auto f = c.job_fields(held);
  EXPECT_EQ(f["EligibleTime"], f["StartTime"]);
  EXPECT_EQ(f["AccrueTime"], "Unknown");
  EXPECT_EQ(f["JobState"], "PENDING");
  EXPECT_EQ(f["Reason"], "JobHeldUser");
  const int64_t begin1 = epoch("squeue", {"-h", "-j", later, "-o", "%S"});
  EXPECT_NEAR(begin1, now + 86400, 10);
  EXPECT_EQ(epoch("squeue", {"-h", "-j", later, "-o", "%e"}), begin1 + 7 * 86400);  // the partition's MaxTime
  EXPECT_EQ(c.reason(later), "BeginTime");
  // SLURM_TIME_FORMAT=relative: "Tomorr HH:MM" (when tomorrow is in this year).
  std::tm tm_now{}, tm_begin{};
  std::time_t tn = now, tb = begin1;
  localtime_r(&tn, &tm_now);
  localtime_r(&tb, &tm_begin);
  if (tm_now.tm_year == tm_begin.tm_year) {
    auto rel = c.run_program("/usr/bin/env", {"SLURM_TIME_FORMAT=relative", c.bin() + "/squeue", "-h", "-j", later,
                                              "-o", "%S"});
    EXPECT_EQ(rel.out.rfind("Tomorr ", 0), 0u) << rel.out;
  }
  // --test-only: planned from the --begin time, on a node, held or not.
  for (const std::vector<std::string>& extra : {std::vector<std::string>{}, std::vector<std::string>{"-H"}}) {
    std::vector<std::string> args = {"SLURM_TIME_FORMAT=%s", c.bin() + "/sbatch", "--test-only", "-p", "compute",
                                     "--begin=now+2days", "--wrap", "true"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto t = c.run_program("/usr/bin/env", args);
    EXPECT_EQ(t.rc, 0) << t.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(t.err, m, std::regex("sbatch: Job \\d+ to start at (\\d+) using 1 processors on "
                                                      "nodes (cpu[12]|lgpu1) in partition compute\n")))
        << t.err;
    EXPECT_NEAR(std::stoll(m[1].str()), now + 2 * 86400, 10);
  }
  EXPECT_EQ(c.run("scancel", {held, later}).rc, 0);
}

// -F/--nodefile and -w with a file's name read the node names from the file,
// and the job keeps them as a set (ReqNodeList=cpu[1-2], each once, in
// order); an empty or missing file is refused with Slurm 22.05's lines and
// exit status; --mail-type alone mails the job's user, shown as MailUser.
TEST(Submit, NodeFilesAndMailUserAsSlurmShowsThem) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  {
    std::ofstream f(c.work() + "/hosts.txt");
    f << "cpu2\ncpu2, cpu1\n";
  }
  { std::ofstream f(c.work() + "/empty.txt"); }
  for (const std::string& opt : {std::string("-F"), std::string("-w")}) {
    const std::string id =
        std::to_string(c.submit({"-H", "-N", "2", opt, c.work() + "/hosts.txt", "--wrap", "true"}));
    ASSERT_NE(id, "-1") << c.last_error();
    EXPECT_EQ(c.job_fields(id)["ReqNodeList"], "cpu[1-2]") << opt;
    c.run("scancel", {id});
  }
  const std::string listed = std::to_string(c.submit({"-H", "-w", "cpu2,cpu1,cpu2", "-x", "lgpu1", "--wrap", "true"}));
  EXPECT_EQ(c.job_fields(listed)["ReqNodeList"], "cpu[1-2]");
  EXPECT_EQ(c.job_fields(listed)["ExcNodeList"], "lgpu1");
  auto empty = c.run("sbatch", {"-F", c.work() + "/empty.txt", "--wrap", "true"});
  EXPECT_EQ(empty.rc, 255);
  EXPECT_EQ(empty.err, "sbatch: error: Hostlist is empty!\nsbatch: error: Invalid --nodefile node file\n");
  auto missing = c.run("sbatch", {"--nodefile=" + c.work() + "/nosuch", "--wrap", "true"});
  EXPECT_EQ(missing.rc, 255);
  EXPECT_EQ(missing.err, "sbatch: error: slurm_allocate_resources error opening file " + c.work() +
                             "/nosuch, No such file or directory\nsbatch: error: Invalid --nodefile node file\n");
  const std::string mailed = std::to_string(c.submit({"-H", "--mail-type=END", "--wrap", "true"}));
  auto show = c.run("scontrol", {"show", "job", mailed});
  const struct passwd* me = ::getpwuid(::getuid());
  ASSERT_NE(me, nullptr);
  EXPECT_NE(show.out.find("   MailUser=" + std::string(me->pw_name) + " MailType=END\n"),
            std::string::npos)
      << show.out;
  const std::string addressed = std::to_string(c.submit({"-H", "--mail-user=a@b", "--wrap", "true"}));
  EXPECT_EQ(c.run("scontrol", {"show", "job", addressed}).out.find("MailUser"), std::string::npos);
  c.run("scancel", {listed, mailed, addressed});
}

// slurm.conf JobFileAppend=1: a job's and a step's existing output files are
// appended to unless --open-mode=truncate says otherwise (slurm.conf(5)).
TEST(Submit, JobFileAppendAppendsUnlessOpenModeSaysTruncate) {
  ClusterDef def = small_cluster();
  def.extra = {"JobFileAppend=1"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::string kept = c.work() + "/kept.out", cut = c.work() + "/cut.out", step = c.work() + "/step.out";
  for (const auto& f : {kept, cut, step}) std::ofstream(f) << "old\n";
  const std::string a = std::to_string(c.submit({"-o", kept, "--wrap", "echo new"}));
  const std::string b = std::to_string(c.submit({"-o", cut, "--open-mode=truncate", "--wrap", "echo new"}));
  ASSERT_TRUE(c.wait_done(a));
  ASSERT_TRUE(c.wait_done(b));
  EXPECT_EQ(read_file(kept), "old\nnew\n");
  EXPECT_EQ(read_file(cut), "new\n");
  auto r = c.run("srun", {"-o", step, "echo", "new"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(step), "old\nnew\n");
}

// --prefer: features wanted, not required. The scheduler tries them first, in
// place of -C (Slurm 22.05 "will override whatever is set there if
// possible"), and falls back to -C when no node with them is free; features
// no node has, or that no node of the partition can give, are refused as
// Slurm 22.05 refused them on the anchor cluster.
TEST(Submit, PreferredFeaturesAreTriedFirst) {
  TestCluster c(small_cluster());  // hgpu1: h100; lgpu1: a100, weight 100 (used last)
  REQUIRE_CLUSTER(c);
  auto node_of = [&](const std::vector<std::string>& args) {
    std::vector<std::string> full = {"-p", "gpu", "--gres=gpu:1", "-o", "/dev/null"};
    full.insert(full.end(), args.begin(), args.end());
    full.insert(full.end(), {"--wrap", "sleep 60"});
    const std::string id = std::to_string(c.submit(full));
    EXPECT_TRUE(c.wait_state(id, {"RUNNING"})) << id << " " << c.reason(id);
    return std::pair(id, c.job_fields(id)["NodeList"]);
  };
  auto [plain, plain_node] = node_of({});
  EXPECT_EQ(plain_node, "hgpu1");  // the lighter node
  auto [pref, pref_node] = node_of({"--prefer=a100"});
  EXPECT_EQ(pref_node, "lgpu1");
  auto [over, over_node] = node_of({"-C", "h100", "--prefer=a100"});
  EXPECT_EQ(over_node, "lgpu1");
  // Running with them, the job shows the preferred features (Slurm's Features=, %f).
  EXPECT_EQ(c.job_fields(over)["Features"], "a100");
  EXPECT_EQ(c.run("squeue", {"-h", "-j", pref, "-o", "%f"}).out, "a100\n");
  c.run("scancel", {plain, pref, over});
  // With the a100 node taken whole, the job runs on what -C (none) allows.
  const std::string hog = std::to_string(c.submit({"-p", "gpu", "--exclusive", "-w", "lgpu1", "--wrap", "sleep 60"}));
  ASSERT_TRUE(c.wait_state(hog, {"RUNNING"}));
  auto [fallback, fallback_node] = node_of({"--prefer=a100"});
  EXPECT_EQ(fallback_node, "hgpu1");
  EXPECT_EQ(c.job_fields(fallback)["Features"], "(null)");
  c.run("scancel", {hog, fallback});
  auto unknown = c.run("sbatch", {"-p", "gpu", "--prefer=nosuch", "--wrap", "true"});
  EXPECT_EQ(unknown.rc, 1);
  EXPECT_EQ(lines_of(unknown.err).at(0), "sbatch: error: Batch job submission failed: Invalid preferred feature "
                                         "specification");
  EXPECT_EQ(c.submit({"-p", "compute", "-x", "lgpu1", "--prefer=h100", "--wrap", "true"}), -1);
  EXPECT_NE(c.last_error().find("Requested node configuration is not available"), std::string::npos)
      << c.last_error();
  EXPECT_EQ(c.run("sbatch", {"-p", "gpu", "--prefer=a100", "--wrap", "true"}).err, "")
      << "no 'has no effect' warning any more";
}

}  // namespace
}  // namespace drover::e2e
