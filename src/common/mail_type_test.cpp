#include "common/mail_type.hpp"

#include <gtest/gtest.h>

namespace drover {
namespace {

// The list sbatch reads is the list the job stores and scontrol shows.
TEST(MailType, ParsesAnyCaseAndWritesSlurmsNames) {
  auto all = parse_mail_type("all,time_limit_90,ARRAY_TASKS");
  ASSERT_TRUE(all);
  EXPECT_EQ(mail_type_text(*all), "BEGIN,END,FAIL,REQUEUE,INVALID_DEPEND,STAGE_OUT,TIME_LIMIT_90,ARRAY_TASKS");
  EXPECT_EQ(*parse_mail_type("NONE"), kMailNone);
  EXPECT_EQ(mail_type_text(kMailNone), "");
  EXPECT_EQ(*parse_mail_type(mail_type_text(kMailEnd | kMailTimeLimit50)), kMailEnd | kMailTimeLimit50);
  auto bad = parse_mail_type("END,SOMETIMES");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "unknown mail type \"SOMETIMES\"");
}

}  // namespace
}  // namespace drover
