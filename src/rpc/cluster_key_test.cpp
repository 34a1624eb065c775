#include "rpc/cluster_key.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "rpc/testing.hpp"

namespace drover::rpc {
namespace {

void write_file(const std::string& path, const std::string& content, mode_t mode) {
  std::ofstream(path) << content;
  ::chmod(path.c_str(), mode);
}

TEST(ClusterKey, CreatedKeyLoadsWithModeOwnerOnly) {
  auto dir = testing::TempDir::create();
  ASSERT_TRUE(dir.ok());
  const std::string path = dir->file("drover.key");
  ASSERT_TRUE(create_cluster_key(path).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto key = load_cluster_key(path);
  ASSERT_TRUE(key.ok()) << key.error().message;
  EXPECT_EQ(key->secret.size(), 64u);
  EXPECT_EQ(key->id, key_id(key->secret));
  Status again = create_cluster_key(path);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("File exists"), std::string::npos);
}

struct BadKey {
  std::string name;
  std::string content;
  mode_t mode;
  std::string expected;
};

TEST(ClusterKey, RefusesUnsafeOrUnusableFiles) {
  auto dir = testing::TempDir::create();
  ASSERT_TRUE(dir.ok());
  const std::string good(64, 'k');
  std::vector<BadKey> cases = {
      {"group readable", good, 0640, "has mode 0640: group or others may read or write it"},
      {"world readable", good, 0604, "Fix: chmod 600"},
      {"group writable", good, 0620, "refusing to use it"},
      {"too short", "short", 0600, "holds 5 bytes; it needs 32 to 4096"},
  };
  for (const auto& c : cases) {
    const std::string path = dir->file("key-" + std::to_string(&c - cases.data()));
    write_file(path, c.content, c.mode);
    auto key = load_cluster_key(path);
    ASSERT_FALSE(key.ok()) << c.name;
    EXPECT_NE(key.error().message.find(c.expected), std::string::npos) << c.name << ": " << key.error().message;
    EXPECT_NE(key.error().message.find(path), std::string::npos) << c.name << ": names the file";
  }
  auto missing = load_cluster_key(dir->file("absent"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("No such file"), std::string::npos);
  EXPECT_NE(missing.error().message.find("(make one with: (umask 077; head -c 64 /dev/urandom > " + dir->file("absent") + ")"),
            std::string::npos)
      << missing.error().message;
  auto directory = load_cluster_key(dir->path());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message.find("not a regular file"), std::string::npos);
}

TEST(ClusterKey, OwnerMustBeRootTheDaemonOrSlurmUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  auto dir = testing::TempDir::create();
  ASSERT_TRUE(dir.ok());
  const std::string path = dir->file("drover.key");
  write_file(path, std::string(64, 'k'), 0600);
  ASSERT_EQ(::chown(path.c_str(), 4321, 4321), 0);
  auto refused = load_cluster_key(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("is owned by uid 4321; it must be owned by root or SlurmUser"),
            std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(load_cluster_key(path, {4321}).ok()) << "SlurmUser 4321 may own it";
}

}  // namespace
}  // namespace drover::rpc
