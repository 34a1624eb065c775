// sinfo against real Slurm 22.05 output (testdata/slurm-22.05/sinfo_*.txt)
// and the parse rules of the clients that read sinfo (clients.md).
#include "cli/sinfo_output.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/cli_test_support.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using test::anchor_now;

CommandOutput run_sinfo(const std::vector<std::string>& args, const std::vector<PartitionView>& parts,
                        const std::vector<NodeView>& nodes) {
  auto opts = parse_sinfo_options(args, {});
  EXPECT_TRUE(opts.ok()) << (opts.ok() ? "" : opts.error().text);
  if (!opts.ok()) return {};
  return render_sinfo(*opts, parts, nodes, anchor_now());
}

struct SinfoCase {
  const char* golden;
  bool busy;
  const char* banner_time;  // the golden's own clock for -l
};

class SinfoGolden : public ::testing::TestWithParam<SinfoCase> {
 protected:
  void SetUp() override { test::use_utc(); }
};

TEST_P(SinfoGolden, MatchesRealSlurmByteForByte) {
  const SinfoCase& c = GetParam();
  test::Golden g = test::read_golden(c.golden);
  auto parts = test::anchor_partitions();
  auto nodes = c.busy ? test::anchor_nodes_busy() : test::anchor_nodes_idle();
  if (std::string(c.golden) == "sinfo_N_l_busy.txt") {
    // Slurm orders a node's lines of different partitions arbitrarily (its
    // sort is not stable); this capture happened to list them in reverse.
    std::reverse(parts.begin(), parts.end());
  }
  auto opts = parse_sinfo_options(test::golden_args(g.command), {});
  ASSERT_TRUE(opts.ok());
  CommandOutput out = render_sinfo(*opts, parts, nodes, test::utc(c.banner_time));
  EXPECT_EQ(out.out, g.output);
  EXPECT_EQ(out.err, "");
}

INSTANTIATE_TEST_SUITE_P(
    AnchorCluster, SinfoGolden,
    ::testing::Values(SinfoCase{"sinfo_idle.txt", false, "2026-11-29T21:51:13"},
                      SinfoCase{"sinfo_busy.txt", true, "2026-11-29T21:52:14"},
                      SinfoCase{"sinfo_o_PNGt_idle.txt", false, "2026-11-29T21:51:13"},
                      SinfoCase{"sinfo_o_PNGt_busy.txt", true, "2026-11-29T21:52:14"},
                      SinfoCase{"sinfo_N_l_idle.txt", false, "2026-11-29T21:51:13"},
                      SinfoCase{"sinfo_N_l_busy.txt", true, "2026-11-29T21:52:14"},
                      SinfoCase{"sinfo_gres_used.txt", true, "2026-11-29T21:52:14"}));

}  // namespace
}  // namespace drover::cli
