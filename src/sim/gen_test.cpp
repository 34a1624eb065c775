// The workload generator: deterministic, shaped by its options, and aimed at
// partitions a configuration really has (the seed's, by what they hold).
#include <map>

#include <gtest/gtest.h>

#include "config/core_cluster.hpp"
#include "config/model.hpp"
#include "sim/driver.hpp"
#include "sim/gen.hpp"
#include "sim/sim_test_util.hpp"

namespace drover::sim {
namespace {

core::Cluster seed_cluster() { return testing::cluster_at("examples/seed/slurm.conf"); }

TEST(Gen, SameSeedSameTrace) {
  GenOptions o;
  o.jobs = 500;
  auto a = write_native_csv(generate(o, seed_targets()));
  auto b = write_native_csv(generate(o, seed_targets()));
  EXPECT_EQ(a, b);
  o.seed = 2;
  EXPECT_NE(a, write_native_csv(generate(o, seed_targets())));
}

TEST(Gen, CountMixAndRate) {
  GenOptions o;
  o.jobs = 4000;
  o.rate_per_hour = 120;
  o.array_min = o.array_max = 1;
  auto jobs = generate(o, seed_targets());
  ASSERT_EQ(jobs.size(), 4000u);
  std::map<std::string, int> by_class;
  for (const auto& j : jobs) ++by_class[j.spec.name];
  EXPECT_NEAR(by_class["training"] / 4000.0, 0.15, 0.03);
  EXPECT_NEAR(by_class["preprocess"] / 4000.0, 0.35, 0.03);
  double hours = static_cast<double>(jobs.back().spec.submit_time) / 3600.0;
  EXPECT_NEAR(4000 / hours, 120, 10);
  for (std::size_t i = 1; i < jobs.size(); ++i) EXPECT_LE(jobs[i - 1].spec.submit_time, jobs[i].spec.submit_time);
}

TEST(Gen, ClassesLookLikeTheSeedTemplates) {
  GenOptions o;
  o.jobs = 400;
  for (const auto& j : generate(o, seed_targets())) {
    const auto& s = j.spec;
    if (s.name == "training") {
      EXPECT_EQ(s.partitions[0], "training");
      EXPECT_TRUE(s.exclusive);
      EXPECT_EQ(s.gres[0].count, 8);
      EXPECT_EQ(s.time_limit, 48 * 3600);
    } else if (s.name == "preprocess") {
      EXPECT_EQ(s.partitions[0], "compute");
      EXPECT_EQ(s.cpus_per_task, 16);
      EXPECT_EQ(s.mem_per_node_mb, 64 * 1024);
      EXPECT_EQ(s.time_limit, 12 * 3600);
    } else if (s.name == "inference") {
      EXPECT_EQ(s.gres[0].count, 1);
      EXPECT_EQ(s.cpus_per_task, 16);
    } else {
      EXPECT_EQ(s.name, "highmem");
      EXPECT_EQ(s.partitions[0], "highmem");
      EXPECT_GE(s.mem_per_node_mb, 1000000 / 4);
    }
    EXPECT_GT(j.run_time, 0);
  }
}

TEST(Gen, ArraysShareAnArrayId) {
  GenOptions o;
  o.jobs = 200;
  o.mix[0] = o.mix[2] = o.mix[3] = 0;
  o.array_min = o.array_max = 10;
  auto jobs = generate(o, seed_targets());
  ASSERT_EQ(jobs.size(), 200u);
  EXPECT_EQ(jobs[0].spec.array_job_id, jobs[0].spec.id);
  EXPECT_EQ(jobs[9].spec.array_job_id, jobs[0].spec.id);
  EXPECT_EQ(jobs[9].spec.array_task_id, 9);
  EXPECT_EQ(jobs[10].spec.array_job_id, jobs[10].spec.id);
}

TEST(Gen, TargetsFromTheSeedConfigAndEveryJobIsAccepted) {
  core::Cluster c = seed_cluster();
  GenOptions o;
  o.jobs = 300;
  auto targets = targets_for(c, o);
  ASSERT_TRUE(targets.ok()) << targets.error().message;
  EXPECT_EQ(targets->of[0].partition, "training");
  EXPECT_EQ(targets->of[0].qos, "training");
  EXPECT_EQ(targets->of[1].partition, "compute");
  EXPECT_EQ(targets->of[2].partition, "interactive");
  EXPECT_EQ(targets->of[2].qos, "debug");
  EXPECT_EQ(targets->of[3].partition, "highmem");
  EXPECT_EQ(targets->of[2].gpu_features, (std::vector<std::string>{"a100", "h100"}));
  Trace t;
  t.jobs = generate(o, *targets);
  auto r = simulate(c, t);
  ASSERT_TRUE(r.ok()) << r.error().message;
  for (std::size_t i = 0; i < r->jobs.size(); ++i) {
    EXPECT_NE(r->jobs[i].state, JobState::kRejected) << t.jobs[i].spec.name << ": " << r->jobs[i].note;
    EXPECT_TRUE(r->jobs[i].started()) << t.jobs[i].spec.name << ": " << r->jobs[i].note;
  }
}

TEST(Gen, Options) {
  GenOptions o;
  ASSERT_TRUE(parse_mix("training=1,highmem=3", o).ok());
  EXPECT_EQ(o.mix[0], 1);
  EXPECT_EQ(o.mix[1], 0);
  EXPECT_EQ(o.mix[3], 3);
  auto bad = parse_mix("gpu=1", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "--mix: \"gpu=1\" is not CLASS=WEIGHT (classes: training, preprocess, inference, highmem)");
  ASSERT_TRUE(parse_train_nodes("1:2,16:1", o).ok());
  EXPECT_EQ(o.train_nodes.size(), 2u);
  EXPECT_FALSE(parse_train_nodes("0:1", o).ok());
}

TEST(Gen, NoPartitionForAClassIsAnError) {
  core::Cluster c = seed_cluster();
  for (auto& n : c.nodes) n.gres.clear();  // no GPUs anywhere
  GenOptions o;
  auto t = targets_for(c, o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            "the cluster has no partition for training jobs (none has GPU nodes); give it weight 0: --mix training=0,...");
  o.mix[0] = o.mix[2] = 0;
  EXPECT_TRUE(targets_for(c, o).ok());
}

}  // namespace
}  // namespace drover::sim
