#include "common/task_layout.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace drover {
namespace {

using Ranks = std::vector<std::vector<int>>;

// What Slurm 22.05 ran on the anchor cluster (SLURM_GTIDS of each node).
TEST(RanksByNode, BlockCyclicAndPlane) {
  EXPECT_EQ(ranks_by_node({3, 1}, "block"), (Ranks{{0, 1, 2}, {3}}));
  EXPECT_EQ(ranks_by_node({3, 1}, ""), (Ranks{{0, 1, 2}, {3}}));
  // -n 4 -N 2 --distribution=cyclic on a 3,1 allocation: node 0 ran 0,2,3, node 1 ran 1.
  EXPECT_EQ(ranks_by_node({3, 1}, "cyclic"), (Ranks{{0, 2, 3}, {1}}));
  EXPECT_EQ(ranks_by_node({2, 2}, "cyclic:block,Pack"), (Ranks{{0, 2}, {1, 3}}));
  EXPECT_EQ(ranks_by_node({4, 4}, "plane=2"), (Ranks{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(ranks_by_node({3, 1}, "plane=2"), (Ranks{{0, 1, 3}, {2}}));
  EXPECT_EQ(ranks_by_node({}, "cyclic"), Ranks{});
}

TEST(RanksByNode, DefaultDistributionNamedAsSlurmDoes) {
  EXPECT_EQ(default_distribution({1}), "cyclic");
  EXPECT_EQ(default_distribution({1, 1}), "cyclic");
  EXPECT_EQ(default_distribution({2, 2}), "block");
  EXPECT_EQ(default_distribution({3, 1}), "block");
}

// scontrol show step's Dist= for each -m Slurm 22.05 was given on the anchor
// cluster (srun -n4 over two nodes inside a batch job), and without -m.
TEST(RanksByNode, DistributionShownAsSlurmNamesIt) {
  const std::vector<std::pair<std::string, std::string>> typed = {
      {"cyclic", "Cyclic"},          {"plane=2", "Plane"},
      {"block:cyclic", "BCyclic"},   {"block:block", "BBlock"},
      {"block:block:fcyclic", "BBlockFCyclic"},
      {"cyclic:block:cyclic", "CBlockCyclic"},
      {"cyclic:cyclic,Pack", "CCyclic,Pack"},
      {"cyclic:fcyclic", "CFCyclic"}, {"block:fcyclic", "BFCyclic"},
      {"block,NoPack", "Block,NoPack"}, {"cyclic,Pack", "Cyclic,Pack"},
      {"*:cyclic", "BCyclic"},       {"block:*:cyclic", "BCyclicCyclic"},
  };
  for (const auto& [m, shown] : typed) EXPECT_EQ(distribution_display(m, {2, 2}), shown) << m;
  // Without -m: block when a node runs several tasks, else cyclic.
  EXPECT_EQ(distribution_display("", {2, 2}), "Block");   // -n4 over two nodes
  EXPECT_EQ(distribution_display("", {1, 1}), "Cyclic");  // -n2 over two nodes
  EXPECT_EQ(distribution_display("", {1}), "Cyclic");     // -n1 in a one-node job
  EXPECT_EQ(distribution_display("", {2, 1}), "Block");   // -n3 over two nodes
}

TEST(JobTasksPerNode, WithoutATaskCountTheCpusAtCpusPerTaskEach) {
  EXPECT_EQ(job_tasks_per_node({8}, {1}, false, 1), (std::vector<int>{8}));  // --mincpus=8
  EXPECT_EQ(job_tasks_per_node({4}, {1}, false, 4), (std::vector<int>{1}));  // -c 4
  EXPECT_EQ(job_tasks_per_node({6, 6}, {1, 1}, false, 3), (std::vector<int>{2, 2}));
  EXPECT_EQ(job_tasks_per_node({3, 1}, {3, 1}, true, 1), (std::vector<int>{3, 1}));  // -n 4 -N 2
}

TEST(GpuBindText, ParsesWhatSrunTakes) {
  auto pt = parse_gpu_bind("per_task:2");
  ASSERT_TRUE(pt.ok());
  EXPECT_EQ(pt->kind, GpuBind::Kind::kPerTask);
  EXPECT_EQ(pt->count, 2);
  auto v = parse_gpu_bind("verbose,single:2");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->verbose);
  EXPECT_EQ(v->kind, GpuBind::Kind::kSingle);
  auto map = parse_gpu_bind("map_gpu:0*2,1*2,0x3");
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(map->ids, (std::vector<unsigned long>{0, 0, 1, 1, 3}));
  auto mask = parse_gpu_bind("mask_gpu:0x3,C");
  ASSERT_TRUE(mask.ok());
  EXPECT_EQ(mask->ids, (std::vector<unsigned long>{3, 12}));
  EXPECT_EQ(parse_gpu_bind("single:0")->count, 1) << "Slurm ran single:0 as single:1";
  EXPECT_EQ(parse_gpu_bind("none")->kind, GpuBind::Kind::kNone);
  EXPECT_EQ(parse_gpu_bind("closest")->kind, GpuBind::Kind::kClosest);
}

TEST(GpuBindText, RefusalsInSlurmsWords) {
  for (const char* bad : {"foo", "per_task", "single", "verbose", "v", "per_task:0", "map_gpu:"}) {
    auto r = parse_gpu_bind(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message, std::string("Invalid --gpu-bind argument: gpu:") + bad);
  }
  auto r = parse_gpu_bind("mask_gpu:0x1,zz");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "Failed to validate zz, offending character is z\nInvalid --gpu-bind argument: gpu:mask_gpu:0x1,zz");
  EXPECT_EQ(parse_gpu_bind("map_gpu:x").error().message,
            "Failed to validate x, offending character is x\nInvalid --gpu-bind argument: gpu:map_gpu:x");
}

TEST(GpuBindText, ImpliedByGpusPerTaskAndNtasksPerGpu) {
  EXPECT_EQ(effective_gpu_bind("", 1, 0), "per_task:1");
  EXPECT_EQ(effective_gpu_bind("", 0, 2), "single:2");
  EXPECT_EQ(effective_gpu_bind("none", 1, 0), "none") << "one given wins";
  EXPECT_EQ(effective_gpu_bind("", 0, 0), "");
}

std::vector<std::size_t> pick(const std::string& text, const std::vector<int>& gpus, int task,
                              std::string* complaint = nullptr) {
  auto b = parse_gpu_bind(text);
  EXPECT_TRUE(b.ok()) << text;
  return gpus_for_task(*b, text, gpus, task, complaint);
}

using Pos = std::vector<std::size_t>;

// Each case as Slurm 22.05 bound it on the anchor (its GPUs' global ids, no device confinement).
TEST(GpusForTask, AsSlurmBoundThem) {
  EXPECT_EQ(pick("per_task:2", {4, 5, 6, 7}, 0), (Pos{0, 1}));  // task 0: 4,5
  EXPECT_EQ(pick("per_task:2", {4, 5, 6, 7}, 1), (Pos{2, 3}));  // task 1: 6,7
  EXPECT_EQ(pick("single:2", {3, 4}, 1), (Pos{0}));             // tasks 0,1 on GPU 3
  EXPECT_EQ(pick("single:2", {3, 4}, 2), (Pos{1}));             // tasks 2,3 on GPU 4
  EXPECT_EQ(pick("mask_gpu:0x3,0xC", {0, 1, 2, 3}, 1), (Pos{2, 3}));
  EXPECT_EQ(pick("map_gpu:3,2", {0, 1, 2, 3}, 0), (Pos{3}));
  EXPECT_EQ(pick("map_gpu:0*2,1*2", {0, 1, 2, 3}, 3), (Pos{1}));
  EXPECT_EQ(pick("closest", {6, 7}, 1), (Pos{0, 1}));
  EXPECT_TRUE(pick("none", {6, 7}, 1).empty());
}

TEST(GpusForTask, NamingNoneOfTheStepsGpusGivesTheFirstAndSaysSo) {
  std::string why;
  EXPECT_EQ(pick("map_gpu:1,0", {4, 5}, 1, &why), (Pos{0}));
  EXPECT_EQ(why, "Bind request gpu:map_gpu:1,0 does not specify any devices within the allocation for task 1. "
                 "Binding to the first device in the allocation instead.");
  why.clear();
  EXPECT_EQ(pick("per_task:1", {0}, 1, &why), (Pos{0})) << "two tasks, one GPU";
  EXPECT_FALSE(why.empty());
}

}  // namespace
}  // namespace drover
