#include "agentd/daemon.hpp"

#include <gtest/gtest.h>

namespace drover::agentd {
namespace {

v1::NodeReport report_with(bool ended) {
  v1::NodeReport r;
  r.set_node("cpu01");
  v1::StepReport* s = r.add_steps();
  s->mutable_step()->set_job_id(7);
  s->set_ended(ended);
  return r;
}

TEST(AgentReports, AStepThatEndedWhileTheReportWasOnItsWayIsReportedAtOnce) {
  v1::NodeReportReply none;
  // The report listed the step running; it ended meanwhile: news, not a repeat.
  EXPECT_TRUE(worth_reporting_again_now(report_with(false), none));
  EXPECT_TRUE(worth_reporting_again_now(v1::NodeReport{}, none));
  // The report listed an end and the controller took it.
  v1::NodeReportReply took;
  *took.add_acknowledged() = report_with(true).steps(0).step();
  EXPECT_TRUE(worth_reporting_again_now(report_with(true), took));
  // The report listed an end the controller did not take: pause before asking again.
  EXPECT_FALSE(worth_reporting_again_now(report_with(true), none));
}

}  // namespace
}  // namespace drover::agentd
