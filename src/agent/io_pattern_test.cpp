#include "agent/io_pattern.hpp"

#include <gtest/gtest.h>

namespace drover::agent {
namespace {

PatternValues values() {
  PatternValues v;
  v.job_id = 128;
  v.step = "0";
  v.array_job_id = 120;
  v.array_task = "7";
  v.node_name = "gpu01";
  v.node_index = 2;
  v.task_rank = 3;
  v.user = "alice";
  v.job_name = "train";
  return v;
}

TEST(IoPattern, SbatchManPageExamplesAndEveryConversion) {
  struct Case {
    std::string pattern, want;
  };
  const Case cases[] = {
      {"job%J.out", "job128.0.out"},  // man sbatch's own examples
      {"job%4j.out", "job0128.out"},
      {"job%j-%2t.out", "job128-03.out"},
      {"slurm-%j.out", "slurm-128.out"},
      {"slurm-%A_%a.out", "slurm-120_7.out"},
      {"%x.%u.%N.%n.%t.%s", "train.alice.gpu01.2.3.0"},
      {"%10N-%3x", "gpu01-train"},  // width ignored for names
      {"100%%.txt", "100%.txt"},
      {"%%j", "%j"},
      {"a\\%j\\b.out", "a%jb.out"},  // a backslash turns expansion off and is removed
      // Each stands for the character after it (Slurm 22.05's files on the anchor cluster).
      {"e\\%j_\\\\%x.out", "e%j_\\%x.out"},
      {"p1\\\\\\\\a", "p1\\\\a"},
      {"p2x\\", "p2x"},
      {"p4\\\\%j\\%%", "p4\\%j%%"},
      {"odd%q%", "odd%q%"},          // unknown conversion and trailing % kept
      {"/abs/%j/%3n", "/abs/128/002"},
  };
  // Seen on Slurm 22.05: sbatch -o "pat-%j-%s-%J-%a-%A-%n-%t-%N.out" (job 1, not an array, host vm)
  PatternValues batch;
  batch.job_id = 1;
  batch.step = "batch";
  batch.array_task = "4294967294";
  batch.node_name = "vm";
  batch.user = "u";
  EXPECT_EQ(expand_io_pattern("pat-%j-%s-%J-%a-%A-%n-%t-%N.out", batch), "pat-1-batch-1-4294967294-1-0-0-vm.out");
  for (const auto& c : cases) EXPECT_EQ(expand_io_pattern(c.pattern, values()), c.want) << c.pattern;
}

TEST(IoPattern, PerTaskOnlyWithT) {
  EXPECT_TRUE(pattern_is_per_task("out-%t"));
  EXPECT_TRUE(pattern_is_per_task("out-%3t"));
  EXPECT_FALSE(pattern_is_per_task("out-%N-%j"));
  EXPECT_FALSE(pattern_is_per_task("out-%%t"));
  EXPECT_FALSE(pattern_is_per_task("out\\%t"));
}

TEST(IoPattern, DefaultBatchNames) {
  EXPECT_EQ(default_batch_output(false), "slurm-%j.out");
  EXPECT_EQ(default_batch_output(true), "slurm-%A_%a.out");
}

}  // namespace
}  // namespace drover::agent
