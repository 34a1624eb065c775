// `scontrol show job|node|partition|config` against real Slurm 22.05 output:
// the anchor goldens (testdata/slurm-22.05) and captures from a private
// Slurm 22.05.8 instance (testdata/oracle, see testdata/README.md).
#include "cli/scontrol_show.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cli/cli_test_support.hpp"
#include "cli/sinfo_output.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using test::utc;

class ScontrolShow : public ::testing::Test {
 protected:
  void SetUp() override { test::use_utc(); }
};

JobView golden_job(int64_t id, const char* name) {
  JobView j;
  j.job_id = id;
  j.name = name;
  j.user = j.group = "alice";
  j.uid = j.gid = 2001;
  j.account = "research";
  j.qos = "normal";
  j.partition = "training";
  j.alloc_node = "localhost";
  j.alloc_sid = 2224;
  j.time_limit = 3600;
  j.mem_per_cpu_mb = 4096;
  j.work_dir = "/home/alice/golden-work";
  j.std_in = j.std_out = j.std_err = "/dev/null";
  return j;
}

// `scontrol show step`, as Slurm 22.05 printed it on the anchor cluster
// (2026-12-04: an srun step outside an allocation, and an sbatch job's batch
// step, whose CPUs and TRES Slurm leaves empty).
TEST_F(ScontrolShow, StepMatchesRealSlurm) {
  StepDetailView s;
  s.id = "34036.0";
  s.uid = 2001;
  s.start_time = utc("2026-12-04T00:53:28");
  s.state = "RUNNING";
  s.partition = "compute";
  s.nodes = "cpu01";
  s.num_nodes = 1;
  s.cpus = 1;
  s.tasks = 1;
  s.name = "stepname";
  s.tres = "cpu=1,mem=4G,node=1";
  s.srun_host = "vm";
  s.srun_pid = 17685;
  EXPECT_EQ(render_step_detail(s, false),
            "StepId=34036.0 UserId=2001 StartTime=2026-12-04T00:53:28 TimeLimit=UNLIMITED\n"
            "   State=RUNNING Partition=compute NodeList=cpu01\n"
            "   Nodes=1 CPUs=1 Tasks=1 Name=stepname Network=(null)\n"
            "   TRES=cpu=1,mem=4G,node=1\n"
            "   ResvPorts=(null)\n"
            "   CPUFreqReq=Default Dist=Block\n"
            "   SrunHost:Pid=vm:17685\n\n");
  EXPECT_EQ(render_step_detail(s, true),
            "StepId=34036.0 UserId=2001 StartTime=2026-12-04T00:53:28 TimeLimit=UNLIMITED State=RUNNING "
            "Partition=compute NodeList=cpu01 Nodes=1 CPUs=1 Tasks=1 Name=stepname Network=(null) "
            "TRES=cpu=1,mem=4G,node=1 ResvPorts=(null) CPUFreqReq=Default Dist=Block SrunHost:Pid=vm:17685\n");
  StepDetailView b;
  b.id = "34037.batch";
  b.uid = 2001;
  b.start_time = utc("2026-12-04T00:53:37");
  b.state = "RUNNING";
  b.partition = "compute";
  b.nodes = "cpu01";
  b.num_nodes = 1;
  b.tasks = 1;
  b.name = "batch";
  b.batch = true;
  EXPECT_EQ(render_step_detail(b, false),
            "StepId=34037.batch UserId=2001 StartTime=2026-12-04T00:53:37 TimeLimit=UNLIMITED\n"
            "   State=RUNNING Partition=compute NodeList=cpu01\n"
            "   Nodes=1 CPUs=0 Tasks=1 Name=batch Network=(null)\n"
            "   TRES=(null)\n"
            "   ResvPorts=(null)\n"
            "   CPUFreqReq=Default\n"
            "   SrunHost:Pid=(null):0\n\n");
  b.time_limit = 600;
  EXPECT_NE(render_step_detail(b, false).find("TimeLimit=00:10:00"), std::string::npos);
}

TEST_F(ScontrolShow, PendingJobMatchesGolden) {
  JobView j = golden_job(108, "train-wait");
  j.priority = 7641;
  j.reason = "Resources";
  j.submit_time = j.eligible_time = j.accrue_time = utc("2026-11-29T21:51:38");
  j.start_time = utc("2026-11-29T22:51:38");
  j.end_time = utc("2026-11-29T23:51:38");
  j.last_sched_eval = utc("2026-11-29T21:52:12");
  j.scheduler = "Backfill:*";
  j.sched_nodes = "gpu04";
  j.tres = {{"cpu", 1}, {"mem", 4096}, {"node", 1}, {"billing", 1}, {"gres/gpu", 8}};
  j.tres_per_node = "gres:gpu:8";
  EXPECT_EQ(render_job_detail(j, test::anchor_now(), false),
            test::read_golden("scontrol_show_job_pending_gpu.txt").output);
}

// CpusPerTres= and MemPerTres= come after Power=, before TresPerJob= (Slurm 22.05, anchor cluster).
TEST_F(ScontrolShow, PerGpuCpusAndMemoryComeBeforeTresPerJob) {
  JobView j = golden_job(108, "train-wait");
  j.cpus_per_tres = "gres:gpu:8";
  j.mem_per_tres = "gres:gpu:20480";
  j.tres_per_job = "gres:gpu:1";
  std::string out = render_job_detail(j, test::anchor_now(), false);
  EXPECT_NE(out.find("   Power=\n   CpusPerTres=gres:gpu:8\n   MemPerTres=gres:gpu:20480\n   TresPerJob=gres:gpu:1\n"),
            std::string::npos)
      << out;
}

TEST_F(ScontrolShow, RunningJobMatchesGolden) {
  JobView j = golden_job(107, "train-gpu2");
  j.priority = 6703;
  j.state = JobState::kRunning;
  j.submit_time = j.eligible_time = j.accrue_time = utc("2026-11-29T21:51:35");
  j.start_time = j.last_sched_eval = utc("2026-11-29T21:51:38");
  j.end_time = utc("2026-11-29T22:51:38");
  j.nodes = j.batch_host = "gpu04";
  j.tres = {{"cpu", 1}, {"mem", 4096}, {"node", 1}, {"billing", 1}, {"gres/gpu", 2}, {"gres/gpu:a100", 2}};
  j.tres_per_node = "gres:gpu:2";
  EXPECT_EQ(render_job_detail(j, test::anchor_now(), false),
            test::read_golden("scontrol_show_job_running_gpu.txt").output);
}

// A capture from real Slurm in testdata/oracle.
test::Golden oracle(const char* file) {
  std::string dir = std::string(DROVER_SOURCE_DIR) + "/src/cli/testdata/oracle";
  setenv("DROVER_GOLDEN_DIR", dir.c_str(), 1);
  test::Golden g = test::read_golden(file);
  unsetenv("DROVER_GOLDEN_DIR");
  return g;
}

// Job 97 of the private instance: a held array with most options set.
JobView oracle_array_job() {
  JobView j;
  j.job_id = 97;
  j.array_job_id = 97;
  j.array_pending_tasks = {0, 1, 2, 3};
  j.array_max_running = 2;
  j.name = "full job";
  j.user = j.group = "root";
  j.nice = 5;
  j.reason = "JobHeldUser";
  j.dependency = "afterok:1(unfulfilled)";
  j.time_limit = 30 * 60;
  j.submit_time = j.last_sched_eval = utc("2026-11-29T23:55:07");
  j.eligible_time = j.accrue_time = j.start_time = utc("2026-11-30T00:55:07");
  j.end_time = utc("2026-11-30T01:25:07");
  j.partition = "training";
  j.alloc_node = "localhost";
  j.alloc_sid = 7109;
  j.req_nodes = "gpu01";
  j.exc_nodes = "gpu02";
  j.num_nodes = j.max_nodes = 2;
  j.num_cpus = 8;
  j.num_tasks = 4;
  j.cpus_per_task = 2;
  j.tres = {{"cpu", 8}, {"mem", 8192}, {"node", 1}, {"billing", 8}};
  j.ntasks_per_node = 2;
  j.min_cpus_per_node = 4;
  j.mem_per_node_mb = 8192;
  j.features = "h100";
  j.over_subscribe = "NO";
  j.work_dir = "/tmp/hcli-slurm/work";
  j.comment = "hello world";
  j.std_err = "/tmp/hcli-slurm/work/err-97.txt";
  j.std_in = "/dev/null";
  j.std_out = "/tmp/hcli-slurm/work/out-97.txt";
  j.tres_per_node = "gres:gpu:h100:2";
  j.mail_user = "a@b";
  j.mail_type = "END";
  return j;
}

TEST_F(ScontrolShow, ArrayJobWithCommentAndMailMatchesRealSlurm) {
  JobView j = oracle_array_job();
  test::Golden multi = oracle("scontrol_show_job_array_held.txt");
  test::Golden one = oracle("scontrol_show_job_o_array_held.txt");
  EXPECT_EQ(render_job_detail(j, utc("2026-11-29T23:56:00"), false), multi.output);
  EXPECT_EQ(render_job_detail(j, utc("2026-11-29T23:56:00"), true), one.output);
}

// `scontrol -d show job` on the anchor cluster (testdata/oracle/scontrol_show_job_d_*).
JobView detail_job(int64_t id, const char* name, const char* partition, const char* submit, const char* start) {
  JobView j = golden_job(id, name);
  j.partition = partition;
  j.state = JobState::kRunning;
  j.submit_time = j.eligible_time = j.accrue_time = utc(submit);
  j.start_time = j.last_sched_eval = utc(start);
  j.alloc_sid = 28766;
  j.time_limit = kInfinite;
  j.work_dir = "/home/alice";
  return j;
}

TEST_F(ScontrolShow, DetailsShowJobGresAndOneLinePerNodeOfDifferentGpus) {
  JobView j = detail_job(28008, "dd8", "training", "2026-12-03T15:15:57", "2026-12-03T15:16:05");
  j.priority = 7074;
  j.nodes = "gpu[02-03]";
  j.batch_host = "gpu02";
  j.num_nodes = 2;
  j.num_cpus = j.num_tasks = 2;
  j.tres = {{"cpu", 2}, {"mem", 8192}, {"node", 2}, {"billing", 2}, {"gres/gpu", 4}, {"gres/gpu:a100", 2},
            {"gres/gpu:h100", 2}};
  j.tres_per_node = "gres:gpu:2";
  j.job_gres = "gpu:h100:2,gpu:a100:2";
  j.node_detail = {{"gpu02", "0", 4096, "gpu:h100:2(IDX:0-1)"}, {"gpu03", "0", 4096, "gpu:a100:2(IDX:0-1)"}};
  const UnixTime now = utc("2026-12-03T15:17:06");
  EXPECT_EQ(render_job_detail(j, now, false, true), oracle("scontrol_show_job_d_two_gpu_nodes.txt").output);
  EXPECT_EQ(render_job_detail(j, now, true, true), oracle("scontrol_show_job_d_o_two_gpu_nodes.txt").output);
  // Without -d: neither DerivedExitCode nor the allocation's lines.
  std::string plain = render_job_detail(j, now, false);
  EXPECT_EQ(plain.find("DerivedExitCode"), std::string::npos);
  EXPECT_EQ(plain.find("JOB_GRES"), std::string::npos);
  EXPECT_EQ(plain.find("CPU_IDs"), std::string::npos);
}

TEST_F(ScontrolShow, DetailsOfCpuJobsSayNullGresAndGroupNodesAlike) {
  JobView j = detail_job(28007, "dd7", "compute", "2026-12-03T15:14:58", "2026-12-03T15:14:59");
  j.priority = 6471;
  j.time_limit = 7 * 24 * 3600;
  j.nodes = j.batch_host = "cpu01";
  j.num_cpus = j.cpus_per_task = j.min_cpus_per_node = 3;
  j.mem_per_cpu_mb = 0;
  j.mem_per_node_mb = 1000;
  j.tres = {{"cpu", 3}, {"mem", 1000}, {"node", 1}, {"billing", 3}};
  j.node_detail = {{"cpu01", "3-5", 1000, ""}};
  test::Golden running = oracle("scontrol_show_job_d_cpu.txt");
  // Compare every line but the ones that carry times (RunTime, the clock of the capture).
  auto without_times = [](const std::string& s) {
    std::string out;
    for (const auto& line : split(s, '\n'))
      if (line.find("RunTime=") == std::string::npos && line.find("SubmitTime=") == std::string::npos &&
          line.find("AccrueTime=") == std::string::npos && line.find("StartTime=") == std::string::npos &&
          line.find("LastSchedEval=") == std::string::npos && line.find("Priority=") == std::string::npos)
        out += line + "\n";
    return out;
  };
  EXPECT_EQ(without_times(render_job_detail(j, utc("2026-12-03T15:17:00"), false, true)),
            without_times(running.output));

  JobView done = detail_job(28002, "dd2", "compute", "2026-12-03T15:14:58", "2026-12-03T15:14:59");
  done.priority = 6471;
  done.state = JobState::kCompleted;
  done.end_time = utc("2026-12-03T15:16:59");
  done.time_limit = 7 * 24 * 3600;
  done.nodes = "cpu[01-02]";
  done.batch_host = "cpu01";
  done.num_nodes = 2;
  done.num_cpus = done.num_tasks = 6;
  done.ntasks_per_node = done.min_cpus_per_node = 3;
  done.tres = {{"cpu", 6}, {"mem", 24576}, {"node", 2}, {"billing", 6}};
  done.node_detail = {{"cpu[01-02]", "0-1,32", 12288, ""}};
  EXPECT_EQ(render_job_detail(done, utc("2026-12-03T15:18:00"), false, true),
            oracle("scontrol_show_job_d_two_cpu_nodes_done.txt").output);
}

NodeView node_of(const std::vector<NodeView>& nodes, const std::string& name) {
  for (const auto& n : nodes)
    if (n.name == name) return n;
  ADD_FAILURE() << "no node " << name;
  return {};
}

TEST_F(ScontrolShow, NodesMatchGoldens) {
  NodeView idle = node_of(test::anchor_nodes_idle(), "gpu01");
  idle.last_busy_time = utc("2026-11-29T21:50:44");
  EXPECT_EQ(render_node_detail(idle, false), test::read_golden("scontrol_show_node_gpu01_idle.txt").output);

  NodeView busy = node_of(test::anchor_nodes_busy(), "gpu01");
  busy.last_busy_time = utc("2026-11-29T21:51:30");
  EXPECT_EQ(render_node_detail(busy, false), test::read_golden("scontrol_show_node_gpu01_busy.txt").output);

  NodeView gpu04 = node_of(test::anchor_nodes_busy(), "gpu04");
  gpu04.last_busy_time = utc("2026-11-29T21:51:29");
  EXPECT_EQ(render_node_detail(gpu04, false), test::read_golden("scontrol_show_node_gpu04_busy.txt").output);
}

TEST_F(ScontrolShow, DrainedNodeShowsStateFlagsAndReason) {
  NodeView n = node_of(test::anchor_nodes_idle(), "hm01");
  n.port = 27021;
  n.os = "Linux 6.18.44-fc-v595 #1 SMP PREEMPT_DYNAMIC @0";
  n.cpu_load = 6.33;
  n.free_memory_mb = 20927;
  n.boot_time = utc("2026-11-29T23:10:14");
  n.slurmd_start_time = utc("2026-11-29T23:21:14");
  n.last_busy_time = utc("2026-11-29T23:55:30");
  n.state.drain = true;
  n.reason = "disk bad";
  n.reason_user = "root";
  n.reason_time = utc("2026-11-29T23:55:37");
  test::Golden multi = oracle("scontrol_show_node_drained.txt");
  test::Golden one = oracle("scontrol_show_node_o_drained.txt");
  EXPECT_EQ(render_node_detail(n, false), multi.output);
  EXPECT_EQ(render_node_detail(n, true), one.output);
}

TEST_F(ScontrolShow, PartitionsMatchGolden) {
  std::string out;
  for (const auto& p : test::anchor_partitions()) out += render_partition_detail(p, false);
  EXPECT_EQ(out, test::read_golden("scontrol_show_partition.txt").output);
}

// A partition with TRESBillingWeights ends with that line, as written, after
// TRES= (Slurm 22.05 on the anchor cluster: "   TRESBillingWeights=CPU=1.0,Mem=0.25G").
TEST_F(ScontrolShow, PartitionBillingWeightsLineFollowsTres) {
  PartitionView p = test::anchor_partitions().front();
  p.tres_billing_weights = "CPU=1.0,Mem=0.25G";
  const std::string out = render_partition_detail(p, false);
  const std::string tail = "\n   TRESBillingWeights=CPU=1.0,Mem=0.25G\n\n";
  ASSERT_GE(out.size(), tail.size());
  EXPECT_EQ(out.substr(out.size() - tail.size()), tail) << out;
  EXPECT_NE(render_partition_detail(p, true).find(" TRESBillingWeights=CPU=1.0,Mem=0.25G"), std::string::npos);
}

// snakemake's partitions.py reads `scontrol show partition` as blocks of
// Key=Value tokens starting at "PartitionName="; Open OnDemand reads the -o form.
TEST_F(ScontrolShow, PartitionKeyValueTokensParse) {
  for (bool one_line : {false, true}) {
    std::string out;
    for (const auto& p : test::anchor_partitions()) out += render_partition_detail(p, one_line);
    std::map<std::string, std::map<std::string, std::string>> parsed;
    std::string current;
    std::istringstream words(out);
    for (std::string w; words >> w;) {
      auto eq = w.find('=');
      ASSERT_NE(eq, std::string::npos) << w;
      if (w.rfind("PartitionName=", 0) == 0) current = w.substr(eq + 1);
      parsed[current][w.substr(0, eq)] = w.substr(eq + 1);
    }
    ASSERT_EQ(parsed.size(), 4u);
    EXPECT_EQ(parsed["compute"]["MaxTime"], "7-00:00:00");
    EXPECT_EQ(parsed["training"]["TotalCPUs"], "512");
    EXPECT_EQ(parsed["interactive"]["TotalNodes"], "8");
    EXPECT_EQ(parsed["interactive"]["DefaultTime"], "01:00:00");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(parsed["training"]["TRES"], m, std::regex(R"(gres/gpu=(\d+))")));
    EXPECT_EQ(m[1], "32");
  }
}

// The golden config, rebuilt entry by entry, prints identically; snakemake's
// regexes find MinJobAge and MaxArraySize in it.
TEST_F(ScontrolShow, ConfigMatchesGoldenAndSnakemakeReadsIt) {
  test::Golden g = test::read_golden("scontrol_show_config.txt");
  ConfigView cfg;
  cfg.as_of = utc("2026-11-29T21:51:13");
  std::istringstream lines(g.output);
  std::string line;
  std::getline(lines, line);  // "Configuration data as of ..."
  bool trailer = false;
  while (std::getline(lines, line)) {
    if (line.empty()) {
      trailer = true;
      continue;
    }
    if (trailer) {
      cfg.trailer.push_back(line);
      continue;
    }
    auto eq = line.find(" = ");
    ASSERT_NE(eq, std::string::npos) << line;
    cfg.entries.push_back({std::string(trim(line.substr(0, eq))), line.substr(eq + 3)});
  }
  std::string out = render_config(cfg);
  EXPECT_EQ(out, g.output);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(MinJobAge\s*=\s*(\d+)\s*sec)")));
  EXPECT_EQ(m[1], "300");
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(MaxArraySize\s*=?\s*(\d+))")));
  EXPECT_EQ(m[1], "1001");
  EXPECT_EQ(config_seconds(300), "300 sec");
}

}  // namespace
}  // namespace drover::cli

namespace drover::cli {
namespace {

// The two reservations of the anchor cluster's captures (testdata/README.md).
std::vector<ReservationView> anchor_reservations() {
  ReservationView maint;
  maint.name = "maint";
  maint.start_time = utc("2026-12-04T12:39:04");
  maint.end_time = utc("2026-12-04T13:24:04");
  maint.nodes = "cpu02";
  maint.node_count = 1;
  maint.core_count = maint.cpu_count = 64;
  maint.users = {"root", "alice"};
  maint.flags = {"MAINT", "SPEC_NODES"};
  ReservationView longer;
  longer.name = "longnamereservation_x";
  longer.start_time = utc("2026-12-05T10:00:00");
  longer.end_time = utc("2026-12-06T12:03:00");
  longer.nodes = "cpu04,gpu[01-02]";
  longer.node_count = 3;
  longer.core_count = longer.cpu_count = 320;
  longer.users = {"root", "alice"};
  longer.flags = {"MAINT", "OVERLAP", "IGNORE_JOBS", "SPEC_NODES"};
  return {maint, longer};
}

TEST_F(ScontrolShow, ReservationsMatchSlurm) {
  auto resvs = anchor_reservations();
  EXPECT_EQ(render_reservation_detail(resvs[1], false), oracle("scontrol_show_reservation.txt").output);
  EXPECT_EQ(render_reservation_detail(resvs[0], true), oracle("scontrol_show_reservation_o.txt").output);
  // No flag (NodeCnt= in a partition): `Flags=` and nothing after it, as the anchor showed on 2026-12-08.
  ReservationView counted;
  counted.name = "rt";
  counted.start_time = utc("2026-12-08T00:08:09");
  counted.end_time = utc("2026-12-08T01:08:09");
  counted.nodes = "gpu[01-02]";
  counted.node_count = 2;
  counted.core_count = counted.cpu_count = 256;
  counted.users = {"alice"};
  counted.partition = "training";
  counted.active = true;
  EXPECT_EQ(render_reservation_detail(counted, false),
            "ReservationName=rt StartTime=2026-12-08T00:08:09 EndTime=2026-12-08T01:08:09 Duration=01:00:00\n"
            "   Nodes=gpu[01-02] NodeCnt=2 CoreCnt=256 Features=(null) PartitionName=training Flags=\n"
            "   TRES=cpu=256\n"
            "   Users=alice Groups=(null) Accounts=(null) Licenses=(null) State=ACTIVE BurstBuffer=(null) Watts=n/a\n"
            "   MaxStartDelay=(null)\n\n");
  // sinfo -T: the name column as wide as the longest name.
  EXPECT_EQ(render_sinfo_reservations(resvs, true), oracle("sinfo_T_reservations.txt").output);
  EXPECT_EQ(render_sinfo_reservations({}, true), "No reservations in the system\n");
  resvs.pop_back();
  EXPECT_EQ(render_sinfo_reservations(resvs, false),
            "maint      INACTIVE  2026-12-04T12:39:04  2026-12-04T13:24:04     00:45:00  cpu02\n");
}

}  // namespace
}  // namespace drover::cli
