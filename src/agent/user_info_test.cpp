#include "agent/user_info.hpp"

#include <gtest/gtest.h>

namespace drover::agent {
namespace {

// The agent's lookup travels to the step daemon through the spool record.
TEST(UserInfo, TheAgentsLookupSurvivesTheSpoolRecord) {
  auto me = lookup_user("root", 0, 0);
  ASSERT_TRUE(me) << me.error().message;
  auto back = user_info_from_json(nlohmann::json::parse(to_json(*me).dump()));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->name, "root");
  EXPECT_EQ(back->uid, 0u);
  EXPECT_EQ(back->gid, 0u);
  EXPECT_EQ(back->home, me->home);
  EXPECT_EQ(back->shell, me->shell);
  EXPECT_EQ(back->groups, me->groups);
}

TEST(UserInfo, AMalformedRecordIsIgnoredNotTrusted) {
  EXPECT_FALSE(user_info_from_json(nlohmann::json()).has_value());
  EXPECT_FALSE(user_info_from_json(nlohmann::json{{"name", "alice"}, {"uid", "x"}}).has_value());
  EXPECT_FALSE(user_info_from_json(nlohmann::json{{"name", "alice"}, {"uid", 1000}}).has_value()) << "gid and the rest missing";
}

}  // namespace
}  // namespace drover::agent
