#include "agent/proc.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace drover::agent {
namespace {

// A child that starts a grandchild and a great-grandchild, then a
// double-forked orphan (reparented to the subreaper: the child itself).
// All of them must be found; once they are killed none is left.
TEST(ProcessDescendants, FindsEveryLevelAndOrphansOfASubreaper) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (fork() == 0) {  // grandchild with its own child
      if (fork() == 0) pause();
      pause();
    }
    if (fork() == 0) {  // double fork: the orphan's parent exits at once
      if (fork() == 0) pause();
      _exit(0);
    }
    wait(nullptr);  // the double fork's middle process
    (void)!write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);

  std::vector<pid_t> found;
  for (int i = 0; i < 200 && found.size() < 3; ++i) {  // the orphan's reparenting may lag a moment
    found = process_descendants(child);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(found.size(), 3u);  // grandchild, its child, the orphan
  EXPECT_TRUE(std::is_sorted(found.begin(), found.end()));
  EXPECT_TRUE(std::find(found.begin(), found.end(), child) == found.end());

  for (pid_t p : found) ::kill(p, SIGKILL);
  ::kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  for (pid_t p : found) {
    for (int i = 0; i < 200 && ::kill(p, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(process_descendants(child).empty());
}

TEST(ProcessDescendants, NoneForAProcessWithoutChildrenOrGone) {
  EXPECT_TRUE(process_descendants(999999999).empty());
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  EXPECT_TRUE(process_descendants(child).empty());
  ::kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace drover::agent
