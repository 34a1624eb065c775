#include "config/debug_levels.hpp"

#include <gtest/gtest.h>

namespace drover::config {

TEST(DebugLevels, NamesAndNumbersAsSlurmConfListsThem) {
  EXPECT_EQ(parse_debug_level("info"), kLogInfo);
  EXPECT_EQ(parse_debug_level("DEBUG2"), kLogDebug2);
  EXPECT_EQ(parse_debug_level("7"), 7);
  EXPECT_EQ(debug_level_name(7), "debug3");
  EXPECT_EQ(parse_debug_level("quiet"), kLogQuiet);
  EXPECT_FALSE(parse_debug_level("12"));
  EXPECT_FALSE(parse_debug_level("-1"));
  EXPECT_FALSE(parse_debug_level("loud"));
  EXPECT_FALSE(parse_debug_level(""));
}

TEST(DebugLevels, FlagsParseInAnyCaseAndShowInTheManualsOrder) {
  auto f = parse_debug_flags("priority,Backfill,gres");
  ASSERT_TRUE(f);
  EXPECT_EQ(debug_flags_text(*f), "Backfill,Gres,Priority");
  EXPECT_TRUE(*f & bit(flag_backfill()));
  EXPECT_FALSE(*f & bit(flag_protocol()));
  auto none = parse_debug_flags("");
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, 0u);
  EXPECT_EQ(debug_flags_text(*none), "");
  auto bad = parse_debug_flags("Backfill,Nosuch");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "Invalid DebugFlag: Nosuch");
  EXPECT_EQ(debug_flags_text(*parse_debug_flags("no_conf_hash,TRACEJOBS")), "NO_CONF_HASH,TraceJobs");
}

}  // namespace drover::config
