#include "agent/file_bcast.hpp"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "agent/agent_test_util.hpp"

namespace drover::agent {
namespace {

using testing::TempDir;

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

UserInfo me() {
  UserInfo u;
  u.name = "self";
  u.uid = geteuid();
  u.gid = getegid();
  return u;
}

FileBlock block(const std::string& path, int64_t offset, std::string_view data, bool first, bool last) {
  FileBlock b;
  b.path = path;
  b.offset = offset;
  b.data = data;
  b.first = first;
  b.last = last;
  return b;
}

TEST(FileBcast, BlocksMakeTheFileWithTheSourcesModeLast) {
  TempDir dir;
  const std::string path = dir.path() + "/copy";
  FileBlock b = block(path, 0, "hello ", true, false);
  b.mode = 0444;  // read-only: the later blocks still open it (created 0600 until the last)
  ASSERT_EQ(write_file_block(b, me()).error_number, 0);
  b = block(path, 6, "world\n", false, true);
  b.mode = 0444;
  BlockWritten w = write_file_block(b, me());
  ASSERT_EQ(w.error_number, 0) << w.error;
  EXPECT_EQ(contents(path), "hello world\n");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0444u);
}

TEST(FileBcast, AnExistingFileIsReplacedOnlyWithForce) {
  TempDir dir;
  const std::string path = dir.path() + "/copy";
  { std::ofstream(path) << "a much longer older text\n"; }
  BlockWritten refused = write_file_block(block(path, 0, "new\n", true, true), me());
  EXPECT_EQ(refused.error_number, EEXIST);
  EXPECT_EQ(refused.error, "open " + path + ": File exists");
  EXPECT_EQ(contents(path), "a much longer older text\n");
  FileBlock b = block(path, 0, "new\n", true, true);
  b.force = true;
  b.mode = 0640;
  b.preserve = true;
  b.atime = 1000;
  b.mtime = 2000;
  ASSERT_EQ(write_file_block(b, me()).error_number, 0);
  struct stat st {};  // before reading it, which may move its access time
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_mtime, 2000);
  EXPECT_EQ(st.st_atime, 1000);
  EXPECT_EQ(contents(path), "new\n");
}

TEST(FileBcast, SaysWhichStepFailed) {
  TempDir dir;
  BlockWritten missing = write_file_block(block(dir.path() + "/no/such/dir", 0, "x", true, true), me());
  EXPECT_EQ(missing.error_number, ENOENT);
  EXPECT_EQ(missing.error, "open " + dir.path() + "/no/such/dir: No such file or directory");
  EXPECT_EQ(write_file_block(block("relative", 0, "x", true, true), me()).error_number, EINVAL);
  // A later block of a file that is not there (its first failed) is not created.
  EXPECT_EQ(write_file_block(block(dir.path() + "/gone", 4, "x", false, true), me()).error_number, ENOENT);
}

// As root, the block is written as the user: theirs, and refused where they
// may not write.
TEST(FileBcast, WritesAsTheJobsUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to write as another user";
  struct passwd* pw = getpwnam("nobody");
  if (!pw) GTEST_SKIP() << "no user nobody";
  UserInfo nobody;
  nobody.name = "nobody";
  nobody.uid = pw->pw_uid;
  nobody.gid = pw->pw_gid;
  nobody.groups = {pw->pw_gid};
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  BlockWritten denied = write_file_block(block(dir.path() + "/x", 0, "x", true, true), nobody);
  EXPECT_EQ(denied.error_number, EACCES);
  EXPECT_EQ(denied.error, "open " + dir.path() + "/x: Permission denied");
  ASSERT_EQ(chmod(dir.path().c_str(), 01777), 0);
  FileBlock b = block(dir.path() + "/x", 0, "theirs\n", true, true);
  b.mode = 0600;
  ASSERT_EQ(write_file_block(b, nobody).error_number, 0);
  struct stat st {};
  ASSERT_EQ(stat((dir.path() + "/x").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, pw->pw_uid);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(contents(dir.path() + "/x"), "theirs\n");
}

}  // namespace
}  // namespace drover::agent
