#include "rpc/lock_file.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rpc/testing.hpp"

namespace drover::rpc {
namespace {

TEST(LockFile, SecondHolderIsRefusedWithTheFirstOnesPid) {
  auto dir = testing::TempDir::create();
  ASSERT_TRUE(dir.ok());
  const std::string path = dir->file("ctld.lock");
  auto first = LockFile::acquire(path, "the state directory");
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto second = LockFile::acquire(path, "the state directory");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().message,
            fmt::format("the state directory is in use: lock file {} is held by pid {} (another daemon is "
                        "running; stop it first or configure a different path)",
                        path, ::getpid()));
}

TEST(LockFile, ReleasedOnDestructionAndWhenTheHolderDies) {
  auto dir = testing::TempDir::create();
  ASSERT_TRUE(dir.ok());
  const std::string path = dir->file("ctld.lock");
  { auto held = LockFile::acquire(path, "x"); ASSERT_TRUE(held.ok()); }
  EXPECT_TRUE(LockFile::acquire(path, "x").ok());

  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = LockFile::acquire(path, "x");
    char c = held.ok() ? '1' : '0';
    [[maybe_unused]] auto n = ::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, '1');
  auto while_alive = LockFile::acquire(path, "x");
  ASSERT_FALSE(while_alive.ok());
  EXPECT_NE(while_alive.error().message.find(fmt::format("held by pid {}", child)), std::string::npos);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(LockFile::acquire(path, "x").ok()) << "a killed holder leaves no stale lock";
  ::close(ready[0]);
  ::close(ready[1]);
}

}  // namespace
}  // namespace drover::rpc
