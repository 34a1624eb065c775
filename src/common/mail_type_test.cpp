#include "common/mail_type.hpp"

#include <gtest/gtest.h>

namespace drover {
namespace {

// The list sbatch reads is the list the job stores and scontrol shows.
TEST(MailType, ParsesAnyCaseAndWritesSlurmsNames) {
  auto all = parse_mail_type("all,time_limit_90,ARRAY_TASKS");
  ASSERT_TRUE(all);
  // In Slurm 22.05's order (scontrol show job on the anchor cluster).
  EXPECT_EQ(mail_type_text(*all), "ARRAY_TASKS,INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT,TIME_LIMIT_90");
  EXPECT_EQ(mail_type_text(*parse_mail_type("TIME_LIMIT,TIME_LIMIT_90,TIME_LIMIT_80,TIME_LIMIT_50,ARRAY_TASKS,BEGIN,"
                                            "STAGE_OUT,INVALID_DEPEND")),
            "ARRAY_TASKS,INVALID_DEPEND,BEGIN,STAGE_OUT,TIME_LIMIT_50,TIME_LIMIT_80,TIME_LIMIT_90,TIME_LIMIT");
  EXPECT_EQ(*parse_mail_type("NONE"), kMailNone);
  EXPECT_EQ(mail_type_text(kMailNone), "");
  EXPECT_EQ(*parse_mail_type(mail_type_text(kMailEnd | kMailTimeLimit50)), kMailEnd | kMailTimeLimit50);
  auto bad = parse_mail_type("END,SOMETIMES");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "unknown mail type \"SOMETIMES\"");
}

}  // namespace
}  // namespace drover
