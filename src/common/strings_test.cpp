#include "common/strings.hpp"

#include <gtest/gtest.h>

namespace drover {
namespace {

TEST(Strings, SplitKeepsEmptyFields) {
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
}

TEST(Strings, SplitOutsideBrackets) {
  EXPECT_EQ(split_outside_brackets("a[1,2],b", ','), (std::vector<std::string>{"a[1,2]", "b"}));
}

TEST(Strings, ListHasTrimmedCaseInsensitiveFields) {
  EXPECT_TRUE(list_has("task/affinity, task/cgroup", "task/cgroup"));
  EXPECT_TRUE(list_has("Config_Overrides", "config_overrides"));
  EXPECT_FALSE(list_has("task/cgroupx,task/none", "task/cgroup"));
  EXPECT_FALSE(list_has("", "task/cgroup"));
}

TEST(Strings, ParseIntIsStrict) {
  EXPECT_EQ(parse_int("42"), 42);
  EXPECT_FALSE(parse_int("42x"));
  EXPECT_FALSE(parse_int("-1"));
  EXPECT_EQ(parse_int("-1", true), -1);
  EXPECT_FALSE(parse_int(""));
}

TEST(Strings, CompressRangesJoinsRunsOfConsecutiveIds) {
  EXPECT_EQ(compress_ranges({0, 1, 32}), "0-1,32");
  EXPECT_EQ(compress_ranges({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(compress_ranges({3}), "3");
  EXPECT_EQ(compress_ranges({}), "");
}

TEST(Strings, NearestSuggestsTypos) {
  std::vector<std::string> keys{"RealMemory", "CoresPerSocket", "Gres"};
  EXPECT_EQ(nearest("RealMemroy", keys), "RealMemory");
  EXPECT_EQ(nearest("gres", keys), "Gres");
  EXPECT_FALSE(nearest("Completely", keys));
}

}  // namespace
}  // namespace drover
