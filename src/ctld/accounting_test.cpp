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

}  // namespace
}  // namespace drover::ctld
