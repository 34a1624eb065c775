#include "common/user_db.hpp"

#include <gtest/gtest.h>

namespace drover {
namespace {

TEST(UserDb, FindsUsersAndGroupsByNameAndId) {
  auto root = user_by_uid(0);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->name, "root");
  EXPECT_EQ(root->gid, 0u);
  EXPECT_FALSE(root->home.empty());
  auto by_name = user_by_name("root");
  ASSERT_TRUE(by_name.has_value());
  EXPECT_EQ(by_name->uid, 0u);
  EXPECT_EQ(group_name(0).value_or(""), "root");
}

// Names and ids no database knows: nothing, and no crash (a statically
// linked C library's own lookup crashed in nss_systemd on exactly these).
TEST(UserDb, UnknownNamesAndIdsAreNotFound) {
  EXPECT_FALSE(user_by_name("no-such-user-drover").has_value());
  EXPECT_FALSE(user_by_name("").has_value());
  EXPECT_FALSE(user_by_name("a:b").has_value());
  EXPECT_FALSE(user_by_name("0").has_value()) << "a number is no user name";
  EXPECT_FALSE(user_by_uid(3999999).has_value());
  EXPECT_FALSE(group_name(3999999).has_value());
}

}  // namespace
}  // namespace drover
