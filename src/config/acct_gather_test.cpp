#include "config/acct_gather.hpp"

#include <gtest/gtest.h>

namespace drover::config {
namespace {

TEST(AcctGather, ReadsJobAcctGatherFrequencyAsSlurmWritesIt) {
  EXPECT_EQ(*task_sampling_interval(""), 30);
  EXPECT_EQ(*task_sampling_interval("10"), 10);
  EXPECT_EQ(*task_sampling_interval("0"), 0);
  EXPECT_EQ(*task_sampling_interval("task=15"), 15);
  EXPECT_EQ(*task_sampling_interval("energy=5,task=20,network=0"), 20);
  EXPECT_EQ(*task_sampling_interval("energy=5"), 30);  // task= not given: the default
  EXPECT_FALSE(task_sampling_interval("often"));
  EXPECT_EQ(task_sampling_interval("task=x").error().message, "'task=x' is not SECONDS nor TYPE=SECONDS");
}

}  // namespace
}  // namespace drover::config
