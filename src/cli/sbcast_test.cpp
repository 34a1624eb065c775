#include "cli/sbcast.hpp"

#include <gtest/gtest.h>

#include <map>

#include "cli/job_values.hpp"

namespace drover::cli {
namespace {

struct Env {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

CliResult<SbcastOptions> parse(std::vector<std::string> args, const Env& env = {}) {
  return parse_sbcast_options(args, env.lookup());
}

TEST(Sbcast, TakesTheJobFromTheEnvironmentUnlessNamed) {
  Env env{{{"SLURM_JOB_ID", "12"}}};
  auto o = parse({"a.out", "/tmp/a.out"}, env);
  ASSERT_TRUE(o) << o.error().text;
  EXPECT_EQ(o->job, 12);
  EXPECT_FALSE(o->step);
  EXPECT_EQ(o->source, "a.out");
  EXPECT_EQ(o->dest, "/tmp/a.out");
  EXPECT_EQ(o->block_size, 8 << 20);
  auto named = parse({"-j", "40.batch", "-f", "-p", "a", "b"}, env);
  ASSERT_TRUE(named) << named.error().text;
  EXPECT_EQ(named->job, 40);
  EXPECT_EQ(named->step, kBatchStep);
  EXPECT_TRUE(named->force);
  EXPECT_TRUE(named->preserve);
  auto step = parse({"--jobid=7.3", "a", "b"});
  ASSERT_TRUE(step);
  EXPECT_EQ(step->step, 3);
}

TEST(Sbcast, RefusesAsSlurmsDoes) {
  auto no_job = parse({"a", "b"});
  ASSERT_FALSE(no_job);
  EXPECT_EQ(no_job.error().exit_code, 1);
  EXPECT_EQ(no_job.error().text,
            "sbcast: error: Need a job id to run this command.  Run from within a Slurm job or use the --jobid "
            "option.\n");
  auto one = parse({"-j", "5", "a"});
  ASSERT_FALSE(one);
  EXPECT_EQ(one.error().text, "Need two file names, have 1 names\nTry \"sbcast --help\" for more information\n");
  auto bad_id = parse({"-j", "x", "a", "b"});
  ASSERT_FALSE(bad_id);
  EXPECT_EQ(bad_id.error().exit_code, 255);
  EXPECT_EQ(bad_id.error().text, "sbcast: error: Slurm job x lookup error: Invalid job id specified\n");
  auto unknown = parse({"--bogus", "a", "b"});
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().text, "sbcast: unrecognized option '--bogus'\nTry \"sbcast --help\" for more information\n");
  auto libs = parse({"-j", "5", "--send-libs", "a", "b"});
  ASSERT_FALSE(libs);
  EXPECT_NE(libs.error().text.find("--send-libs is not built"), std::string::npos) << libs.error().text;
  EXPECT_TRUE(parse({"-j", "5", "--send-libs=no", "a", "b"}));
  EXPECT_FALSE(parse({"-j", "5", "-s", "0", "a", "b"}));
  EXPECT_FALSE(parse({"-j", "5", "--compress=zstd", "a", "b"}));
  EXPECT_TRUE(parse({"-j", "5", "-C", "-F", "8", "-t", "30", "a", "b"}));
}

TEST(Sbcast, BlockSizeTakesSuffixesAndIsCapped) {
  Env env{{{"SLURM_JOB_ID", "1"}}};
  EXPECT_EQ(parse({"-s", "4096", "a", "b"}, env)->block_size, 4096);
  EXPECT_EQ(parse({"-s", "64k", "a", "b"}, env)->block_size, 64 * 1024);
  EXPECT_EQ(parse({"--size=2M", "a", "b"}, env)->block_size, 2 << 20);
  EXPECT_EQ(parse({"-s", "100m", "a", "b"}, env)->block_size, kSbcastMaxBlock);
}

TEST(Sbcast, EnvironmentVariablesYieldToTheCommandLine) {
  Env env{{{"SLURM_JOB_ID", "1"}, {"SBCAST_FORCE", "1"}, {"SBCAST_PRESERVE", "yes"}, {"SBCAST_SIZE", "1k"}}};
  auto o = parse({"a", "b"}, env);
  ASSERT_TRUE(o) << o.error().text;
  EXPECT_TRUE(o->force);
  EXPECT_TRUE(o->preserve);
  EXPECT_EQ(o->block_size, 1024);
  EXPECT_EQ(parse({"-s", "2k", "a", "b"}, env)->block_size, 2048);
  Env bad{{{"SLURM_JOB_ID", "1"}, {"SBCAST_SIZE", "lots"}}};
  EXPECT_FALSE(parse({"a", "b"}, bad));
}

}  // namespace
}  // namespace drover::cli
