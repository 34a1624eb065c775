// What squeue and scontrol show of a job record: the request as the user
// wrote it, as Slurm 22.05 showed it on the anchor cluster.
#include "client/views_map.hpp"

#include <gtest/gtest.h>

#include "cli/sacct_output.hpp"
#include "cli/scontrol_show.hpp"
#include "cli/squeue_output.hpp"

namespace drover::client {
namespace {

v1::JobRecord pending_job() {
  v1::JobRecord r;
  r.set_job_id(7);
  r.set_state(v1::PENDING);
  r.set_hold(v1::HOLD_USER);
  r.set_submit_time(1796400000);
  r.set_eligible_time(1796400000);
  r.mutable_display()->set_mem_per_cpu_mb(4096);
  return r;
}

// --gpus=3 is per job (TresPerJob), --gpus-per-task=1 per task, --gres per
// node: each in its own field, none of them turned into another.
TEST(JobView, GpusPerJobPerTaskAndPerNodeStayAsAsked) {
  v1::JobRecord per_job = pending_job();
  per_job.mutable_desc()->mutable_gpus()->set_count(3);
  per_job.mutable_display()->set_tres_per_node("gres:gpu:3");  // the one node it would take
  cli::JobView v = job_view(per_job);
  EXPECT_EQ(v.tres_per_job, "gres:gpu:3");
  EXPECT_EQ(v.tres_per_node, "");
  EXPECT_EQ(v.tres_per_task, "");

  v1::JobRecord per_task = pending_job();
  per_task.mutable_desc()->mutable_gpus_per_task()->set_count(1);
  per_task.mutable_desc()->mutable_gpus_per_task()->set_type("a100");
  v = job_view(per_task);
  EXPECT_EQ(v.tres_per_task, "gres:gpu:a100:1");
  EXPECT_EQ(v.tres_per_job, "");

  v1::JobRecord per_node = pending_job();
  per_node.mutable_desc()->add_gres("gpu:2");
  per_node.mutable_display()->set_tres_per_node("gres:gpu:2");
  v = job_view(per_node);
  EXPECT_EQ(v.tres_per_node, "gres:gpu:2");
  EXPECT_EQ(v.tres_per_job, "");
}

// --cpus-per-gpu and --mem-per-gpu show as Slurm's CpusPerTres= and MemPerTres= (MB); a job that names
// several partitions shows them all while it waits, as Slurm 22.05 did on the anchor cluster.
TEST(JobView, PerGpuCpusAndMemoryAndAPendingJobsPartitions) {
  v1::JobRecord r = pending_job();
  r.mutable_desc()->set_cpus_per_gpu(8);
  r.mutable_desc()->set_mem_per_gpu_mb(20480);
  r.mutable_desc()->add_partitions("compute");
  r.mutable_desc()->add_partitions("training");
  r.set_partition("compute");
  cli::JobView v = job_view(r);
  EXPECT_EQ(v.cpus_per_tres, "gres:gpu:8");
  EXPECT_EQ(v.mem_per_tres, "gres:gpu:20480");
  EXPECT_EQ(v.partition, "compute,training");
  r.set_state(v1::RUNNING);
  EXPECT_EQ(job_view(r).partition, "compute");
  EXPECT_EQ(job_view(pending_job()).cpus_per_tres, "");
  EXPECT_EQ(job_view(pending_job()).mem_per_tres, "");
}

// --mem=0 (all of each node's memory) shows as asked, MinMemoryNode=0; a
// held job is not yet eligible.
TEST(JobView, MemZeroShowsAsAskedAndAHeldJobIsNotEligible) {
  v1::JobRecord r = pending_job();
  r.mutable_desc()->set_mem_per_node_mb(0);
  r.mutable_display()->set_mem_per_cpu_mb(0);
  r.mutable_display()->set_mem_per_node_mb(256000);
  cli::JobView v = job_view(r);
  EXPECT_EQ(v.mem_per_node_mb, 0);
  EXPECT_EQ(v.mem_per_cpu_mb, 0);
  EXPECT_EQ(v.eligible_time, kNoTime);
  EXPECT_EQ(v.accrue_time, kNoTime);
  const std::string shown = cli::render_job_detail(v, 1796400100, false);
  EXPECT_NE(shown.find(" MinMemoryNode=0 "), std::string::npos) << shown;
  EXPECT_NE(shown.find("EligibleTime=Unknown"), std::string::npos) << shown;
}

// A job cancelled while it ran, or out of time: scontrol shows the signal
// that ended the script (0:15), sacct's job line 0:0, as Slurm 22.05 showed
// on the anchor cluster (its batch line keeps 0:15); a failed job keeps its
// code in both.
TEST(JobView, ACancelledJobsAccountedExitCodeIsZero) {
  for (v1::JobState st : {v1::CANCELLED, v1::TIMEOUT}) {
    v1::JobRecord r = pending_job();
    r.set_hold(v1::HOLD_NONE);
    r.set_state(st);
    r.set_start_time(1796400010);
    r.set_end_time(1796400020);
    r.set_exit_signal(15);
    cli::JobView v = job_view(r);
    EXPECT_EQ(v.exit_code, 0);
    EXPECT_EQ(v.exit_signal, 15);
    v1::GetJobHistoryReply history;
    *history.add_jobs()->mutable_job() = r;
    auto rows = accounting_records(history);
    ASSERT_FALSE(rows.empty());
    EXPECT_EQ(rows[0].exit_signal, 0);
  }
  v1::JobRecord r = pending_job();

  // Cancelled while pending: it started (and ended) when cancelled.
  v1::JobRecord never = pending_job();
  never.set_state(v1::CANCELLED);
  never.set_end_time(1796400030);
  EXPECT_EQ(job_view(never).start_time, 1796400030);
  v1::GetJobHistoryReply h2;
  *h2.add_jobs()->mutable_job() = never;
  EXPECT_EQ(accounting_records(h2).at(0).start, 1796400030);

  r.set_state(v1::FAILED);
  r.set_exit_code(3);
  r.set_exit_signal(0);
  EXPECT_EQ(job_view(r).exit_code, 3);
  v1::GetJobHistoryReply h3;
  *h3.add_jobs()->mutable_job() = r;
  EXPECT_EQ(accounting_records(h3).at(0).exit_code, 3);
}


// Elements of an array cancelled while they waited in its pending record are
// one sacct record, as Slurm 22.05 kept them on the anchor cluster (sbatch -a
// 1-6%2, scancel of the array while 1 and 2 ran): "A_[3-6%2]" with Start None
// and the last cancel's end; when none had started, the array's id alone,
// started and ended at the cancel.
TEST(JobView, ArrayElementsCancelledWhileWaitingAreOneRecord) {
  auto element = [](int64_t id, int64_t task, v1::JobState st, int64_t start, int64_t end) {
    v1::JobRecord r = pending_job();
    r.set_job_id(id);
    r.set_array_job_id(40);
    r.set_array_task_id(task);
    r.set_array_max_running(2);
    r.set_hold(v1::HOLD_NONE);
    r.set_state(st);
    r.set_start_time(start);
    r.set_end_time(end);
    return r;
  };
  v1::GetJobHistoryReply history;
  *history.add_jobs()->mutable_job() = element(40, 1, v1::CANCELLED, 1796400010, 1796400030);
  *history.add_jobs()->mutable_job() = element(41, 2, v1::CANCELLED, 1796400010, 1796400030);
  for (int64_t t = 3; t <= 6; ++t) {
    *history.add_jobs()->mutable_job() = element(39 + t, t, v1::CANCELLED, 0, t == 5 ? 1796400025 : 1796400030);
  }
  auto rows = accounting_records(history);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(cli::sacct_job_id(rows[0]), "40_1");
  EXPECT_EQ(cli::sacct_job_id(rows[2]), "40_[3-6%2]");
  EXPECT_EQ(rows[2].job_id, 40);
  EXPECT_TRUE(rows[2].start_none);
  EXPECT_EQ(rows[2].end, 1796400030);
  // None started: the array's id alone, Start at the cancel.
  v1::GetJobHistoryReply held;
  for (int64_t t = 1; t <= 4; ++t) *held.add_jobs()->mutable_job() = element(39 + t, t, v1::CANCELLED, 0, 1796400040);
  rows = accounting_records(held);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(cli::sacct_job_id(rows[0]), "40");
  EXPECT_FALSE(rows[0].start_none);
  EXPECT_EQ(rows[0].start, 1796400040);
  EXPECT_EQ(rows[0].array_pending_tasks, (std::vector<int64_t>{1, 2, 3, 4}));
}

// sacct's AllocCPUS of a pending job is what it asks for (Slurm 22.05 on the
// anchor cluster: 8 for -n 8, 1 for --exclusive), also once it ended without
// running (4 for a cancelled `-n 4`, held or waiting, 2026-12-08).
TEST(JobView, APendingJobsAllocCpusAreTheOnesItAsksFor) {
  v1::JobRecord r = pending_job();
  r.set_hold(v1::HOLD_NONE);
  v1::GetJobHistoryReply history;
  v1::AccountingJob* a = history.add_jobs();
  *a->mutable_job() = r;
  a->set_req_cpus(8);
  auto rows = accounting_records(history);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].alloc_cpus, 8);
  EXPECT_EQ(rows[0].req_cpus, 8);
  a->mutable_job()->set_state(v1::CANCELLED);
  a->mutable_job()->set_end_time(1796400030);
  EXPECT_EQ(accounting_records(history).at(0).alloc_cpus, 8);
}

// A held job with no -t of its own shows its partition's limit as
// Partition_Limit in sacct (Slurm 22.05 on the anchor cluster); one that
// gave -t, or is not held, shows its limit.
TEST(JobView, AHeldJobWithoutItsOwnLimitHasThePartitionsLimit) {
  v1::JobRecord held = pending_job();
  held.set_time_limit_s(604800);
  v1::GetJobHistoryReply history;
  *history.add_jobs()->mutable_job() = held;
  held.mutable_desc()->set_time_limit_s(1800);
  held.set_time_limit_s(1800);
  *history.add_jobs()->mutable_job() = held;
  held.mutable_desc()->clear_time_limit_s();
  held.set_hold(v1::HOLD_NONE);
  *history.add_jobs()->mutable_job() = held;
  auto rows = accounting_records(history);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].partition_time_limit);
  EXPECT_FALSE(rows[1].partition_time_limit);
  EXPECT_FALSE(rows[2].partition_time_limit);
}

// A job requeued while its processes still end is PENDING with its earlier
// run's start: sacct's Start for it is Unknown, as Slurm 22.05's was (the
// earlier run is a record of its own, REQUEUED, with that start).
TEST(JobView, ARequeuedJobWaitingAgainHasNoStart) {
  v1::JobRecord r = pending_job();
  r.set_restart_count(1);
  r.set_start_time(5000);
  r.set_completing(true);
  v1::GetJobHistoryReply history;
  *history.add_jobs()->mutable_job() = r;
  auto rows = accounting_records(history);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].start, kNoTime);
}

// An array's tasks that have not run are one record, also the one task of
// a one-task array ("N_[7]", as Slurm 22.05 showed --array=7 on the anchor
// cluster); the last task left of a larger array is shown as itself ("N_5":
// Slurm's for --array=1-5 while 1-4 ran, in squeue and sacct); a requeued
// task is a record of its own; -r lists each.
TEST(JobView, AnArraysPendingTasksAreOneRecordEvenTheLast) {
  auto task = [](int64_t id, int64_t t, int restarts) {
    v1::JobRecord r = pending_job();
    r.set_job_id(id);
    r.set_array_job_id(10);
    r.set_array_task_id(t);
    r.set_restart_count(restarts);
    return r;
  };
  auto ids = [](const v1::GetJobsReply& reply, bool expand) {
    std::string out;
    for (const auto& v : job_views(reply, expand)) out += cli::squeue_job_id(v) + " ";
    return out;
  };
  v1::GetJobsReply one;
  *one.add_jobs() = task(15, 5, 0);
  one.mutable_jobs(0)->set_array_task_count(1);
  EXPECT_EQ(ids(one, false), "10_[5] ");
  EXPECT_EQ(ids(one, true), "10_5 ");
  one.mutable_jobs(0)->set_array_task_count(5);
  EXPECT_EQ(ids(one, false), "10_5 ") << "the last task left of --array=1-5";
  v1::GetJobHistoryReply history;
  *history.add_jobs()->mutable_job() = one.jobs(0);
  EXPECT_EQ(cli::sacct_job_id(accounting_records(history).at(0)), "10_5");
  v1::GetJobHistoryReply two;
  *two.add_jobs()->mutable_job() = task(14, 4, 0);
  two.mutable_jobs(0)->mutable_job()->set_array_task_count(5);
  *two.add_jobs()->mutable_job() = one.jobs(0);
  EXPECT_EQ(cli::sacct_job_id(accounting_records(two).at(0)), "10_[4-5]");
  v1::GetJobsReply mixed;
  *mixed.add_jobs() = task(13, 3, 1);  // requeued
  *mixed.add_jobs() = task(14, 4, 0);
  *mixed.add_jobs() = task(15, 5, 0);
  EXPECT_EQ(ids(mixed, false), "10_3 10_[4-5] ");
  // Listed one by one, the pending record's tasks wait for its reason, as
  // Slurm 22.05's squeue -r showed them (Resources for 2353_2 and 2353_3);
  // the requeued task, a record of its own, keeps its own.
  mixed.mutable_jobs(0)->set_reason("BeginTime");
  mixed.mutable_jobs(1)->set_reason("Resources");
  mixed.mutable_jobs(2)->set_reason("Priority");
  std::string reasons;
  for (const auto& v : job_views(mixed, true)) reasons += v.reason + " ";
  EXPECT_EQ(reasons, "BeginTime Resources Resources ");
}

}  // namespace
}  // namespace drover::client
