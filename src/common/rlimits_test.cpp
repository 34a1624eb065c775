#include "common/rlimits.hpp"

#include <gtest/gtest.h>

namespace drover {
namespace {

unsigned bit(const char* name) {
  for (std::size_t i = 0; i < rlimit_kinds().size(); ++i) {
    if (std::string_view(rlimit_kinds()[i].name) == name) return 1u << i;
  }
  ADD_FAILURE() << name;
  return 0;
}

// sbatch --propagate and slurm.conf's two keys, as sbatch(1) and slurm.conf(5) list them.
TEST(Rlimits, ListsReadAsSlurmsOptionsAndKeysTakeThem) {
  const unsigned all = (1u << rlimit_kinds().size()) - 1;
  EXPECT_EQ(rlimit_kinds().size(), 10u);
  EXPECT_EQ(*parse_rlimit_list(""), all) << "the bare --propagate: all";
  EXPECT_EQ(*parse_rlimit_list("ALL"), all);
  EXPECT_EQ(*parse_rlimit_list("none"), 0u);
  EXPECT_EQ(*parse_rlimit_list("nofile,STACK"), bit("NOFILE") | bit("STACK"));
  auto bad = parse_rlimit_list("STACK,BOGUS");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "Bad rlimit name: BOGUS");

  // The option wins over the config; the config's list, or all but its exceptions; neither: all.
  EXPECT_EQ(*rlimits_to_propagate(std::string("NOFILE"), "STACK", ""), bit("NOFILE"));
  EXPECT_EQ(*rlimits_to_propagate(std::string(""), "NONE", ""), all);
  EXPECT_EQ(*rlimits_to_propagate(std::nullopt, "", ""), all);
  EXPECT_EQ(*rlimits_to_propagate(std::nullopt, "NONE", ""), 0u);
  EXPECT_EQ(*rlimits_to_propagate(std::nullopt, "CORE,STACK", ""), bit("CORE") | bit("STACK"));
  EXPECT_EQ(*rlimits_to_propagate(std::nullopt, "", "MEMLOCK"), all & ~bit("MEMLOCK"));
  auto both = check_propagation_keys("ALL", "MEMLOCK");
  ASSERT_FALSE(both);
  EXPECT_NE(both.error().message.find("exclude each other"), std::string::npos);
  auto unknown = check_propagation_keys("", "MEMLOCK,LOCKS");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "PropagateResourceLimitsExcept=MEMLOCK,LOCKS: Bad rlimit name: LOCKS");
}

// What the command sends is what the step daemon takes back, out of the task's environment.
TEST(Rlimits, TravelInTheEnvironmentAndLeaveIt) {
  struct rlimit stack {};
  ASSERT_EQ(getrlimit(RLIMIT_STACK, &stack), 0);
  auto sent = rlimit_env(bit("STACK") | bit("NOFILE"));
  ASSERT_EQ(sent.size(), 2u);
  std::map<std::string, std::string> env = {{"HOME", "/root"}, {"SLURM_JOB_ID", "7"}, {"SLURM_RLIMITS", "x"}};
  for (const auto& [k, v] : sent) env[k] = v;
  env["SLURM_RLIMIT_LOCKS"] = "5";      // not one Slurm propagates: dropped
  env["SLURM_RLIMIT_CORE"] = "lots";    // not a number: dropped
  env["SLURM_RLIMIT_CPU"] = "unlimited";
  auto taken = take_rlimits(env);
  EXPECT_EQ(env.size(), 3u) << "only the job's own variables stay";
  EXPECT_TRUE(env.count("SLURM_RLIMITS"));
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_STREQ(taken[0].name, "CPU");
  EXPECT_EQ(taken[0].value, RLIM_INFINITY);
  EXPECT_EQ(taken[1].resource, RLIMIT_NOFILE);
  EXPECT_EQ(taken[2].resource, RLIMIT_STACK);
  EXPECT_EQ(taken[2].value, stack.rlim_cur);
}

TEST(Rlimits, ASoftLimitAboveTheNodesHardOneGetsTheHardOne) {
  const struct rlimit node {1024, 4096};
  auto fits = plan_rlimit({RLIMIT_NOFILE, "NOFILE", 2048}, node);
  EXPECT_EQ(fits.limit.rlim_cur, 2048u);
  EXPECT_EQ(fits.limit.rlim_max, 4096u);
  EXPECT_EQ(fits.note, "");
  auto over = plan_rlimit({RLIMIT_NOFILE, "NOFILE", 8192}, node);
  EXPECT_EQ(over.limit.rlim_cur, 4096u);
  EXPECT_EQ(over.limit.rlim_max, 4096u);
  EXPECT_EQ(over.note, "RLIMIT_NOFILE of 8192 from the submit host is above this node's hard limit; the task has 4096");
  auto unlimited = plan_rlimit({RLIMIT_STACK, "STACK", RLIM_INFINITY}, node);
  EXPECT_EQ(unlimited.limit.rlim_cur, 4096u);
  EXPECT_NE(unlimited.note.find("of unlimited from"), std::string::npos);
  auto open = plan_rlimit({RLIMIT_STACK, "STACK", RLIM_INFINITY}, {8192, RLIM_INFINITY});
  EXPECT_EQ(open.limit.rlim_cur, RLIM_INFINITY);
  EXPECT_EQ(open.note, "");
}

}  // namespace
}  // namespace drover
