// srun --multi-prog files, with the results and messages real Slurm 22.05.8
// gave for the same files on the anchor cluster (srun -n8 -l --multi-prog F extra1).
#include "common/multi_prog.hpp"

#include <gtest/gtest.h>

namespace drover {
namespace {

std::vector<std::string> argv_of(const MultiProg& mp, int32_t rank, std::vector<std::string> extra = {}) {
  auto a = multi_prog_argv(mp, rank, extra);
  EXPECT_TRUE(a) << (a ? "" : a.error().message);
  return a ? *a : std::vector<std::string>{};
}

using V = std::vector<std::string>;

TEST(MultiProg, RanksSubstitutionQuotesAndSrunsArguments) {
  auto mp = parse_multi_prog("#####\n# srun multiple program configuration file\n"
                             "4-6       hostname\n"
                             "1,7       echo  task:%t\n"
                             "0,2-3     echo  offset:%o 'quoted %t' \"dq %t\"\n",
                             "silly.conf");
  ASSERT_TRUE(mp) << mp.error().message;
  EXPECT_TRUE(check_multi_prog_ranks(*mp, "silly.conf", 8));
  // Slurm printed "0: offset:0 quoted %t "dq 0" extra1", "1: task:1 extra1", "2: offset:1 ...".
  EXPECT_EQ(argv_of(*mp, 0, {"extra1"}), (V{"echo", "offset:0", "quoted %t", "\"dq", "0\"", "extra1"}));
  EXPECT_EQ(argv_of(*mp, 1, {"extra1"}), (V{"echo", "task:1", "extra1"}));
  EXPECT_EQ(argv_of(*mp, 3), (V{"echo", "offset:2", "quoted %t", "\"dq", "3\""}));
  EXPECT_EQ(argv_of(*mp, 5), (V{"hostname"}));
  EXPECT_EQ(argv_of(*mp, 7), (V{"echo", "task:7"}));
  EXPECT_FALSE(multi_prog_argv(*mp, 8, {}));
}

TEST(MultiProg, AsteriskTakesTheRestAndMustBeLast) {
  auto mp = parse_multi_prog("0-1 echo a %t\n* echo rest %t %o\n", "star.conf");
  ASSERT_TRUE(mp);
  EXPECT_TRUE(check_multi_prog_ranks(*mp, "star.conf", 4));
  EXPECT_EQ(argv_of(*mp, 1), (V{"echo", "a", "1"}));
  EXPECT_EQ(argv_of(*mp, 3), (V{"echo", "rest", "3", "3"}));  // Slurm: "3: rest 3 3"
  auto late = parse_multi_prog("0 echo a\n* echo b\n1 echo c\n", "starfirst.conf");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().message,
            "Task range specification with asterisk must be last\nLine 3 of configuration file starfirst.conf invalid");
}

TEST(MultiProg, SlurmsMessagesForBadFiles) {
  auto dup = parse_multi_prog("0-1 echo a\n1 echo dup\n", "dup.conf");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().message, "Duplicate record for task 1\nLine 2 of configuration file dup.conf invalid");
  auto bad = parse_multi_prog("x echo a\n", "bad.conf");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "Invalid task range specification (x)\nLine 1 of configuration file bad.conf invalid");
  auto noprog = parse_multi_prog("0-1\n", "noprog.conf");
  ASSERT_FALSE(noprog);
  EXPECT_EQ(noprog.error().message, "Line 1 of configuration file noprog.conf invalid");

  auto missing = parse_multi_prog("0 echo a\n2 echo b\n", "missing.conf");
  ASSERT_TRUE(missing);
  auto st = check_multi_prog_ranks(*missing, "missing.conf", 3);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "Configuration file missing.conf invalid, no record for task id 1");
  // Given fewer tasks, a single rank beyond them is refused as a range's end is (srun -n2, Slurm 22.05);
  // given none, srun takes one more than the highest rank (3 here: "no record for task id 1" again).
  st = check_multi_prog_ranks(*missing, "missing.conf", 2);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "Invalid task id, 2 >= ntasks\nLine 2 of configuration file missing.conf invalid");
  EXPECT_EQ(multi_prog_tasks(*missing), 3);
  EXPECT_EQ(multi_prog_tasks(*parse_multi_prog("0-2 echo %t\n", "r.conf")), 3);
  EXPECT_EQ(multi_prog_tasks(*parse_multi_prog("* echo %t\n", "s.conf")), std::nullopt);

  auto big = parse_multi_prog("0-3 echo a %t\n", "big.conf");
  ASSERT_TRUE(big);
  st = check_multi_prog_ranks(*big, "big.conf", 2);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "Invalid task id, 3 >= ntasks\nLine 1 of configuration file big.conf invalid");
}

TEST(MultiProg, ContinuationLinesAndComments) {
  auto mp = parse_multi_prog("0 echo a \\\n  continued # a comment\n1 /bin/true\n", "cont.conf");
  ASSERT_TRUE(mp) << mp.error().message;
  EXPECT_TRUE(check_multi_prog_ranks(*mp, "cont.conf", 2));
  EXPECT_EQ(argv_of(*mp, 0), (V{"echo", "a", "continued"}));
  EXPECT_EQ(argv_of(*mp, 1), (V{"/bin/true"}));
  EXPECT_EQ(mp->lines[1].line, 3);
  auto open_quote = parse_multi_prog("0 echo 'open\n", "q.conf");
  ASSERT_FALSE(open_quote);
  EXPECT_EQ(open_quote.error().message, "Unmatched quote\nLine 1 of configuration file q.conf invalid");
}

}  // namespace
}  // namespace drover
