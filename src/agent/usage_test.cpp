#include "agent/usage.hpp"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include <nlohmann/json.hpp>

namespace drover::agent {
namespace {

TEST(ProcessUse, ThisProcessShowsItsMemoryAndTime) {
  std::vector<char> block(32 << 20);
  std::memset(block.data(), 1, block.size());  // resident
  volatile uint64_t spin = 0;
  for (int i = 0; i < 20000000; ++i) spin = spin + static_cast<uint64_t>(i);
  auto u = read_process_use(getpid());
  ASSERT_TRUE(u);
  EXPECT_GE(u->rss_kb, 32 * 1024);
  EXPECT_GE(u->vmsize_kb, u->rss_kb);
  EXPECT_GT(u->user_us + u->system_us, 0);
  EXPECT_FALSE(read_process_use(-1));
}

// A child that read 1 MB through read(2) and wrote it on: as a zombie its
// I/O is still readable, and wait4 gives its times and peak.
TEST(ProcessUse, AnEndedTaskKeepsItsIoAndTimesForItsEnd) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::vector<char> buf(1 << 20);
    int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);
    ssize_t n = read(in, buf.data(), buf.size());
    ssize_t w = n > 0 ? write(out, buf.data(), static_cast<size_t>(n)) : 0;
    _exit(w == n ? 0 : 1);
  }
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
  auto last = read_process_use(pid);
  ASSERT_TRUE(last);
  EXPECT_GE(last->read_bytes, 1 << 20);
  EXPECT_GE(last->write_bytes, 1 << 20);
  int status = 0;
  rusage ru{};
  ASSERT_EQ(wait4(pid, &status, 0, &ru), pid);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  TaskUsage t;
  add_exit(t, ru, last);
  EXPECT_GE(t.disk_read, 1 << 20);
  EXPECT_GE(t.disk_write, 1 << 20);
  EXPECT_GT(t.max_rss_kb, 0);
}

TEST(TaskUsage, SamplesKeepPeaksAndOrphansAddUp) {
  TaskUsage t;
  ProcessUse a;
  a.rss_kb = 500;
  a.vmsize_kb = 900;
  a.user_us = 10;
  a.read_bytes = 100;
  add_sample(t, a);
  ProcessUse b;  // later: less memory, more time
  b.rss_kb = 200;
  b.vmsize_kb = 300;
  b.user_us = 40;
  b.read_bytes = 150;
  add_sample(t, b);
  EXPECT_EQ(t.max_rss_kb, 500);
  EXPECT_EQ(t.max_vmsize_kb, 900);
  EXPECT_EQ(t.user_cpu_us, 40);
  EXPECT_EQ(t.disk_read, 150);
  rusage ru{};
  ru.ru_utime.tv_sec = 1;
  ru.ru_maxrss = 700;
  ru.ru_majflt = 3;
  add_exit(t, ru, std::nullopt);
  EXPECT_EQ(t.user_cpu_us, 1000000);
  EXPECT_EQ(t.max_rss_kb, 700);
  EXPECT_EQ(t.pages, 3);
  TaskUsage orphans;
  add_orphan(orphans, ru, b);
  add_orphan(orphans, ru, b);
  EXPECT_EQ(orphans.user_cpu_us, 2000000);
  EXPECT_EQ(orphans.disk_read, 300);
  merge_orphans(t, orphans);
  EXPECT_EQ(t.user_cpu_us, 3000000);
  EXPECT_EQ(t.disk_read, 450);
  EXPECT_EQ(t.max_rss_kb, 700);
  EXPECT_EQ(task_usage_from_json(to_json(t)), t);
}

}  // namespace
}  // namespace drover::agent
