#include "config/health_states.hpp"

#include <gtest/gtest.h>

namespace drover::config {
namespace {

TEST(HealthStates, SlurmsWordsInAnyCase) {
  auto any = parse_health_states("");
  ASSERT_TRUE(any);
  EXPECT_TRUE(any->any);
  EXPECT_TRUE(any->runs_in("ALLOCATED"));

  auto some = parse_health_states("idle,Mixed,CYCLE");
  ASSERT_TRUE(some);
  EXPECT_FALSE(some->any);
  EXPECT_TRUE(some->cycle);
  EXPECT_TRUE(some->runs_in("IDLE"));
  EXPECT_TRUE(some->runs_in("MIXED"));
  EXPECT_FALSE(some->runs_in("ALLOCATED"));
  EXPECT_TRUE(some->runs_in("")) << "state not known yet: it runs";

  auto alloc = parse_health_states("ALLOC");
  ASSERT_TRUE(alloc);
  EXPECT_TRUE(alloc->runs_in("ALLOCATED"));
  EXPECT_FALSE(alloc->runs_in("IDLE"));

  auto cycle_only = parse_health_states("CYCLE");
  ASSERT_TRUE(cycle_only);
  EXPECT_TRUE(cycle_only->any) << "CYCLE alone still runs in any state";

  auto with_any = parse_health_states("IDLE,ANY");
  ASSERT_TRUE(with_any);
  EXPECT_TRUE(with_any->any);

  auto bad = parse_health_states("IDLE,BUSY");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "unknown state 'BUSY' (HealthCheckNodeState takes ALLOC, ANY, CYCLE, IDLE and MIXED, comma-separated)");
}

}  // namespace
}  // namespace drover::config
