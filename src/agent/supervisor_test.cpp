// Real launches through the step daemon: environment, output files, exits,
// limits, cancel, adoption after an agent restart.
#include "agent/supervisor.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <dirent.h>
#include <sstream>
#include <thread>

#include "agent/agent_test_util.hpp"
#include "agent/hw/hardware.hpp"
#include "agent/pmix_server.hpp"
#include "agent/proc.hpp"

namespace drover::agent {
namespace {

using testing::batch_request;
using testing::parse_env_lines;
using testing::slurp;
using testing::spit;
using testing::step_request;
using testing::TempDir;
using testing::test_options;

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = testing::unique_node();
    spool_ = tmp_.sub("spool");
    work_ = tmp_.sub("work", 0777);
    open_supervisor();
  }
  void TearDown() override {
    if (!sup_) return;
    for (const auto& s : sup_->steps()) {
      if (!s.ended()) (void)sup_->terminate(s.key, JobState::kCancelled, "test teardown");
    }
    for (const auto& s : sup_->steps()) sup_->wait(s.key, 5000);
    sup_->release_cgroups();
  }
  void open_supervisor(SupervisorOptions o) {
    sup_.reset();
    auto s = Supervisor::open(std::move(o));
    ASSERT_TRUE(s.ok()) << s.error().message;
    sup_ = std::move(*s);
  }
  void open_supervisor() { open_supervisor(test_options(spool_, node_)); }

  // Launches and waits for the end; fails the test when either does not happen.
  StepStatus run(const LaunchRequest& r, int timeout_ms = 10000) {
    auto res = sup_->launch(r);
    EXPECT_TRUE(res.ok()) << (res.ok() ? "" : res.error().message);
    auto st = sup_->wait(r.key, timeout_ms);
    EXPECT_TRUE(st && st->ended()) << r.key.str() << " did not end within " << timeout_ms << " ms";
    return st.value_or(StepStatus{});
  }
  LaunchRequest batch(const std::string& body) { return batch_request(node_, work_, "#!/bin/bash\n" + body); }
  std::string out_of(const LaunchRequest& r) { return slurp(work_ + "/slurm-" + std::to_string(r.job.job_id) + ".out"); }

  TempDir tmp_;
  std::string node_, spool_, work_;
  std::unique_ptr<Supervisor> sup_;
};

bool has_cgroup_memory(Supervisor& s) {
  for (const auto& l : s.cannot_enforce()) {
    if (l.rfind("memory limits", 0) == 0) return false;
  }
  return true;
}

// Processes whose environment carries SLURM_JOB_ID=<id>: what a job left behind.
std::vector<pid_t> processes_of_job(uint64_t job_id) {
  std::vector<pid_t> out;
  const std::string needle = "SLURM_JOB_ID=" + std::to_string(job_id);
  DIR* d = opendir("/proc");
  while (dirent* e = readdir(d)) {
    pid_t pid = std::atoi(e->d_name);
    if (pid <= 0 || !process_alive(pid, 0)) continue;
    std::string env = slurp("/proc/" + std::to_string(pid) + "/environ");
    for (std::size_t p = 0; (p = env.find(needle, p)) != std::string::npos; p += needle.size()) {
      bool starts = p == 0 || env[p - 1] == '\0';
      bool ends = p + needle.size() == env.size() || env[p + needle.size()] == '\0';
      if (starts && ends) out.push_back(pid);
    }
  }
  closedir(d);
  return out;
}

bool wait_for_file(const std::string& path, int ms) {
  for (int i = 0; i < ms / 10; ++i) {
    if (!slurp(path).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST_F(SupervisorTest, BatchEnvironmentOutputAndTaskPid) {
  auto r = batch("echo \"PID=$$\"; echo \"CWD=$(pwd)\"; env\n");
  r.job.cpus_per_node = {1};
  StepStatus st = run(r);
  EXPECT_EQ(st.state, JobState::kCompleted) << st.reason;
  EXPECT_EQ(st.exit.str(), "0:0");
  auto env = parse_env_lines(out_of(r));
  EXPECT_EQ(env["SLURM_JOB_ID"], std::to_string(r.job.job_id));
  EXPECT_EQ(env["SLURM_TASK_PID"], env["PID"]) << "SLURM_TASK_PID is the task's own pid";
  EXPECT_EQ(env["CWD"], work_);
  EXPECT_EQ(env["SLURMD_NODENAME"], node_);
  EXPECT_EQ(env["ENVIRONMENT"], "BATCH");
  EXPECT_EQ(env["LANG"], "C.UTF-8") << "exported from the submitter";
  EXPECT_EQ(st.stdout_path, work_ + "/slurm-" + std::to_string(r.job.job_id) + ".out");
  struct stat sb {};
  ASSERT_EQ(stat(st.stdout_path.c_str(), &sb), 0);
  EXPECT_EQ(sb.st_uid, geteuid());
}

TEST_F(SupervisorTest, ExportNoneStartsFromTheLoginEnvironment) {
  passwd* pw = getpwuid(geteuid());
  ASSERT_NE(pw, nullptr);
  auto r = batch("env\n");
  r.job.submit_env = {"MYVAR=submitted", "PATH=/submitted/bin", "SLURM_FROM_SUBMIT=1"};
  r.job.export_spec = "NONE";
  StepStatus st = run(r);
  ASSERT_EQ(st.state, JobState::kCompleted) << st.reason;
  EXPECT_TRUE(st.warnings.empty()) << st.warnings.at(0);
  auto env = parse_env_lines(out_of(r));
  EXPECT_EQ(env.count("MYVAR"), 0u);
  EXPECT_EQ(env["HOME"], pw->pw_dir) << "from the login shell";
  EXPECT_NE(env["PATH"], "/submitted/bin");
  EXPECT_NE(env["PATH"].find("/usr/bin"), std::string::npos) << env["PATH"];
  EXPECT_EQ(env["SLURM_FROM_SUBMIT"], "1") << "SLURM_* variables are always exported";
  EXPECT_EQ(env["SLURM_GET_USER_ENV"], "1");
  auto named = batch("echo MYVAR=$MYVAR\n");
  named.job.submit_env = {"MYVAR=submitted"};
  named.job.export_spec = "MYVAR";
  run(named);
  EXPECT_EQ(out_of(named), "MYVAR=submitted\n");
}

TEST_F(SupervisorTest, OutputPatternsAndSeparateError) {
  struct Case {
    std::string out, err, want_out, want_err;  // "{id}", "{id5}", "{user}", "{node}" filled in per job
  };
  const Case cases[] = {
      {"%x-%j.out", "", "agent-test-{id}.out", ""},
      {"o-%9j-%u-%N-%n-%t-%s-%J.txt", "e-%j.err", "o-{id9}-{user}-{host}-0-0-batch-{id}.txt", "e-{id}.err"},
      {"lit\\%j.out", "", "lit%j.out", ""},
      {"%%j.log", "", "%j.log", ""},
      {"sub/%j.out", "", "sub/{id}.out", ""},
  };
  mkdir((work_ + "/sub").c_str(), 0777);
  const std::string host = hw::short_host_name();
  for (const auto& c : cases) {
    auto r = batch("echo to-out; echo to-err >&2\n");
    r.io.stdout_pattern = c.out;
    r.io.stderr_pattern = c.err;
    const std::string id = std::to_string(r.job.job_id);
    const std::map<std::string, std::string> subst = {
        {"{id}", id}, {"{id9}", std::string(9 - id.size(), '0') + id}, {"{user}", r.job.user}, {"{host}", host}};
    auto fill = [&](std::string s) {
      for (const auto& [k, v] : subst) {
        for (std::size_t p; (p = s.find(k)) != std::string::npos;) s.replace(p, k.size(), v);
      }
      return s;
    };
    StepStatus st = run(r);
    ASSERT_EQ(st.state, JobState::kCompleted) << st.reason;
    const std::string out = slurp(work_ + "/" + fill(c.want_out));
    if (c.err.empty()) {
      EXPECT_EQ(out, "to-out\nto-err\n") << c.out;
    } else {
      EXPECT_EQ(out, "to-out\n") << c.out;
      EXPECT_EQ(slurp(work_ + "/" + fill(c.want_err)), "to-err\n") << c.err;
    }
  }
}

TEST_F(SupervisorTest, OpenModeAppendAndTruncate) {
  for (bool append : {true, false}) {
    auto r = batch("echo new\n");
    r.io.stdout_pattern = "mode.out";
    r.io.append = append;
    spit(work_ + "/mode.out", "old\n");
    StepStatus st = run(r);
    ASSERT_EQ(st.state, JobState::kCompleted);
    EXPECT_EQ(slurp(work_ + "/mode.out"), append ? "old\nnew\n" : "new\n") << (append ? "append" : "truncate");
  }
}

TEST_F(SupervisorTest, StdinFromFileOrDevNull) {
  spit(work_ + "/in.txt", "line one\n");
  auto r = batch("cat; echo end\n");
  r.io.stdin_path = "in.txt";
  run(r);
  EXPECT_EQ(out_of(r), "line one\nend\n");
  auto n = batch("cat; echo end\n");
  run(n);
  EXPECT_EQ(out_of(n), "end\n") << "stdin is /dev/null by default";
}

TEST_F(SupervisorTest, AMissingWorkingDirectoryRunsTheJobInTmp) {
  // As Slurm's slurmstepd: the job runs in /tmp, and says so twice on its stderr.
  auto r = batch("pwd\n");
  r.work_dir = tmp_.path() + "/does-not-exist";
  r.io.stdout_pattern = work_ + "/moved.out";
  EXPECT_EQ(run(r).state, JobState::kCompleted);
  const std::string note = "slurmstepd-" + node_ + ": error: couldn't chdir to `" + r.work_dir +
                           "': No such file or directory: going to /tmp instead\n";
  EXPECT_EQ(slurp(work_ + "/moved.out"), note + note + "/tmp\n");
}

TEST_F(SupervisorTest, AnOutputFileThatCannotBeOpenedFailsTheJobNotTheAgent) {
  // The default slurm-%j.out is relative to the missing directory: the launch fails.
  auto r = batch("echo never\n");
  r.work_dir = tmp_.path() + "/does-not-exist";
  auto res = sup_->launch(r);
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_FALSE(res->started);
  const std::string out = r.work_dir + "/slurm-" + std::to_string(r.job.job_id) + ".out";
  EXPECT_NE(res->failure.find("cannot open " + out), std::string::npos) << res->failure;
  EXPECT_NE(res->failure.find("No such file or directory"), std::string::npos) << res->failure;
  auto st = sup_->wait(r.key, 5000);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, JobState::kFailed);
  EXPECT_EQ(st->reason, "launch failed: " + res->failure.substr(res->failure.find("cannot open")));
  // The agent goes on: the next job runs.
  EXPECT_EQ(run(batch("true\n")).state, JobState::kCompleted);
}

TEST_F(SupervisorTest, ExitCodesAndSignals) {
  struct Case {
    std::string body;
    JobState state;
    std::string exit;
  };
  const Case cases[] = {
      {"exit 0\n", JobState::kCompleted, "0:0"},
      {"exit 3\n", JobState::kFailed, "3:0"},
      {"kill -9 $$\n", JobState::kFailed, "0:9"},
      {"kill -SEGV $$\n", JobState::kFailed, "0:11"},
  };
  for (const auto& c : cases) {
    StepStatus st = run(batch(c.body));
    EXPECT_EQ(st.state, c.state) << c.body;
    EXPECT_EQ(st.exit.str(), c.exit) << c.body;
  }
}

TEST_F(SupervisorTest, TimeLimitSendsSigtermThenSigkillAfterKillWait) {
  auto r = batch("trap 'echo got TERM' TERM\necho started\nwhile true; do sleep 0.05; done\n");
  r.time_limit_s = 1;
  auto t0 = std::chrono::steady_clock::now();
  StepStatus st = run(r, 8000);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(st.state, JobState::kTimeout);
  EXPECT_EQ(st.exit.str(), "0:9") << "the shell ignored SIGTERM, so SIGKILL ended it";
  EXPECT_EQ(out_of(r).find("started\n"), 0u) << out_of(r);
  EXPECT_NE(out_of(r).find("got TERM"), std::string::npos) << out_of(r);
  EXPECT_NE(st.reason.find("time limit of 0:00:01 reached"), std::string::npos) << st.reason;
  EXPECT_GE(ms, 1000 + 300 - 50) << "SIGKILL only after KillWait";
  EXPECT_LT(ms, 4000);
  // A job that dies on SIGTERM reports that signal.
  auto polite = batch("sleep 30\n");
  polite.time_limit_s = 1;
  StepStatus p = run(polite, 8000);
  EXPECT_EQ(p.state, JobState::kTimeout);
  EXPECT_EQ(p.exit.str(), "0:15");
}

// Cancels a job whose processes escaped in every usual way and checks none survives.
void cancel_leaves_no_orphans(Supervisor& sup, const LaunchRequest& r, const std::string& work) {
  auto res = sup.launch(r);
  ASSERT_TRUE(res.ok() && res->started);
  ASSERT_TRUE(wait_for_file(work + "/ready.txt", 5000));
  ASSERT_TRUE(wait_for_file(work + "/gc.pid", 5000));
  pid_t grandchild = std::atoi(slurp(work + "/gc.pid").c_str());
  ASSERT_TRUE(process_alive(grandchild, 0));
  // The backgrounded subshells fork their sleeps on their own time; wait for them to be there.
  std::size_t seen = 0;
  for (int i = 0; i < 500 && (seen = processes_of_job(r.job.job_id).size()) < 4u; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(seen, 4u) << "the shell, its sleeps and the daemonised ones";
  ASSERT_TRUE(sup.terminate_job(r.job.job_id, JobState::kCancelled, "cancelled by test").ok());
  auto st = sup.wait(r.key, 5000);
  ASSERT_TRUE(st && st->ended());
  EXPECT_EQ(st->state, JobState::kCancelled);
  EXPECT_EQ(st->reason, "cancelled by test");
  EXPECT_FALSE(process_alive(grandchild, 0)) << "the setsid'd grandchild outlived the cancel";
  EXPECT_TRUE(processes_of_job(r.job.job_id).empty()) << "orphans left after cancel";
}

const char* kEscapingScript =
    "setsid sh -c 'sleep 300 & echo $! > gc.pid' &\n"
    "( ( sleep 301 & ) & )\n"
    "sleep 302 & disown\n"
    "echo ready > ready.txt\n"
    "sleep 303\n";

TEST_F(SupervisorTest, CancelKillsDoubleForkedAndSetsidDescendants) {
  cancel_leaves_no_orphans(*sup_, batch(kEscapingScript), work_);
}

TEST_F(SupervisorTest, CancelWithoutCgroupsUsesTheProcessTree) {
  auto o = test_options(spool_, node_);
  o.cgroups.enabled = false;  // the step daemon's subreaper role alone
  open_supervisor(o);
  cancel_leaves_no_orphans(*sup_, batch(kEscapingScript), work_);
}

TEST_F(SupervisorTest, SignalsBatchShellOnlyOrAllProcesses) {
  auto r = batch(
      "trap 'echo shell got USR1 >> sig.txt' USR1\n"
      "bash -c \"trap 'echo child got USR1 >> sig.txt; exit 0' USR1; echo up > child.txt; "
      "while true; do sleep 0.05; done\" &\n"
      "while [ ! -s sig.txt ] || [ $(wc -l < sig.txt) -lt 3 ]; do sleep 0.05; done\n"
      "exit 0\n");
  auto res = sup_->launch(r);
  ASSERT_TRUE(res.ok() && res->started);
  ASSERT_TRUE(wait_for_file(work_ + "/child.txt", 5000));
  ASSERT_TRUE(sup_->signal(r.key, SIGUSR1, SignalScope::kBatchShell).ok());
  ASSERT_TRUE(wait_for_file(work_ + "/sig.txt", 3000));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(slurp(work_ + "/sig.txt"), "shell got USR1\n") << "B: reaches the batch shell only";
  ASSERT_TRUE(sup_->signal(r.key, SIGUSR1, SignalScope::kAllProcesses).ok());
  auto st = sup_->wait(r.key, 5000);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, JobState::kCompleted) << st->reason << " exit " << st->exit.str() << ": " << out_of(r);
  std::string got = slurp(work_ + "/sig.txt");
  EXPECT_NE(got.find("child got USR1"), std::string::npos) << got;
  auto count = [&](const std::string& line) {
    std::size_t n = 0;
    for (std::size_t p = 0; (p = got.find(line, p)) != std::string::npos; p += line.size()) ++n;
    return n;
  };
  EXPECT_EQ(count("shell got USR1\n"), 2u) << got;
  EXPECT_EQ(count("child got USR1\n"), 1u) << got;
  EXPECT_EQ(sup_->signal(r.key, SIGUSR1, SignalScope::kAllProcesses).error().message.find("has already ended"),
            std::string("step " + r.key.str() + " ").size());
}

TEST_F(SupervisorTest, WarnSignalBeforeTimeLimitToBatchShell) {
  auto r = batch("trap 'echo warned; exit 0' USR1\nwhile true; do sleep 0.05; done\n");
  r.time_limit_s = 3;
  r.warn_signal = WarnSignal{SIGUSR1, 2, true};  // --signal=B:USR1@2
  auto t0 = std::chrono::steady_clock::now();
  StepStatus st = run(r, 8000);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(st.state, JobState::kCompleted);
  EXPECT_EQ(out_of(r), "warned\n");
  EXPECT_GE(ms, 800);
  EXPECT_LT(ms, 2500) << "delivered 2 s before the 3 s limit";
}

TEST_F(SupervisorTest, MemoryLimitEndsAsOutOfMemory) {
  if (!has_cgroup_memory(*sup_)) GTEST_SKIP() << "no usable memory cgroup here: " << sup_->enforcement_summary();
  if (access("/usr/bin/python3", X_OK) != 0) GTEST_SKIP() << "python3 is needed to allocate memory";
  auto r = batch("echo before\npython3 -c 'b = bytearray(256 << 20); print(len(b))'\necho after $?\n");
  r.alloc.mem_limit_mb = 48;
  StepStatus st = run(r);
  EXPECT_EQ(st.state, JobState::kOutOfMemory) << st.reason;
  EXPECT_GE(st.oom_kills, 1);
  EXPECT_NE(st.reason.find("limit of 48 MB"), std::string::npos) << st.reason;
  EXPECT_EQ(out_of(r).find("before\n"), 0u);
  EXPECT_NE(out_of(r).find("after 137"), std::string::npos) << "python was SIGKILLed by the OOM killer";
  // Within the limit: no OOM.
  auto ok = batch("python3 -c 'b = bytearray(8 << 20)'\n");
  ok.alloc.mem_limit_mb = 64;
  EXPECT_EQ(run(ok).state, JobState::kCompleted);
}

TEST_F(SupervisorTest, CoresConfinedToTheAllocation) {
  bool cpuset = true;
  for (const auto& l : sup_->cannot_enforce()) cpuset = cpuset && l.rfind("CPU confinement", 0) != 0;
  if (!cpuset) GTEST_SKIP() << "no cpuset controller: " << sup_->enforcement_summary();
  auto r = batch("grep Cpus_allowed_list /proc/self/status\n");
  r.alloc.cpu_ids = {0};
  StepStatus st = run(r);
  ASSERT_EQ(st.state, JobState::kCompleted);
  EXPECT_NE(out_of(r).find("Cpus_allowed_list:\t0\n"), std::string::npos) << out_of(r);
  auto big = batch("true\n");
  big.alloc.cpu_ids = {0, 9999};
  StepStatus b = run(big);
  EXPECT_EQ(b.state, JobState::kCompleted);
  ASSERT_FALSE(b.warnings.empty());
  EXPECT_NE(b.warnings[0].find("CPU 9999, which this host does not have"), std::string::npos) << b.warnings[0];
}

// Agents of one host share the cgroup base. Another agent that stops first
// removes it while this one has no job there yet: this one's next job must
// still be confined (ctest -j2 once saw it run on every CPU).
TEST_F(SupervisorTest, CoresConfinedAfterAnotherAgentOfTheHostStopped) {
  bool cpuset = true;
  for (const auto& l : sup_->cannot_enforce()) cpuset = cpuset && l.rfind("CPU confinement", 0) != 0;
  if (!cpuset) GTEST_SKIP() << "no cpuset controller: " << sup_->enforcement_summary();
  {
    auto other = Supervisor::open(test_options(tmp_.sub("spool-b"), testing::unique_node()));
    ASSERT_TRUE(other.ok()) << other.error().message;
    (*other)->release_cgroups();  // the base is empty: it goes
  }
  auto r = batch("grep Cpus_allowed_list /proc/self/status\n");
  r.alloc.cpu_ids = {0};
  StepStatus st = run(r);
  ASSERT_EQ(st.state, JobState::kCompleted);
  EXPECT_NE(out_of(r).find("Cpus_allowed_list:\t0\n"), std::string::npos) << out_of(r);
  for (const auto& w : st.warnings) ADD_FAILURE() << "warning: " << w;
}

TEST_F(SupervisorTest, GpuDevicesIsolatedByTheDeviceController) {
  bool devices = true;
  for (const auto& l : sup_->cannot_enforce()) devices = devices && l.rfind("GPU device isolation", 0) != 0;
  if (!devices) GTEST_SKIP() << "no device controller: " << sup_->enforcement_summary();
  const std::string dev = tmp_.sub("dev");
  for (int i = 0; i < 2; ++i) {
    std::string f = dev + "/nvidia" + std::to_string(i);
    if (mknod(f.c_str(), S_IFCHR | 0666, makedev(195, i)) != 0) GTEST_SKIP() << "mknod not permitted here";
  }
  auto o = test_options(spool_, node_);
  o.node_gpu_files = {dev + "/nvidia0", dev + "/nvidia1"};
  open_supervisor(o);
  auto r = batch("for i in 0 1; do (exec 3<" + dev + "/nvidia$i) 2>&1 | sed \"s/.*: /gpu$i: /\"; done\n"
                 "echo CUDA=$CUDA_VISIBLE_DEVICES JOB_GPUS=$SLURM_JOB_GPUS\n");
  r.alloc.gpus = {{1, dev + "/nvidia1"}};
  StepStatus st = run(r);
  ASSERT_EQ(st.state, JobState::kCompleted) << st.reason;
  const std::string out = out_of(r);
  EXPECT_NE(out.find("gpu0: Operation not permitted"), std::string::npos) << out;
  EXPECT_EQ(out.find("gpu1: Operation not permitted"), std::string::npos) << out;
  EXPECT_NE(out.find("CUDA=0 JOB_GPUS=1"), std::string::npos) << "CUDA numbering restarts under isolation: " << out;
}

TEST_F(SupervisorTest, StepTasksRanksAndWorstExit) {
  auto r = step_request(node_, work_, 3,
                        {"bash", "-c",
                         "echo rank=$SLURM_PROCID local=$SLURM_LOCALID gtids=$SLURM_GTIDS ntasks=$SLURM_NTASKS; "
                         "[ $SLURM_PROCID = 1 ] && exit 5; [ $SLURM_PROCID = 2 ] && kill -9 $$; exit 0"});
  r.io.stdout_pattern = "step-%j-%t.out";
  StepStatus st = run(r);
  EXPECT_EQ(st.state, JobState::kFailed);
  EXPECT_EQ(st.exit.str(), "0:9") << "a task a signal ended outweighs the others' codes, as Slurm 22.05's step daemon";
  ASSERT_EQ(st.tasks.size(), 3u);
  EXPECT_EQ(st.tasks[1].exit.str(), "5:0");
  EXPECT_EQ(st.tasks[2].exit.str(), "0:9");
  for (int t = 0; t < 3; ++t) {
    EXPECT_EQ(slurp(work_ + "/step-" + std::to_string(r.job.job_id) + "-" + std::to_string(t) + ".out"),
              "rank=" + std::to_string(t) + " local=" + std::to_string(t) + " gtids=0,1,2 ntasks=3\n");
  }
}

// --mpi=pmix on one node: the step daemon serves PMIx, each task gets its
// namespace, rank and the server's address, and the tmpdir is gone afterwards.
TEST_F(SupervisorTest, PmixStepGivesEachTaskItsNamespaceAndRank) {
  if (!pmix_available()) GTEST_SKIP() << "built without PMIx (libpmix-dev)";
  auto r = step_request(node_, work_, 2,
                        {"bash", "-c",
                         "echo ns=$PMIX_NAMESPACE rank=$PMIX_RANK mpi=$SLURM_MPI_TYPE uri=${PMIX_SERVER_URI41:+set} "
                         "tmp=$PMIX_SERVER_TMPDIR"});
  r.layout.mpi = "pmix";
  r.io.stdout_pattern = "pmix-%t.out";
  StepStatus st = run(r);
  ASSERT_EQ(st.state, JobState::kCompleted) << st.reason;
  for (int t = 0; t < 2; ++t) {
    std::string out = slurp(work_ + "/pmix-" + std::to_string(t) + ".out");
    EXPECT_EQ(out.rfind("ns=" + pmix_nspace(r.key) + " rank=" + std::to_string(t) + " mpi=pmix uri=set tmp=/", 0), 0u)
        << out;
    std::string tmp = out.substr(out.find("tmp=") + 4);
    tmp.erase(tmp.find_last_not_of('\n') + 1);
    EXPECT_NE(tmp.find("/drover-pmix." + node_ + "."), std::string::npos) << tmp;
    struct stat sb {};
    EXPECT_NE(stat(tmp.c_str(), &sb), 0) << tmp << " is left behind";
  }
}

TEST_F(SupervisorTest, KillOnBadExitEndsTheOtherTasks) {
  for (bool kill : {true, false}) {
    auto r = step_request(node_, work_, 2,
                          {"bash", "-c", "if [ $SLURM_PROCID = 0 ]; then sleep 0.2; exit 3; fi; sleep 1; echo survived"});
    r.layout.kill_on_bad_exit = kill;
    r.io.stdout_pattern = "kobe-%j-%t.out";
    auto t0 = std::chrono::steady_clock::now();
    StepStatus st = run(r);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(st.state, JobState::kFailed);
    const std::string rank1 = slurp(work_ + "/kobe-" + std::to_string(r.job.job_id) + "-1.out");
    if (kill) {
      EXPECT_EQ(st.exit.str(), "0:15") << "the other task was sent SIGTERM, as Slurm's srun -K ends it";
      EXPECT_EQ(st.reason, "task 0 exited 3:0 (--kill-on-bad-exit)");
      EXPECT_EQ(rank1, "");
      EXPECT_LT(ms, 900) << "the other task was killed, not waited for";
    } else {
      EXPECT_EQ(st.exit.str(), "3:0");
      EXPECT_EQ(rank1, "survived\n");
    }
  }
}

TEST_F(SupervisorTest, StepOnTwoNodesRunsHostnameOnEach) {
  // srun -p compute -N2 -n2 -l hostname (golden srun_hostname_n2.txt) prints the
  // machine's host name from each task; here two agents emulate the two nodes.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string node_b = testing::unique_node();
  auto other = Supervisor::open(test_options(tmp_.sub("spool-b"), node_b));
  ASSERT_TRUE(other.ok());
  std::vector<StepStatus> ends;
  for (int n = 0; n < 2; ++n) {
    auto r = step_request(n == 0 ? node_ : node_b, work_, 1, {"hostname"});
    r.job.job_id = r.key.job_id = 777000 + getpid() % 1000;
    r.job.nodes = {node_, node_b};
    r.job.cpus_per_node = {1, 1};
    r.job.tasks_per_node = {1, 1};
    r.layout.nodes = {node_, node_b};
    r.layout.tasks_per_node = {1, 1};
    r.layout.node_index = n;
    r.layout.global_task_ids = {n};
    Supervisor& s = n == 0 ? *sup_ : **other;
    ASSERT_TRUE(s.launch(r).ok());
    auto st = s.wait(r.key, 5000);
    ASSERT_TRUE(st && st->state == JobState::kCompleted) << (st ? st->reason : "no status");
    // Without -o the task's output stays in the spool for the RPC layer to forward to srun.
    EXPECT_EQ(slurp(st->stdout_path), std::string(host) + "\n") << st->stdout_path;
    ends.push_back(*st);
  }
  EXPECT_EQ(ends[0].tasks[0].rank, 0);
  EXPECT_EQ(ends[1].tasks[0].rank, 1);
  (*other)->release_cgroups();
}

TEST_F(SupervisorTest, ExecFailureIsTheTasksExitCode) {
  // Said on the task's stderr, as Slurm's slurmstepd says it; the errno is the exit code.
  auto r = step_request(node_, work_, 1, {"/nonexistent/program"});
  StepStatus st = run(r);
  EXPECT_EQ(st.state, JobState::kFailed);
  EXPECT_EQ(st.exit.str(), "2:0") << "the errno, as Slurm's slurmstepd exits";
  EXPECT_EQ(slurp(st.stderr_path),
            "slurmstepd-" + node_ + ": error: execve(): /nonexistent/program: No such file or directory\n");
  // A name not found along PATH nor in the working directory is named as given.
  auto missing = step_request(node_, work_, 1, {"drover-no-such-program"});
  st = run(missing);
  EXPECT_EQ(st.exit.str(), "2:0");
  EXPECT_EQ(slurp(st.stderr_path),
            "slurmstepd-" + node_ + ": error: execve(): drover-no-such-program: No such file or directory\n");
  // A relative path is named from the working directory; one that may not be run exits 13.
  spit(work_ + "/plain.txt", "not a program\n");
  st = run(step_request(node_, work_, 1, {"./plain.txt"}));
  EXPECT_EQ(st.exit.str(), "13:0");
  EXPECT_EQ(slurp(st.stderr_path), "slurmstepd-" + node_ + ": error: execve(): " + work_ + "/./plain.txt: Permission denied\n");
  // A script whose interpreter is missing is named by it.
  spit(work_ + "/bad.sh", "#!/bin/drover-no-such-shell -e\necho hi\n");
  chmod((work_ + "/bad.sh").c_str(), 0755);
  st = run(step_request(node_, work_, 1, {work_ + "/bad.sh"}));
  EXPECT_EQ(st.exit.str(), "2:0");
  EXPECT_EQ(slurp(st.stderr_path),
            "slurmstepd-" + node_ + ": error: execve(): bad interpreter(/bin/drover-no-such-shell): No such file or directory\n");
}

TEST_F(SupervisorTest, AProgramFoundAlongPathIsStartedByItsPath) {
  // Slurm's slurmstepd gives the program the path it found it at as argv[0]
  // (`srun bash -c 'echo $0'` prints /usr/bin/bash), and looks in the
  // working directory after PATH.
  auto r = step_request(node_, work_, 1, {"sh", "-c", "echo $0"});
  StepStatus st = run(r);
  ASSERT_EQ(st.state, JobState::kCompleted) << slurp(st.stderr_path);
  const std::string out = slurp(st.stdout_path);
  EXPECT_TRUE(out == "/usr/bin/sh\n" || out == "/bin/sh\n") << out;
  spit(work_ + "/here.sh", "#!/bin/sh\necho here $0\n");
  chmod((work_ + "/here.sh").c_str(), 0755);
  st = run(step_request(node_, work_, 1, {"here.sh"}));
  ASSERT_EQ(st.state, JobState::kCompleted) << slurp(st.stderr_path);
  EXPECT_EQ(slurp(st.stdout_path), "here " + work_ + "/here.sh\n");
}

TEST_F(SupervisorTest, RefusesRootJobsUnlessAllowed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the test runs a job whose user is root";
  auto o = test_options(spool_, node_);
  o.allow_root_jobs = false;
  open_supervisor(o);
  auto r = batch("echo ran\n");
  auto res = sup_->launch(r);
  ASSERT_TRUE(res.ok());
  EXPECT_FALSE(res->started);
  EXPECT_NE(res->failure.find("refusing to run job " + r.key.str() + " as root"), std::string::npos) << res->failure;
  EXPECT_TRUE(slurp(work_ + "/slurm-" + std::to_string(r.job.job_id) + ".out").empty());
}

TEST_F(SupervisorTest, UnknownUserFailsWithReason) {
  auto r = batch("true\n");
  r.job.user = "no-such-user-drover";
  r.job.uid = 54321;
  auto res = sup_->launch(r);
  ASSERT_TRUE(res.ok());
  EXPECT_FALSE(res->started);
  EXPECT_NE(res->failure.find("user 'no-such-user-drover' is not known on this node"), std::string::npos)
      << res->failure;
}

TEST_F(SupervisorTest, RunsAsTheSubmittingUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to switch users (CI runs as root)";
  const char* name = "droveragent";
  if (getpwnam(name) == nullptr) {
    std::string cmd = std::string("useradd -M -r -s /bin/bash ") + name + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0 || getpwnam(name) == nullptr) GTEST_SKIP() << "useradd failed";
  }
  passwd* pw = getpwnam(name);
  const std::string work = tmp_.sub("userwork", 0700);
  ASSERT_EQ(chown(work.c_str(), pw->pw_uid, pw->pw_gid), 0);
  auto r = batch_request(node_, work, "#!/bin/bash\necho uid=$(id -u) gid=$(id -g) user=$SLURM_JOB_USER\n");
  r.job.user = name;
  r.job.uid = pw->pw_uid;
  r.job.gid = pw->pw_gid;
  StepStatus st = run(r);
  ASSERT_EQ(st.state, JobState::kCompleted) << st.reason;
  const std::string out_path = work + "/slurm-" + std::to_string(r.job.job_id) + ".out";
  EXPECT_EQ(slurp(out_path), "uid=" + std::to_string(pw->pw_uid) + " gid=" + std::to_string(pw->pw_gid) +
                                 " user=" + name + "\n");
  struct stat sb {};
  ASSERT_EQ(stat(out_path.c_str(), &sb), 0);
  EXPECT_EQ(sb.st_uid, pw->pw_uid) << "the output file belongs to the job's user";
  // The user cannot write where it has no right to: the job fails, named.
  auto denied = batch_request(node_, work, "#!/bin/bash\ntrue\n");
  denied.job.user = name;
  denied.job.uid = pw->pw_uid;
  denied.job.gid = pw->pw_gid;
  denied.io.stdout_pattern = spool_ + "/../not-yours.out";
  auto res = sup_->launch(denied);
  ASSERT_TRUE(res.ok());
  EXPECT_FALSE(res->started);
  EXPECT_NE(res->failure.find("as user droveragent: Permission denied"), std::string::npos) << res->failure;
}

TEST_F(SupervisorTest, AdoptsRunningJobsAfterRestart) {
  auto r = batch("echo started; while [ ! -e go ]; do sleep 0.05; done; echo finished; exit 7\n");
  auto res = sup_->launch(r);
  ASSERT_TRUE(res.ok() && res->started);
  pid_t task = res->task_pids.at(0);
  sup_.reset();  // the agent goes away; the job must not
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(process_alive(task, 0)) << "the job died with the agent";
  open_supervisor();
  auto adopted = sup_->adopted();
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0], r.key);
  auto running = sup_->status(r.key);
  ASSERT_TRUE(running);
  EXPECT_EQ(running->state, JobState::kRunning);
  EXPECT_EQ(running->tasks.at(0).pid, task);
  EXPECT_TRUE(sup_->launch(r)->already_known) << "a re-sent launch is not run twice";
  spit(work_ + "/go", "1");
  auto st = sup_->wait(r.key, 5000);
  ASSERT_TRUE(st && st->ended());
  EXPECT_EQ(st->state, JobState::kFailed);
  EXPECT_EQ(st->exit.str(), "7:0");
  EXPECT_EQ(out_of(r), "started\nfinished\n");
  ASSERT_EQ(sup_->finished().size(), 1u);
  ASSERT_TRUE(sup_->acknowledge(r.key).ok());
  EXPECT_TRUE(sup_->finished().empty());
  open_supervisor();
  EXPECT_TRUE(sup_->adopted().empty()) << "acknowledged records are gone from the spool";
}

TEST_F(SupervisorTest, CancelThroughARestartedAgent) {
  auto r = batch("sleep 300\n");
  ASSERT_TRUE(sup_->launch(r).ok());
  open_supervisor();
  ASSERT_TRUE(sup_->terminate_job(r.job.job_id, JobState::kCancelled, "scancel").ok());
  auto st = sup_->wait(r.key, 5000);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, JobState::kCancelled);
  EXPECT_TRUE(processes_of_job(r.job.job_id).empty());
}

TEST_F(SupervisorTest, StepDaemonKilledIsReportedAndCleanedUp) {
  auto r = batch("sleep 300\n");
  auto res = sup_->launch(r);
  ASSERT_TRUE(res.ok() && res->started);
  auto running = sup_->status(r.key);
  ASSERT_TRUE(running);
  ASSERT_GT(running->stepd_pid, 0);
  ::kill(running->stepd_pid, SIGKILL);
  auto st = sup_->wait(r.key, 5000);
  ASSERT_TRUE(st && st->ended());
  EXPECT_EQ(st->state, JobState::kNodeFail);
  EXPECT_NE(st->reason.find("ended without reporting"), std::string::npos) << st->reason;
  if (!running->cgroup.empty() && !running->cgroup.value("dirs", nlohmann::json::object()).empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(processes_of_job(r.job.job_id).empty()) << "leftovers killed through the cgroup";
  }
}

TEST_F(SupervisorTest, StrayTermToTheStepDaemonIsIgnored) {
  auto r = batch("sleep 300\n");
  ASSERT_TRUE(sup_->launch(r).ok());
  auto running = sup_->status(r.key);
  ASSERT_TRUE(running && running->stepd_pid > 0);
  ::kill(running->stepd_pid, SIGTERM);
  ::kill(running->stepd_pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto still = sup_->status(r.key);
  ASSERT_TRUE(still);
  EXPECT_EQ(still->state, JobState::kRunning) << "only the agent ends a step";
  ASSERT_TRUE(sup_->terminate(r.key, JobState::kCancelled, "done").ok());
  EXPECT_EQ(sup_->wait(r.key, 5000)->state, JobState::kCancelled);
}

TEST_F(SupervisorTest, LeavesNoZombieStepDaemons) {
  std::vector<pid_t> daemons;
  std::vector<StepKey> keys;
  for (int i = 0; i < 3; ++i) {
    auto r = batch("true\n");
    StepStatus st = run(r);
    ASSERT_EQ(st.state, JobState::kCompleted);
    daemons.push_back(st.stepd_pid);
    keys.push_back(r.key);
  }
  ASSERT_TRUE(sup_->acknowledge(keys[0]).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  sup_->steps();  // a status poll collects daemons that have exited
  for (pid_t pid : daemons) {
    EXPECT_NE(access(("/proc/" + std::to_string(pid)).c_str(), F_OK), 0) << "step daemon " << pid << " left a zombie";
  }
}

// Field 4 of /proc/PID/stat; 0 when gone.
pid_t parent_of(pid_t pid) {
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream in(stat.substr(close + 2));
  std::string state;
  pid_t ppid = 0;
  in >> state >> ppid;
  return ppid;
}

TEST_F(SupervisorTest, StepDaemonsComeFromAForkServerThatMayBeLost) {
  auto first = batch("sleep 300\n");
  ASSERT_TRUE(sup_->launch(first).ok());
  auto a = sup_->status(first.key);
  ASSERT_TRUE(a && a->stepd_pid > 0);
  const pid_t server = parent_of(a->stepd_pid);
  ASSERT_GT(server, 0);
  EXPECT_NE(server, getpid()) << "forked by the fork server, not executed by the agent";
  EXPECT_EQ(parent_of(server), getpid());
  EXPECT_EQ(slurp("/proc/" + std::to_string(server) + "/comm"), "drover-stepd-fs\n");
  EXPECT_EQ(slurp("/proc/" + std::to_string(a->stepd_pid) + "/comm"), "drover-stepd\n");
  // The server is lost: its step runs on; the next launch is executed, the one after gets a new server.
  ASSERT_EQ(::kill(server, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(sup_->status(first.key)->state, JobState::kRunning);
  auto second = batch("sleep 300\n");
  ASSERT_TRUE(sup_->launch(second).ok());
  EXPECT_EQ(parent_of(sup_->status(second.key)->stepd_pid), getpid()) << "executed while no server answers";
  auto third = batch("echo third\n");
  StepStatus st = run(third);
  EXPECT_EQ(st.state, JobState::kCompleted);
  EXPECT_EQ(out_of(third), "third\n");
  auto fourth = batch("sleep 300\n");
  ASSERT_TRUE(sup_->launch(fourth).ok());
  const pid_t next_server = parent_of(sup_->status(fourth.key)->stepd_pid);
  EXPECT_NE(next_server, getpid());
  EXPECT_EQ(parent_of(next_server), getpid()) << "a new fork server";
  for (const auto& r : {first, second, fourth}) {
    ASSERT_TRUE(sup_->terminate(r.key, JobState::kCancelled, "done").ok());
    auto end = sup_->wait(r.key, 5000);
    ASSERT_TRUE(end);
    EXPECT_EQ(end->state, JobState::kCancelled);
    EXPECT_TRUE(processes_of_job(r.job.job_id).empty());
  }
  // The server does not outlive the agent.
  sup_.reset();
  EXPECT_EQ(parent_of(next_server), 0) << "fork server " << next_server << " still there";
}

// A server that takes a request and never answers (here: stopped) may or may
// not have forked a daemon: the launch fails, nothing runs twice, and the next
// launch gets a new server. Takes ~7 s (the answer's 5 s, the old server's 2 s).
TEST_F(SupervisorTest, AForkServerThatStopsAnsweringNeverStartsASecondDaemon) {
  SupervisorOptions o = test_options(spool_, node_);
  o.launch_timeout_ms = 1000;
  open_supervisor(o);
  auto first = batch("sleep 300\n");
  ASSERT_TRUE(sup_->launch(first).ok());
  const pid_t server = parent_of(sup_->status(first.key)->stepd_pid);
  ASSERT_NE(server, getpid());
  ASSERT_EQ(::kill(server, SIGSTOP), 0);
  auto second = batch("echo ran >> " + work_ + "/second.txt\n");
  auto res = sup_->launch(second);
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message.find("fork server failed while starting the step"), std::string::npos)
      << res.error().message;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(access((work_ + "/second.txt").c_str(), F_OK), -1) << "the refused launch ran anyway";
  EXPECT_EQ(parent_of(server), 0) << "the stopped server was ended";
  auto third = batch("echo third\n");
  StepStatus st = run(third);
  EXPECT_EQ(st.state, JobState::kCompleted);
  EXPECT_EQ(out_of(third), "third\n");
  ASSERT_TRUE(sup_->terminate(first.key, JobState::kCancelled, "done").ok());
  EXPECT_EQ(sup_->wait(first.key, 5000)->state, JobState::kCancelled);
}

TEST_F(SupervisorTest, TheFullBinaryServesAsForkServerToo) {
  SupervisorOptions o = test_options(spool_, node_);
  o.stepd_command = o.pmix_stepd_command;  // `drover agent --stepd`, what an agent without drover-stepd beside it uses
  open_supervisor(o);
  auto r = batch("echo full\nsleep 300\n");
  ASSERT_TRUE(sup_->launch(r).ok());
  auto st = sup_->status(r.key);
  ASSERT_TRUE(st && st->stepd_pid > 0);
  const pid_t server = parent_of(st->stepd_pid);
  EXPECT_NE(server, getpid());
  EXPECT_EQ(slurp("/proc/" + std::to_string(server) + "/comm"), "drover-stepd-fs\n");
  EXPECT_TRUE(wait_for_file(work_ + "/slurm-" + std::to_string(r.job.job_id) + ".out", 5000));
  EXPECT_EQ(out_of(r), "full\n");
  ASSERT_TRUE(sup_->terminate(r.key, JobState::kCancelled, "done").ok());
  EXPECT_EQ(sup_->wait(r.key, 5000)->state, JobState::kCancelled);
}

TEST_F(SupervisorTest, TimeLimitCanBeRaised) {
  auto r = batch("sleep 1.5; echo done\n");
  r.time_limit_s = 1;
  ASSERT_TRUE(sup_->launch(r).ok());
  ASSERT_TRUE(sup_->set_time_limit(r.key, 10).ok());
  auto st = sup_->wait(r.key, 5000);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->state, JobState::kCompleted);
  EXPECT_EQ(st->time_limit_s, 10);
}

TEST(SupervisorOpen, ErrorsAndEnforcementReport) {
  TempDir t;
  auto no_node = Supervisor::open(SupervisorOptions{});
  ASSERT_FALSE(no_node.ok());
  EXPECT_NE(no_node.error().message.find("no node name"), std::string::npos);
  auto o = test_options(t.path() + "/spool", testing::unique_node());
  o.cgroups.enabled = false;
  auto s = Supervisor::open(o);
  ASSERT_TRUE(s.ok());
  auto limits = (*s)->cannot_enforce();
  ASSERT_FALSE(limits.empty());
  EXPECT_NE(limits[0].find("cgroups are disabled by configuration"), std::string::npos);
  EXPECT_NE((*s)->enforcement_summary().find("cannot enforce on this host:"), std::string::npos);
  auto bad = test_options(t.path() + "/spool2", testing::unique_node());
  bad.stepd_command = {t.path() + "/no-stepd"};
  auto b = Supervisor::open(bad);
  ASSERT_TRUE(b.ok());
  auto r = batch_request(bad.node_name, t.path(), "#!/bin/sh\ntrue\n");
  auto res = (*b)->launch(r);
  (*b)->release_cgroups();
  ASSERT_FALSE(res.ok());
  EXPECT_NE(res.error().message.find("could not start"), std::string::npos) << res.error().message;
}

}  // namespace
}  // namespace drover::agent
