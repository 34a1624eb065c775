#include "config/exit_codes.hpp"

#include <gtest/gtest.h>

namespace drover::config {
namespace {

TEST(ExitCodes, ListsAndRangesAsSlurmConfWritesThem) {
  auto codes = parse_exit_codes("1-3,18,255");
  ASSERT_TRUE(codes) << codes.error().message;
  EXPECT_EQ(codes->count(), 5u);
  for (int c : {1, 2, 3, 18, 255}) EXPECT_TRUE(codes->test(c)) << c;
  EXPECT_FALSE(codes->test(0));
  EXPECT_FALSE(codes->test(4));
  for (const char* bad : {"", "x", "3-1", "256", "-1", "1,,2", "1-"}) {
    auto r = parse_exit_codes(bad);
    EXPECT_FALSE(r) << bad;
  }
  EXPECT_EQ(parse_exit_codes("4,a").error().message, "'a' is not an exit code (0-255) or a range of them (lo-hi)");
}

}  // namespace
}  // namespace drover::config
