// The rows sacct shows of a job's steps, as Slurm 22.05 recorded them.
#include "ctld/accounting.hpp"

#include <gtest/gtest.h>

#include <csignal>

namespace drover::ctld {
namespace {

v1::JobRecord ended(v1::JobState st, int code, int sig) {
  v1::JobRecord r;
  r.set_job_id(5);
  r.set_state(st);
  r.mutable_desc()->set_batch(true);
  r.set_start_time(1000);
  r.set_end_time(1010);
  r.set_exit_code(code);
  r.set_exit_signal(sig);
  return r;
}

// The batch step of a script a signal ended is CANCELLED, with the signal
// (`kill -9 $$`: FAILED 0:9 for the job, CANCELLED 0:9 for its batch step,
// on the anchor cluster); one that exited with a code is FAILED; one out
// of time is CANCELLED 0:15.
TEST(StepRows, TheBatchStepOfAScriptASignalEndedIsCancelled) {
  auto batch = [](const v1::JobRecord& r) {
    auto rows = step_rows(r);
    EXPECT_FALSE(rows.empty());
    return rows.empty() ? v1::AccountingStep{} : rows.front();
  };
  v1::AccountingStep killed = batch(ended(v1::FAILED, 0, SIGKILL));
  EXPECT_EQ(killed.step(), "batch");
  EXPECT_EQ(killed.state(), v1::CANCELLED);
  EXPECT_EQ(killed.exit_signal(), SIGKILL);
  v1::AccountingStep failed = batch(ended(v1::FAILED, 3, 0));
  EXPECT_EQ(failed.state(), v1::FAILED);
  EXPECT_EQ(failed.exit_code(), 3);
  v1::AccountingStep late = batch(ended(v1::TIMEOUT, 0, 0));
  EXPECT_EQ(late.state(), v1::CANCELLED);
  EXPECT_EQ(late.exit_signal(), SIGTERM);
}

// sacct's Layout: "Unknown" for the batch step and an srun step's
// distribution as scontrol show step names it (Slurm 22.05 on the anchor
// cluster: Unknown for batch, Block for `srun true` in a job of -N2 -n4,
// Block,Pack for its `srun -m block,Pack true`, and "arbitrary task
// distribution" for -m arbitrary).
TEST(StepRows, LayoutIsUnknownForTheBatchStepAndTheDistributionForAnSrunStep) {
  v1::StepInfo cyclic;
  cyclic.set_step_id(0);
  cyclic.set_state("COMPLETED");
  cyclic.set_distribution("Cyclic,Pack");
  v1::StepInfo old;  // recorded before steps kept their distribution
  old.set_step_id(1);
  old.set_state("COMPLETED");
  v1::StepInfo arbitrary = cyclic;
  arbitrary.set_step_id(2);
  arbitrary.set_distribution("Arbitrary");
  auto rows = step_rows(ended(v1::COMPLETED, 0, 0), {cyclic, old, arbitrary});
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].layout(), "Unknown");
  EXPECT_EQ(rows[1].layout(), "Cyclic,Pack");
  EXPECT_EQ(rows[2].layout(), "Unknown");
  EXPECT_EQ(rows[3].layout(), "arbitrary task distribution");
}

}  // namespace
}  // namespace drover::ctld
