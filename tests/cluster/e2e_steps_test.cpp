// End to end: job steps and launch (issue 6): srun inside and outside an
// allocation, salloc, the tasks' environment and streams, exit codes,
// Ctrl-C, the steps table, and the seed's J1 training template.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "harness.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  std::sort(out.begin(), out.end());
  return out;
}

std::map<std::string, std::string> env_of(const std::string& text) {
  std::map<std::string, std::string> env;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    auto eq = l.find('=');
    if (eq != std::string::npos) env[l.substr(0, eq)] = l.substr(eq + 1);
  }
  return env;
}

// The steps table as sacct reads it: "key|nodes|ntasks|state|exit_code" per step of a job.
std::vector<std::string> read_step_rows(const TestCluster& c, int64_t job) {
  sqlite3* db = nullptr;
  std::vector<std::string> rows;
  if (sqlite3_open_v2((c.dir() + "/state/state.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return {"cannot open the state store"};
  }
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(db, "SELECT key, nodes, ntasks, state, exit_code FROM steps WHERE job_id = ? ORDER BY step_id",
                     -1, &q, nullptr);
  sqlite3_bind_int64(q, 1, job);
  auto text = [&](int col) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(q, col))); };
  while (sqlite3_step(q) == SQLITE_ROW) {
    rows.push_back(text(0) + "|" + text(1) + "|" + std::to_string(sqlite3_column_int(q, 2)) + "|" + text(3) + "|" +
                   std::to_string(sqlite3_column_int(q, 4)));
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return rows;
}

// The rows of a finished job's steps once none is RUNNING: a step whose
// nodes' reports come after the script's end is settled by them a few
// milliseconds later (ControllerState::end_job_steps).
std::vector<std::string> step_rows(const TestCluster& c, int64_t job) {
  std::vector<std::string> rows;
  auto settled = [&] {
    rows = read_step_rows(c, job);
    return std::none_of(rows.begin(), rows.end(), [](const std::string& r) { return r.find("|RUNNING|") != std::string::npos; });
  };
  (void)eventually(settled, 10s);
  return rows;
}

void write_exec(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  chmod(path.c_str(), 0755);
}

TEST(Steps, SrunOutsideAnAllocationLabelsOutputAndReturnsTheWorstExit) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("srun", {"-N2", "-n2", "-l", "bash", "-c", "echo $SLURM_PROCID $SLURMD_NODENAME"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"0: 0 cpu1", "1: 1 cpu2"})) << r.out;
  r = c.run("srun", {"-n3", "bash", "-c", "echo out$SLURM_PROCID; echo err$SLURM_PROCID >&2; exit $SLURM_PROCID"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"out0", "out1", "out2"}));
  EXPECT_NE(r.err.find("err1\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("srun: error: cpu1: task 1: Exited with exit code 1\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("srun: error: cpu1: task 2: Exited with exit code 2\n"), std::string::npos) << r.err;
  // A task killed by a signal: 128 + the signal.
  r = c.run("srun", {"bash", "-c", "kill -TERM $$"});
  EXPECT_EQ(r.rc, 128 + SIGTERM) << r.err;
  EXPECT_NE(r.err.find("task 0: Terminated"), std::string::npos) << r.err;
  // A command that does not exist.
  r = c.run("srun", {"/no/such/program"});
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
  // The allocations srun made are over.
  auto q = c.run("squeue", {"-h"});
  EXPECT_EQ(q.out, "");
  // A command salloc cannot start: Slurm 22.05's line and status.
  auto missing = c.run("salloc", {"-p", "compute", "nosuchcommand"});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("salloc: error: _fork_command: Unable to find command \"nosuchcommand\"\n"),
            std::string::npos)
      << missing.err;
}

// What Slurm 22.05's slurmstepd said on the anchor cluster when a step's
// program or directory could not be used, and what became of the job.
TEST(Steps, AMissingProgramOrDirectoryIsSaidAsSlurmsStepDaemonSaysIt) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  // A program found nowhere: its name, the errno as the exit code.
  auto r = c.run("srun", {"-p", "compute", "drover-no-such-program"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(sorted_lines(r.err), (std::vector<std::string>{
                                     "slurmstepd-cpu1: error: execve(): drover-no-such-program: No such file or directory",
                                     "srun: error: cpu1: task 0: Exited with exit code 2"}))
      << r.err;
  // One found along PATH is started by its path ($0), as Slurm's.
  r = c.run("srun", {"-p", "compute", "bash", "-c", "echo $0"});
  EXPECT_TRUE(r.out == "/usr/bin/bash\n" || r.out == "/bin/bash\n") << r.out << r.err;
  // -D relative to srun's directory; a directory that cannot be entered: /tmp, said twice.
  std::filesystem::create_directories(c.work() + "/sub");
  r = c.run("srun", {"-p", "compute", "-D", "sub", "pwd"});
  EXPECT_EQ(r.out, c.work() + "/sub\n") << r.err;
  r = c.run("srun", {"-p", "compute", "-D", "/drover-no-such-dir", "pwd"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "/tmp\n");
  const std::string note =
      "slurmstepd-cpu1: error: couldn't chdir to `/drover-no-such-dir': No such file or directory: going to /tmp instead\n";
  EXPECT_EQ(r.err, note + note);
  // A batch job whose output file cannot be opened never starts: FAILED,
  // JobLaunchFailure, 0:53, its batch step CANCELLED.
  int64_t job = c.submit({"-p", "compute", "-o", "/drover-no-such-dir/x.out", "--wrap", "true"});
  ASSERT_GT(job, 0) << c.last_error();
  const std::string id = std::to_string(job);
  ASSERT_TRUE(c.wait_done(id));
  EXPECT_EQ(c.run("squeue", {"-h", "-t", "all", "-j", id, "-o", "%t|%r"}).out, "F|JobLaunchFailure\n");
  EXPECT_EQ(c.job_fields(id)["ExitCode"], "0:53");
  EXPECT_EQ(c.run("sacct", {"-j", id, "-P", "-n", "-o", "State,ExitCode,Reason"}).out,
            "FAILED|0:53|None\nCANCELLED|0:53|\n");
}

// srun --multi-prog: each rank runs its record of the file, on the nodes of
// the step (outside an allocation and inside a batch job); a bad file is
// refused before anything is allocated, with Slurm's words.
TEST(Steps, MultiProgRunsEachRanksOwnCommand) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string conf = c.work() + "/mpmd.conf";
  std::ofstream(conf) << "# rank: program\n"
                         "0     bash -c 'echo first $SLURM_PROCID $SLURMD_NODENAME'\n"
                         "1-2   echo other %t offset %o\n"
                         "*     echo rest %t\n";
  // srun's arguments after the file are added to every command (bash -c takes "extra" as its $0).
  auto r = c.run("srun", {"-N2", "-n4", "-l", "--multi-prog", conf, "extra"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"0: first 0 cpu1", "1: other 1 offset 0 extra",
                                                           "2: other 2 offset 1 extra", "3: rest 3 extra"}))
      << r.out;
  // Inside a batch job, as a step of it (srun takes the job's 2 tasks: a
  // range up to 2 would be refused there, as Slurm refuses it).
  std::string two = c.work() + "/two.conf";
  std::ofstream(two) << "0 bash -c 'echo first $SLURM_PROCID'\n* echo rest %t\n";
  std::string out = c.work() + "/mp-%j.out";
  int64_t id = c.submit({"-n2", "-o", out, "--wrap", "srun -l --multi-prog " + two + " | sort"});
  ASSERT_GT(id, 0);
  ASSERT_TRUE(c.wait_done(std::to_string(id)));
  EXPECT_EQ(read_file(c.work() + "/mp-" + std::to_string(id) + ".out"), "0: first 0\n1: rest 1\n");
  id = c.submit({"-n2", "-o", out, "--wrap", "srun --multi-prog " + conf});
  ASSERT_GT(id, 0);
  ASSERT_TRUE(c.wait_done(std::to_string(id)));
  EXPECT_EQ(read_file(c.work() + "/mp-" + std::to_string(id) + ".out"),
            "srun: error: Invalid task id, 2 >= ntasks\nsrun: error: Line 3 of configuration file " + conf + " invalid\n");

  std::string missing = c.work() + "/missing.conf";
  std::ofstream(missing) << "0 echo a\n2 echo b\n";
  r = c.run("srun", {"-n3", "--multi-prog", missing});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "srun: error: Configuration file " + missing + " invalid, no record for task id 1\n");
  // Without -n the file's highest task id sets the count (Slurm 22.05: "0 ..\n1 .." ran two tasks,
  // "0 ..\n2 .." asked for three and had no record for 1); with -n2 a task id of 2 is beyond them.
  std::string pair = c.work() + "/pair.conf";
  std::ofstream(pair) << "0 echo a %t\n1 echo b %t\n";
  r = c.run("srun", {"-N1", "-l", "--multi-prog", pair});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"0: a 0", "1: b 1"}));
  r = c.run("srun", {"--multi-prog", missing});
  EXPECT_EQ(r.err, "srun: error: Configuration file " + missing + " invalid, no record for task id 1\n");
  r = c.run("srun", {"-n2", "--multi-prog", missing});
  EXPECT_EQ(r.err, "srun: error: Invalid task id, 2 >= ntasks\nsrun: error: Line 2 of configuration file " + missing +
                       " invalid\n");
  r = c.run("srun", {"-n2", "--multi-prog", c.work() + "/nothing.conf"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "srun: error: Could not open multi_prog config file " + c.work() + "/nothing.conf\n");
  auto q = c.run("squeue", {"-h"});
  EXPECT_EQ(q.out, "");  // nothing was allocated for them
}

TEST(Steps, TaskEnvironmentAsSlurmSetsIt) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("srun", {"-p", "gpu", "--gres=gpu:h100:2", "-n2", "-J", "srun-env", "-o", "env-%t.txt", "env"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto e0 = env_of(read_file(c.work() + "/env-0.txt"));
  auto e1 = env_of(read_file(c.work() + "/env-1.txt"));
  EXPECT_EQ(e0["SLURM_PROCID"], "0");
  EXPECT_EQ(e1["SLURM_PROCID"], "1");
  EXPECT_EQ(e1["SLURM_LOCALID"], "1");
  EXPECT_EQ(e0["SLURM_NODEID"], "0");
  EXPECT_EQ(e0["SLURM_STEP_ID"], "0");
  EXPECT_EQ(e0["SLURM_STEPID"], "0");
  EXPECT_EQ(e0["SLURM_STEP_NODELIST"], "hgpu1");
  EXPECT_EQ(e0["SLURM_STEP_NUM_NODES"], "1");
  EXPECT_EQ(e0["SLURM_STEP_NUM_TASKS"], "2");
  EXPECT_EQ(e0["SLURM_STEP_TASKS_PER_NODE"], "2");
  EXPECT_EQ(e0["SLURM_NTASKS"], "2");
  EXPECT_EQ(e0["SLURM_NNODES"], "1");
  EXPECT_EQ(e0["SLURM_JOB_NODELIST"], "hgpu1");
  EXPECT_EQ(e0["SLURM_NODELIST"], "hgpu1");
  EXPECT_EQ(e0["SLURM_JOB_NAME"], "srun-env");
  EXPECT_EQ(e0["SLURM_STEP_GPUS"], "0,1");
  EXPECT_EQ(e0["CUDA_VISIBLE_DEVICES"], "0,1");
  EXPECT_EQ(e0["SLURMD_NODENAME"], "hgpu1");
  // Every SLURM_* name real Slurm sets for such a step (anchor golden env_srun_gpu1.txt).
  std::ifstream golden(std::string(DROVER_SOURCE_DIR) + "/tests/cluster/testdata/slurm-22.05/env_srun_gpu1.txt");
  ASSERT_TRUE(golden.good());
  std::set<std::string> missing;
  for (std::string l; std::getline(golden, l);) {
    auto eq = l.find('=');
    if (eq == std::string::npos || l.rfind("SLURM", 0) != 0) continue;
    std::string k = l.substr(0, eq);
    if (!e0.count(k)) missing.insert(k);
  }
  // Not set here: the account and QOS (this cluster configures none) and Slurm's federation cookie.
  missing.erase("SLURM_JOB_ACCOUNT");
  missing.erase("SLURM_JOB_QOS");
  missing.erase("SLURM_WORKING_CLUSTER");
  EXPECT_TRUE(missing.empty()) << *missing.begin();

  // srun -l sets SLURM_LABELIO; outside a job a step's SLURM_JOB_NAME is its
  // command's name (Slurm 22.05 on the anchor cluster: "printenv").
  r = c.run("srun", {"-l", "printenv", "SLURM_LABELIO", "SLURM_JOB_NAME"});
  EXPECT_EQ(r.out, "0: 1\n0: printenv\n") << r.err;
  // --test-only plans the job and runs nothing; -n under -N's minimum takes
  // one node per task, and says so (both as Slurm's srun).
  r = c.run("srun", {"--test-only", "-p", "compute", "-N", "2", "-n", "1", "touch", "ran.txt"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.rfind("srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\nsrun: Job ", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find(" using 1 processors on nodes cpu1 in partition compute\n"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(c.work() + "/ran.txt"));
  EXPECT_EQ(c.run("squeue", {"-h", "-t", "all", "-n", "touch"}).out, "") << "nothing was queued";
  // Inside an allocation as well.
  r = c.run("salloc", {"-p", "compute", "-N1", "srun", "--test-only", "touch", "ran.txt"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("srun: Job "), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(c.work() + "/ran.txt"));
  r = c.run("srun", {"--test-only", "-w", "nosuch", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.rfind("allocation failure: Invalid node name specified\n", 0), 0u) << r.err;
  // --pty with --test-only says nothing of the terminal (no job runs), as Slurm 22.05's srun.
  r = c.run("srun", {"--test-only", "--pty", "bash"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err.rfind("srun: Job ", 0), 0u) << r.err;
  // A CPU binding runs unbound, said in the words Slurm's srun uses where its TaskPlugin cannot bind.
  r = c.run("srun", {"--cpu-bind=map_cpu:1,0", "-n", "1", "printenv", "SLURM_JOB_NAME"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "printenv\n");
  EXPECT_EQ(r.err, "srun: cluster configuration lacks support for cpu binding\n");
  // sbatch --test-only words a refusal as srun's (Slurm 22.05 on the anchor), Slurm's detail line first.
  r = c.run("sbatch", {"--test-only", "-p", "nopart", "--wrap", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.rfind("sbatch: error: invalid partition specified: nopart\n"
                        "allocation failure: Invalid partition name specified\nsbatch: error: drover: ",
                        0),
            0u)
      << r.err;
}

// srun(1) and Slurm 22.05 on the anchor cluster: srun's stdin goes to every
// task (on every node), or with -i N to task N alone; -i with a number no
// task has reads a file of that name.
TEST(Steps, StdinGoesToEveryTaskOrOneAndOutputPatternsPerTask) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("srun", {"-n3", "-N2", "-l", "cat"}, {}, "hello\nworld\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"0: hello", "0: world", "1: hello", "1: world", "2: hello",
                                                            "2: world"}));
  r = c.run("srun", {"-n3", "-l", "-i", "1", "cat"}, {}, "hello\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "1: hello\n");
  r = c.run("srun", {"-n2", "-l", "--input=none", "cat"}, {}, "hello\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::ofstream(c.work() + "/5") << "from a file\n";
  r = c.run("srun", {"-n2", "-l", "-i", "5", "cat"}, {}, "hello\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"0: from a file", "1: from a file"}));
  r = c.run("srun", {"-n2", "-N2", "-o", "out-%j-%t-%n.txt", "-e", "err-%t.txt", "bash", "-c",
                     "echo o$SLURM_PROCID; echo e$SLURM_PROCID >&2"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  // The job's id: the last allocation.
  std::string job;
  for (int id = 1; id < 10; ++id) {
    if (!read_file(c.work() + "/out-" + std::to_string(id) + "-0-0.txt").empty()) job = std::to_string(id);
  }
  ASSERT_FALSE(job.empty());
  EXPECT_EQ(read_file(c.work() + "/out-" + job + "-1-1.txt"), "o1\n");
  EXPECT_EQ(read_file(c.work() + "/err-0.txt"), "e0\n");
  EXPECT_EQ(read_file(c.work() + "/err-1.txt"), "e1\n");
  // -u: unbuffered, a partial line arrives as written.
  r = c.run("srun", {"-u", "-l", "printf", "a\\nb"});
  EXPECT_EQ(r.out, "0: a\n0: b") << r.out;
}

// A command in a terminal of its own (forkpty), as a user at a keyboard runs
// it: what it prints, keystrokes, window resizes, the terminal's mode.
class Terminal {
 public:
  Terminal(const TestCluster& c, const std::vector<std::string>& args, int rows, int cols) {
    winsize ws{};
    ws.ws_row = static_cast<unsigned short>(rows);
    ws.ws_col = static_cast<unsigned short>(cols);
    pid_ = forkpty(&master_, nullptr, nullptr, &ws);
    if (pid_ == 0) {
      if (chdir(c.work().c_str()) != 0) _exit(126);
      setenv("DROVER_CONF", c.conf().c_str(), 1);
      setenv("PATH", (c.work() + "/bin:" + c.bin() + ":/usr/local/bin:/usr/bin:/bin").c_str(), 1);
      setenv("TERM", "xterm", 1);
      std::string srun = c.bin() + "/srun";
      std::vector<char*> argv{srun.data()};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(srun.c_str(), argv.data());
      _exit(127);
    }
  }
  ~Terminal() {
    if (pid_ > 0 && status_ < 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (master_ >= 0) close(master_);
  }
  // Reads until `text` has been printed; false after `timeout`.
  bool wait_for(const std::string& text, std::chrono::milliseconds timeout = 20s) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (out_.find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > until || !read_some(100)) return out_.find(text) != std::string::npos;
    }
    return true;
  }
  void type(const std::string& keys) { ASSERT_EQ(write(master_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size())); }
  void resize(int rows, int cols) {
    winsize ws{};
    ws.ws_row = static_cast<unsigned short>(rows);
    ws.ws_col = static_cast<unsigned short>(cols);
    ioctl(master_, TIOCSWINSZ, &ws);  // the kernel sends SIGWINCH to the terminal's foreground (srun)
  }
  // The exit status once the command ended (reading what is left), -1 after `timeout`.
  int wait_exit(std::chrono::milliseconds timeout = 20s) {
    auto until = std::chrono::steady_clock::now() + timeout;
    while (status_ < 0 && std::chrono::steady_clock::now() < until) {
      read_some(50);
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    while (read_some(50)) {
    }
    return status_;
  }
  termios mode() const {
    termios t{};
    tcgetattr(master_, &t);
    return t;
  }
  const std::string& output() const { return out_; }

 private:
  bool read_some(int ms) {
    pollfd p{master_, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return status_ < 0;  // nothing yet: go on while it runs
    char buf[4096];
    ssize_t n = read(master_, buf, sizeof buf);
    if (n <= 0) return false;  // EIO: the command and everything it started closed the terminal
    out_.append(buf, static_cast<std::size_t>(n));
    return true;
  }
  int master_ = -1;
  pid_t pid_ = -1;
  int status_ = -1;
  std::string out_;
};

// srun --pty (the interactive partition's `srun -p interactive --pty bash`):
// task 0 in a terminal of srun's size, raw keystrokes (Ctrl-C reaches the
// task's terminal, not srun), window resizes followed, srun's terminal
// restored at the end; without a terminal the option is disregarded with
// Slurm's two lines, and in a step of several tasks only task 0's terminal
// comes back.
TEST(Steps, SrunPtyRunsTaskZeroInATerminalThatFollowsSrunsOwn) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  {
    Terminal t(c, {"--pty", "bash", "-c",
                   "tty; stty size; echo \"[$SLURM_PTY_WIN_ROW x $SLURM_PTY_WIN_COL]\"; read -r line; "
                   "echo \"got <$line>\"; trap 'stty size; exit 7' WINCH; echo ready; while :; do sleep 0.1; done"},
               33, 101);
    ASSERT_TRUE(t.wait_for("[33 x 101]")) << t.output();
    EXPECT_NE(t.output().find("/dev/pts/"), std::string::npos) << t.output();
    EXPECT_NE(t.output().find("33 101\r\n"), std::string::npos) << t.output();
    const termios raw = t.mode();  // srun's terminal while the step runs
    EXPECT_EQ(raw.c_lflag & (ECHO | ICANON | ISIG), 0u);
    t.type("hello\r");
    ASSERT_TRUE(t.wait_for("got <hello>")) << t.output();
    ASSERT_TRUE(t.wait_for("ready")) << t.output();
    t.resize(50, 120);
    EXPECT_TRUE(t.wait_for("50 120")) << t.output();
    EXPECT_EQ(t.wait_exit(), 7) << t.output();
    EXPECT_NE(t.output().find("srun: error: cpu1: task 0: Exited with exit code 7"), std::string::npos) << t.output();
    const termios restored = t.mode();
    EXPECT_EQ(restored.c_lflag & (ECHO | ICANON | ISIG), static_cast<tcflag_t>(ECHO | ICANON | ISIG));
  }
  {
    Terminal t(c, {"--pty", "bash", "-c", "trap 'echo caught INT; exit 9' INT; echo ready; while :; do sleep 0.1; done"},
               24, 80);
    ASSERT_TRUE(t.wait_for("ready")) << t.output();
    t.type("\x03");
    EXPECT_TRUE(t.wait_for("caught INT")) << t.output();
    EXPECT_EQ(t.wait_exit(), 9) << t.output();
    EXPECT_EQ(t.output().find("srun: interrupt"), std::string::npos) << t.output();
  }
  {
    Terminal t(c, {"-n2", "--pty", "bash", "-c", "echo rank $SLURM_PROCID; tty; true"}, 24, 80);
    EXPECT_EQ(t.wait_exit(), 0) << t.output();
    EXPECT_NE(t.output().find("rank 0\r\n/dev/pts/"), std::string::npos) << t.output();
    EXPECT_EQ(t.output().find("rank 1"), std::string::npos) << t.output();
  }
  auto r = c.run("srun", {"-n2", "--pty", "bash", "-c", "tty || echo rank $SLURM_PROCID"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"not a tty", "not a tty", "rank 0", "rank 1"}));
  EXPECT_EQ(r.err, "srun: error: ioctl(TIOCGWINSZ): Inappropriate ioctl for device\n"
                   "srun: error: Not using a pseudo-terminal, disregarding --pty option\n");
}

// scontrol show step: the running steps of running jobs (the batch step
// first), one job's, one step; `-o`; Slurm's words when there are none or
// the id is unknown.
TEST(Steps, ScontrolShowStepListsTheRunningSteps) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  EXPECT_EQ(c.run("scontrol", {"show", "step"}).out, "No job steps in the system\n");
  std::string id = std::to_string(
      c.submit({"-n2", "-p", "compute", "-o", "/dev/null", "--wrap",
                "srun -n2 -J inner -t 7 sleep 60 & sleep 1; srun --overlap -n1 -J second sleep 60"}));
  ASSERT_TRUE(eventually([&] { return c.run("squeue", {"-h", "-s", "-j", id}).out.find(id + ".1") != std::string::npos; },
                         20s));
  auto all = c.run("scontrol", {"show", "step"});
  EXPECT_EQ(all.rc, 0) << all.err;
  auto batch_at = all.out.find("StepId=" + id + ".batch UserId=");
  auto step_at = all.out.find("StepId=" + id + ".0 UserId=");
  ASSERT_NE(batch_at, std::string::npos) << all.out;
  ASSERT_NE(step_at, std::string::npos) << all.out;
  EXPECT_LT(batch_at, step_at);
  // Slurm 22.05 counts no CPUs nor TRES in the batch step's record, and names
  // the distribution of one task on one node cyclic (anchor cluster).
  EXPECT_NE(all.out.find("Nodes=1 CPUs=0 Tasks=1 Name=batch Network=(null)\n   TRES=(null)\n"), std::string::npos)
      << all.out;
  EXPECT_NE(all.out.find("Name=second Network=(null)\n   TRES=cpu=2,"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("Dist=Cyclic\n"), std::string::npos) << all.out;
  auto one = c.run("scontrol", {"-o", "show", "step", id + ".0"});
  EXPECT_EQ(one.rc, 0) << one.err;
  EXPECT_EQ(lines_of(one.out).size(), 1u) << one.out;
  // TRES as Slurm's: the step's CPUs, the job's memory on its node (which its steps share), its node.
  std::smatch job_mem;
  const std::string job = c.run("scontrol", {"show", "job", id}).out;
  ASSERT_TRUE(std::regex_search(job, job_mem, std::regex(R"(TRES=cpu=2,(mem=[0-9]+[MGT]),node=1)"))) << job;
  const std::vector<std::string> wanted = {"TimeLimit=00:07:00 State=RUNNING Partition=compute", "Tasks=2 Name=inner",
                                          "CPUFreqReq=Default Dist=Block SrunHost:Pid=",
                                          "TRES=cpu=2," + job_mem[1].str() + ",node=1"};
  for (const std::string& want : wanted) {
    EXPECT_NE(one.out.find(want), std::string::npos) << want << "\n" << one.out;
  }
  EXPECT_EQ(one.out.find(".batch"), std::string::npos) << one.out;
  for (const std::string& bad : std::vector<std::string>{"99999.0", "x.0"}) {
    auto r = c.run("scontrol", {"show", "step", bad});
    EXPECT_EQ(r.rc, 1) << bad;
    EXPECT_EQ(r.err, "slurm_get_job_steps error: Invalid job id specified\n") << bad;
  }
  // A known job without that step: Slurm 22.05's line on stdout (anchor cluster).
  auto none = c.run("scontrol", {"show", "step", id + ".5"});
  EXPECT_EQ(none.rc, 1);
  EXPECT_EQ(none.out, "Job step " + id + ".5 not found\n");
  // Slurm's squeue -s -O step fields.
  auto fields = c.run("squeue", {"-s", "-h", "-j", id, "-O", "StepId:12,StepState:9,NumTasks:3,NumCPUs:3,JobID:6,ArrayTaskID:4,TimeLimit:10"});
  EXPECT_NE(fields.out.find(id + ".0" + std::string(12 - id.size() - 2, ' ') + "RUNNING  2  2  " + id), std::string::npos)
      << fields.out << fields.err;
  EXPECT_NE(fields.out.find("N/A 7:00"), std::string::npos) << fields.out;
  EXPECT_NE(fields.out.find("N/A UNLIMITED"), std::string::npos) << fields.out;  // the batch step
  ASSERT_EQ(c.run("scancel", {id}).rc, 0);
  EXPECT_TRUE(eventually([&] { return c.run("scontrol", {"show", "step"}).out == "No job steps in the system\n"; }, 10s));
}

// --ntasks-per-gpu (snakemake's GPU jobs use it) and salloc --no-shell, as
// Slurm 22.05 did them on the anchor cluster: the task count follows the
// GPUs (or the GPUs the tasks, without SLURM_GPUS), SLURM_NTASKS_PER_GPU is
// set; --no-shell leaves a running allocation named no-shell and returns.
TEST(Steps, NtasksPerGpuAndSallocNoShellAsSlurmDoesThem) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("sbatch", {"--wait", "-p", "gpu", "--gpus=2", "--ntasks-per-gpu=1", "-o", "out1.txt", "--wrap",
                            "echo $SLURM_NTASKS $SLURM_GPUS $SLURM_NTASKS_PER_GPU; srun hostname | wc -l"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/out1.txt"), "2 2 1\n2\n");
  r = c.run("sbatch", {"--wait", "-p", "gpu", "-n", "4", "--ntasks-per-gpu=2", "-o", "out2.txt", "--wrap",
                       "echo $SLURM_NTASKS $SLURM_GPUS; echo $CUDA_VISIBLE_DEVICES"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/out2.txt"), "4\n0,1\n");
  r = c.run("salloc", {"--no-shell", "-N1", "-p", "compute"});
  EXPECT_EQ(r.rc, 0) << r.err;
  ASSERT_EQ(r.err.rfind("salloc: Granted job allocation ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("Relinquishing"), std::string::npos) << r.err;
  std::string id = r.err.substr(31, r.err.find('\n') - 31);
  EXPECT_EQ(c.run("squeue", {"-h", "-j", id, "-o", "%j %T"}).out, "no-shell RUNNING\n");
  r = c.run("srun", {"--jobid=" + id, "hostname"});
  EXPECT_EQ(r.rc, 0) << r.err;
  ASSERT_EQ(c.run("scancel", {id}).rc, 0);
}

// Each task's GPUs and ranks as Slurm 22.05 gave them on the anchor cluster:
// --gpus-per-task binds each task to its own GPUs (SLURMD_TRES_BIND
// gpu:per_task:N), --gpu-bind chooses another binding or none, -m cyclic
// deals the ranks over the nodes in turn, and a step inside an allocation
// names its distribution.
TEST(Steps, GpuBindAndDistributionGiveEachTaskItsGpusAndRanks) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string show = "srun bash -c 'echo $SLURM_PROCID ${CUDA_VISIBLE_DEVICES-none} ${SLURM_STEP_GPUS-none} "
                           "${SLURMD_TRES_BIND-none} $SLURM_DISTRIBUTION' | sort";
  auto r = c.run("sbatch", {"--wait", "-p", "gpu", "-w", "hgpu1", "--gpus-per-task=1", "-n", "2", "-o", "pt.txt",
                            "--wrap", show});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/pt.txt"), "0 0 0 gpu:per_task:1 block\n1 1 1 gpu:per_task:1 block\n");
  // The step's AllocTRES names its GPUs' type too, as Slurm 22.05's sacct did.
  std::smatch id;
  ASSERT_TRUE(std::regex_search(r.out, id, std::regex("Submitted batch job ([0-9]+)"))) << r.out;
  auto tres = c.run("sacct", {"-j", id[1].str() + ".0", "-n", "-P", "-o", "JobID,AllocTRES"});
  EXPECT_TRUE(std::regex_match(tres.out, std::regex(id[1].str() +
                                                    R"(\.0\|cpu=2,gres/gpu:h100=2,gres/gpu=2,mem=[0-9.]+[MGT],node=1\n)")))
      << tres.out << tres.err;
  r = c.run("sbatch", {"--wait", "-p", "gpu", "-w", "hgpu1", "--gpus-per-task=1", "-n", "2", "-o", "none.txt",
                       "--wrap", "srun --gpu-bind=none " + show.substr(5)});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/none.txt"), "0 none none gpu:none block\n1 none none gpu:none block\n");
  // --gpu-bind given to sbatch is the job's SLURM_GPU_BIND, and its steps follow it.
  r = c.run("sbatch", {"--wait", "-p", "gpu", "-w", "hgpu1", "--gpus=4", "-n", "4", "--gpu-bind=single:2", "-o",
                       "single.txt", "--wrap", "echo $SLURM_GPU_BIND; " + show});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/single.txt"),
            "single:2\n0 0 0 gpu:single:2 block\n1 0 0 gpu:single:2 block\n2 1 1 gpu:single:2 block\n"
            "3 1 1 gpu:single:2 block\n");
  // Outside an allocation srun binds as well, and names no distribution unless -m is given.
  r = c.run("srun", {"-p", "gpu", "-w", "hgpu1", "--gpus=4", "-n", "2", "--gpu-bind=mask_gpu:0x3,0xC", "-l", "bash",
                     "-c", "echo ${CUDA_VISIBLE_DEVICES} ${SLURM_DISTRIBUTION-unset}"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"0: 0,1 unset", "1: 2,3 unset"}));
  r = c.run("srun", {"-p", "gpu", "--gpus=2", "-n", "2", "--gpu-bind=foo", "true"});
  EXPECT_EQ(r.rc, 255);
  EXPECT_EQ(r.err.rfind("srun: error: Invalid --gpu-bind argument: gpu:foo\n", 0), 0u) << r.err;
  // -m cyclic: ranks dealt over the nodes in turn (SLURM_GTIDS), the default inside a job is block.
  r = c.run("sbatch", {"--wait", "-p", "compute", "-w", "cpu[1-2]", "-N", "2", "-n", "4", "-o", "cyc.txt", "--wrap",
                       "srun -m cyclic bash -c 'echo $SLURM_PROCID $SLURMD_NODENAME $SLURM_GTIDS $SLURM_DISTRIBUTION' "
                       "| sort; srun bash -c 'echo $SLURM_PROCID $SLURMD_NODENAME $SLURM_GTIDS "
                       "$SLURM_DISTRIBUTION $SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0' | sort"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/cyc.txt"),
            "0 cpu1 0,2,3 cyclic\n1 cpu2 1 cyclic\n2 cpu1 0,2,3 cyclic\n3 cpu1 0,2,3 cyclic\n"
            "0 cpu1 0,1,2 block 3,1\n1 cpu1 0,1,2 block 3,1\n2 cpu1 0,1,2 block 3,1\n3 cpu2 3 block 3,1\n")
      << "the job holds 3 and 1 CPUs, as Slurm 22.05 laid out -N2 -n4; cyclic deals within them";
}

// What sbatch puts in the job's environment for its options, as Slurm 22.05's
// did on the anchor: --hint and the threads it implies, a task count from the
// CPUs when -n is not given, no memory for --mem=0, the array's step.
TEST(Steps, BatchEnvironmentFollowsTheOptionsAsSlurmsDid) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("sbatch", {"--wait", "-p", "compute", "--hint=nomultithread", "-n", "2", "-o", "hint.txt", "--wrap",
                            "echo $SLURM_HINT $SLURM_THREADS_PER_CORE; srun printenv SLURM_THREADS_PER_CORE"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/hint.txt"), "nomultithread 1\n1\n1\n");
  // SLURM_WORKING_CLUSTER in the script and the tasks: cluster:controller:port:9728:109 (select/cons_tres).
  r = c.run("sbatch", {"--wait", "-p", "compute", "-o", "wc.txt", "--wrap",
                       "echo $SLURM_WORKING_CLUSTER; srun printenv SLURM_WORKING_CLUSTER"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string wc = read_file(c.work() + "/wc.txt");
  EXPECT_TRUE(std::regex_match(wc, std::regex(R"(([^:\n]+:[^:\n]+:[0-9]+:9728:109)\n\1\n)"))) << wc;
  r = c.run("sbatch", {"--wait", "-p", "compute", "--mincpus=4", "--mem=0", "-o", "tpn.txt", "--wrap",
                       "echo $SLURM_TASKS_PER_NODE ${SLURM_NTASKS-unset} ${SLURM_MEM_PER_NODE-unset}; srun hostname | wc -l"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/tpn.txt"), "4 unset unset\n1\n") << "srun still runs one task per node";
  // A list's step is 1, however evenly spaced.
  for (const auto& [array, element, step] : {std::tuple{"0-4:2", "2", "2\n"}, std::tuple{"1,3", "3", "1\n"}}) {
    r = c.run("sbatch", {"--wait", "-p", "compute", "-a", array, "-o", "step-%a.txt", "--wrap",
                         "echo $SLURM_ARRAY_TASK_STEP"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(read_file(c.work() + "/step-" + element + ".txt"), step) << array;
  }
  // A node range with -n starts on as many nodes as hold a task now, --spread-job over as many as it has tasks.
  r = c.run("sbatch", {"--wait", "-p", "compute", "-N", "1-2", "-n", "2", "-o", "range.txt", "--wrap",
                       "echo $SLURM_JOB_NUM_NODES $SLURM_TASKS_PER_NODE"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/range.txt"), "2 1(x2)\n");
  r = c.run("sbatch", {"--wait", "-p", "compute", "-n", "3", "--spread-job", "-o", "spread.txt", "--wrap",
                       "echo $SLURM_JOB_NUM_NODES $SLURM_TASKS_PER_NODE"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "") << "--spread-job is acted on, not warned about";
  EXPECT_EQ(read_file(c.work() + "/spread.txt"), "3 1(x3)\n");
  // sbatch -m is the job's SLURM_DISTRIBUTION, which its steps then follow.
  r = c.run("sbatch", {"--wait", "-p", "compute", "-w", "cpu[1-2]", "-N", "2", "-n", "4", "-m", "cyclic", "-o",
                       "dist.txt", "--wrap", "echo $SLURM_DISTRIBUTION; srun printenv SLURM_GTIDS | sort -u"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/dist.txt"), "cyclic\n0,2,3\n1\n");
  // -m plane=2: the job sees "plane" and the size apart, and its steps deal blocks of 2 within its 3,1 CPUs.
  r = c.run("sbatch", {"--wait", "-p", "compute", "-w", "cpu[1-2]", "-N", "2", "-n", "4", "-m", "plane=2", "-o",
                       "plane.txt", "--wrap",
                       "echo $SLURM_DISTRIBUTION $SLURM_DIST_PLANESIZE $SLURM_TASKS_PER_NODE; srun printenv SLURM_GTIDS "
                       "| sort -u"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(read_file(c.work() + "/plane.txt"), "plane 2 3,1\n0,1,3\n2\n");
}

// srun inside a job of -N2 --ntasks-per-node=2, as Slurm 22.05's on the
// anchor cluster: the job's node and task counts stay unless -N or -n
// replace them, so -N1 asks the job's 4 tasks of one node; a
// --ntasks-per-node that does not fit is dropped with Slurm's warning; -n1
// takes one node, said; -w names nodes the step must include.
TEST(Steps, SrunInsideAJobKeepsTheJobsShapeAsSlurmsDid) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string show = " bash -c 'echo $SLURMD_NODENAME $SLURM_PROCID $SLURM_STEP_TASKS_PER_NODE' 2>&1 | sort; ";
  int64_t job = c.submit({"-p", "compute", "-w", "cpu[1-2]", "-N2", "--ntasks-per-node=2", "-o", "shape.out", "--wrap",
                          "echo == -N1; srun -N1" + show + "echo == -n3; srun -n3" + show + "echo == -n1; srun -n1" +
                              show + "echo == -w cpu2 -n2; srun -w cpu2 -n2" + show + "echo == -w cpu1; srun -w cpu1" +
                              show});
  ASSERT_GT(job, 0) << c.last_error();
  const std::string id = std::to_string(job);
  ASSERT_TRUE(c.wait_done(id, 60s));
  EXPECT_EQ(read_file(c.work() + "/shape.out"),
            "== -N1\n"
            "srun: Warning: can't honor --ntasks-per-node set to 2 which doesn't match the requested tasks 4 with the "
            "number of requested nodes 1. Ignoring --ntasks-per-node.\n"
            "srun: error: 4 tasks x 1 CPUs, and job " + id + " has 2 CPUs on the node the step would run on\n"
            "srun: error: Unable to create step for job " + id + ": More processors requested than permitted\n"
            "== -n3\n"
            "cpu1 0 2,1\ncpu1 1 2,1\ncpu2 2 2,1\n"
            "srun: Warning: can't honor --ntasks-per-node set to 2 which doesn't match the requested tasks 3 with the "
            "number of requested nodes 2. Ignoring --ntasks-per-node.\n"
            "== -n1\n"
            "cpu1 0 1\n"
            "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"
            "== -w cpu2 -n2\n"
            "cpu1 0 1(x2)\ncpu2 1 1(x2)\n"
            "== -w cpu1\n"
            "cpu1 0 2(x2)\ncpu1 1 2(x2)\ncpu2 2 2(x2)\ncpu2 3 2(x2)\n");
}

TEST(Steps, StepsInsideABatchJobAndTheStepsTable) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string script = "#!/bin/bash\n"
                       "#SBATCH -N2 --ntasks-per-node=2 -o steps.out\n"
                       "srun -l bash -c 'echo $SLURM_NODEID $SLURM_LOCALID $SLURM_NTASKS $SLURM_STEP_TASKS_PER_NODE' | sort\n"
                       "srun -n1 -w cpu2 printenv SLURMD_NODENAME SLURM_STEP_ID\n"
                       "srun --ntasks-per-node=1 --kill-on-bad-exit --cpu_bind=none --nodes=2 --nodelist=cpu[1-2] "
                       "--ntasks=2 -l printenv SLURMD_NODENAME | sort\n"
                       "srun -n1 false\n"
                       "echo rc=$?\n";
  std::ofstream(c.work() + "/steps.sh") << script;
  int64_t job = c.submit({"-p", "compute", "-w", "cpu[1-2]", "steps.sh"});
  ASSERT_GT(job, 0) << c.last_error();
  ASSERT_TRUE(c.wait_done(std::to_string(job), 30s));
  EXPECT_EQ(c.state(std::to_string(job)), "COMPLETED");
  std::string out = read_file(c.work() + "/steps.out");
  // srun -n1 in a two-node job says it uses one node, as Slurm 22.05's did
  // on the anchor cluster (SLURM_NNODES=2 is srun's -N there).
  EXPECT_EQ(out,
            "0: 0 0 4 2(x2)\n1: 0 1 4 2(x2)\n2: 1 0 4 2(x2)\n3: 1 1 4 2(x2)\n"
            "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"
            "cpu2\n1\n"
            "srun: cluster configuration lacks support for cpu binding\n"  // --cpu_bind=none too (anchor, 2026-12-08)
            "0: cpu1\n1: cpu2\n"
            "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n"
            "srun: error: cpu1: task 0: Exited with exit code 1\n"
            "rc=1\n")
      << out;
  auto rows = step_rows(c, job);
  EXPECT_EQ(rows, (std::vector<std::string>{std::to_string(job) + ".batch|cpu1|1|COMPLETED|0",
                                            std::to_string(job) + ".0|cpu[1-2]|4|COMPLETED|0",
                                            std::to_string(job) + ".1|cpu2|1|COMPLETED|0",
                                            std::to_string(job) + ".2|cpu[1-2]|2|COMPLETED|0",
                                            std::to_string(job) + ".3|cpu1|1|FAILED|1"}));
  // sacct lists the same steps beside the job and its batch step.
  auto acct = c.run("sacct", {"-j", std::to_string(job), "-P", "-n", "-o", "JobID,State,ExitCode,NNodes,NTasks"});
  EXPECT_EQ(acct.rc, 0) << acct.err;
  const std::string id = std::to_string(job);
  EXPECT_EQ(acct.out, id + "|COMPLETED|0:0|2|\n" + id + ".batch|COMPLETED|0:0|1|1\n" + id + ".0|COMPLETED|0:0|2|4\n" +
                          id + ".1|COMPLETED|0:0|1|1\n" + id + ".2|COMPLETED|0:0|2|2\n" + id + ".3|FAILED|1:0|1|1\n")
      << acct.out;
  // The job's DerivedExitCode is its worst step's, as Slurm 22.05's (anchor
  // cluster: a script that ran `srun false` and exited 0, COMPLETED 0:0, 1:0).
  auto derived = c.run("sacct", {"-j", id, "-X", "-P", "-n", "-o", "State,ExitCode,DerivedExitCode"});
  EXPECT_EQ(derived.out, "COMPLETED|0:0|1:0\n");
  EXPECT_NE(c.run("scontrol", {"-d", "show", "job", id}).out.find(" DerivedExitCode=1:0\n"), std::string::npos);
  // A step a signal killed is CANCELLED with it (and the job's derived code
  // is the signal); a script a signal killed FAILED 0:9 (sacct's reason is
  // None, as for every ended job, where Slurm 22.05 said JobLaunchFailure).
  int64_t killed = c.submit({"-p", "compute", "-o", "/dev/null", "--wrap", "srun bash -c 'kill -9 $$'; exit 0"});
  int64_t self = c.submit({"-p", "compute", "-o", "/dev/null", "--wrap", "kill -9 $$"});
  ASSERT_TRUE(c.wait_done(std::to_string(killed)));
  ASSERT_TRUE(c.wait_done(std::to_string(self)));
  auto k = c.run("sacct", {"-j", std::to_string(killed), "-P", "-n", "-o", "JobName,State,ExitCode,DerivedExitCode"});
  EXPECT_EQ(k.out, "wrap|COMPLETED|0:0|0:9\nbatch|COMPLETED|0:0|\nbash|CANCELLED|0:9|\n");
  auto s = c.run("sacct", {"-j", std::to_string(self), "-X", "-P", "-n", "-o", "State,ExitCode,Reason"});
  EXPECT_EQ(s.out, "FAILED|0:9|None\n");
  // A step that asks for more than the allocation: Slurm's refusal.
  auto r = c.run("srun", {"--jobid=" + std::to_string(job), "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("srun: error: Unable to create step for job " + std::to_string(job) +
                       ": Job/step already completing or completed"),
            std::string::npos)
      << r.err;
}

TEST(Steps, KillOnBadExitEndsTheOtherTasks) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto t0 = std::chrono::steady_clock::now();
  auto r = c.run("srun", {"-N2", "-n2", "-K", "bash", "-c", "if [ $SLURM_PROCID = 1 ]; then sleep 0.5; exit 5; fi; sleep 60"});
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_NE(r.rc, 0);
  EXPECT_LT(took, 20s);
  EXPECT_NE(r.err.find("task 1: Exited with exit code 5"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("task 0: Terminated"), std::string::npos) << "SIGTERM first, as Slurm's srun -K: " << r.err;
  // As Slurm 22.05's srun said it on the anchor cluster: the task that ended
  // the step first, then that srun ends the others, and the signal's end.
  EXPECT_EQ(r.rc, 143);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(srun: error: cpu2: task 1: Exited with exit code 5\n)"
                                                     R"(srun: launch/slurm: _step_signal: Terminating StepId=(\d+)\.0\n)")))
      << r.err;
  const std::string job = m[1];
  EXPECT_NE(r.err.find("srun: error: cpu1: task 0: Terminated\nsrun: Force Terminated StepId=" + job + ".0\n"),
            std::string::npos)
      << r.err;
  // On one node, the step daemon ends the neighbours and says so on the
  // step's stderr; the node's status is the first signalled task's.
  r = c.run("srun", {"-n3", "-w", "cpu1", "-K", "bash", "-c",
                     "if [ $SLURM_PROCID = 2 ]; then sleep 0.5; exit 6; fi; sleep 60"});
  EXPECT_EQ(r.rc, 143);
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(\*\*\* STEP (\d+)\.0 ON cpu1 CANCELLED AT )"))) << r.err;
  const std::string job2 = m[1];
  EXPECT_NE(r.err.find("srun: error: cpu1: task 2: Exited with exit code 6\n"
                       "srun: launch/slurm: _step_signal: Terminating StepId=" + job2 + ".0\n"
                       "srun: error: cpu1: tasks 0-1: Terminated\n"
                       "srun: Force Terminated StepId=" + job2 + ".0\n"),
            std::string::npos)
      << r.err;
  // Without -K: a task's own signal outweighs the others' exit codes on its
  // node; across nodes an exit code outweighs a signal (Slurm's wait status).
  r = c.run("srun", {"-n3", "-w", "cpu1", "bash", "-c",
                     "case $SLURM_PROCID in 0) exit 1;; 1) exit 5;; 2) kill -9 $$;; esac"});
  EXPECT_EQ(r.rc, 137);
  EXPECT_NE(r.err.find("srun: error: cpu1: task 2: Killed\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("srun: Force Terminated StepId="), std::string::npos) << r.err;
  r = c.run("srun", {"-n2", "-N2", "bash", "-c", "case $SLURM_PROCID in 0) kill -9 $$;; 1) exit 3;; esac"});
  EXPECT_EQ(r.rc, 137);
  r = c.run("sacct", {"-n", "-P", "-o", "JobID,State,ExitCode"});
  std::vector<std::string> steps;
  for (const auto& line : sorted_lines(r.out)) {
    if (line.find(".0|") != std::string::npos) steps.push_back(line.substr(line.find('|') + 1));
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"FAILED|5:0", "CANCELLED|0:15", "CANCELLED|0:9", "FAILED|3:0"})) << r.out;
  // Only SIGTERM and SIGKILL are "Force Terminated" (the anchor's srun said
  // nothing more for SIGINT, SIGSEGV, SIGABRT, SIGHUP or SIGUSR1).
  r = c.run("srun", {"-w", "cpu1", "bash", "-c", "kill -SEGV $$"});
  EXPECT_EQ(r.rc, 139);
  EXPECT_EQ(r.err, "srun: error: cpu1: task 0: Segmentation fault\n");
}

// slurm.conf KillOnBadExit=1: srun behaves as with -K unless -K0 says
// otherwise (slurm.conf(5)).
TEST(Steps, KillOnBadExitInSlurmConfIsSrunsDefault) {
  ClusterDef def = small_cluster();
  def.extra = {"KillOnBadExit=1"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::vector<std::string> cmd = {"bash", "-c", "if [ $SLURM_PROCID = 1 ]; then exit 5; fi; sleep 3; echo survived"};
  std::vector<std::string> args = {"-n2", "-w", "cpu1"};
  args.insert(args.end(), cmd.begin(), cmd.end());
  auto r = c.run("srun", args);
  EXPECT_EQ(r.rc, 143) << r.err;
  EXPECT_NE(r.err.find("task 1: Exited with exit code 5\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("_step_signal: Terminating StepId="), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("survived"), std::string::npos) << r.out;
  args.insert(args.begin(), "-K0");
  r = c.run("srun", args);
  EXPECT_EQ(r.rc, 5) << r.err;
  EXPECT_EQ(r.out, "survived\n");
}

// MaxStepCount and MaxTasksPerNode, as Slurm 22.05 refused such steps on the
// anchor cluster (MaxStepCount=3: a script's fourth and fifth srun failed;
// MaxTasksPerNode=4: an 8-task step on one node refused, 8 over two nodes
// run, whatever their layout; the job itself, -n 8 on one node, is accepted).
TEST(Steps, MaxStepCountAndMaxTasksPerNodeRefuseSteps) {
  ClusterDef def = small_cluster();
  def.extra = {"MaxStepCount=3", "MaxTasksPerNode=4"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::string steps = std::to_string(
      c.submit({"-o", "steps.out", "--wrap", "for i in 1 2 3 4; do srun -n1 true; echo \"srun $i rc=$?\"; done"}));
  ASSERT_TRUE(c.wait_done(steps));
  const std::string limit = "srun: error: Unable to create step for job " + steps + ": Step limit reached for this job\n";
  EXPECT_EQ(read_file(c.work() + "/steps.out"),
            "srun 1 rc=0\nsrun 2 rc=0\nsrun 3 rc=0\n" + limit + "srun: error: job " + steps +
                " has created 3 steps, slurm.conf's MaxStepCount=3\nsrun 4 rc=1\n");

  const std::string wide = std::to_string(c.submit({"-N1", "-n8", "-o", "wide.out", "--wrap", "srun true; echo $?"}));
  ASSERT_GT(std::stoll(wide), 0) << "the job is accepted: only its steps are held to the limit";
  ASSERT_TRUE(c.wait_done(wide));
  EXPECT_EQ(read_file(c.work() + "/wide.out"),
            "srun: error: Unable to create step for job " + wide + ": Task count specification invalid\n"
            "srun: error: 8 tasks over 1 node: 8 per node, above slurm.conf's MaxTasksPerNode=4\n1\n");
  auto spread = c.run("srun", {"-N2", "-n8", "-p", "compute", "-w", "cpu[1-2]", "hostname"});
  EXPECT_EQ(spread.rc, 0) << spread.err;
  EXPECT_EQ(lines_of(spread.out).size(), 8u);
  auto one = c.run("srun", {"-N1", "-n8", "true"});
  EXPECT_EQ(one.rc, 1);
  EXPECT_NE(one.err.find(": Task count specification invalid\n"), std::string::npos) << one.err;
}

// slurm.conf's WaitTime is srun's -W when it gives none (srun(1)); -W 0 turns it off.
TEST(Steps, WaitTimeInSlurmConfIsSrunsDefaultWait) {
  ClusterDef def = small_cluster();
  def.extra = {"WaitTime=1"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::vector<std::string> cmd = {"bash", "-c", "if [ $SLURM_NODEID = 1 ]; then exit 0; fi; sleep 3; echo ran"};
  std::vector<std::string> args = {"-N2"};
  args.insert(args.end(), cmd.begin(), cmd.end());
  auto r = c.run("srun", args);
  EXPECT_EQ(r.rc, 137) << r.err;
  EXPECT_EQ(r.err.rfind("srun: First task exited 1s ago\n", 0), 0u) << r.err;
  EXPECT_EQ(r.out, "");
  args.insert(args.begin(), {"-W", "0"});
  r = c.run("srun", args);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
}

// InactiveLimit: an allocation whose salloc or srun was killed (kill -9)
// ends TIMEOUT with Reason=InactiveLimit, as Slurm 22.05's did on the
// anchor cluster; an srun that is still there keeps its allocation past the
// limit, and salloc --no-shell's allocation stays.
TEST(Steps, InactiveLimitEndsAllocationsWhoseSallocOrSrunIsGone) {
  ClusterDef def = small_cluster();
  def.extra = {"InactiveLimit=2"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  auto r = c.run("/bin/bash", {"-c",
                               "salloc -Q -J kept --no-shell; "
                               "srun -J gone-srun bash -c 'touch step.ran; exec sleep 60' >/dev/null 2>&1 & s=$!; "
                               "salloc -J gone-salloc bash -c 'echo $$ > cmd.pid; exec sleep 60' >/dev/null 2>&1 & a=$!; "
                               "for i in $(seq 200); do "
                               "  [ \"$(squeue -h -t R -o %j | sort | tr '\\n' ' ')\" = 'gone-salloc gone-srun kept ' ] && "
                               "  [ -s cmd.pid ] && [ -e step.ran ] && break; sleep 0.1; done; "
                               "kill -9 $s $a; "
                               "srun -J live bash -c 'sleep 4; echo lived'; echo live-rc=$?; "
                               "kill $(cat cmd.pid)"});
  EXPECT_EQ(r.out, "lived\nlive-rc=0\n") << r.err;
  std::map<std::string, std::string> id_of;
  for (const auto& line : lines_of(sacct_p(c, {"-X", "-o", "JobName,JobID"}))) {
    id_of[line.substr(0, line.find('|'))] = line.substr(line.find('|') + 1);
  }
  for (const char* gone : {"gone-srun", "gone-salloc"}) {
    SCOPED_TRACE(gone);
    ASSERT_TRUE(c.wait_done(id_of[gone]));
    auto f = c.job_fields(id_of[gone]);
    EXPECT_EQ(f["JobState"], "TIMEOUT");
    EXPECT_EQ(f["Reason"], "InactiveLimit");
    EXPECT_EQ(f["ExitCode"], "0:0");
  }
  // The killed srun's step: its task ended by SIGTERM (Slurm's sacct, 9795.0).
  const std::string step = id_of["gone-srun"] + ".0";
  std::string steps;
  EXPECT_TRUE(eventually([&] {
    steps = sacct_p(c, {"-j", id_of["gone-srun"], "-o", "JobID,State,ExitCode"});
    return steps.find(step + "|CANCELLED|0:15\n") != std::string::npos;
  }, std::chrono::seconds(20))) << steps;
  EXPECT_EQ(c.state(id_of["kept"]), "RUNNING");
  EXPECT_EQ(c.state(id_of["live"]), "COMPLETED");
  c.run("scancel", {id_of["kept"]});
}

TEST(Steps, CtrlCOnceShowsStatusTwiceCancels) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("/bin/bash", {"-c",
                          "srun -n2 sleep 60 & p=$!; sleep 1.5; kill -INT $p; sleep 0.3; kill -INT $p; wait $p; "
                          "echo rc=$?"});
  EXPECT_NE(r.out.find("rc="), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("rc=0"), std::string::npos) << r.out;
  // As Slurm 22.05's srun said it on the anchor cluster, exiting 130, with
  // no line for each task nor the step daemon's CANCELLED AT one.
  EXPECT_NE(r.out.find("rc=130"), std::string::npos) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(StepId=(\d+)\.0)"))) << r.err;
  const std::string step = std::string(m[1]) + ".0";
  EXPECT_EQ(r.err, "srun: interrupt (one more within 1 sec to abort)\n"
                   "srun: StepId=" + step + " tasks 0-1: running\n"
                   "srun: sending Ctrl-C to StepId=" + step + "\n"
                   "srun: forcing job termination\n"
                   "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n");
}

// --quit-on-interrupt: the first Ctrl-C ends the step, without the status lines.
TEST(Steps, QuitOnInterruptEndsTheStepAtTheFirstCtrlC) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("/bin/bash", {"-c",
                          "srun -n2 --quit-on-interrupt sleep 60 & p=$!; sleep 1.5; kill -INT $p; wait $p; "
                          "echo rc=$?"});
  EXPECT_NE(r.out.find("rc="), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("rc=0"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("srun: interrupt (one more within 1 sec to abort)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("srun: forcing job termination"), std::string::npos) << r.err;
  EXPECT_TRUE(eventually([&] { return c.run("squeue", {"-h"}).out.empty(); }, std::chrono::seconds(10)));
}

// srun -X passes each Ctrl-C to the tasks; -W N ends the step N seconds
// after its first task ended; --open-mode=append keeps what -o's file held;
// --ntasks-per-node that -N and -n contradict is dropped, and a step of two
// nodes at --ntasks-per-node=2 runs a task on each: all as Slurm 22.05's srun
// did on the anchor cluster.
TEST(Steps, SrunWaitDisableStatusOpenModeAndTasksPerNodeAsSlurms) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("/bin/bash", {"-c", "srun -X -n1 sleep 60 & p=$!; sleep 1.5; kill -INT $p; wait $p; echo rc=$?"});
  EXPECT_EQ(r.out, "rc=130\n") << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(srun: sending Ctrl-C to StepId=(\d+)\.0\n)"))) << r.err;
  EXPECT_EQ(r.err, "srun: sending Ctrl-C to StepId=" + std::string(m[1]) + ".0\nsrun: error: cpu1: task 0: Interrupt\n");
  auto t0 = std::chrono::steady_clock::now();
  r = c.run("srun", {"-N2", "-W", "1", "bash", "-c", "if [ $SLURM_NODEID = 1 ]; then exit 0; fi; sleep 60"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 30s);
  EXPECT_EQ(r.rc, 137);
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(StepId=(\d+)\.0)"))) << r.err;
  const std::string step = std::string(m[1]) + ".0";
  EXPECT_EQ(r.err, "srun: First task exited 1s ago\n"
                   "srun: StepId=" + step + " task 0: running\n"
                   "srun: StepId=" + step + " task 1: exited\n"
                   "srun: launch/slurm: _step_signal: Terminating StepId=" + step + "\n"
                   "slurmstepd-cpu1: error: *** STEP " + step + " ON cpu1 CANCELLED AT " +
                   r.err.substr(r.err.find(" CANCELLED AT ") + 14, 19) + " ***\n"
                   "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.\n"
                   "srun: error: cpu1: task 0: Killed\n");
  const std::string file = c.work() + "/append.txt";
  ASSERT_EQ(c.run("srun", {"--open-mode=append", "-o", file, "echo", "a"}).rc, 0);
  ASSERT_EQ(c.run("srun", {"--open-mode=append", "-o", file, "echo", "b"}).rc, 0);
  EXPECT_EQ(read_file(file), "a\nb\n");
  ASSERT_EQ(c.run("srun", {"-o", file, "echo", "c"}).rc, 0);
  EXPECT_EQ(read_file(file), "c\n");
  r = c.run("srun", {"-N1", "-n2", "--ntasks-per-node=1", "-p", "compute", "bash", "-c",
                     "echo $SLURM_NNODES $SLURM_TASKS_PER_NODE ${SLURM_NTASKS_PER_NODE:-unset}"});
  EXPECT_EQ(r.out, "1 2 unset\n1 2 unset\n") << r.err;
  EXPECT_EQ(r.err,
            "srun: Warning: can't honor --ntasks-per-node set to 1 which doesn't match the requested tasks 2 with the "
            "number of requested nodes 1. Ignoring --ntasks-per-node.\n");
  r = c.run("srun", {"-N2", "-n2", "--ntasks-per-node=2", "-l", "bash", "-c", "echo $SLURMD_NODENAME"});
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"0: cpu1", "1: cpu2"})) << r.err;
  // A step of more nodes than its job has: Slurm's one line.
  const std::string one = std::to_string(c.submit({"-p", "compute", "-N1", "--wrap", "sleep 30"}));
  ASSERT_TRUE(eventually([&] { return c.state(one) == "RUNNING"; }, 10s));
  r = c.run("srun", {"--jobid=" + one, "-N2", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "srun: error: Only allocated 1 nodes asked for 2\n");
  ASSERT_EQ(c.run("scancel", {one}).rc, 0);
  // sbatch has no such leniency: Slurm's refusal.
  r = c.run("sbatch", {"-N1", "-n2", "--ntasks-per-node=1", "--wrap", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "sbatch: error: Batch job submission failed: Requested node configuration is not available");
}

TEST(Steps, SallocRunsTheCommandInTheAllocationAndReleasesIt) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("salloc", {"-N2", "-p", "compute", "-w", "cpu[1-2]", "bash", "-c",
                            "echo $SLURM_JOB_NODELIST $SLURM_NNODES; srun -l hostname | wc -l; exit 4"});
  EXPECT_EQ(r.rc, 4) << r.err;
  EXPECT_EQ(r.out, "cpu[1-2] 2\n2\n");
  const std::string job = c.run("sacct", {"-n", "-X", "-P", "-o", "JobID"}).out;  // "N\n"
  const std::string id = job.substr(0, job.find('\n'));
  // Slurm 22.05's lines, as it printed them on the anchor cluster.
  EXPECT_EQ(r.err, "salloc: Granted job allocation " + id + "\nsalloc: Relinquishing job allocation " + id +
                       "\nsalloc: Job allocation " + id + " has been revoked.\n");
  auto q = c.run("squeue", {"-h"});
  EXPECT_EQ(q.out, "");
  // The command's environment and the job's name, as Slurm 22.05's salloc gave them on the anchor:
  // "interactive", the memory and GPUs asked for, the tasks from --ntasks-per-node, each task its GPU.
  r = c.run("salloc", {"-p", "gpu", "-w", "hgpu1", "--ntasks-per-node=2", "--gpus-per-task=1", "--mem=1G",
                       "--hint=nomultithread", "bash", "-c",
                       "echo $SLURM_JOB_NAME $SLURM_NTASKS $SLURM_MEM_PER_NODE $SLURM_GPUS_PER_TASK $SLURM_HINT "
                       "$SLURM_NODE_ALIASES; squeue -h -j $SLURM_JOB_ID -o %j; "
                       "srun bash -c 'echo $SLURM_PROCID $CUDA_VISIBLE_DEVICES' | sort"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "interactive 2 1024 1 nomultithread (null)\ninteractive\n0 0\n1 1\n");
  // An allocation has no streams of its own in scontrol show job; the one
  // srun made shows srun's command, salloc's none (Slurm 22.05, anchor cluster).
  const std::string show = "scontrol show job $SLURM_JOB_ID; squeue -h -j $SLURM_JOB_ID -o %o";
  for (const char* cmd : {"salloc", "srun"}) {
    r = c.run(cmd, {"-p", "compute", "bash", "-c", show});
    EXPECT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out.find("StdOut="), std::string::npos) << r.out;
    const bool srun = std::string(cmd) == "srun";
    EXPECT_NE(r.out.find(srun ? "\n   Command=bash\n" : "\n   Command=(null)\n"), std::string::npos) << r.out;
    EXPECT_TRUE(r.out.ends_with(srun ? "\nbash\n" : "\n(null)\n")) << r.out;
  }
  // -D: the command (and the srun steps it starts) run there; the job's
  // WorkDir and SLURM_SUBMIT_DIR stay where salloc was started. A directory
  // salloc cannot enter ends it before it asks for anything (anchor cluster).
  ASSERT_EQ(::mkdir((c.work() + "/sub").c_str(), 0755), 0);
  r = c.run("salloc", {"-p", "compute", "-D", "sub", "bash", "-c",
                       "pwd; echo $SLURM_SUBMIT_DIR; srun pwd; scontrol show job $SLURM_JOB_ID | grep -o 'WorkDir=.*'"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, c.work() + "/sub\n" + c.work() + "\n" + c.work() + "/sub\nWorkDir=" + c.work() + "\n");
  const std::string jobs_before = c.run("sacct", {"-n", "-X", "-P", "-o", "JobID"}).out;
  r = c.run("salloc", {"-p", "compute", "-D", "/nonexistent", "true"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "salloc: error: chdir(/nonexistent): No such file or directory\n");
  EXPECT_EQ(c.run("sacct", {"-n", "-X", "-P", "-o", "JobID"}).out, jobs_before);
}

// scancel of an allocation whose srun step runs: srun waits for the step's
// nodes and says how its tasks ended, salloc only that the allocation was
// revoked, as Slurm 22.05's did on the anchor cluster.
TEST(Steps, ACancelledAllocationsSrunSaysHowItsTasksEnded) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  CmdResult r;
  std::thread salloc([&] { r = c.run("salloc", {"-p", "compute", "-J", "sa1", "srun", "sleep", "100"}); });
  std::string job;
  bool ran = eventually(
      [&] {
        job = c.run("squeue", {"-h", "-s", "-n", "sa1", "-o", "%i"}).out;  // its step runs
        return job.find(".0\n") != std::string::npos;
      },
      20s);
  if (ran) {
    EXPECT_EQ(c.run("scancel", {job.substr(0, job.find('.'))}).rc, 0);
  }
  salloc.join();
  ASSERT_TRUE(ran) << r.err;
  const std::string id = job.substr(0, job.find('.'));
  EXPECT_TRUE(std::regex_search(r.err, std::regex("slurmstepd-cpu[0-9]: error: \\*\\*\\* STEP " + id +
                                                  ".0 ON cpu[0-9] CANCELLED AT [0-9T:-]+ \\*\\*\\*\n")))
      << r.err;
  EXPECT_NE(r.err.find("srun: Job step aborted: Waiting up to "), std::string::npos) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("srun: error: cpu[0-9]: task 0: Terminated\n"))) << r.err;
  EXPECT_NE(r.err.find("salloc: Job allocation " + id + " has been revoked.\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Relinquishing"), std::string::npos) << r.err;
}

// scancel of an allocation under salloc's command: salloc says it was
// revoked and, as Slurm's, waits for the command unless -K asks it to signal
// it (SIGTERM when stdin is not a terminal); nothing is given back after.
TEST(Steps, SallocSaysWhenItsAllocationIsRevokedAndSignalsTheCommandWithKillCommand) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  for (bool kill_command : {false, true}) {
    const std::string ready = c.work() + "/ready" + (kill_command ? "K" : "");
    std::vector<std::string> args = {"-p", "compute", "-w", "cpu1", "bash", "-c",
                                     "trap 'echo got TERM; exit 6' TERM; touch " + ready +
                                         "; while squeue -h -j $SLURM_JOB_ID -t R | grep -q .; do sleep 0.2; done; "
                                         "sleep 4 & wait; echo after"};
    if (kill_command) args.insert(args.begin(), "-K");
    CmdResult r;
    std::thread salloc([&] { r = c.run("salloc", args); });
    bool started = eventually([&] { return access(ready.c_str(), F_OK) == 0; }, 20s);
    std::string job;
    if (started) {
      job = c.run("squeue", {"-h", "-o", "%i", "-t", "R"}).out;
      job = job.substr(0, job.find('\n'));
      EXPECT_EQ(c.run("scancel", {job}).rc, 0);
    }
    salloc.join();
    ASSERT_TRUE(started) << r.err;
    EXPECT_NE(r.err.find("salloc: Job allocation " + job + " has been revoked.\n"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Relinquishing"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("error"), std::string::npos) << r.err;
    if (kill_command) {
      EXPECT_EQ(r.rc, 6) << r.err;
      EXPECT_EQ(r.out, "got TERM\n");
    } else {
      EXPECT_EQ(r.rc, 0) << r.err;
      EXPECT_EQ(r.out, "after\n");
    }
    EXPECT_EQ(c.state(job), "CANCELLED");
  }
}

TEST(Steps, ImmediateFailsFastWhenBusyAndSrunWaitsOtherwise) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  int64_t blocker = c.submit({"-p", "gpu", "-w", "hgpu1", "--exclusive", "-o", "/dev/null", "--wrap", "sleep 60"});
  ASSERT_GT(blocker, 0);
  ASSERT_TRUE(c.wait_state(std::to_string(blocker), {"RUNNING"}));
  auto t0 = std::chrono::steady_clock::now();
  auto r = c.run("salloc", {"-I", "-p", "gpu", "-w", "hgpu1", "true"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(r.rc, 1);
  EXPECT_TRUE(std::regex_match(r.err, std::regex("salloc: error: Unable to allocate resources: Requested nodes are busy\n"
                                                 "salloc: Job allocation \\d+ has been revoked.\n")))
      << r.err;
  // --immediate=N waits N seconds, saying so, then gives up in Slurm 22.05's
  // lines (anchor cluster): salloc's timer, srun's busy nodes.
  auto timed = c.run("salloc", {"--immediate=1", "-p", "gpu", "-w", "hgpu1", "true"});
  EXPECT_EQ(timed.rc, 1);
  EXPECT_TRUE(std::regex_match(timed.err, std::regex("salloc: Pending job allocation (\\d+)\n"
                                                     "salloc: job \\1 queued and waiting for resources\n"
                                                     "salloc: error: Unable to allocate resources: Connection timed out\n"
                                                     "salloc: Job allocation \\1 has been revoked.\n")))
      << timed.err;
  auto busy = c.run("srun", {"-I1", "-p", "gpu", "-w", "hgpu1", "true"});
  EXPECT_EQ(busy.rc, 1);
  EXPECT_TRUE(std::regex_match(busy.err, std::regex("srun: job \\d+ queued and waiting for resources\n"
                                                    "srun: error: Unable to allocate resources: Requested nodes are busy\n")))
      << busy.err;
  // Without -I srun waits, says so, and runs once the node is free.
  auto r2 = c.run("/bin/bash", {"-c", "srun -p gpu -w hgpu1 hostname & p=$!; sleep 1.5; scancel " +
                                     std::to_string(blocker) + "; wait $p"});
  EXPECT_EQ(r2.rc, 0) << r2.err;
  EXPECT_NE(r2.err.find("queued and waiting for resources"), std::string::npos) << r2.err;
  EXPECT_NE(r2.err.find("has been allocated resources"), std::string::npos) << r2.err;
}

// A job the controller will not start now, told as Slurm 22.05's srun and
// salloc told it on the anchor cluster: over a partition's limit, held, or
// (with -I) held or beginning later, its "dependency problem"; a
// heterogeneous job (':' between components) is refused, not run as ':'.
TEST(Steps, SrunAndSallocSayWhyTheirJobCannotStartNow) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto over = c.run("/bin/bash", {"-c", "timeout -s INT 3 salloc -p gpu -t 2-00:00:00 true"});
  EXPECT_TRUE(std::regex_match(over.err, std::regex("salloc: Requested partition configuration not available now\n"
                                                    "salloc: Pending job allocation (\\d+)\n"
                                                    "salloc: job \\1 queued and waiting for resources\n"
                                                    "salloc: Job allocation \\1 has been revoked.\n"
                                                    "salloc: Job aborted due to signal\n")))
      << over.err;
  auto held = c.run("/bin/bash", {"-c", "timeout -s INT 3 srun -H -p gpu true"});
  EXPECT_EQ(held.err.rfind("srun: Job is in held state, pending scheduler release\nsrun: job ", 0), 0) << held.err;
  struct Case {
    std::string program;
    std::vector<std::string> args;
    std::string err;  // the lines, with N for the job's id
  };
  const Case cases[] = {
      {"srun", {"-I", "-p", "gpu", "-N", "3", "true"},
       "srun: error: Unable to allocate resources: Requested partition configuration not available now\n"},
      {"salloc", {"-I", "-p", "gpu", "-t", "2-00:00:00", "true"},
       "salloc: error: Job submit/allocate failed: Requested partition configuration not available now\n"
       "salloc: Job allocation N has been revoked.\n"},
      {"salloc", {"-I", "--begin=now+100", "true"},
       "salloc: error: Job submit/allocate failed: Job dependency problem\nsalloc: Job allocation N has been revoked.\n"},
      {"srun", {"-I", "-H", "true"}, "srun: error: Unable to allocate resources: Job dependency problem\n"},
  };
  for (const auto& k : cases) {
    auto r = c.run(k.program, k.args);
    EXPECT_EQ(r.rc, 1) << k.program << " " << k.args[1];
    EXPECT_EQ(std::regex_replace(r.err, std::regex("allocation \\d+"), "allocation N"), k.err) << k.args[1];
  }
  for (const char* program : {"srun", "salloc"}) {
    auto het = c.run(program, {"-n1", ":", "-n2", "hostname"});
    EXPECT_EQ(het.rc, 1);
    EXPECT_EQ(het.out, "");
    EXPECT_EQ(het.err, std::string(program) +
                           ": error: heterogeneous jobs (':' between components) are not supported by Drover; submit "
                           "each component as a job of its own (a dependency can order them)\n");
  }
  EXPECT_TRUE(eventually([&] { return c.run("squeue", {"-h", "-t", "R"}).out.empty(); }, 10s));
}

// salloc rings the terminal's bell at the grant with --bell, never with
// --no-bell, and by default only after a wait of over ten seconds (so not
// here); only on a terminal (script(1) gives it one).
TEST(Steps, SallocBellRingsOnATerminalAsAsked) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  for (const char* bell : {"--bell", "--no-bell", ""}) {
    auto r = c.run("/usr/bin/script", {"-qec", std::string("salloc ") + bell + " -p compute true", "/dev/null"});
    EXPECT_EQ(r.rc, 0) << bell << r.out << r.err;
    EXPECT_NE(r.out.find("Granted job allocation"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\a') != std::string::npos, std::string(bell) == "--bell") << bell << r.out;
    EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  }
  auto piped = c.run("salloc", {"--bell", "-p", "compute", "true"});  // not a terminal: no bell
  EXPECT_EQ(piped.out, "");
}

// The controller is killed while a step runs: the step is in the store, the
// agent's report after the restart adopts it, and srun (asking again) sees
// its end.
TEST(Steps, AStepSurvivesAControllerKill) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  CmdResult r;
  std::thread srun([&] { r = c.run("srun", {"-N2", "-n2", "-l", "bash", "-c", "sleep 3; echo done"}); });
  const bool running = eventually([&] { return c.state("1") == "RUNNING"; }, 10s);
  bool restarted = false;
  if (running) {
    std::this_thread::sleep_for(500ms);
    c.kill_controller(SIGKILL);
    restarted = c.start_controller();
  }
  srun.join();  // before any ASSERT: a thread left joinable would abort the whole test binary
  ASSERT_TRUE(running) << "job 1 is " << c.state("1") << "; srun: " << r.err;
  ASSERT_TRUE(restarted) << c.error();
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"0: done", "1: done"})) << r.err;
  EXPECT_EQ(step_rows(c, 1), (std::vector<std::string>{"1.0|cpu[1-2]|2|COMPLETED|0"}));
  ASSERT_TRUE(c.wait_done("1"));
  EXPECT_EQ(c.state("1"), "COMPLETED");
}

// Slurm 22.05's step sharing (srun(1) --exact, --overlap): a step holds the
// CPUs of its nodes, the next one waits with Slurm's messages, --overlap
// does not wait, -I gives up, --exact holds only what it asks for.
TEST(Steps, ConcurrentStepsWaitForHeldCpusUnlessOverlapOrExact) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  // While "second" waits, scontrol show step lists it as Slurm's N.TDB; squeue -s does not.
  auto r = c.run("salloc", {"-n2", "-p", "compute", "-w", "cpu1", "bash", "-c",
                            "up() { until [ -n \"$(squeue -s$SLURM_JOB_ID.$1 -h -o %i)\" ]; do sleep 0.1; done; }; "
                            "srun -n1 sleep 3 & up 0; srun --overlap -n1 echo over; "
                            "srun -I -n1 echo never; echo immediate=$?; srun -n1 echo second & "
                            "for i in $(seq 150); do scontrol -o show step | "
                            "grep -q \"StepId=$SLURM_JOB_ID.TDB .*State=PENDING\" && { echo tdb; break; }; sleep 0.1; "
                            "done; squeue -s -h -o %i | grep -c TDB; wait; "
                            "srun --exact -n1 sleep 3 & up 3; srun --exact -n1 echo exact; wait"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "over\nimmediate=1\ntdb\n0\nsecond\nexact\n") << r.err;
  const std::string job = std::to_string(1);
  EXPECT_NE(r.err.find("srun: error: Unable to create step for job " + job + ": Requested nodes are busy"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("srun: Job " + job + " step creation temporarily disabled, retrying (Requested nodes are busy)\n"
                       "srun: Step created for job " + job + "\n"),
            std::string::npos) << r.err;
  // Only "second" waited.
  EXPECT_EQ(r.err.find("temporarily disabled"), r.err.rfind("temporarily disabled")) << r.err;
}

// srun --mem inside a batch job, as Slurm 22.05 on the anchor cluster: more
// than the job's memory is refused; a step waits while the running ones
// hold what it needs; sacct shows each step's memory.
TEST(Steps, StepsAskForMemoryWithinTheJobs) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  int64_t job = c.submit({"-p", "compute", "-n", "2", "--mem=2G", "-o", "mem.out", "--wrap",
                          "srun --mem=4G true; echo rc=$?; "
                          "srun -n1 --exact --mem=1500M sleep 2 & sleep 0.5; srun -n1 --exact --mem=1G true; wait"});
  ASSERT_GT(job, 0) << c.last_error();
  const std::string id = std::to_string(job);
  ASSERT_TRUE(c.wait_done(id, 30s));
  EXPECT_EQ(read_file(c.work() + "/mem.out"),
            "srun: error: Unable to create step for job " + id + ": Memory required by task is not available\n"
            "srun: error: cpu1: the step asks for 4096 MB; job " + id + " has 2048 MB there\n"
            "rc=1\n"
            "srun: Job " + id + " step creation temporarily disabled, retrying (Requested nodes are busy)\n"
            "srun: Step created for job " + id + "\n");
  auto acct = c.run("sacct", {"-j", id, "-P", "-n", "-o", "JobID,AllocTRES"});
  EXPECT_NE(acct.out.find(id + ".0|cpu=1,mem=1500M,node=1\n" + id + ".1|cpu=1,mem=1G,node=1\n"), std::string::npos)
      << acct.out;
}

// scancel N.S kills one step (SIGKILL at once, as Slurm 22.05's scancel on
// the anchor cluster); srun exits 137 with Slurm's lines (the step daemon's
// notice among them), the job and its later steps run on; --signal signals
// a step; squeue -s lists the running steps; a step that does not run is
// Slurm's odd error naming the job alone, exit 225.
TEST(Steps, ScancelOfOneStepAndSqueueSteps) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto r = c.run("salloc", {"-n2", "-p", "compute", "-w", "cpu1", "-J", "alloc", "bash", "-c",
                            "up() { until [ -n \"$(squeue -s$SLURM_JOB_ID.$1 -h -o %i)\" ]; do sleep 0.1; done; }; "
                            "srun -n1 --exact sleep 30 & p=$!; up 0; "
                            "srun -n1 --exact -J trap bash -c 'trap \"echo got USR1; exit 3\" USR1; sleep 20 & wait' & "
                            "q=$!; up 1; sleep 1; squeue -s -h -o '%i %j %A %P %N'; squeue -s$SLURM_JOB_ID.1 -h -o %i; "
                            "scancel $SLURM_JOB_ID.0; wait $p; echo step0=$?; "
                            "scancel --signal=USR1 $SLURM_JOB_ID.1; wait $q; echo step1=$?; "
                            "srun -n1 echo after; scancel $SLURM_JOB_ID.7; echo bad=$?"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "1.0 sleep 1 compute cpu1\n1.1 trap 1 compute cpu1\n1.1\nstep0=137\ngot USR1\nstep1=3\nafter\nbad=225\n")
      << r.err;
  EXPECT_NE(r.err.find("srun: Job step aborted: Waiting up to "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("slurmstepd-cpu1: error: *** STEP 1.0 ON cpu1 CANCELLED AT 20"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("srun: error: cpu1: task 0: Killed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scancel: error: Kill job error on job step id 1: Invalid job id specified"),
            std::string::npos) << r.err;
  auto rows = step_rows(c, 1);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], "1.0|cpu1|1|CANCELLED|0");
  // sacct: who cancelled the step, and its SIGKILL; the job's derived code
  // is that of the step that ended badly while it ran (Slurm's).
  auto acct = c.run("sacct", {"-j", "1", "-P", "-n", "-o", "JobID,State,ExitCode,DerivedExitCode"});
  EXPECT_NE(acct.out.find("\n1.0|CANCELLED by " + std::to_string(getuid()) + "|0:9|\n"), std::string::npos)
      << acct.out;
  // A step's SubmitLine is the srun command as typed (Slurm 22.05's).
  auto lines = c.run("sacct", {"-j", "1.2", "-P", "-n", "-o", "JobID,SubmitLine"});
  EXPECT_EQ(lines.out, "1.2|srun -n1 echo after\n") << lines.err;
  EXPECT_EQ(rows[2], "1.2|cpu1|1|COMPLETED|0");
  ASSERT_TRUE(c.wait_done("1"));
  EXPECT_EQ(c.state("1"), "COMPLETED");
  // Slurm's header, and nothing running now.
  auto q = c.run("squeue", {"-s"});
  EXPECT_EQ(q.out, "         STEPID     NAME PARTITION     USER      TIME NODELIST\n");
}

// squeue -s shows what each step asked for (%b, -O tres-per-task,
// tres-bind) as Slurm 22.05 did on the anchor cluster: a step without a GPU
// request shows the job's per-node GRES; srun refuses GPUs the job lacks in
// Slurm's words, saying why before that it failed.
TEST(Steps, SqueueStepsShowTheirGpuRequestsAndSrunRefusesGresTheJobLacks) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::ofstream(c.work() + "/req.sh")
      << "#!/bin/bash\n"
         "for opt in --gres=gpu:1 --gpus-per-node=2 '' --gpus=1 '--gpus-per-task=1 --gpu-bind=closest'; do\n"
         "  srun -n1 --overlap --mem=100M $opt sleep 30 &\n"
         "done\n"
         "wait\n";
  const std::string id =
      std::to_string(c.submit({"-p", "gpu", "-w", "hgpu1", "--gres=gpu:4", "-n4", "--mem=4G", "-o", "/dev/null", "req.sh"}));
  const std::vector<std::string> fmt = {"-h", "-s", "-j", id, "-O", "StepId:12,tres-per-node:16,tres-per-task:14,tres-bind"};
  ASSERT_TRUE(eventually([&] { return lines_of(c.run("squeue", fmt).out).size() == 6u; }, 20s))
      << c.run("squeue", fmt).out;
  // Which srun got which step id is a race: compare the rows as a set.
  std::vector<std::string> rows;
  for (std::string line : lines_of(c.run("squeue", fmt).out)) {
    line = std::regex_replace(line, std::regex("^[0-9]+\\.[0-9a-z]+ +"), "");
    rows.push_back(std::regex_replace(line, std::regex(" +"), " "));
  }
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<std::string>{"(null) (null) (null) ", "(null) (null) (null) ",
                                            "(null) gres:gpu:1 gpu:closest ", "gres:gpu:1 (null) (null) ",
                                            "gres:gpu:2 (null) (null) ", "gres:gpu:4 (null) (null) "}));
  auto head = c.run("squeue", {"-s", "-j", id, "-o", "%i %b"});
  EXPECT_EQ(lines_of(head.out).at(0), "STEPID TRES_PER_JOB") << head.out;
  ASSERT_EQ(c.run("scancel", {id}).rc, 0);

  // Steps that ask for GPUs the job does not have.
  auto r = c.run("sbatch", {"--wait", "-p", "gpu", "-w", "hgpu1", "--gres=gpu:h100:2", "-o", "gres.txt", "--wrap",
                            "srun --gres=gpu:a100:1 true; echo rc=$?; srun --gres=gpu:3 true; echo rc=$?; "
                            "srun --gpus=h100:1 true; echo rc=$?"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("job ([0-9]+)"))) << r.out;
  const std::string bad = "srun: error: Unable to create step for job " + m[1].str() +
                          ": Invalid generic resource (gres) specification\n";
  EXPECT_EQ(read_file(c.work() + "/gres.txt"),
            "srun: error: Step requested GRES (gpu:a100) not found in the job\n" + bad + "rc=1\n"
            "srun: error: Step requested gres_per_node=gpu:3 is more than the job's gres_per_node=gpu:2\n" + bad +
            "rc=1\nrc=0\n");
  r = c.run("sbatch", {"--wait", "-p", "compute", "-w", "cpu1", "-o", "none.txt", "--wrap",
                       "srun --gpus-per-task=1 true; echo rc=$?"});
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("job ([0-9]+)"))) << r.out;
  EXPECT_EQ(read_file(c.work() + "/none.txt"),
            "srun: error: Step requested GRES but job doesn't have GRES\nsrun: error: Unable to create step for job " +
                m[1].str() + ": Invalid generic resource (gres) specification\nrc=1\n");
}

// A batch script whose shell notes a USR1 in `marks` ("shell") and whose
// first srun step notes it too ("step") and ends; "ready" once that step
// runs, "srun-done" once it has ended, then `rest`.
void write_usr1_script(const std::string& path, const std::string& marks, const std::string& rest) {
  std::ofstream(path) << "#!/bin/bash\n"
                      << "trap 'echo shell >> " + marks + "' USR1\n"
                      << "srun -n1 bash -c 'trap \"echo step >> " + marks + "; exit 0\" USR1; echo ready >> " + marks +
                             "; while :; do sleep 0.1; done' &\n"
                      << "wait $!\n"
                      << "echo srun-done >> " + marks + "\n"
                      << rest;
}

// scancel --signal of a whole job, as Slurm 22.05 sends it: to the job's
// srun steps and not to the batch shell (which would die of it while it
// waits); -b to the batch shell alone; -f to the script and its children.
TEST(Steps, ScancelSignalGoesToTheStepsNotTheBatchShell) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string m = c.work() + "/marks";
  write_usr1_script(c.work() + "/sig.sh", m, "sleep 300 & p=$!\nwhile kill -0 $p 2>/dev/null; do wait $p; done\n");
  const std::string id = std::to_string(c.submit({"-n1", "-o", "/dev/null", "sig.sh"}));
  ASSERT_TRUE(eventually([&] { return read_file(m).find("ready") != std::string::npos; }, 10s)) << read_file(m);
  auto r = c.run("scancel", {"-s", "USR1", id});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(eventually([&] { return read_file(m).find("srun-done") != std::string::npos; }, 10s)) << read_file(m);
  EXPECT_EQ(read_file(m), "ready\nstep\nsrun-done\n");  // the shell's trap did not run
  r = c.run("scancel", {"-b", "-v", "-s", "USR1", id});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "scancel: Signal 10 to batch job " + id + "\n");  // Slurm 22.05's -v words
  EXPECT_TRUE(eventually([&] { return read_file(m) == "ready\nstep\nsrun-done\nshell\n"; }, 5s)) << read_file(m);
  EXPECT_EQ(c.state(id), "RUNNING");  // the shell's child, sleep, did not get it
  r = c.run("scancel", {"-f", "-v", "-s", "USR1", id});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "scancel: Signal 10 to full job " + id + "\n");
  ASSERT_TRUE(c.wait_done(id));  // sleep died of it; the loop ended
  EXPECT_EQ(read_file(m), "ready\nstep\nsrun-done\nshell\nshell\n");
  // SIGKILL to a job (with -f too) cancels it: CANCELLED by the caller, as
  // the anchor's Slurm 22.05 recorded it; with -b it kills the batch shell
  // alone and the job FAILED of signal 9.
  auto killed_with = [&](std::vector<std::string> how) {
    const std::string j = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "sleep 300"}));
    if (!c.wait_state(j, {"RUNNING"})) return std::string("never ran");
    how.push_back(j);
    auto k = c.run("scancel", how);
    if (k.rc != 0) return k.err;
    if (!c.wait_done(j)) return std::string("never ended");
    return c.run("sacct", {"-n", "-X", "-P", "-j", j, "-o", "State,ExitCode"}).out;
  };
  EXPECT_EQ(killed_with({"-s", "KILL"}), "CANCELLED by 0|0:0\n");
  EXPECT_EQ(killed_with({"-f", "-s", "9"}), "CANCELLED by 0|0:0\n");
  EXPECT_EQ(killed_with({"-b", "-s", "SIGKILL"}), "FAILED|0:9\n");
}

// --signal=USR1@25 without B: (what PyTorch Lightning's auto-requeue asks
// for): 25 s before the time limit the job's running steps get it, once,
// and not the batch shell, nor a step started after; as Slurm 22.05's,
// whose srun task died of it on the anchor cluster (step CANCELLED 0:10).
TEST(Steps, SignalOptionWithoutBGoesToTheRunningStepsNearTheLimit) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string m = c.work() + "/marks";
  write_usr1_script(c.work() + "/warn.sh", m,
                    "srun -n1 bash -c 'trap \"echo late >> " + m + "\" USR1; sleep 2; echo late-done >> " + m + "'\n");
  const std::string id =
      std::to_string(c.submit({"-n1", "-t", "0:0:30", "--signal=USR1@25", "-o", "/dev/null", "warn.sh"}));
  ASSERT_TRUE(c.wait_done(id, 25s)) << read_file(m);
  EXPECT_EQ(read_file(m), "ready\nstep\nsrun-done\nlate-done\n");
  EXPECT_EQ(c.run("sacct", {"-n", "-P", "-j", id, "-o", "JobID,State,ExitCode"}).out,
            id + "|COMPLETED|0:0\n" + id + ".batch|COMPLETED|0:0\n" + id + ".0|COMPLETED|0:0\n" + id +
                ".1|COMPLETED|0:0\n");
  // A step that does not catch it dies of it, and srun says so.
  const std::string out = c.work() + "/warn2.out";
  const std::string killed = std::to_string(
      c.submit({"-n1", "-t", "0:0:30", "--signal=USR1@27", "-o", out, "--wrap", "srun sleep 100; echo rc=$?"}));
  ASSERT_TRUE(c.wait_done(killed, 25s));
  EXPECT_NE(read_file(out).find(": task 0: User defined signal 1\nrc=138\n"), std::string::npos) << read_file(out);
  EXPECT_EQ(c.run("sacct", {"-n", "-P", "-j", killed + ".0", "-o", "State,ExitCode"}).out, "CANCELLED|0:10\n");
}

// A node of the allocation fails: the job ends NODE_FAIL, unless it was
// submitted with --no-kill: then only the step's part there fails (the
// step without srun -k is ended) and later steps run on the other node.
TEST(NodeFailure, AKilledAgentEndsTheJobUnlessNoKill) {
  ClusterDef def = small_cluster();
  def.extra = {"SlurmdTimeout=4"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  int64_t plain = c.submit({"-N2", "-p", "compute", "-w", "cpu[1-2]", "-o", "/dev/null", "--wrap", "srun sleep 60"});
  ASSERT_GT(plain, 0) << c.last_error();
  ASSERT_TRUE(c.wait_state(std::to_string(plain), {"RUNNING"}));
  auto down = c.run("scontrol", {"update", "NodeName=cpu2", "State=DOWN", "Reason=test"});
  ASSERT_EQ(down.rc, 0) << down.err;
  ASSERT_TRUE(c.wait_done(std::to_string(plain)));
  EXPECT_EQ(c.state(std::to_string(plain)), "NODE_FAIL");
  ASSERT_EQ(c.run("scontrol", {"update", "NodeName=cpu2", "State=RESUME"}).rc, 0);
  // --no-kill, and cpu2's agent killed: found after SlurmdTimeout.
  CmdResult r;
  const std::string ready = c.work() + "/ready";
  std::thread salloc([&] {
    r = c.run("salloc", {"-k", "-N2", "-p", "compute", "-w", "cpu[1-2]", "bash", "-c",
                         "srun -N2 -n2 sleep 20 & p=$!; sleep 1; touch " + ready +
                             "; wait $p || echo step-failed; srun -N1 -n1 printenv SLURMD_NODENAME; echo end"});
  });
  bool started = eventually([&] { return access(ready.c_str(), F_OK) == 0; }, 20s);
  if (started) c.kill_agent("cpu2", SIGKILL);
  salloc.join();
  ASSERT_TRUE(started) << r.err;
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "step-failed\ncpu1\nend\n") << r.err;
  EXPECT_NE(r.err.find("srun: error: Node failure on cpu2"), std::string::npos) << r.err;
  const std::string job = std::to_string(plain + 1);
  auto rows = step_rows(c, plain + 1);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].rfind(job + ".0|cpu[1-2]|2|NODE_FAIL|", 0), 0u) << rows[0];
  EXPECT_EQ(rows[1], job + ".1|cpu1|1|COMPLETED|0");
  EXPECT_EQ(c.state(job), "COMPLETED");
  // The controller set that reason: its user is SlurmUser (root, by default),
  // in sinfo and in the node's event, as the anchor's Slurm shows slurm(64030).
  EXPECT_EQ(c.run("sinfo", {"-h", "-R", "-n", "cpu2", "-o", "%E|%u|%U"}).out, "Not responding|root|root(0)\n");
  EXPECT_EQ(c.run("sacctmgr", {"-P", "-n", "show", "event", "nodes=cpu2", "states=down", "format=Reason,User"}).out,
            "Not responding|root(0)\n");
  // The agent comes back and is told to end what it still runs of step .0.
  ASSERT_TRUE(c.start_agent("cpu2"));
}

// The seed's J1 training template verbatim, with `torchrun ... train.py`
// replaced by a script that prints what each rank would use.
TEST(Steps, SeedTrainingTemplateRuns32RanksEachWithItsGpu) {
  TestCluster c(seed_cluster());
  REQUIRE_CLUSTER(c);
  write_exec(c.work() + "/bin/rankinfo",
             "#!/bin/bash\n"
             "IFS=, read -ra gpus <<< \"$CUDA_VISIBLE_DEVICES\"\n"
             "master=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n1)\n"
             "echo rank=$SLURM_PROCID world=$SLURM_NTASKS local=$SLURM_LOCALID node=$SLURMD_NODENAME "
             "gpu=${gpus[$SLURM_LOCALID]} visible=$CUDA_VISIBLE_DEVICES master=$master\n");
  std::string text = read_file(std::string(DROVER_SOURCE_DIR) + "/examples/seed/jobs/train.sbatch");
  const std::string torchrun = "torchrun --nnodes=4 --nproc-per-node=8 train.py";
  auto at = text.find(torchrun);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, torchrun.size(), "rankinfo");
  std::ofstream(c.work() + "/train.sbatch") << text;
  int64_t job = c.submit({"-o", "train.out", "train.sbatch"});
  ASSERT_GT(job, 0) << c.last_error();
  ASSERT_TRUE(c.wait_done(std::to_string(job), 60s));
  EXPECT_EQ(c.state(std::to_string(job)), "COMPLETED") << read_file(c.work() + "/train.out");
  auto lines = sorted_lines(read_file(c.work() + "/train.out"));
  std::set<int> ranks;
  std::set<std::string> node_gpu;
  for (const auto& l : lines) {
    if (l.rfind("rank=", 0) != 0) continue;
    std::istringstream in(l);
    std::map<std::string, std::string> kv;
    for (std::string w; in >> w;) kv[w.substr(0, w.find('='))] = w.substr(w.find('=') + 1);
    ranks.insert(std::stoi(kv["rank"]));
    node_gpu.insert(kv["node"] + ":" + kv["gpu"]);
    EXPECT_EQ(kv["world"], "32");
    EXPECT_EQ(kv["gpu"], kv["local"]);
    EXPECT_EQ(kv["visible"], "0,1,2,3,4,5,6,7");
    EXPECT_EQ(kv["master"], "hgpu1");
  }
  EXPECT_EQ(ranks.size(), 32u);
  EXPECT_EQ(node_gpu.size(), 32u);  // 4 nodes x 8 distinct GPUs
  auto rows = step_rows(c, job);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1], std::to_string(job) + ".0|hgpu[1-4]|32|COMPLETED|0");
}

bool on_path(const std::string& program) {
  return std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0;
}

// An MPI hello world (rank, size, node, an MPI_Allreduce of the ranks and a
// barrier) compiled with Open MPI's mpicc into the cluster's work directory.
::testing::AssertionResult build_mpi_hello(const TestCluster& c) {
  std::ofstream(c.work() + "/hello.c") << R"(#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, sum = 0;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("hello %d of %d on %s sum %d host %s\n", rank, size, getenv("SLURMD_NODENAME"), sum, host);
  MPI_Finalize();
  return 0;
}
)";
  auto cc = c.run("/bin/bash", {"-c", "mpicc -o hello hello.c"});
  if (cc.rc != 0) return ::testing::AssertionFailure() << "mpicc: " << cc.err;
  return ::testing::AssertionSuccess();
}

// `out` has the lines of hello's 8 ranks, 2 on each of hgpu[1-4].
void expect_eight_ranks(const std::string& out) {
  std::map<std::string, int> per_node;
  int lines = 0;
  for (const auto& l : sorted_lines(out)) {
    if (l.rfind("hello ", 0) != 0) continue;
    ++lines;
    EXPECT_NE(l.find(" of 8 on hgpu"), std::string::npos) << l;
    EXPECT_NE(l.find(" sum 28"), std::string::npos) << l;  // the allreduce crossed every rank
    per_node[l.substr(l.find(" on ") + 4, 5)] += 1;
  }
  EXPECT_EQ(lines, 8) << out;
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"hgpu1", 2}, {"hgpu2", 2}, {"hgpu3", 2}, {"hgpu4", 2}})) << out;
}

// Builds hello and runs a job script on hgpu[1-4], 2 tasks each, that runs it
// (`options`: more #SBATCH options; `body`: the commands); `out` is the job's
// output, checked for the 8 ranks.
void run_mpi_job(const TestCluster& c, const std::string& options, const std::string& body, int64_t& job,
                 std::string& out, const RunAs& as = {}) {
  ASSERT_TRUE(build_mpi_hello(c));
  std::ofstream(c.work() + "/mpi.sh") << "#!/bin/bash\n#SBATCH -p training -N4 --ntasks-per-node=2 -o mpi.out "
                                      << options << "\n" << body;
  job = c.submit({"mpi.sh"}, as);
  ASSERT_GT(job, 0) << c.last_error();
  ASSERT_TRUE(c.wait_done(std::to_string(job), 90s));
  out = read_file(c.work() + "/mpi.out");
  EXPECT_EQ(c.state(std::to_string(job)), "COMPLETED") << out;
  expect_eight_ranks(out);
}

// Open MPI's mpirun inside a 4-node allocation starts its daemons (orted)
// through Drover's srun (plm/slurm) and an MPI program wires up across them.
TEST(Steps, OpenMpiMpirunLaunchesThroughSrun) {
  if (!on_path("mpirun") || !on_path("mpicc")) GTEST_SKIP() << "Open MPI (mpirun, mpicc) is not installed: apt-get install openmpi-bin libopenmpi-dev";
  TestCluster c(seed_cluster());
  REQUIRE_CLUSTER(c);
  int64_t job = 0;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(run_mpi_job(c, "",
                                      "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n"
                                      "mpirun --mca btl self,tcp ./hello\n",
                                      job, out));
  // The daemons ran as step 0 of the job, one task per node. In mpirun's
  // teardown an orted that has not exited yet may end by SIGTERM, and the
  // step is then FAILED 0:15 (seen about once in 30 runs on a loaded host:
  // the other three COMPLETED, the job COMPLETED with all eight ranks).
  auto rows = step_rows(c, job);
  ASSERT_EQ(rows.size(), 2u);
  const std::string step = std::to_string(job) + ".0|hgpu[1-4]|4|";
  EXPECT_TRUE(rows[1] == step + "COMPLETED|0" || rows[1] == step + "FAILED|0") << rows[1];
}

// srun --mpi=pmix: each node's step daemon is a PMIx server, and the MPI
// program launched directly by srun (no mpirun) wires up across the 4 nodes
// through the fences srun relays; the seed's template `srun --mpi=pmix bash -c`.
// Every emulated node is this one host: Open MPI is told to use TCP on loopback.
// As root the job runs as a test user (root step daemons, the user's tasks).
TEST(Steps, SrunMpiPmixWiresUpAnMpiProgramAcrossNodes) {
  if (!on_path("mpicc")) GTEST_SKIP() << "Open MPI (mpicc) is not installed: apt-get install openmpi-bin libopenmpi-dev";
  auto user = ensure_user("drovere2ea");
  TestCluster c(seed_cluster());
  REQUIRE_CLUSTER(c);
  int64_t job = 0;
  std::string out;
  std::ofstream(c.work() + "/abort.c") << R"(#include <mpi.h>
#include <unistd.h>
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
  sleep(60);
  MPI_Finalize();
  return 0;
}
)";
  auto cc = c.run("/bin/bash", {"-c", "mpicc -o abort abort.c"});
  ASSERT_EQ(cc.rc, 0) << cc.err;
  ASSERT_NO_FATAL_FAILURE(run_mpi_job(c, "--exclusive",
                                      "export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_pml=ob1\n"
                                      "srun --mpi=pmix bash -c './hello'\n"
                                      "echo srun-exit=$?\n"
                                      // MPI_Init's fence collects no data: each rank's data comes by
                                      // direct modex. (Not async_modex=1 as well: Open MPI 4.1 then reads
                                      // peers' data before they commit it and fails "Not found" now and
                                      // then, open-mpi/ompi#14321.)
                                      "OMPI_MCA_pmix_base_collect_data=0 "
                                      "srun --mpi=pmix -N2 -n4 ./hello > dmodex.out 2>&1\n"
                                      "echo dmodex-exit=$?\n"
                                      // Rank 1 aborts; rank 0, on the other node, would sleep for a minute.
                                      "SECONDS=0; srun --mpi=pmix -N2 -n2 ./abort > abort.out 2>&1\n"
                                      "echo abort-exit=$? after=$SECONDS\n"
                                      // One node: every fence is local.
                                      "srun --mpi=pmix -N1 -n2 ./hello > one.out 2>&1\n"
                                      "echo one-exit=$?\n"
                                      // -m cyclic: ranks dealt over the nodes in turn; the PMIx maps follow.
                                      "srun --mpi=pmix -N2 -n4 -m cyclic ./hello > cyclic.out 2>&1\n"
                                      "echo cyclic-exit=$?\n"
                                      // The second node's launch fails (no out-1/): the first one's rank
                                      // must not wait in MPI_Init's fence for it.
                                      "mkdir -p out-0; SECONDS=0\n"
                                      "srun --mpi=pmix -N2 -n2 -o 'out-%n/hello.out' ./hello > lost.out 2>&1\n"
                                      "echo lost-exit=$? after=$SECONDS\n",
                                      job, out, user ? user->as() : RunAs{}));
  EXPECT_NE(out.find("srun-exit=0"), std::string::npos) << out;
  EXPECT_EQ(out.find("warning: --mpi=pmix"), std::string::npos) << out;
  std::string dmodex = read_file(c.work() + "/dmodex.out");
  EXPECT_NE(out.find("dmodex-exit=0"), std::string::npos) << out << dmodex;
  for (int r = 0; r < 4; ++r) {
    EXPECT_NE(dmodex.find("hello " + std::to_string(r) + " of 4 on hgpu" + std::to_string(r / 2 + 1) + " sum 6"),
              std::string::npos) << dmodex;
  }
  std::string one = read_file(c.work() + "/one.out");
  EXPECT_NE(out.find("one-exit=0"), std::string::npos) << out << one;
  EXPECT_NE(one.find("hello 1 of 2 on hgpu1 sum 1"), std::string::npos) << one;
  std::string cyclic = read_file(c.work() + "/cyclic.out");
  EXPECT_NE(out.find("cyclic-exit=0"), std::string::npos) << out << cyclic;
  for (int r = 0; r < 4; ++r) {
    EXPECT_NE(cyclic.find("hello " + std::to_string(r) + " of 4 on hgpu" + std::to_string(r % 2 + 1) + " sum 6"),
              std::string::npos) << cyclic;
  }
  for (const auto& text : {out, dmodex, one, cyclic}) {
    EXPECT_EQ(text.find("PMIX ERROR"), std::string::npos) << text;  // e.g. the task's user cannot map PMIx's store
  }
  std::string abort = read_file(c.work() + "/abort.out");
  auto at = out.find("abort-exit=");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_NE(out.substr(at, 13), "abort-exit=0 ") << out << abort;
  auto after = out.find("after=", at);
  EXPECT_LT(std::atoi(out.c_str() + after + 6), 30) << out << abort;  // the abort ended rank 0 too
  std::string lost = read_file(c.work() + "/lost.out");
  at = out.find("lost-exit=");
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_NE(out.substr(at, 12), "lost-exit=0 ") << out << lost;
  EXPECT_LT(std::atoi(out.c_str() + out.find("after=", at) + 6), 30) << out << lost;
  auto rows = step_rows(c, job);
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[1], std::to_string(job) + ".0|hgpu[1-4]|8|COMPLETED|0");
  EXPECT_EQ(rows[2], std::to_string(job) + ".1|hgpu[1-2]|4|COMPLETED|0");
  EXPECT_NE(rows[3].find(".2|hgpu[1-2]|2|FAILED|"), std::string::npos) << rows[3] << "\n" << abort;
}

// sbcast: a file copied to each node of a running job, written as the job's
// user with the source's mode, refused in Slurm 22.05's words (the anchor
// cluster's) for another user, a pending or an ended job, an existing file
// without -f; inside a job it finds the job by SLURM_JOB_ID. Every emulated
// node shares this host's file system, so a second node meets the first's
// copy, as two slurmds on one host do.
TEST(Steps, SbcastCopiesAFileToTheJobsNodesAsItsUser) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto user = ensure_user("drovere2ea");
  RunAs as = user ? user->as() : RunAs{};
  const uid_t owner = user ? user->uid : geteuid();
  const std::string src = c.work() + "/sbcast-src";
  std::string payload;
  for (int i = 0; payload.size() < 2'500'000; ++i) payload += "line " + std::to_string(i) + "\n";
  { std::ofstream(src) << payload; }
  ASSERT_EQ(chmod(src.c_str(), 0754), 0);
  timespec old[2] = {{1577836800, 0}, {1577836800, 0}};  // 2020-01-01
  ASSERT_EQ(utimensat(AT_FDCWD, src.c_str(), old, 0), 0);
  const std::string dir = c.work() + "/sbcast-dest";
  ASSERT_EQ(c.run_program("/bin/mkdir", {dir}, as).rc, 0);

  auto sub = c.run("sbatch", {"--parsable", "-N2", "-p", "compute", "-o", "/dev/null", "--wrap", "sleep 60"}, as);
  ASSERT_EQ(sub.rc, 0) << sub.err;
  const std::string job = sub.out.substr(0, sub.out.find_first_of(";\n"));
  ASSERT_TRUE(c.wait_state(job, {"RUNNING"})) << c.reason(job);

  // -f: each node writes (the second replaces the first's copy); blocks of 1 MiB.
  const std::string copy = dir + "/copy";
  auto ok = c.run("sbcast", {"-f", "-s", "1m", "-j", job, src, copy}, as);
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(ok.err, "");
  EXPECT_EQ(read_file(copy), payload);
  struct stat st {};
  ASSERT_EQ(stat(copy.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0754u);
  EXPECT_EQ(st.st_uid, owner);
  EXPECT_NE(st.st_mtime, 1577836800);
  // Without -f the file exists on both: each node says so; the status is errno's.
  auto exists = c.run("sbcast", {"-j", job, src, copy}, as);
  EXPECT_EQ(exists.rc, EEXIST);
  EXPECT_EQ(sorted_lines(exists.err), (std::vector<std::string>{"sbcast: error: REQUEST_FILE_BCAST(cpu1): File exists",
                                                                 "sbcast: error: REQUEST_FILE_BCAST(cpu2): File exists"}));
  // -p keeps the source's times; a relative DEST is under sbcast's directory.
  auto kept = c.run("sbcast", {"-p", "-f", "-j", job, src, "kept"}, as, "", dir);
  EXPECT_EQ(kept.rc, 0) << kept.err;
  ASSERT_EQ(stat((dir + "/kept").c_str(), &st), 0);
  EXPECT_EQ(st.st_mtime, 1577836800);
  EXPECT_EQ(read_file(dir + "/kept"), payload);
  // A directory that is not there: ENOENT from each node.
  auto nodir = c.run("sbcast", {"-f", "-j", job, src, dir + "/none/copy"}, as);
  EXPECT_EQ(nodir.rc, ENOENT);
  EXPECT_NE(nodir.err.find("REQUEST_FILE_BCAST(cpu1): No such file or directory"), std::string::npos) << nodir.err;

  if (user) {  // another user may not write for this job
    auto other = ensure_user("drovere2eb");
    ASSERT_TRUE(other);
    auto refused = c.run("sbcast", {"-j", job, src, dir + "/theirs"}, other->as());
    EXPECT_EQ(refused.rc, 255);
    EXPECT_EQ(refused.err, "sbcast: error: Slurm job " + job + " lookup error: Invalid user id\n");
    EXPECT_FALSE(std::filesystem::exists(dir + "/theirs"));
  }
  // Named jobs that cannot take a file.
  EXPECT_EQ(c.run("sbcast", {"-j", "999999", src, dir + "/x"}).err,
            "sbcast: error: Slurm job 999999 lookup error: Invalid job id specified\n");
  EXPECT_EQ(c.run("sbcast", {"-j", job + ".0", src, dir + "/x"}, as).err,
            "sbcast: error: Slurm job " + job + ".0 lookup error: Invalid job id specified\n");
  std::string held = std::to_string(c.submit({"-H", "-p", "compute", "-o", "/dev/null", "--wrap", "true"}));
  auto pending = c.run("sbcast", {"-j", held, src, dir + "/x"});
  EXPECT_EQ(pending.rc, 255);
  EXPECT_EQ(pending.err, "sbcast: error: Slurm job " + held + " lookup error: Job is pending execution\n");
  ASSERT_EQ(c.run("scancel", {job, held}).rc, 0);
  ASSERT_TRUE(c.wait_done(job));
  EXPECT_EQ(c.run("sbcast", {"-j", job, src, dir + "/x"}, as).err,
            "sbcast: error: Slurm job " + job + " lookup error: Job/step already completing or completed\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/x"));

  // Inside a batch job: the job from SLURM_JOB_ID.
  const std::string out = dir + "/inside.out";
  auto in = c.run("sbatch", {"--parsable", "-p", "compute", "-o", out, "--wrap",
                             "sbcast " + src + " " + dir + "/inside; echo rc=$?; cmp " + src + " " + dir + "/inside && echo same"},
                  as);
  ASSERT_EQ(in.rc, 0) << in.err;
  const std::string inside = in.out.substr(0, in.out.find_first_of(";\n"));
  ASSERT_TRUE(c.wait_done(inside));
  EXPECT_EQ(read_file(out), "rc=0\nsame\n");
  // Outside any job and without -j: Slurm's words.
  auto none = c.run("sbcast", {src, dir + "/y"});
  EXPECT_EQ(none.rc, 1);
  EXPECT_EQ(none.err,
            "sbcast: error: Need a job id to run this command.  Run from within a Slurm job or use the --jobid "
            "option.\n");
}

}  // namespace
}  // namespace drover::e2e
