// Jobs whose demands are equal share what the scheduler resolves for them
// (Scheduler::Impl::part_choice). These tests check both halves of that:
// jobs that differ in any one part of their request are still scheduled by
// their own request, and the shared entries go when their jobs go.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/core_test_util.hpp"
#include "core/scheduler.hpp"

namespace drover::core {
namespace {

using testing::ClusterBuilder;
using testing::cycle;
using testing::Jobs;
using testing::node;
using testing::node_names;
using testing::started;
using testing::waiting;

// Two 32-core CPU nodes with features, two GPU nodes of different types;
// partition "cpu" (MaxTime 2 h) and "gpu".
Cluster cluster() {
  ClusterBuilder b;
  b.add(node("c1", 32, 128000, "", 0, {"fast"}))
      .add(node("c2", 32, 128000, "", 0, {"slow"}))
      .add(node("g1", 32, 256000, "h100", 8, {"h100"}))
      .add(node("g2", 32, 256000, "a100", 8, {"a100"}));
  b.partition("cpu", {"c1", "c2"}, true, 7200);
  b.partition("gpu", {"g1", "g2"});
  Cluster c = b.build();
  c.licenses["license/fsbw"] = 1;
  return c;
}

// A job that fills a whole CPU node.
JobSpec& whole_cpu_node(Jobs& jobs, JobId id) {
  JobSpec& j = jobs.add(id);
  j.partitions = {"cpu"};
  j.cpus_per_task = 32;
  j.mem_per_cpu_mb = 1000;
  j.time_limit = 3600;
  return j;
}

std::string where(const Cluster& c, const CycleResult& r, JobId id) {
  if (const StartDecision* d = started(r, id)) {
    std::string s;
    for (const std::string& n : node_names(c, d->alloc)) s += (s.empty() ? "" : ",") + n;
    return s;
  }
  const PendingPlan* p = waiting(r, id);
  return p ? std::string("pending:") + std::string(reason_name(p->reason)) : "missing";
}

struct Variant {
  const char* name;
  std::function<void(JobSpec&)> first, second;  // applied to two otherwise equal jobs
  std::string first_at, second_at;              // where each must be after one cycle
};

TEST(SharedDemand, JobsThatDifferInOnePartOfTheRequestAreEachScheduledByTheirOwn) {
  const Variant variants[] = {
      {"--exclude", [](JobSpec& j) { j.exclude = "c2"; }, [](JobSpec& j) { j.exclude = "c1"; }, "c1", "c2"},
      {"--nodelist", [](JobSpec& j) { j.nodelist = "c2"; }, [](JobSpec& j) { j.nodelist = "c1"; }, "c2", "c1"},
      {"--constraint", [](JobSpec& j) { j.constraint = "slow"; }, [](JobSpec& j) { j.constraint = "fast"; }, "c2",
       "c1"},
      {"--time", [](JobSpec& j) { j.time_limit = 3600; }, [](JobSpec& j) { j.time_limit = 3 * 3600; }, "c1",
       "pending:PartitionTimeLimit"},
      {"--licenses", [](JobSpec& j) { j.licenses = {{"license/fsbw", 1}}; }, [](JobSpec& j) { j.licenses = {}; },
       "c1", "c2"},
      {"--licenses, one left", [](JobSpec& j) { j.cpus_per_task = 1; j.licenses = {{"license/fsbw", 1}}; },
       [](JobSpec& j) { j.cpus_per_task = 1; j.licenses = {{"license/fsbw", 1}}; j.mem_per_cpu_mb = 2000; }, "c1",
       "pending:Licenses"},
      {"--gres type",
       [](JobSpec& j) {
         j.partitions = {"gpu"};
         j.cpus_per_task = 32;
         j.gres = {GresSpec{"gpu", "a100", 8}};
       },
       [](JobSpec& j) {
         j.partitions = {"gpu"};
         j.cpus_per_task = 32;
         j.gres = {GresSpec{"gpu", "h100", 8}};
       },
       "g2", "g1"},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    Cluster c = cluster();
    Scheduler s(c);
    Jobs jobs;
    v.first(whole_cpu_node(jobs, 1));
    v.second(whole_cpu_node(jobs, 2));
    CycleResult r = cycle(s, jobs);
    EXPECT_EQ(where(c, r, 1), v.first_at);
    EXPECT_EQ(where(c, r, 2), v.second_at);
    EXPECT_EQ(r.stats.demands, 2);
  }
}

TEST(SharedDemand, ArrayElementsShareOneDemandAndTheirEntriesGoWithThem) {
  Cluster c = cluster();
  Scheduler s(c);
  Jobs jobs;
  for (JobId id = 1; id <= 100; ++id) {
    JobSpec& j = whole_cpu_node(jobs, id);
    j.array_job_id = 1;
    j.array_task_id = static_cast<int32_t>(id - 1);
  }
  whole_cpu_node(jobs, 101).cpus_per_task = 16;
  CycleResult r = cycle(s, jobs, {}, 1200);
  EXPECT_EQ(r.stats.demands, 2);
  EXPECT_EQ(where(c, r, 1), "c1");
  EXPECT_EQ(where(c, r, 2), "c2");
  EXPECT_EQ(where(c, r, 3), "pending:Resources");
  // Every element is planned by itself: one after another as nodes free up.
  const PendingPlan* third = waiting(r, 3);
  const PendingPlan* fifth = waiting(r, 5);
  ASSERT_NE(third, nullptr);
  ASSERT_NE(fifth, nullptr);
  EXPECT_EQ(third->start, 1200 + 3600);
  EXPECT_EQ(fifth->start, 1200 + 2 * 3600);

  // 2,000 jobs that all ask something different, then an empty queue:
  // the cache forgets them, and the demands they held go too.
  Jobs many;
  for (JobId id = 1; id <= 2000; ++id) whole_cpu_node(many, 1000 + id).time_limit = 60 + id;
  EXPECT_EQ(cycle(s, many, {}, 2000).stats.demands, 2000 + 2);
  Jobs none;
  EXPECT_EQ(cycle(s, none, {}, 3000).stats.demands, 0);
}

}  // namespace
}  // namespace drover::core
