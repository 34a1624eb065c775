// squeue against real Slurm 22.05 output (testdata/slurm-22.05/squeue_*.txt)
// and the parse rules of the clients that read squeue (clients.md).
#include "cli/squeue_output.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cli/cli_test_support.hpp"
#include "cli/display_values.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using test::anchor_jobs;
using test::anchor_now;

CommandOutput run_squeue(const std::vector<std::string>& args, const std::vector<JobView>& jobs,
                         const std::map<std::string, std::string>& env = {}) {
  auto opts = parse_squeue_options(args, env);
  EXPECT_TRUE(opts.ok()) << (opts.ok() ? "" : opts.error().text);
  if (!opts.ok()) return {};
  return render_squeue(*opts, jobs, anchor_now());
}

class SqueueGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { test::use_utc(); }
};

TEST_P(SqueueGolden, MatchesRealSlurmByteForByte) {
  test::Golden g = test::read_golden(GetParam());
  auto jobs = anchor_jobs();
  if (GetParam() == "squeue_after_scancel.txt") {
    for (auto& j : jobs)
      if (j.job_id == 108) j.state = JobState::kCancelled;  // `scancel 108` just before
  }
  CommandOutput out = run_squeue(test::golden_args(g.command), jobs);
  EXPECT_EQ(out.out, g.output);
  EXPECT_EQ(out.err, "");
  EXPECT_EQ(out.exit_code, g.exit_code);
}

INSTANTIATE_TEST_SUITE_P(AnchorQueue, SqueueGolden,
                         ::testing::Values("squeue_default.txt", "squeue_l.txt", "squeue_o_fields.txt",
                                           "squeue_pending_reason.txt", "squeue_r_array.txt", "squeue_start.txt",
                                           "squeue_after_scancel.txt"), [](const auto& i) { return test::test_name(i.param); });


// -o %all: every letter's field joined by "|", a-z then A-Z, %s an empty
// column (Slurm 22.05's header on the anchor cluster, byte for byte).
TEST(SqueueFormat, AllIsEveryFieldJoinedByBars) {
  const std::string header =
      "ACCOUNT|TRES_PER_NODE|MIN_CPUS|MIN_TMP_DISK|END_TIME|FEATURES|GROUP|OVER_SUBSCRIBE|JOBID|NAME|COMMENT|"
      "TIME_LIMIT|MIN_MEMORY|REQ_NODES|COMMAND|PRIORITY|QOS|REASON||ST|USER|RESERVATION|WCKEY|EXC_NODES|NICE|S:C:T|"
      "JOBID|EXEC_HOST|CPUS|NODES|DEPENDENCY|ARRAY_JOB_ID|GROUP|SOCKETS_PER_NODE|CORES_PER_SOCKET|THREADS_PER_CORE|"
      "ARRAY_TASK_ID|TIME_LEFT|TIME|NODELIST|CONTIGUOUS|PARTITION|PRIORITY|NODELIST(REASON)|START_TIME|STATE|UID|"
      "SUBMIT_TIME|LICENSES|CORE_SPEC|SCHEDNODES|WORK_DIR\n";
  JobView held = test::anchor_job(3199, "compute", "held", JobState::kPending, 600, 0, "JobHeldUser");
  auto out = run_squeue({"-o", "%all"}, {held}).out;
  ASSERT_EQ(out.rfind(header, 0), 0u) << out;
  auto row = split(out.substr(header.size()), '|');
  ASSERT_EQ(row.size(), 52u) << out;
  EXPECT_EQ(row[8], "3199");
  EXPECT_EQ(row[9], "held");
  EXPECT_EQ(row[17], "JobHeldUser");
  EXPECT_EQ(row[18], "");
  EXPECT_EQ(row[19], "PD");
  EXPECT_EQ(row[45], "PENDING");
  EXPECT_EQ(run_squeue({"-h"}, {held}, {{"SQUEUE_FORMAT", "%all"}}).out, out.substr(header.size()));
}

// As Slurm 22.05's squeue printed them on the anchor cluster (2026-12-06):
// a right-aligned -O column keeps what -o's keeps whole (NODELIST(REASON)'s
// header, a duration) and cuts the rest; a left-aligned one cuts all; a
// running job without a time limit ends NONE.
TEST(SqueueFormat, LongFormatColumnsCutAsSlurmsAndUnlimitedEndsNone) {
  test::use_utc();
  JobView held = test::anchor_job(2361, "compute", "held1", JobState::kPending, 600, 0, "JobHeldUser");
  JobView gpu = test::anchor_job(2359, "training", "gpu1", JobState::kRunning, 600, 10, "gpu01", 2);
  gpu.time_limit = kInfinite;
  gpu.end_time = 0;
  EXPECT_EQ(run_squeue({"-O", "JobArrayID:.4,Name:.2,ReasonList:.5"}, {held, gpu}).out,
            "JOBINANODELIST(REASON)\n2361he(JobH\n2359gpgpu01\n");
  EXPECT_EQ(run_squeue({"-O", "JobArrayID:4,Name:2,ReasonList:5"}, {held, gpu}).out,
            "JOBINANODEL\n2361he(JobH\n2359gpgpu01\n");
  EXPECT_EQ(run_squeue({"-h", "-O", "TimeUsed:.2"}, {gpu}).out, "0:02\n");
  EXPECT_EQ(run_squeue({"-h", "-o", "%e|%L"}, {gpu, held}).out, "N/A|10:00\nNONE|UNLIMITED\n");  // compute first
}

// -O fields as Slurm 22.05 printed them on the anchor cluster (2026-12-06)
// for a job held with --time-min=10 --ntasks-per-core=1: those Drover has
// from the job, and those it has nothing for, in Slurm's words for a job
// without them; "Name:-5" is the name and a blank, and %s an empty column.
TEST(SqueueFormat, MoreLongFieldsAsSlurmPrintsThem) {
  JobView held = test::anchor_job(262, "compute", "p1", JobState::kPending, 1800, 0, "JobHeldUser");
  held.time_min = 600;
  held.ntasks_per_core = 1;
  auto row = [&](const std::string& fields) { return run_squeue({"-h", "-O", fields}, {held}).out; };
  EXPECT_EQ(row("MinTime:6,NTPerCore:4,NTPerSocket:4,cpus-per-tres:4,mem-per-tres:4"), "10:00 1   N/A N/A N/A \n");
  EXPECT_EQ(row("HetJobID:4,HetJobIDSet:4,HetJobOffset:4,Origin:3,SiblingsViableRaw:3,PreemptTime:4"),
            "N/A N/A N/A NA NA N/A \n");
  EXPECT_EQ(row("admin_comment:7,BurstBuffer:7,Profile:7,Reboot:2,BoardsPerNode:2,DelayBoot:5"),
            "(null) (null) NotSet 0 0 0:00 \n");
  EXPECT_EQ(run_squeue({"-O", "SiblingsViableRaw:21,SelectJobInfo:3,Name:-5,State:-2,JobID"}, {held}).out,
            "VIALBLE_SIBLINGS_RAW    NAME STATE JOBID               \n"
            "NA                      p1 PENDING 262                 \n");
  EXPECT_EQ(run_squeue({"-o", "%s|%.5s|%j"}, {held}).out, "|     |NAME\n|     |p1\n");
  held.time_min = 0;
  EXPECT_EQ(row("MinTime:6"), "0:00  \n");
}

// --sort as Slurm 22.05's squeue read it (anchor cluster, letter by
// letter): a word of several letters is a key per letter; a letter that is
// no key of its (a, q, r, y, ...) is named, no job is listed (the header
// is), and the exit status is 1 ("-Priority" names its last, y); 'b' alone
// is only remarked on.
TEST(SqueueSort, EveryLetterIsAKeyAndSlurmsUnknownOnesAreNamed) {
  JobView a = test::anchor_job(11, "training", "a", JobState::kPending, 600, 5, "Priority");
  JobView b = test::anchor_job(12, "compute", "b", JobState::kPending, 600, 9, "Priority");
  JobView c = test::anchor_job(13, "compute", "c", JobState::kPending, 600, 1, "Priority");
  CommandOutput by_part_then_id = run_squeue({"-h", "-o", "%i", "-S", "Pi"}, {a, c, b});
  EXPECT_EQ(by_part_then_id.out, "12\n13\n11\n");
  EXPECT_EQ(by_part_then_id.exit_code, 0);
  CommandOutput word = run_squeue({"-h", "-o", "%i", "-S", "-Priority"}, {a, b, c});
  EXPECT_EQ(word.err, "squeue: error: Invalid sort specification: y\n");
  EXPECT_EQ(word.exit_code, 1);
  EXPECT_EQ(word.out, "") << "no job listed (Slurm 22.05 on the anchor cluster)";
  EXPECT_EQ(run_squeue({"-o", "%i", "-S", "bogus"}, {a}).out, "JOBID\n") << "the header only";
  EXPECT_EQ(run_squeue({"-o", "%i", "-S", "bogus"}, {a}).err, "squeue: error: Invalid sort specification: s\n");
  CommandOutput b_only = run_squeue({"-h", "-o", "%i", "-S", "b"}, {a});
  EXPECT_EQ(b_only.err, "squeue: Invalid sort specification: b\n");
  EXPECT_EQ(b_only.out, "11\n");
  EXPECT_EQ(b_only.exit_code, 0);
  EXPECT_EQ(run_squeue({"-h", "-o", "%i", "-S", "-p"}, {a, b, c}).out, "12\n11\n13\n");
}

// Within a partition Slurm sorts states by name: the COMPLETING job (its
// Epilog running) came before the PENDING one on the anchor cluster, and
// PENDING before RUNNING (squeue_default.txt). A COMPLETING job's TIME
// stopped at its end.
TEST(SqueueSort, StatesSortByNameAndACompletingJobsTimeStopsAtItsEnd) {
  auto job = [](int64_t id, JobState st) {
    JobView j;
    j.job_id = id;
    j.partition = "compute";
    j.name = "wrap";
    j.user = "alice";
    j.state = st;
    j.num_nodes = 1;
    j.start_time = st == JobState::kPending ? kNoTime : anchor_now() - 60;
    j.end_time = st == JobState::kCompleting ? anchor_now() - 55 : kNoTime;
    j.reason = st == JobState::kPending ? "Resources" : "None";
    j.nodes = st == JobState::kPending ? "" : "cpu02";
    return j;
  };
  const std::vector<JobView> jobs = {job(6057, JobState::kRunning), job(6056, JobState::kPending),
                                     job(6055, JobState::kCompleting)};
  EXPECT_EQ(run_squeue({"-h", "-o", "%i %t %M"}, jobs).out, "6055 CG 0:05\n6056 PD 0:00\n6057 R 1:00\n");
}

// -S i: an array's pending record after its tasks (Slurm 22.05 on the
// anchor cluster: 48_1 48_2 48_[3-5%2], the reverse with -S -i).
TEST(SqueueSort, ByIdTheArraysPendingRecordComesAfterItsTasks) {
  JobView pending = test::anchor_job(48, "compute", "arr", JobState::kPending, 600, 100, "JobArrayTaskLimit");
  pending.array_job_id = 48;
  pending.array_pending_tasks = {3, 4, 5};
  pending.array_max_running = 2;
  JobView one = test::anchor_job(49, "compute", "arr", JobState::kRunning, 600, 100, "cpu01", 3);
  one.array_job_id = 48;
  one.array_task_id = 1;
  JobView two = one;
  two.job_id = 50;
  two.array_task_id = 2;
  JobView later = test::anchor_job(51, "compute", "solo", JobState::kRunning, 600, 100, "cpu01", 3);
  const std::vector<JobView> jobs = {later, pending, two, one};
  EXPECT_EQ(run_squeue({"-h", "-S", "i", "-o", "%i"}, jobs).out, "48_1\n48_2\n48_[3-5%2]\n51\n");
  EXPECT_EQ(run_squeue({"-h", "--sort=-i", "-o", "%i"}, jobs).out, "51\n48_[3-5%2]\n48_2\n48_1\n");
}

// squeue -s: Slurm's step format (srun(1)/squeue(1): "%.15i %.8j %.9P %.8u %.9M %N").
std::vector<StepView> some_steps() {
  JobView a;
  a.job_id = 42;
  a.partition = "compute";
  a.user = "alice";
  a.uid = 1000;
  JobView b = a;
  b.job_id = 57;
  b.array_job_id = 50;
  b.array_task_id = 7;
  b.partition = "gpu";
  b.user = "bob";
  b.uid = 1001;
  auto step = [](const JobView& j, int64_t id, const std::string& name, const std::string& nodes, int64_t tasks,
                 UnixTime start) {
    StepView s;
    s.job = j;
    s.step_id = id;
    s.name = name;
    s.nodes = nodes;
    s.ntasks = tasks;
    s.start_time = start;
    return s;
  };
  UnixTime now = anchor_now();
  return {step(b, 0, "train", "hgpu[1-2]", 16, now - 3725), step(a, -2, "batch", "cpu1", 1, now - 65),
          step(a, 1, "hostname", "cpu[1-2]", 2, now - 3), step(a, 0, "sleep", "cpu1", 1, now - 61)};
}

CommandOutput run_squeue_steps(const std::vector<std::string>& args) {
  auto opts = parse_squeue_options(args, {});
  EXPECT_TRUE(opts.ok()) << (opts.ok() ? "" : opts.error().text);
  if (!opts.ok()) return {};
  EXPECT_TRUE(opts->steps);
  return render_squeue_steps(*opts, some_steps(), anchor_now());
}

// -i N: each listing starts with the time line (not with -h), as Slurm
// 22.05 printed it on the anchor cluster; the client repeats it.
TEST(SqueueIterate, EachListingHasTheTimeLine) {
  test::use_utc();
  auto it = run_squeue({"-i", "2", "-t", "R"}, anchor_jobs());
  EXPECT_EQ(it.out.rfind(banner_time(anchor_now()) + "\n             JOBID PARTITION", 0), 0u) << it.out;
  auto once = run_squeue({"-t", "R"}, anchor_jobs());
  EXPECT_EQ(it.out, banner_time(anchor_now()) + "\n" + once.out);
  EXPECT_EQ(run_squeue({"-i", "2", "-h", "-t", "R"}, anchor_jobs()).out, run_squeue({"-h", "-t", "R"}, anchor_jobs()).out);
  for (const char* bad : {"0", "x", "-3"}) {
    auto o = parse_squeue_options({"-i", bad}, {});
    ASSERT_FALSE(o.ok()) << bad;
    EXPECT_NE(o.error().text.find("Invalid --iterate value"), std::string::npos) << o.error().text;
  }
}

TEST(SqueueSteps, DefaultFormatOrdersByPartitionThenStepWithBatchLast) {
  EXPECT_EQ(run_squeue_steps({"-s"}).out,
            "         STEPID     NAME PARTITION     USER      TIME NODELIST\n"
            "           42.0    sleep   compute    alice      1:01 cpu1\n"
            "           42.1 hostname   compute    alice      0:03 cpu[1-2]\n"
            "       42.batch    batch   compute    alice      1:05 cpu1\n"
            "         50_7.0    train       gpu      bob   1:02:05 hgpu[1-2]\n");
}

TEST(SqueueSteps, FiltersAndStepFields) {
  EXPECT_EQ(run_squeue_steps({"--steps", "-h", "-u", "bob", "-o", "%i|%A|%U|%P"}).out, "50_7.0|16|1001|gpu\n");
  EXPECT_EQ(run_squeue_steps({"-s42.1,57.0", "-h", "-o", "%i %j"}).out, "42.1 hostname\n50_7.0 train\n");
  EXPECT_EQ(run_squeue_steps({"-s", "-j", "42", "-h", "-o", "%i"}).out, "42.0\n42.1\n42.batch\n");
  EXPECT_EQ(run_squeue_steps({"-s42.batch", "-h", "-o", "%.10i|%N"}).out, "  42.batch|cpu1\n");
  // A letter steps do not have: Slurm 22.05's line for steps, the spec kept as text.
  auto odd = run_squeue_steps({"-s42.batch", "-h", "-o", "%i|%C"});
  EXPECT_EQ(odd.out, "42.batch|%C\n");
  EXPECT_EQ(odd.err, "squeue: error: Invalid job step format specification: C\n");
  // -O: a step's node list is Nodes; NodeList is a job's field only (anchor cluster).
  auto nodes = run_squeue_steps({"-s42.batch", "-h", "-O", "StepId:10,NodeList,Nodes"});
  EXPECT_EQ(nodes.out, "42.batch  cpu1                \n");
  EXPECT_EQ(nodes.err, "squeue: error: Invalid job step format specification: NodeList\n");
  auto bad = parse_squeue_options({"-s42"}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().text.find("Invalid job step id: 42"), std::string::npos) << bad.error().text;
  EXPECT_FALSE(parse_squeue_options({"--steps=42.x"}, {}).ok());
}

// -j's list is an optional argument, so it must be attached or come as the
// first operand (`squeue -j 42`, `squeue --jobs 42`); -j alone lists every
// job; any other operand is refused, as Slurm 22.05's squeue refused it.
TEST(SqueueJobs, TheListMayComeAsAWordOfItsOwn) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-j", "42"}, {"--jobs", "42"}, {"-j42"}, {"--jobs=42"}, {"-h", "-o", "%i", "-j", "42"}}) {
    auto o = parse_squeue_options(args, {});
    ASSERT_TRUE(o.ok()) << o.error().text;
    EXPECT_EQ(o->job_ids, std::vector<std::string>{"42"}) << args.front();
  }
  auto all = parse_squeue_options({"-j", "-o", "%i"}, {});
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->job_ids.empty());
  EXPECT_EQ(all->format.value_or(""), "%i");
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-j", "42", "43"}, {"43"}}) {
    auto bad = parse_squeue_options(args, {});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().text.substr(0, bad.error().text.find('\n')), "squeue: error: Unrecognized option: 43");
    EXPECT_EQ(bad.error().exit_code, 1);
  }
}

}  // namespace
}  // namespace drover::cli
