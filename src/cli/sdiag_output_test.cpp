// sdiag against real Slurm 22.05's text (testdata/slurm-22.05/sdiag.txt):
// every line up to the RPC statistics, byte for byte, from the same figures.
#include "cli/sdiag_output.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "cli/cli_test_support.hpp"

namespace drover::cli {
namespace {

TEST(Sdiag, MatchesSlurmsTextForTheSameFigures) {
  setenv("TZ", "UTC", 1);
  tzset();
  DiagView d;
  d.now = 1795989134;
  d.since = 1795988232;
  d.server_threads = 3;
  d.jobs_submitted = 146;
  d.jobs_started = 74;
  d.jobs_completed = 40;
  d.jobs_canceled = 46;
  d.jobs_pending = 17;
  d.jobs_running = 11;
  d.main = PassView{74, 199, 5013, 610 * 74, 2, 2 * 74, 3, 0, 0};
  d.backfill = PassView{25, 951, 6524, 1241 * 25, 2, 4 * 25, 3, 5 * 25, 1795989132, 0, 11};
  d.gettimeofday_latency_us = 25;
  std::string out = render_sdiag(d).out;
  std::string golden = test::read_golden("sdiag.txt").output;
  // The golden's "Job states ts" is two seconds before "sdiag output at"; Drover reports both at `now`.
  auto ts = golden.find("Job states ts:  ");
  golden.replace(ts, std::string("Job states ts:  Sun Nov 29 21:52:12 2026 (1795989132)").size(),
                 "Job states ts:  Sun Nov 29 21:52:14 2026 (1795989134)");
  // Figures Drover derives differently (the labels are Slurm's): its "try depth" is the depth
  // (every tested job is tried) and its table is the queue (every pending job is planned).
  for (auto [from, to] : {std::pair{"\tLast table size: 4", "\tLast table size: 3"},
                          std::pair{"\tDepth Mean (try depth): 3", "\tDepth Mean (try depth): 4"},
                          std::pair{"\tMean table size: 3", "\tMean table size: 5"}}) {
    auto at = golden.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    golden.replace(at, std::string(from).size(), to);
  }
  auto cut = golden.find("Remote Procedure Call statistics by message type");
  ASSERT_NE(cut, std::string::npos);
  EXPECT_EQ(out.substr(0, cut), golden.substr(0, cut));
  EXPECT_NE(out.find("Pending RPC statistics\n\tNo pending RPCs\n"), std::string::npos);
  EXPECT_NE(out.find("Drover scheduler statistics\n\tQuick pass (main): cycles 74, last 199 us"), std::string::npos)
      << out;
}

TEST(Sdiag, OptionsAndNoCycles) {
  EXPECT_TRUE(parse_sdiag_options({"-r"})->reset);
  EXPECT_FALSE(parse_sdiag_options({"--bogus"}));
  DiagView d;
  d.now = d.since = 1795988232;
  std::string out = render_sdiag(d).out;
  EXPECT_EQ(out.find("Mean cycle"), std::string::npos) << "Slurm leaves means out before the first cycle";
  EXPECT_EQ(out.find("Cycles per minute"), std::string::npos) << "and the rate in the first minute";
}

}  // namespace
}  // namespace drover::cli

namespace drover::cli {
namespace {

TEST(SdiagOptions, ClusterNamesTheClusterToAsk) {
  auto o = parse_sdiag_options({"-M", "anchor"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->clusters, "anchor");
  auto l = parse_sdiag_options({"--cluster=x"});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->clusters, "x");
}

}  // namespace
}  // namespace drover::cli
