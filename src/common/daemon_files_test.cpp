#include "common/daemon_files.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace drover {
namespace {

// SlurmdLogFile=/var/log/slurm/slurmd-%n.log names each node's file; %h the host's.
TEST(DaemonFiles, PathsNameTheNodeAndTheHost) {
  EXPECT_EQ(expand_daemon_path("/var/log/slurm/slurmd-%n.log", "cpu01"), "/var/log/slurm/slurmd-cpu01.log");
  EXPECT_EQ(expand_daemon_path("/run/%n/%%x-%q.pid", "gpu1"), "/run/gpu1/%x-%q.pid");
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  std::string short_host = host;
  short_host = short_host.substr(0, short_host.find('.'));
  EXPECT_EQ(expand_daemon_path("%h.log", "n"), short_host + ".log");
  EXPECT_EQ(expand_daemon_path("", "n"), "");
  EXPECT_EQ(expand_daemon_path("end%", "n"), "end%");
}

TEST(DaemonFiles, PidFileHoldsThePid) {
  char tmpl[] = "/tmp/drover-pidfile-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string path = std::string(tmpl) + "/d.pid";
  ASSERT_TRUE(write_pid_file(path));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::to_string(getpid()) + "\n");
  auto bad = write_pid_file(std::string(tmpl) + "/no/such/dir/d.pid");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("cannot write the pid file " + std::string(tmpl) + "/no/such/dir/d.pid: "),
            std::string::npos)
      << bad.error().message;
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace drover
