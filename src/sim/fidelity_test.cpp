// Fidelity: the simulator (driving the real core through tests/sim/*.conf)
// gives the same per-job start times as the textbook reference scheduler
// (testing/reference_scheduler.hpp) on the Lublin-1 trace, in slices of
// 1,024 jobs from an empty cluster, for FCFS and for EASY backfilling, with
// run time = requested time (the trace has no requested times, so each
// job's limit is its run time).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "config/core_cluster.hpp"
#include "config/model.hpp"
#include "sim/driver.hpp"
#include "sim/testing/reference_scheduler.hpp"
#include "sim/trace.hpp"

namespace drover::sim {
namespace {

using testing::RefJob;
using testing::RefPolicy;

const std::string kLublin = std::string(DROVER_SOURCE_DIR) + "/../shared/traces/lublin-256-1.swf";
constexpr int64_t kSlice = 1024;

// The trace read independently of the simulator's reader: fields 1 (id),
// 2 (submit), 4 (run time), 5 (processors); limit = run time.
std::vector<RefJob> read_reference_jobs(const std::string& path) {
  std::ifstream in(path);
  std::vector<RefJob> jobs;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == ';') continue;
    std::istringstream f(line);
    int64_t v[5];
    for (auto& x : v) f >> x;
    jobs.push_back(RefJob{v[0], v[1], v[3], v[3], v[4]});
  }
  return jobs;
}

core::Cluster load(const std::string& name) {
  std::string path = std::string(DROVER_SOURCE_DIR) + "/tests/sim/" + name + "/slurm.conf";
  auto cfg = config::load_config({path, {}, {}});
  EXPECT_TRUE(cfg.ok()) << path;
  auto c = config::build_core_cluster(*cfg);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return std::move(*c);
}

struct Case {
  const char* config;
  RefPolicy policy;
  int64_t first;  // the slice: jobs [first, first + 1024) of the trace, in file order
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.config) + "_jobs_" + std::to_string(info.param.first);
}

std::vector<Case> slices(const char* config, RefPolicy policy) {
  std::vector<Case> out;
  for (int64_t first = 0; first + kSlice <= 10000; first += kSlice) out.push_back(Case{config, policy, first});
  return out;
}

// Per-job start times of one slice, simulator against reference; reports
// the first few differences.
void compare_slice(const Case& c) {
  if (!std::filesystem::exists(kLublin)) GTEST_SKIP() << kLublin << " not present";
  const auto all = read_reference_jobs(kLublin);
  ASSERT_EQ(all.size(), 10000u);
  core::Cluster cluster = load(c.config);
  ASSERT_EQ(cluster.nodes.size(), 256u);
  std::vector<RefJob> slice(all.begin() + c.first, all.begin() + c.first + kSlice);
  auto expected = testing::ReferenceScheduler(slice, 256, c.policy).run();
  TraceOptions o;
  o.first = c.first;
  o.count = kSlice;
  auto trace = load_trace(kLublin, o);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  auto result = simulate(cluster, *trace);
  ASSERT_TRUE(result.ok()) << result.error().message;
  int mismatches = 0;
  for (std::size_t i = 0; i < slice.size(); ++i) {
    ASSERT_EQ(trace->jobs[i].spec.id, slice[i].id);
    if (result->jobs[i].start == expected[i]) continue;
    if (++mismatches <= 5) {
      ADD_FAILURE() << c.config << ": job " << slice[i].id << " (size " << slice[i].size << ", submit "
                    << slice[i].submit << ", run " << slice[i].run << ") starts at " << result->jobs[i].start
                    << ", the reference says " << expected[i];
    }
  }
  EXPECT_EQ(mismatches, 0) << c.config << ", jobs " << c.first << " to " << c.first + kSlice - 1;
}

class LublinFcfs : public ::testing::TestWithParam<Case> {};
TEST_P(LublinFcfs, SameStartTimesAsTheReference) { compare_slice(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Slices, LublinFcfs, ::testing::ValuesIn(slices("lublin_fcfs", RefPolicy::kFcfs)), case_name);

class LublinEasy : public ::testing::TestWithParam<Case> {};
TEST_P(LublinEasy, SameStartTimesAsTheReference) { compare_slice(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Slices, LublinEasy, ::testing::ValuesIn(slices("lublin_easy", RefPolicy::kEasy)), case_name);

// The reference itself, on hand-made cases (so a wrong oracle cannot pass silently).
TEST(ReferenceScheduler, Textbook) {
  // 4 units. Job 2 (3 units) waits for job 1; job 3 (1 unit, ends by the
  // shadow time 100) backfills; job 4 (1 unit, runs past it) fits in the
  // spare unit at the shadow time; job 5 (1 unit, past it) does not.
  std::vector<RefJob> jobs = {{1, 0, 100, 100, 2}, {2, 1, 50, 50, 3}, {3, 2, 90, 90, 1}, {4, 3, 500, 500, 1},
                              {5, 4, 500, 500, 1}};
  auto easy = testing::ReferenceScheduler(jobs, 4, RefPolicy::kEasy).run();
  EXPECT_EQ(easy, (std::vector<int64_t>{0, 100, 2, 3, 150}));
  auto fcfs = testing::ReferenceScheduler(jobs, 4, RefPolicy::kFcfs).run();
  EXPECT_EQ(fcfs, (std::vector<int64_t>{0, 100, 100, 150, 150}));
}

// Every job ending at the shadow time frees its units for the spare count:
// on 6 units, jobs 1 and 2 (2 and 3 units) both end at 100; job 3 (5 units)
// is reserved at 100 with 1 unit spare (1 free now + 2 + 3 - 5), so job 4
// (1 unit, past the shadow time) backfills now.
TEST(ReferenceScheduler, JobsEndingTogetherAtTheShadowTime) {
  std::vector<RefJob> jobs = {{1, 0, 100, 100, 2}, {2, 0, 100, 100, 3}, {3, 1, 10, 10, 5}, {4, 2, 500, 500, 1}};
  auto easy = testing::ReferenceScheduler(jobs, 6, RefPolicy::kEasy).run();
  EXPECT_EQ(easy, (std::vector<int64_t>{0, 0, 100, 2}));
}

}  // namespace
}  // namespace drover::sim
