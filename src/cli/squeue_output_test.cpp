// squeue against real Slurm 22.05 output (testdata/slurm-22.05/squeue_*.txt)
// and the parse rules of the clients that read squeue (clients.md).
#include "cli/squeue_output.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "cli/cli_test_support.hpp"
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

}  // namespace
}  // namespace drover::cli
