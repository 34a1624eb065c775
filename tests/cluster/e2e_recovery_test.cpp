// End to end: the controller killed with SIGKILL while jobs run and wait,
// an agent killed while its job runs, users who may not touch each other's
// jobs, jobs that run as their submitter, and a node with fewer GPUs than
// configured.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "harness.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

// Every line "start ID" / "end ID" the jobs appended to `log`, counted.
std::map<std::string, int> count_lines(const std::string& log) {
  std::map<std::string, int> n;
  std::istringstream in(read_file(log));
  std::string what, id;
  while (in >> what >> id) n[what + " " + id] += 1;
  return n;
}

TEST(Recovery, ControllerKilledWhileJobsRunAndWaitLosesAndRepeatsNothing) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string log = c.work() + "/runs.log";
  std::vector<std::string> ids;
  // 2 CPU nodes x 16 CPUs: 8-CPU jobs, four at a time; the rest wait.
  for (int i = 0; i < 10; ++i) {
    int64_t id = c.submit({"-p", "compute", "-x", "lgpu1", "-c", "8", "-o", "/dev/null", "--wrap",
                           "echo start $SLURM_JOB_ID >> " + log + "; sleep 2; echo end $SLURM_JOB_ID >> " + log});
    ASSERT_GT(id, 0) << c.last_error();
    ids.push_back(std::to_string(id));
  }
  ASSERT_TRUE(c.wait_state(ids[0], {"RUNNING"}));
  EXPECT_EQ(c.state(ids.back()), "PENDING");
  c.kill_controller(SIGKILL);
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(c.start_controller()) << c.error();
  EXPECT_EQ(c.state(ids.back()), "PENDING");
  for (const auto& id : ids) {
    ASSERT_TRUE(c.wait_done(id, 40s)) << id << " " << c.state(id);
    EXPECT_EQ(c.state(id), "COMPLETED") << id;
  }
  auto n = count_lines(log);
  for (const auto& id : ids) {
    EXPECT_EQ(n["start " + id], 1) << "job " << id << " started " << n["start " + id] << " times";
    EXPECT_EQ(n["end " + id], 1) << id;
  }
  // Job ids continue after the recovered ones.
  int64_t next = c.submit({"-o", "/dev/null", "--wrap", "true"});
  EXPECT_EQ(next, std::stoll(ids.back()) + 1);
}

// A login node's view of the cluster: a slurm.conf that names the
// controller's host otherwise (at the same loopback address) and keeps no
// state here, so that the commands go over TCP as from another host;
// `extra` is appended (a later line wins). DIR/login.conf.
std::string write_login_conf(const TestCluster& c, const std::string& extra = "") {
  std::string conf = read_file(c.conf());
  auto replace_line = [&](const std::string& key, const std::string& value) {
    auto at = conf.find("\n" + key + "=");
    EXPECT_NE(at, std::string::npos) << key;
    if (at == std::string::npos) return;
    auto end = conf.find('\n', at + 1);
    conf.replace(at + 1, end - at - 1, key + "=" + value);
  };
  replace_line("SlurmctldHost", "ctl-elsewhere(127.0.0.1)");
  replace_line("StateSaveLocation", c.dir() + "/login-state");
  const std::string login = c.dir() + "/login.conf";
  std::ofstream(login) << conf << extra << "\n";
  chmod(login.c_str(), 0644);
  return login;
}

// A controller whose StateSaveLocation has less free space than its reserve
// takes no new job (sbatch, salloc and srun say so in Slurm's words and
// why), keeps running and ending the jobs it has, and takes jobs again once
// space is back. The reserve is set here above what any disk holds
// (DROVER_STATE_RESERVE_MB), then the controller restarts without it.
TEST(Recovery, NoNewJobIsTakenWhileStateSaveLocationIsShortOfSpace) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  int64_t running = c.submit({"-p", "compute", "-o", "/dev/null", "--wrap", "sleep 3"});
  ASSERT_GT(running, 0) << c.last_error();
  const std::string id = std::to_string(running);
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  c.kill_controller(SIGTERM);
  setenv("DROVER_STATE_RESERVE_MB", "1000000000000", 1);  // 1e12 MiB
  const bool restarted = c.start_controller();
  unsetenv("DROVER_STATE_RESERVE_MB");
  ASSERT_TRUE(restarted) << c.error();

  auto refused = c.run("sbatch", {"-p", "compute", "-o", "/dev/null", "--wrap", "true"});
  EXPECT_EQ(refused.rc, 1);
  EXPECT_NE(refused.err.find("sbatch: error: Batch job submission failed: I/O error writing script/environment to "
                             "file\nsbatch: error: drover: StateSaveLocation " + c.dir() + "/state has "),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("no new job is taken until space is freed there"), std::string::npos) << refused.err;
  auto srun = c.run("srun", {"-p", "compute", "true"});
  EXPECT_EQ(srun.rc, 1);
  EXPECT_NE(srun.err.find("srun: error: Unable to allocate resources: I/O error writing script/environment to file"),
            std::string::npos)
      << srun.err;
  // What it had goes on: the running job ends and is recorded.
  ASSERT_TRUE(c.wait_done(id)) << c.state(id);
  EXPECT_EQ(c.state(id), "COMPLETED");
  EXPECT_NE(c.log("controller").find("less than the 1000000000000 MiB the controller keeps"), std::string::npos);

  c.kill_controller(SIGTERM);
  ASSERT_TRUE(c.start_controller()) << c.error();
  int64_t later = c.submit({"-p", "compute", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_GT(later, 0) << c.last_error();
  EXPECT_TRUE(c.wait_done(std::to_string(later)));
}

// As Slurm's commands do, sbatch and squeue keep trying for MessageTimeout
// (10 s) while the controller is away, and a restart within it loses nothing.
TEST(Recovery, CommandsWaitForAControllerThatRestarts) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  c.kill_controller(SIGKILL);
  int64_t id = -1;
  CmdResult queue, remote;
  const std::string login = write_login_conf(c);
  std::thread submitter([&] { id = c.submit({"-o", "/dev/null", "--wrap", "true"}); });
  std::thread watcher([&] { queue = c.run("squeue", {"-h", "-o", "%i"}); });
  // Over TCP too (a fresh gRPC channel for each attempt, not one waiting out its back-off).
  std::thread remote_watcher([&] { remote = c.run("sinfo", {"--config", login, "-h", "-o", "%P"}); });
  // Down for 5 s: past gRPC's third reconnection attempt (about 1, 2.6 and
  // 5.2 s after the first failure; the fourth comes after the 9 s).
  std::this_thread::sleep_for(5s);
  bool started = c.start_controller();
  submitter.join();
  watcher.join();
  remote_watcher.join();
  ASSERT_TRUE(started) << c.error();
  ASSERT_GT(id, 0) << c.last_error();
  EXPECT_EQ(queue.rc, 0) << queue.err;
  EXPECT_EQ(remote.rc, 0) << remote.err;
  EXPECT_NE(remote.out.find("compute"), std::string::npos) << remote.out;
  EXPECT_TRUE(c.wait_done(std::to_string(id)));
  EXPECT_EQ(c.state(std::to_string(id)), "COMPLETED");
  // With MessageTimeout's wait spent, the refusal is Slurm's line.
  c.kill_controller(SIGKILL);
  {
    std::ofstream(c.dir() + "/short.conf") << read_file(c.conf()) << "\nMessageTimeout=2\n";
  }
  auto t0 = std::chrono::steady_clock::now();
  auto down = c.run("sbatch", {"--config", c.dir() + "/short.conf", "--wrap", "true"});
  EXPECT_EQ(down.rc, 1);
  EXPECT_NE(down.err.find("sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect "
                          "failure)"),
            std::string::npos)
      << down.err;
  EXPECT_NE(down.err.find("(tried for 1 s)"), std::string::npos) << down.err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  // scontrol ping asks once.
  t0 = std::chrono::steady_clock::now();
  auto ping = c.run("scontrol", {"ping"});
  EXPECT_EQ(ping.rc, 1);
  EXPECT_NE(ping.out.find(" is DOWN\n*****************************************\n** RESTORE SLURMCTLD DAEMON TO SERVICE **"),
            std::string::npos)
      << ping.out;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}

TEST(Recovery, AgentsReportToARestartedControllerWithoutWaitingForTheirHeartbeat) {
  ClusterDef def = small_cluster();
  def.extra = {"SlurmdTimeout=300"};  // Slurm's default: the agents' heartbeats are 30 s apart
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  auto cfg = c.run("scontrol", {"show", "config"});
  ASSERT_NE(cfg.out.find("SlurmdTimeout           = 300 sec"), std::string::npos) << cfg.out;
  c.kill_controller(SIGKILL);
  ASSERT_TRUE(c.start_controller()) << c.error();
  // The agents saw their connection close and report again as soon as the
  // new controller answers, not at their next heartbeat.
  EXPECT_TRUE(c.wait_nodes_responding(10s)) << c.run("sinfo", {"-N"}).out;
  int64_t id = c.submit({"-w", "cpu2", "-o", "/dev/null", "--wrap", "true"});
  ASSERT_GT(id, 0) << c.last_error();
  EXPECT_TRUE(c.wait_done(std::to_string(id), 10s)) << c.state(std::to_string(id));
  EXPECT_EQ(c.state(std::to_string(id)), "COMPLETED");
  // Down for a while: the agents keep trying (spaced by gRPC's reconnection
  // backoff) rather than waiting out a heartbeat after each failure.
  c.kill_controller(SIGKILL);
  std::this_thread::sleep_for(3s);
  ASSERT_TRUE(c.start_controller()) << c.error();
  EXPECT_TRUE(c.wait_nodes_responding(10s)) << c.run("sinfo", {"-N"}).out;
}

TEST(Recovery, AgentRestartReadoptsItsRunningJob) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string log = c.work() + "/agent.log";
  std::string id = std::to_string(c.submit({"-w", "cpu1", "-o", "/dev/null", "--wrap",
                                            "echo start >> " + log + "; sleep 3; echo end >> " + log}));
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  // Killed while the job runs (an agent killed in the middle of a launch is
  // another case: the job is launched again if it never started, NODE_FAIL
  // if the agent lost it).
  ASSERT_TRUE(eventually([&] { return read_file(log) == "start\n"; }, 5s));
  c.kill_agent("cpu1", SIGKILL);
  ASSERT_TRUE(c.start_agent("cpu1"));
  ASSERT_TRUE(c.wait_done(id, 30s));
  EXPECT_EQ(c.state(id), "COMPLETED");
  EXPECT_EQ(read_file(log), "start\nend\n");
  EXPECT_NE(c.log("agent-cpu1").find("re-adopted 1 step(s)"), std::string::npos) << c.log("agent-cpu1");
}

// scontrol shutdown stops the controller and every agent (`shutdown
// slurmctld` the controller alone), silently as Slurm's; a plain user is
// refused and nothing stops. Running jobs keep running: the restarted
// daemons find the job still running and the queued job still queued.
TEST(Recovery, ScontrolShutdownStopsTheDaemonsAndLeavesTheJobsRunning) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string log = c.work() + "/shutdown.log";
  std::string running = std::to_string(c.submit({"-w", "cpu1", "-o", "/dev/null", "--wrap",
                                                 "echo start >> " + log + "; sleep 6; echo end >> " + log}));
  std::string held = std::to_string(c.submit({"-H", "-o", "/dev/null", "--wrap", "true"}));
  ASSERT_TRUE(c.wait_state(running, {"RUNNING"}));
  ASSERT_TRUE(eventually([&] { return read_file(log) == "start\n"; }, 5s));
  auto r = c.run("scontrol", {"shutdown", "bogus"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "invalid shutdown argument:bogus\n");
  if (auto user = ensure_user("droveruser")) {
    r = c.run("scontrol", {"shutdown"}, user->as());
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err.rfind("slurm_shutdown error: Invalid user id: only root, SlurmUser or an operator", 0), 0u) << r.err;
    EXPECT_FALSE(c.daemon_exited("controller", 500ms));
  }
  // The controller alone: the agents stay.
  r = c.run("scontrol", {"shutdown", "slurmctld"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "");
  EXPECT_TRUE(c.daemon_exited("controller", 5s));
  EXPECT_FALSE(c.daemon_exited("agent-cpu1", 500ms));
  ASSERT_TRUE(c.start_controller()) << c.error();
  ASSERT_TRUE(c.wait_nodes_responding());
  // Everything.
  r = c.run("scontrol", {"shut"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out + r.err, "");
  EXPECT_TRUE(c.daemon_exited("controller", 8s));
  for (const char* node : {"cpu1", "cpu2", "hgpu1", "lgpu1"}) {
    EXPECT_TRUE(c.daemon_exited(std::string("agent-") + node, 5s)) << node;
  }
  EXPECT_NE(c.log("controller").find("scontrol shutdown by"), std::string::npos) << c.log("controller");
  EXPECT_NE(c.log("agent-cpu1").find("shutting down at the controller's request"), std::string::npos);
  EXPECT_EQ(read_file(log), "start\n");  // the job runs on without its agent
  ASSERT_TRUE(c.start_controller()) << c.error();
  for (const auto& n : small_cluster().nodes) ASSERT_TRUE(c.start_agent(n.name)) << c.error();
  ASSERT_TRUE(c.wait_nodes_responding());
  EXPECT_EQ(c.state(held), "PENDING");
  ASSERT_TRUE(c.wait_done(running, 30s));
  EXPECT_EQ(c.state(running), "COMPLETED");
  EXPECT_EQ(read_file(log), "start\nend\n");
}

// The pid in a pid file, or -1.
pid_t pid_in(const std::string& path) {
  std::string text = read_file(path);
  return text.empty() ? -1 : static_cast<pid_t>(std::stol(text));
}

// slurm.conf's SlurmctldLogFile, SlurmdLogFile (%n), SlurmctldPidFile and
// SlurmdPidFile, and the signals an admin's tools send: logrotate's SIGUSR2
// reopens the log, `systemctl reload`'s SIGHUP rereads slurm.conf (the
// controller) or is said and survived (the agent) where it used to kill both.
TEST(Daemons, LogAndPidFilesFromSlurmConfAndTheSignalsAdminsSend) {
  char tmpl[] = "/tmp/drover-daemon-files-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string d = tmpl;
  ClusterDef def = small_cluster();
  def.extra = {"SlurmctldLogFile=" + d + "/log/slurmctld.log", "SlurmctldPidFile=" + d + "/slurmctld.pid",
               "SlurmdLogFile=" + d + "/log/slurmd-%n.log", "SlurmdPidFile=" + d + "/slurmd-%n.pid"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::string ctl_log = d + "/log/slurmctld.log", agent_log = d + "/log/slurmd-cpu1.log";
  const pid_t ctl = pid_in(d + "/slurmctld.pid"), agent = pid_in(d + "/slurmd-cpu1.pid");
  ASSERT_GT(ctl, 0);
  ASSERT_GT(agent, 0);
  EXPECT_NE(read_file("/proc/" + std::to_string(ctl) + "/cmdline").find("controller"), std::string::npos);
  EXPECT_NE(read_file("/proc/" + std::to_string(agent) + "/cmdline").find("cpu1"), std::string::npos);
  EXPECT_NE(read_file(ctl_log).find(" serving on unix:"), std::string::npos) << read_file(ctl_log);
  EXPECT_EQ(c.log("controller").find(" serving on unix:"), std::string::npos) << "not on stderr too";
  EXPECT_NE(read_file(agent_log).find("serving on "), std::string::npos) << read_file(agent_log);
  const std::string id = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "true"}));
  EXPECT_TRUE(eventually([&] { return read_file(ctl_log).find("job " + id + " submitted") != std::string::npos; }, 5s));

  // logrotate: the files move away, SIGUSR2, and the daemons write new ones.
  ASSERT_EQ(rename(ctl_log.c_str(), (ctl_log + ".1").c_str()), 0);
  ASSERT_EQ(rename(agent_log.c_str(), (agent_log + ".1").c_str()), 0);
  kill(ctl, SIGUSR2);
  kill(agent, SIGUSR2);
  EXPECT_TRUE(eventually([&] { return read_file(ctl_log).find("reopened the log file") != std::string::npos; }, 5s));
  EXPECT_TRUE(eventually([&] { return read_file(agent_log).find("reopened the log file") != std::string::npos; }, 5s));
  const std::string next = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "true"}));
  EXPECT_TRUE(eventually([&] { return read_file(ctl_log).find("job " + next + " submitted") != std::string::npos; }, 5s));
  EXPECT_EQ(read_file(ctl_log + ".1").find("job " + next + " "), std::string::npos);

  // A second controller on the same StateSaveLocation fails at start: said
  // where it was started, not only in the log file it had already opened.
  auto second = c.run_program(c.bin() + "/drover", {"controller", "--config", c.conf()});
  EXPECT_EQ(second.rc, 1);
  EXPECT_EQ(second.err.rfind("drover controller: ", 0), 0u) << second.err;
  EXPECT_NE(read_file(ctl_log).find(second.err), std::string::npos) << "and in the log";

  kill(ctl, SIGHUP);
  kill(agent, SIGHUP);
  EXPECT_TRUE(eventually([&] { return read_file(ctl_log).find("reconfigured from ") != std::string::npos; }, 5s))
      << read_file(ctl_log);
  EXPECT_TRUE(eventually([&] { return read_file(agent_log).find("received SIGHUP") != std::string::npos; }, 5s));
  EXPECT_FALSE(c.daemon_exited("controller", 500ms));
  EXPECT_FALSE(c.daemon_exited("agent-cpu1", 100ms));
  EXPECT_EQ(c.run("scontrol", {"ping"}).rc, 0);
  std::filesystem::remove_all(d);
}

TEST(Nodes, FewerGpusThanConfiguredDrainsWithSlurmsReason) {
  ClusterDef d = small_cluster();
  d.nodes[0].fake_gpus = "h100:4";  // configured with 8
  TestCluster c(d);
  REQUIRE_CLUSTER(c);
  auto f = c.node_fields("hgpu1");
  EXPECT_EQ(f["State"], "IDLE+DRAIN+INVALID_REG") << c.run("scontrol", {"show", "node", "hgpu1"}).out;
  std::string reason = c.run("sinfo", {"-h", "-R", "-o", "%E"}).out;
  EXPECT_EQ(reason, "gres/gpu count reported lower than configured (4 < 8)\n");
}

TEST(Users, AnotherUserCannotCancelOrHoldTheJob) {
  auto alice = ensure_user("drovere2ea");
  auto bob = ensure_user("drovere2eb");
  if (!alice || !bob) GTEST_SKIP() << "needs root to create test users";
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string id = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "sleep 30"}, alice->as()));
  ASSERT_NE(id, "-1") << c.last_error();
  ASSERT_TRUE(c.wait_state(id, {"RUNNING"}));
  auto r = c.run("scancel", {id}, bob->as());
  EXPECT_EQ(r.rc, 210) << "Slurm's ESLURM_ACCESS_DENIED (2002) as the exit status, as its scancel exits";
  EXPECT_EQ(r.err, "scancel: error: Kill job error on job id " + id + ": Access/permission denied\n");
  // Slurm 22.05's words for these on the anchor cluster.
  auto u = c.run("scontrol", {"update", "JobId=" + id, "TimeLimit=1"}, bob->as());
  EXPECT_EQ(u.rc, 1);
  EXPECT_EQ(u.err, "Invalid user id for job " + id + "\n");
  auto h = c.run("scontrol", {"hold", id}, bob->as());
  EXPECT_EQ(h.rc, 1);
  EXPECT_EQ(h.err, "Invalid user id for job " + id + "\nslurm_suspend error: Invalid user id\n");
  auto drain = c.run("scontrol", {"update", "NodeName=cpu1", "State=DRAIN", "Reason=x"}, bob->as());
  EXPECT_EQ(drain.rc, 1);
  EXPECT_EQ(drain.err, "slurm_update error: Invalid user id\n");
  EXPECT_EQ(c.state(id), "RUNNING");
  auto own = c.run("scancel", {id}, alice->as());
  EXPECT_EQ(own.rc, 0) << own.err;
  EXPECT_TRUE(c.wait_state(id, {"CANCELLED"}));
}

// PrivateData=jobs, as Slurm 22.05 answered alice on the anchor cluster: her
// squeue lists only her jobs, another's id reads as invalid (squeue -j,
// scontrol show job), squeue -s and scontrol show step keep to her jobs too,
// and so does sacct (Slurm's follows slurmdbd.conf's PrivateData, which
// Drover, keeping its accounting itself, reads from slurm.conf); the
// privileged see every job.
TEST(Users, PrivateDataJobsShowsAUserOnlyTheirOwnJobs) {
  auto alice = ensure_user("drovere2ea");
  auto bob = ensure_user("drovere2eb");
  if (!alice || !bob) GTEST_SKIP() << "needs root to create test users";
  ClusterDef def = small_cluster();
  def.extra = {"PrivateData=jobs"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  const std::string hers = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "sleep 30"}, alice->as()));
  const std::string his = std::to_string(c.submit({"-o", "/dev/null", "--wrap", "sleep 30"}, bob->as()));
  ASSERT_TRUE(c.wait_state(hers, {"RUNNING"}));
  ASSERT_TRUE(c.wait_state(his, {"RUNNING"}));
  auto q = c.run("squeue", {"-h", "-o", "%i %u"}, alice->as());
  EXPECT_EQ(q.out, hers + " drovere2ea\n");
  auto other = c.run("squeue", {"-j", his}, alice->as());
  EXPECT_EQ(other.rc, 1);
  EXPECT_EQ(other.err, "slurm_load_jobs error: Invalid job id specified\n");
  auto show = c.run("scontrol", {"show", "job", his}, alice->as());
  EXPECT_EQ(show.rc, 1);
  EXPECT_EQ(show.err, "slurm_load_jobs error: Invalid job id specified\n");
  EXPECT_EQ(c.run("scontrol", {"-o", "show", "job"}, alice->as()).out.find("JobId=" + his + " "), std::string::npos);
  auto steps = c.run("squeue", {"-s", "-h", "-o", "%i"}, alice->as());
  EXPECT_EQ(steps.out, hers + ".batch\n");
  auto step = c.run("scontrol", {"show", "step", his + ".batch"}, alice->as());
  EXPECT_EQ(step.rc, 1);
  auto acct = c.run("sacct", {"-a", "-X", "-n", "-P", "-o", "JobID"}, alice->as());
  EXPECT_EQ(acct.out, hers + "\n") << "sacct too (Slurm: slurmdbd.conf's PrivateData)";
  EXPECT_EQ(c.run("sacct", {"-j", his, "-X", "-n", "-P", "-o", "JobID"}, alice->as()).out, "");
  auto all = c.run("squeue", {"-h", "-o", "%i", "--sort=i"});
  EXPECT_EQ(all.out, hers + "\n" + his + "\n") << "root sees every job";
  EXPECT_EQ(c.run("scancel", {hers, his}).rc, 0);
}

// PrivateData's other words, as Slurm 22.05 answered alice on the anchor
// cluster (slurmctld's and slurmdbd's): nodes and partitions refused, only
// her reservations, her own usage rows, her own user and associations, no
// account or event list; root sees everything.
TEST(Users, PrivateDataHidesNodesPartitionsReservationsUsageAndAccounts) {
  auto alice = ensure_user("drovere2ea");
  auto bob = ensure_user("drovere2eb");
  if (!alice || !bob) GTEST_SKIP() << "needs root to create test users";
  ClusterDef def = small_cluster();
  def.extra = {"PrivateData=nodes,partitions,reservations,usage,users,accounts,events,cloud"};
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  ASSERT_EQ(c.run("sacctmgr", {"-i", "add", "account", "research"}).rc, 0);
  ASSERT_EQ(c.run("sacctmgr", {"-i", "add", "user", "drovere2ea,drovere2eb", "Account=research"}).rc, 0);
  for (const auto& [name, who] : {std::pair{"hers", "Users=drovere2ea"}, std::pair{"his", "Users=drovere2eb"},
                                  std::pair{"team", "Accounts=research"}}) {
    auto made = c.run("scontrol", {"create", "reservation", std::string("ReservationName=") + name,
                                   "StartTime=now+1hour", "Duration=60", "Nodes=cpu2", who, "Flags=OVERLAP"});
    ASSERT_EQ(made.rc, 0) << made.err;
  }
  const RunAs as = alice->as();
  auto sinfo = c.run("sinfo", {}, as);
  EXPECT_EQ(sinfo.rc, 1);
  EXPECT_EQ(sinfo.out, "");
  EXPECT_EQ(sinfo.err, "slurm_load_partitions: Access/permission denied\n");
  auto node = c.run("scontrol", {"show", "node", "cpu1"}, as);
  EXPECT_EQ(node.rc, 1);
  EXPECT_EQ(node.err, "slurm_load_node error: Access/permission denied\n");
  auto part = c.run("scontrol", {"show", "partition"}, as);
  EXPECT_EQ(part.rc, 1);
  EXPECT_EQ(part.err, "slurm_load_partitions error: Access/permission denied\n");
  auto resv = c.run("scontrol", {"-o", "show", "reservation"}, as);
  EXPECT_EQ(resv.rc, 0) << resv.err;
  std::vector<std::string> names;
  for (const auto& l : lines_of(resv.out)) names.push_back(l.substr(0, l.find(' ')));
  EXPECT_EQ(names, (std::vector<std::string>{"ReservationName=hers", "ReservationName=team"}));
  auto listed = c.run("sinfo", {"-T", "-h"}, as);  // -T needs neither nodes nor partitions
  EXPECT_EQ(listed.rc, 0) << listed.err;
  names.clear();
  for (const auto& l : lines_of(listed.out)) names.push_back(l.substr(0, l.find(' ')));
  EXPECT_EQ(names, (std::vector<std::string>{"hers", "team"}));
  auto his = c.run("scontrol", {"show", "reservation", "his"}, as);
  EXPECT_EQ(his.rc, 1);
  EXPECT_EQ(his.out, "Reservation his not found\n");
  EXPECT_EQ(c.run("sshare", {"-a", "-n", "-P", "-o", "Account,User"}, as).out, "research|drovere2ea\n");
  EXPECT_EQ(c.run("sacctmgr", {"-n", "-P", "show", "user", "format=User"}, as).out, "drovere2ea\n");
  EXPECT_EQ(c.run("sacctmgr", {"-n", "-P", "show", "assoc", "format=Account,User"}, as).out,
            "root|\nresearch|\nresearch|drovere2ea\n");
  auto accounts = c.run("sacctmgr", {"-n", "show", "account"}, as);
  EXPECT_EQ(accounts.rc, 1);
  EXPECT_EQ(accounts.err, "sacctmgr: error: Access/permission denied\n Problem with query.\n");
  auto events = c.run("sacctmgr", {"-n", "show", "event"}, as);
  EXPECT_EQ(events.rc, 1);
  EXPECT_EQ(events.err, "sacctmgr: error: Access/permission denied\n Error with request: Access/permission denied\n");
  EXPECT_NE(c.run("sacctmgr", {"-n", "-P", "show", "tres"}, as).out.find("gres|gpu:h100|"), std::string::npos)
      << "the TRES stay public";
  EXPECT_EQ(c.run("squeue", {"-h", "-w", "cpu1"}, as).rc, 0) << "squeue needs no node list";

  // Root (as SlurmUser and operators) sees all of it.
  auto all = c.run("sinfo", {"-h", "-o", "%P"});
  EXPECT_EQ(all.rc, 0) << all.err;
  EXPECT_NE(all.out, "");
  EXPECT_EQ(c.run("scontrol", {"show", "node", "cpu1"}).rc, 0);
  EXPECT_EQ(lines_of(c.run("scontrol", {"-o", "show", "reservation"}).out).size(), 3u);
  auto shares = c.run("sshare", {"-a", "-n", "-P", "-o", "Account,User"}).out;
  EXPECT_NE(shares.find("research|drovere2eb"), std::string::npos) << shares;
  EXPECT_EQ(c.run("sacctmgr", {"-n", "show", "account"}).rc, 0);
  EXPECT_EQ(c.run("sacctmgr", {"-n", "show", "event"}).rc, 0);
}

// Partitions' AllowGroups (a user's own group names them here: useradd makes
// one per user), RootOnly, DisableRootJobs and AllocNodes refuse a job with
// Slurm 22.05's words (anchor cluster) and Drover's line saying which rule;
// a job naming such a partition and another runs in the other.
TEST(Users, PartitionsAdmitOnlyTheirGroupsRootAndSubmitHosts) {
  auto alice = ensure_user("drovere2ea");
  auto bob = ensure_user("drovere2eb");
  if (!alice || !bob) GTEST_SKIP() << "needs root to create test users";
  ClusterDef def = small_cluster();
  def.partitions.push_back("PartitionName=hers Nodes=cpu[1-2] AllowGroups=drovere2ea");
  def.partitions.push_back("PartitionName=rootonly Nodes=cpu[1-2] RootOnly=YES");
  def.partitions.push_back("PartitionName=noroot Nodes=cpu[1-2] DisableRootJobs=YES");
  def.partitions.push_back("PartitionName=elsewhere Nodes=cpu[1-2] AllocNodes=login[01-02]");
  TestCluster c(def);
  REQUIRE_CLUSTER(c);
  auto refused = [&](const std::vector<std::string>& args, const RunAs& as, const std::string& slurm,
                     const std::string& rule) {
    std::vector<std::string> all = {"-o", "/dev/null"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--wrap", "true"});
    auto r = c.run("sbatch", all, as);
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_EQ(r.err.substr(0, r.err.find('\n') + 1), "sbatch: error: Batch job submission failed: " + slurm + "\n");
    EXPECT_NE(r.err.find(rule), std::string::npos) << r.err;
  };
  EXPECT_GT(c.submit({"-p", "hers", "-o", "/dev/null", "--wrap", "true"}, alice->as()), 0) << c.last_error();
  EXPECT_GT(c.submit({"-p", "hers", "-o", "/dev/null", "--wrap", "true"}), 0) << "root always may";
  refused({"-p", "hers"}, bob->as(), "User's group not permitted to use this partition",
          "drover: partition hers admits members of drovere2ea (AllowGroups); drovere2eb is in drovere2eb");
  refused({"-p", "rootonly"}, bob->as(), "Access/permission denied", "(RootOnly=YES)");
  EXPECT_GT(c.submit({"-p", "rootonly", "-o", "/dev/null", "--wrap", "true"}), 0) << c.last_error();
  refused({"-p", "noroot"}, {}, "Invalid user id", "(DisableRootJobs=YES)");
  EXPECT_GT(c.submit({"-p", "noroot", "-o", "/dev/null", "--wrap", "true"}, bob->as()), 0) << c.last_error();
  refused({"-p", "elsewhere"}, {}, "Access/permission denied", "takes jobs submitted from login01,login02 (AllocNodes)");
  auto srun = c.run("srun", {"-p", "rootonly", "true"}, bob->as());
  EXPECT_EQ(srun.rc, 1);
  EXPECT_EQ(srun.err.substr(0, srun.err.find('\n') + 1),
            "srun: error: Unable to allocate resources: Access/permission denied\n");
  const std::string either = std::to_string(c.submit({"-p", "rootonly,compute", "-o", "/dev/null", "--wrap", "true"},
                                                     bob->as()));
  ASSERT_TRUE(c.wait_done(either)) << either;
  EXPECT_EQ(c.job_fields(either)["Partition"], "compute");
  auto shown = c.run("scontrol", {"show", "partition", "elsewhere"});
  EXPECT_NE(shown.out.find("AllocNodes=login[01-02] "), std::string::npos) << shown.out;
  EXPECT_NE(c.run("scontrol", {"show", "partition", "rootonly"}).out.find(" RootOnly=YES "), std::string::npos);
  EXPECT_NE(c.run("scontrol", {"show", "partition", "noroot"}).out.find(" DisableRootJobs=YES "), std::string::npos);
}

// A login node: a host that is not the controller's (emulated here by a
// slurm.conf that names the controller's host otherwise and keeps no state
// locally), where the commands go over TCP and plain users, who cannot read
// the cluster key, sign through the host's local signer (an agent serves it
// at AuthInfo socket=; `drover authd` where no agent runs), as munged does
// for Slurm. Their jobs and srun steps run as them; they still may not touch
// another user's job.
TEST(Users, PlainUsersOnALoginNodeReachTheControllerThroughTheLocalSigner) {
  auto alice = ensure_user("drovere2ea");
  auto bob = ensure_user("drovere2eb");
  if (!alice || !bob) GTEST_SKIP() << "needs root to create test users";
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string login = write_login_conf(c);
  auto as_login = [&](const std::vector<std::string>& args) {
    std::vector<std::string> out{"--config", login};
    out.insert(out.end(), args.begin(), args.end());
    return out;
  };
  auto sub = c.run("sbatch", as_login({"-N2", "-p", "compute", "-o", "login-%j.out", "--wrap", "id -u; srun -l id -u"}),
                   alice->as());
  ASSERT_EQ(sub.rc, 0) << sub.err;
  std::string id = sub.out.substr(sub.out.rfind(' ') + 1);
  id.pop_back();
  ASSERT_TRUE(c.wait_done(id, 30s));
  EXPECT_EQ(c.state(id), "COMPLETED") << read_file(c.work() + "/login-" + id + ".out");
  const std::string uid = std::to_string(alice->uid);
  auto job_lines = lines_of(read_file(c.work() + "/login-" + id + ".out"));
  std::sort(job_lines.begin(), job_lines.end());  // the two tasks' lines come in either order
  EXPECT_EQ(job_lines, (std::vector<std::string>{"0: " + uid, "1: " + uid, uid}));
  // squeue, srun (a step over TCP, its output streamed back) and sacct from the login node.
  auto q = c.run("squeue", as_login({"-h", "-t", "all", "-j", id, "-o", "%i %u %T"}), alice->as());
  EXPECT_EQ(q.out, id + " " + alice->name + " COMPLETED\n") << q.err;
  auto run = c.run("srun", as_login({"-N2", "-p", "compute", "-l", "id", "-u"}), alice->as());
  EXPECT_EQ(run.rc, 0) << run.err;
  auto lines = lines_of(run.out);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"0: " + uid, "1: " + uid})) << run.err;
  // sbcast over TCP: the file reaches her running job's nodes, written as her.
  const std::string running =
      std::to_string(c.submit({"-N2", "-p", "compute", "-o", "/dev/null", "--wrap", "sleep 30"}, alice->as()));
  ASSERT_TRUE(c.wait_state(running, {"RUNNING"})) << c.last_error();
  const std::string src = c.work() + "/login-src", copy = c.work() + "/login-copy";
  { std::ofstream(src) << "from the login node\n"; }
  auto cast = c.run("sbcast", as_login({"-f", "-j", running, src, copy}), alice->as());
  EXPECT_EQ(cast.rc, 0) << cast.err;
  EXPECT_EQ(read_file(copy), "from the login node\n");
  struct stat copied {};
  EXPECT_EQ(stat(copy.c_str(), &copied), 0);
  EXPECT_EQ(copied.st_uid, alice->uid);
  EXPECT_EQ(c.run("scancel", {running}).rc, 0);
  // Another user's job is still out of reach.
  std::string held = std::to_string(c.submit({"-H", "-o", "/dev/null", "--wrap", "true"}, alice->as()));
  auto cancel = c.run("scancel", as_login({held}), bob->as());
  EXPECT_EQ(cancel.rc, 210);
  EXPECT_EQ(cancel.err, "scancel: error: Kill job error on job id " + held + ": Access/permission denied\n");
  EXPECT_EQ(c.state(held), "PENDING");
  // The agent that serves the signer is killed: another agent of the host takes it over.
  std::string serving;
  for (const char* node : {"hgpu1", "lgpu1", "cpu1", "cpu2"}) {
    if (c.log(std::string("agent-") + node).find("(plain users' tokens for TCP)") != std::string::npos) serving = node;
  }
  ASSERT_FALSE(serving.empty());
  c.kill_agent(serving, SIGKILL);
  EXPECT_TRUE(eventually([&] { return c.run("squeue", as_login({"-h"}), alice->as()).rc == 0; }, 10s));
  // Without a signer, the refusal says why.
  write_login_conf(c, "AuthInfo=key=" + c.dir() + "/drover.key,socket=" + c.dir() + "/no-signer.sock");
  auto refused = c.run("squeue", as_login({"-h"}), alice->as());
  EXPECT_EQ(refused.rc, 1);
  EXPECT_NE(refused.err.find("the host's local signer gave no token"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("no-signer.sock"), std::string::npos) << refused.err;
}

TEST(Users, JobRunsAsItsSubmitter) {
  auto alice = ensure_user("drovere2ea");
  if (!alice) GTEST_SKIP() << "needs root to create test users";
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string id = std::to_string(c.submit({"-o", "whoami-%j.out", "--wrap", "id -u; id -g; echo $SLURM_JOB_USER"},
                                           alice->as()));
  ASSERT_NE(id, "-1") << c.last_error();
  ASSERT_TRUE(c.wait_done(id));
  std::string out = c.work() + "/whoami-" + id + ".out";
  EXPECT_EQ(read_file(out), std::to_string(alice->uid) + "\n" + std::to_string(alice->gid) + "\n" + alice->name + "\n");
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, alice->uid);
  EXPECT_EQ(c.job_fields(id)["UserId"], alice->name + "(" + std::to_string(alice->uid) + ")");
  // root's sbatch --uid submits as that user (runs as them, with root's group unless --gid, as
  // Slurm 22.05 ran it); a user's is refused before it asks, in Slurm's words and status (anchor cluster).
  std::string as = std::to_string(c.submit({"--uid", alice->name, "-o", "as-%j.out", "--wrap", "id -u; id -g"}));
  ASSERT_NE(as, "-1") << c.last_error();
  ASSERT_TRUE(c.wait_done(as));
  EXPECT_EQ(read_file(c.work() + "/as-" + as + ".out"), std::to_string(alice->uid) + "\n0\n");
  as = std::to_string(c.submit({"--uid", std::to_string(alice->uid), "--gid", std::to_string(alice->gid), "-o",
                                "as-%j.out", "--wrap", "id -u; id -g"}));
  ASSERT_TRUE(c.wait_done(as));
  EXPECT_EQ(read_file(c.work() + "/as-" + as + ".out"),
            std::to_string(alice->uid) + "\n" + std::to_string(alice->gid) + "\n");
  EXPECT_EQ(c.job_fields(as)["UserId"], alice->name + "(" + std::to_string(alice->uid) + ")");
  auto refused = c.run("sbatch", {"--uid=root", "--wrap", "true"}, alice->as());
  EXPECT_EQ(refused.rc, 255);
  EXPECT_EQ(refused.err, "sbatch: error: --uid only permitted by root user\n");
  refused = c.run("sbatch", {"--uid=nosuchuserhere", "--wrap", "true"});
  EXPECT_EQ(refused.rc, 255);
  EXPECT_EQ(refused.err, "sbatch: error: Invalid --uid specification\n");
}

}  // namespace
}  // namespace drover::e2e
