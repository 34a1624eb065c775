// The usage fields of sacct and sstat, on the figures of the anchor
// cluster's job 9619 (Slurm 22.05, jobacct_gather/linux): a batch script
// that held 323564K and read 1694420 bytes, and a two-task srun step.
#include "cli/usage_stats.hpp"

#include <gtest/gtest.h>

#include "cli/sacct_output.hpp"
#include "cli/sstat.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

TaskUsageView task(const char* node, int rank, int64_t user_us, int64_t sys_us, int64_t rss, int64_t vm, int64_t pages,
                   int64_t rd, int64_t wr) {
  return TaskUsageView{node, rank, user_us, sys_us, rss, vm, pages, rd, wr};
}

const std::vector<TaskUsageView> kBatch = {task("cpu01", 0, 3553400, 761400, 323564, 328136, 6, 1694420, 1693)};
const std::vector<TaskUsageView> kStep = {task("cpu01", 0, 2400000, 420000, 115708, 118972, 0, 842917, 1693),
                                          task("cpu02", 1, 2397000, 420400, 115812, 118976, 0, 842917, 0)};

TEST(UsageStats, LargestSmallestAverageAndTotalWithWhere) {
  UsageStats s = summarize_usage(kStep);
  EXPECT_EQ(s.ntasks, 2);
  EXPECT_EQ(s.max_of(UsageMeasure::kRss).value, 115812);
  EXPECT_EQ(s.max_of(UsageMeasure::kRss).node, "cpu02");
  EXPECT_EQ(s.max_of(UsageMeasure::kRss).task, 1);
  EXPECT_EQ(s.min_of(UsageMeasure::kCpu).value, 2817400);
  EXPECT_EQ(s.min_of(UsageMeasure::kCpu).task, 1);
  EXPECT_DOUBLE_EQ(s.ave_of(UsageMeasure::kRss), 115760.0);
  // A tie goes to the lower task.
  EXPECT_EQ(s.max_of(UsageMeasure::kDiskRead).task, 0);
  EXPECT_EQ(s.total_of(UsageMeasure::kDiskRead), 1685834);
  EXPECT_EQ(s.user_cpu_us, 4797000);
  EXPECT_EQ(usage_tres_text(s, "Max", true),
            "cpu=00:00:02,energy=0,fs/disk=842917,mem=115812K,pages=0,vmem=118976K");
  EXPECT_EQ(usage_tres_text(s, "MaxNode", true), "cpu=cpu01,energy=cpu01,fs/disk=cpu01,mem=cpu02,pages=cpu01,vmem=cpu02");
  EXPECT_EQ(usage_tres_text(s, "MaxTask", true), "cpu=0,fs/disk=0,mem=1,pages=0,vmem=1");
  EXPECT_EQ(usage_tres_text(s, "Tot", false), "energy=0,fs/disk=1693");
  EXPECT_EQ(usage_tres_text(s, "MinTask", false), "fs/disk=1");
}

TEST(UsageStats, CpuTimesInSlurmsForms) {
  EXPECT_EQ(cpu_time_text(4.3148), "00:04.315");
  EXPECT_EQ(cpu_time_text(3725.5), "01:02:05");
  EXPECT_EQ(cpu_time_text(90061), "1-01:01:01");
  EXPECT_EQ(cpu_clock_text(4314800), "00:00:04");
  EXPECT_EQ(cpu_clock_text(90061000000), "1-01:01:01");
}

AccountingRecord with_usage(const std::string& step, const std::vector<TaskUsageView>& tasks) {
  AccountingRecord r;
  r.job_id = 9619;
  r.step = step;
  r.job_name = step;
  r.state = JobState::kCompleted;
  r.usage = summarize_usage(tasks);
  r.has_cpu_usage = true;
  r.ntasks = static_cast<int64_t>(tasks.size());
  r.user_cpu_sec = static_cast<double>(r.usage->user_cpu_us) / 1e6;
  r.system_cpu_sec = static_cast<double>(r.usage->system_cpu_us) / 1e6;
  r.total_cpu_sec = r.user_cpu_sec + r.system_cpu_sec;
  return r;
}

std::string sacct(const std::vector<std::string>& args, const std::vector<AccountingRecord>& records) {
  auto opts = parse_sacct_options(args, {});
  EXPECT_TRUE(opts) << (opts ? "" : opts.error().text);
  return render_sacct(*opts, records, "root", 0).out;
}

TEST(SacctUsage, StepsShowWhatTheirTasksUsedAndTheJobItsStepsCpu) {
  AccountingRecord job;
  job.job_id = 9619;
  job.state = JobState::kCompleted;
  AccountingRecord batch = with_usage("batch", kBatch), step = with_usage("0", kStep);
  job.has_cpu_usage = job.has_step_usage = true;
  job.total_cpu_sec = batch.total_cpu_sec + step.total_cpu_sec;
  job.user_cpu_sec = batch.user_cpu_sec + step.user_cpu_sec;
  job.system_cpu_sec = batch.system_cpu_sec + step.system_cpu_sec;
  const std::vector<AccountingRecord> rows = {job, batch, step};
  // The anchor printed these columns for its 9619 (AveCPU aside: Slurm's is a sample's).
  EXPECT_EQ(sacct({"-j", "9619", "-o", "JobID,MaxRSS,MaxDiskRead,TotalCPU"}, rows),
            "JobID            MaxRSS  MaxDiskRead   TotalCPU \n"
            "------------ ---------- ------------ ---------- \n"
            "9619                                  00:09.952 \n"
            "9619.batch      323564K        1.62M  00:04.315 \n"
            "9619.0          115812K        0.80M  00:05.637 \n");
  EXPECT_EQ(sacct({"-j", "9619", "-P", "-n", "-o",
                   "JobID,MaxRSSNode,MaxRSSTask,AveRSS,MaxVMSize,NTasks,UserCPU,SystemCPU,AveCPU,MinCPU,MinCPUNode,"
                   "MinCPUTask,MaxDiskWrite,AveDiskRead,MaxPages,AvePages,AveCPUFreq,ConsumedEnergy"},
                  rows),
            "9619||||||00:08.350|00:01.602||||||||||0\n"
            "9619.batch|cpu01|0|323564K|328136K|1|00:03.553|00:00.761|00:00:04|00:00:04|cpu01|0|0.00M|1.62M|6|6|0|0\n"
            "9619.0|cpu02|1|115760K|118976K|2|00:04.797|00:00.840|00:00:02|00:00:02|cpu02|1|0.00M|0.80M|0|0|0|0\n");
  // A step still running: no figures yet, CPU time 0, energy and frequency 0 (the anchor's 10644).
  AccountingRecord running_job;
  running_job.job_id = 10644;
  running_job.state = JobState::kRunning;
  AccountingRecord running = running_job;
  running.step = "batch";
  EXPECT_EQ(sacct({"-j", "10644", "-P", "-n", "-o", "JobID,TotalCPU,UserCPU,SystemCPU,ConsumedEnergy,AveCPUFreq,MaxRSS"},
                  {running_job, running}),
            "10644|00:00:00|00:00:00|00:00:00|||\n10644.batch|00:00:00|00:00:00|00:00:00|0|0|\n");
  // -X reads no steps: the job's CPU time is 0 (the anchor's 9619 with -X).
  EXPECT_EQ(sacct({"-j", "9619", "-X", "-P", "-o", "JobID,TotalCPU,UserCPU,SystemCPU,MaxRSS,ConsumedEnergy"}, rows),
            "JobID|TotalCPU|UserCPU|SystemCPU|MaxRSS|ConsumedEnergy\n9619|00:00:00|00:00:00|00:00:00||0\n");
  // --noconvert: memory in bytes; --units: both in the unit asked.
  EXPECT_EQ(sacct({"-j", "9619", "-P", "-n", "--noconvert", "-o", "JobID,MaxRSS,MaxDiskRead"}, rows),
            "9619||\n9619.batch|331329536|1.62M\n9619.0|118591488|0.80M\n");
  EXPECT_EQ(sacct({"-j", "9619", "-P", "-n", "--units=G", "-o", "JobID,MaxRSS,MaxDiskRead"}, rows),
            "9619||\n9619.batch|0.31G|0.00G\n9619.0|0.11G|0.00G\n");
  // A whole number in the unit is shown bare, as Slurm 22.05's "70476K" (anchor cluster).
  EXPECT_EQ(sacct({"-j", "9619", "-P", "-n", "--units=K", "-o", "JobID,MaxRSS"}, rows),
            "9619|\n9619.batch|323564K\n9619.0|115812K\n");
  EXPECT_EQ(sacct({"-j", "9619", "-P", "-n", "-o", "JobID,TRESUsageInMax,TRESUsageOutTot"}, rows),
            "9619||\n"
            "9619.batch|cpu=00:00:04,energy=0,fs/disk=1694420,mem=323564K,pages=6,vmem=328136K|energy=0,fs/disk=1693\n"
            "9619.0|cpu=00:00:02,energy=0,fs/disk=842917,mem=115812K,pages=0,vmem=118976K|energy=0,fs/disk=1693\n");
}

SstatOptions sstat_opts(const std::vector<std::string>& args) {
  auto o = parse_sstat_options(args);
  EXPECT_TRUE(o) << (o ? "" : o.error().text);
  return o ? *o : SstatOptions{};
}

std::vector<SstatStep> running() {
  return {SstatStep{9620, -2, "cpu01", kBatch, {4846, 4835}}, SstatStep{9620, 0, "cpu[01-02]", kStep, {4900}}};
}

TEST(Sstat, DefaultColumnsAsSlurmsAndParsableValues) {
  auto out = render_sstat(sstat_opts({"-j", "9620"}), running()).out;
  auto lines = split(out, '\n');
  ASSERT_EQ(lines.size(), 5u);  // the last one empty
  // The anchor's header, column for column.
  const std::string head = "JobID         MaxVMSize  MaxVMSizeNode  MaxVMSizeTask  AveVMSize     MaxRSS MaxRSSNode "
                           "MaxRSSTask     AveRSS MaxPages MaxPagesNode   MaxPagesTask";
  EXPECT_EQ(lines[0].substr(0, head.size()), head);
  EXPECT_NE(lines[0].find(" ConsumedEnergy  MaxDiskRead MaxDiskReadNode MaxDiskReadTask  AveDiskRead MaxDiskWrite "
                          "MaxDiskWriteNode MaxDiskWriteTask AveDiskWrite TRESUsageInAve "),
            std::string::npos);
  EXPECT_EQ(render_sstat(sstat_opts({"-j", "9620", "-p", "-o",
                                     "JobID,MaxRSS,MaxVMSize,AveCPU,NTasks,MaxRSSNode,MaxRSSTask,AveRSS,MaxDiskRead,"
                                     "MaxDiskWrite,ReqCPUFreqMin,Nodelist,Pids"}),
                         running())
                .out,
            "JobID|MaxRSS|MaxVMSize|AveCPU|NTasks|MaxRSSNode|MaxRSSTask|AveRSS|MaxDiskRead|MaxDiskWrite|ReqCPUFreqMin|"
            "Nodelist|Pids|\n"
            "9620.batch|323564K|328136K|00:00:04|1|cpu01|0|323564K|1694420|1693|0|cpu01|4846,4835|\n"
            "9620.0|115812K|118976K|00:00:02|2|cpu02|1|115760K|842917|1693|Unknown|cpu[01-02]|4900|\n");
  EXPECT_EQ(render_sstat(sstat_opts({"-j", "9620", "-n", "-P", "--noconvert", "-o", "JobID,MaxRSS,MaxVMSize"}),
                         running())
                .out,
            "9620.batch|331329536|336011264\n9620.0|118591488|121831424\n");
}

TEST(Sstat, MistakesInSlurmsWords) {
  auto o = parse_sstat_options({});
  ASSERT_FALSE(o);
  EXPECT_EQ(o.error().text, "sstat: error: You didn't give me any jobs to stat.\n");
  EXPECT_EQ(o.error().exit_code, 1);
  o = parse_sstat_options({"-j", "abc"});
  ASSERT_FALSE(o);
  EXPECT_EQ(o.error().text, "sstat: fatal: Bad job/step specified: abc\n");
  auto bad = render_sstat(sstat_opts({"-j", "1", "-o", "nosuch"}), {});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err, "sstat: error: Invalid field requested: \"nosuch\"\n");
  auto jobs = sstat_opts({"-j", "7.batch,8.3,9,10_4.0"}).jobs;
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].step, -2);
  EXPECT_EQ(jobs[1].step, 3);
  EXPECT_FALSE(jobs[2].step);
  EXPECT_FALSE(jobs[2].array_task);
  EXPECT_EQ(jobs[3].job, 10);
  EXPECT_EQ(jobs[3].array_task, 4);
  EXPECT_EQ(jobs[3].step, 0);
  EXPECT_FALSE(parse_sstat_options({"-j", "10_x"}));
  // -e: the anchor's first lines.
  auto e = render_sstat(sstat_opts({"-e"}), {}).out;
  EXPECT_EQ(e.substr(0, 160),
            "AveCPU              AveCPUFreq          AveDiskRead         AveDiskWrite       \n"
            "AvePages            AveRSS              AveVMSize           ConsumedEnergy     \n");
}

}  // namespace
}  // namespace drover::cli
