#include "agent/launch_spec.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/agent_test_util.hpp"
#include "agent/spool.hpp"
#include "agent/step_status.hpp"

namespace drover::agent {
namespace {

TEST(LaunchSpec, JsonRoundTripKeepsEveryField) {
  LaunchRequest r = testing::step_request("n1", "/w", 2, {"hostname", "-s"});
  r.job.array = ArrayInfo{5, 2, 4, 0, 6, 2};
  r.job.ntasks = 2;
  r.job.mem_per_cpu_mb = 100;
  r.layout.umask = 0027;
  r.layout.mpi = "pmix";
  r.alloc.gpus = {{3, "/dev/nvidia3"}};
  r.warn_signal = WarnSignal{10, 30, true};
  r.io.append = true;
  r.job.working_cluster = "c:localhost:6817:9728:109";
  auto back = launch_request_from_json(to_json(r));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(to_json(*back).dump(), to_json(r).dump());
  EXPECT_EQ(back->layout.umask.value(), 0027u);
  EXPECT_EQ(back->layout.mpi, "pmix");
  EXPECT_EQ(back->job.working_cluster, "c:localhost:6817:9728:109");
  EXPECT_EQ(back->job.array->task_step, 2u);
  EXPECT_FALSE(back->job.cpus_per_task.has_value());
}

TEST(LaunchSpec, ValidateNamesTheProblem) {
  struct Case {
    std::function<void(LaunchRequest&)> mutate;
    std::string want;
  };
  const Case cases[] = {
      {[](LaunchRequest& r) { r.key.job_id = 1; }, "does not match"},
      {[](LaunchRequest& r) { r.job.user.clear(); }, "no user"},
      {[](LaunchRequest& r) { r.job.cpus_per_node.clear(); }, "one entry per job node"},
      {[](LaunchRequest& r) { r.layout.global_task_ids = {0}; }, "1 task ids given for 2 tasks"},
      {[](LaunchRequest& r) { r.layout.node_index = 3; }, "node_index 3"},
      {[](LaunchRequest& r) { r.argv.clear(); }, "no command"},
  };
  for (const auto& c : cases) {
    LaunchRequest r = testing::step_request("n1", "/w", 2, {"true"});
    c.mutate(r);
    Status st = validate(r);
    ASSERT_FALSE(st.ok()) << c.want;
    EXPECT_NE(st.error().message.find(c.want), std::string::npos) << st.error().message;
    EXPECT_EQ(st.error().message.rfind(r.key.str(), 0), 0u) << "errors start with the step: " << st.error().message;
  }
  LaunchRequest batch = testing::batch_request("n1", "/w", "echo no interpreter line\n");
  ASSERT_FALSE(validate(batch).ok());
  EXPECT_NE(validate(batch).error().message.find("#!"), std::string::npos);
}

TEST(StepKeyNames, SpoolDirectoryNames) {
  StepKey batch{42, kBatchStep};
  StepKey step{42, 3};
  EXPECT_EQ(batch.str(), "42.batch");
  EXPECT_EQ(step_dir_name(step), "job42.3");
  EXPECT_EQ(parse_step_dir_name("job42.batch"), batch);
  EXPECT_EQ(parse_step_dir_name("job42.3"), step);
  EXPECT_FALSE(parse_step_dir_name("job42").has_value());
  EXPECT_FALSE(parse_step_dir_name("jobx.1").has_value());
  EXPECT_FALSE(parse_step_dir_name("other").has_value());
}

TEST(ControlLines, Parse) {
  auto sig = parse_control_line("signal 10 batch");
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->args, (std::vector<std::string>{"10", "batch"}));
  auto term = parse_control_line("terminate CANCELLED cancelled by alice (uid 2001)\n");
  ASSERT_TRUE(term);
  EXPECT_EQ(term->args[0], "CANCELLED");
  EXPECT_EQ(term->rest, "cancelled by alice (uid 2001)");
  EXPECT_FALSE(parse_control_line("signal 10").has_value());
  EXPECT_FALSE(parse_control_line("   ").has_value());
}

TEST(StepStatusJson, RoundTripAndExitCodes) {
  StepStatus s;
  s.key = {7, 1};
  s.state = JobState::kOutOfMemory;
  s.exit = ExitStatus{0, 9, false};
  s.reason = "out of memory";
  s.tasks.push_back({0, 123, true, {0, 9, false}, "", {}});
  auto back = step_status_from_json(to_json(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->state, JobState::kOutOfMemory);
  EXPECT_EQ(back->exit.str(), "0:9");
  EXPECT_EQ(back->tasks.at(0).pid, 123);
  EXPECT_EQ(state_name(JobState::kOutOfMemory), "OUT_OF_MEMORY");
  EXPECT_EQ(worst_exit({{1, 0, false}, {5, 0, false}, {0, 9, false}}).str(), "0:9");
  EXPECT_EQ(worst_exit({{0, 15, false}, {0, 9, false}}).str(), "0:15");
  EXPECT_EQ(worst_exit({{1, 0, false}, {5, 0, false}, {0, 0, false}}).str(), "5:0");
  EXPECT_EQ(worst_exit({{0, 0, false}, {0, 0, false}}).str(), "0:0");
  EXPECT_EQ(ExitStatus::from_wait_status(3 << 8).str(), "3:0");
  EXPECT_EQ(ExitStatus::from_wait_status(15).str(), "0:15");
}

}  // namespace
}  // namespace drover::agent
