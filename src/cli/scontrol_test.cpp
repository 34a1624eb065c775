// scontrol through the built binary (build/bin/scontrol). Expected outputs,
// exit codes and the streams used are those of real Slurm 22.05's scontrol
// run on the same command lines (error wording is Drover's own).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace {

struct Outcome {
  std::string out;
  std::string err;
  int rc = -1;
};

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<std::size_t>(n));
  return s;
}

// Runs build/bin/scontrol with `args` and exactly the environment `env`.
Outcome scontrol(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::string bin = std::string(DROVER_BINARY_DIR) + "/bin/scontrol";
  std::string stem = testing::TempDir() + "/drover_scontrol_" + std::to_string(getpid());
  std::string out_path = stem + "_out", err_path = stem + "_err";
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = open("/dev/null", O_RDONLY);
    dup2(in, 0);  // with no command, scontrol reads commands from stdin
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv{const_cast<char*>(bin.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    execve(bin.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  Outcome r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  int fd = open(out_path.c_str(), O_RDONLY);
  r.out = read_all(fd);
  close(fd);
  fd = open(err_path.c_str(), O_RDONLY);
  r.err = read_all(fd);
  close(fd);
  unlink(out_path.c_str());  // read: not left behind in the temp directory
  unlink(err_path.c_str());
  return r;
}

class Scontrol : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access((std::string(DROVER_BINARY_DIR) + "/bin/scontrol").c_str(), X_OK) != 0) {
      FAIL() << "build/bin/scontrol is missing: build the drover target first";
    }
  }
};

struct Case {
  std::vector<std::string> args;
  std::vector<std::string> env;
  const char* out;
  int rc;
  bool stderr_written;
};

TEST_F(Scontrol, HostlistCommandsBehaveAsSlurm) {
  const Case cases[] = {
      {{"show", "hostnames", "gpu[01-03]"}, {}, "gpu01\ngpu02\ngpu03\n", 0, false},
      {{"show", "hostnames", "/dev/nvidia[0-1]"}, {}, "/dev/nvidia0\n/dev/nvidia1\n", 0, false},
      {{"show", "hostnames"}, {"SLURM_JOB_NODELIST=n[1-2]"}, "n1\nn2\n", 0, false},
      {{"show", "hostnames"}, {"SLURM_NODELIST=n[1-3]"}, "n1\nn2\nn3\n", 0, false},
      {{"show", "hostnames"}, {}, "", 0, true},              // "host list is empty", exit 0
      {{"show", "hostnames", "a[5-3]"}, {}, "", 0, true},    // Slurm 22.05 exits 0 here too
      {{"show", "hostlist", "gpu03,gpu01,gpu02,gpu1"}, {}, "gpu[03,01-02,1]\n", 0, false},
      {{"show", "hostlistsorted", "gpu03,gpu01,gpu02,gpu1"}, {}, "gpu[1,01-03]\n", 0, false},
      {{"show", "hostlist", "rack[1-2]-n[01-04]"}, {}, "rack1-n[01-04],rack2-n[01-04]\n", 0, false},
      {{"show", "hostlistsorted", "tux2,tux1,tux2"}, {}, "tux[1-2,2]\n", 0, false},
      {{"show", "hostlist", "a0[21-32],a033"}, {}, "a0[21-32],a033\n", 0, false},
      {{"show", "hostlist", "a,,b"}, {}, "a,b\n", 0, false},
      {{"show", "hostlist", ""}, {}, "\n", 0, false},
      {{"show", "hostlist", "a[5-3]"}, {}, "", 1, true},
      {{"show", "hostlistsorted", "a[1-3"}, {}, "", 1, true},
      {{"show", "hostlist", "/dev/nvidia[0-7]"}, {}, "", 1, true},  // a path: "Can not open"
      {{"show", "hostlist"}, {}, "", 1, true},
      {{"show", "hostn", "a[1-2]"}, {}, "a1\na2\n", 0, false},
      {{"show", "hostl", "a3,a1"}, {}, "a[3,1]\n", 0, false},
      {{"show", "hostlists", "a3,a1"}, {}, "a[1,3]\n", 0, false},
      {{"SHOW", "HostNames", "a[1-2]"}, {}, "a1\na2\n", 0, false},
      {{"sho", "hostlist", "a1,a2"}, {}, "a[1-2]\n", 0, false},
      {{"-o", "show", "hostlist", "a1"}, {}, "a1\n", 0, false},
      {{"show", "hostlist", "a1", "-Q"}, {}, "a1\n", 0, false},
      {{"-vvo", "show", "hostlist", "a1"}, {}, "a1\n", 0, false},
      {{"--", "show", "hostnames", "-a1"}, {}, "-a1\n", 0, false},
      {{"show", "hostnames", "-n013,A46"}, {}, "", 1, true},  // -n is not an option
      {{"--foo", "show", "hostlist", "a1"}, {}, "", 1, true},
      {{"-M"}, {}, "", 1, true},
      {{"show", "hostnames", "a1", "b1"}, {}, "", 1, true},
      {{"show"}, {}, "", 1, true},
      {{"sh", "hostnames", "a1"}, {}, "", 1, true},
      {{"show", "host", "a1"}, {}, "", 1, true},
  };
  for (const auto& c : cases) {
    Outcome r = scontrol(c.args, c.env);
    std::string cmd;
    for (const auto& a : c.args) cmd += " '" + a + "'";
    EXPECT_EQ(r.out, c.out) << "scontrol" << cmd;
    EXPECT_EQ(r.rc, c.rc) << "scontrol" << cmd << "\nstderr: " << r.err;
    EXPECT_EQ(!r.err.empty(), c.stderr_written) << "scontrol" << cmd << "\nstderr: " << r.err;
  }
}

// version, show topology (Drover reads no topology) and show aliases (no
// front ends), with Slurm 22.05's words where it has them (anchor cluster,
// no TopologyPlugin).
TEST_F(Scontrol, VersionTopologyAndAliasesNeedNoController) {
  Outcome v = scontrol({"version"});
  EXPECT_EQ(v.out, "slurm 22.05.8\n");
  EXPECT_EQ(v.rc, 0);
  Outcome t = scontrol({"show", "topology"});
  EXPECT_EQ(t.err, "scontrol: error: No topology information available\n");
  EXPECT_EQ(t.rc, 0) << "as Slurm 22.05's";
  Outcome tn = scontrol({"show", "topology", "cpu01"});
  EXPECT_EQ(tn.err, "scontrol: error: Topology information contains no switch or node named cpu01\n");
  Outcome a = scontrol({"show", "aliases", "cpu01"});
  EXPECT_EQ(a.out, "");
  EXPECT_EQ(a.err, "");
  EXPECT_EQ(a.rc, 0);
  // No burst buffers, no federation: nothing listed, exit 0, as Slurm 22.05 without them.
  for (const char* entity : {"burstbuffer", "federation"}) {
    Outcome n = scontrol({"show", entity});
    EXPECT_EQ(n.out + n.err, "") << entity;
    EXPECT_EQ(n.rc, 0) << entity;
  }
  // assoc_mgr takes its selections (not built: said so, not "too many arguments").
  Outcome m = scontrol({"show", "assoc_mgr", "flags=qos", "qos=debug"});
  EXPECT_NE(m.err.find("not implemented yet"), std::string::npos) << m.err;
}

TEST_F(Scontrol, MessagesFollowSlurmsStyle) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"show", "hostnames"}, "scontrol: error: host list is empty\n"},
      {{"show", "hostlist", "a[5-3]"},
       "scontrol: error: bad range \"5-3\" in \"a[5-3]\": the end is below the start (write the lower number "
       "first)\nInvalid hostlist: a[5-3]\n"},
      {{"show", "hostlist", "/nonexistent/hosts"}, "Can not open /nonexistent/hosts\n"},
      {{"show", "hostnames", "a1", "b1"}, "too many arguments for keyword:show\n"},
      {{"show"}, "too few arguments for keyword:show\n"},
      {{"sh", "hostnames", "a1"}, "invalid keyword: sh\n"},
      {{"show", "host", "a1"}, "invalid entity:host for keyword:show \n"},
      {{"--foo"}, "scontrol: unrecognized option '--foo'\nTry \"scontrol --help\" for more information\n"},
      {{"-x"}, "scontrol: invalid option -- 'x'\nTry \"scontrol --help\" for more information\n"},
      {{"-M"}, "scontrol: option requires an argument -- 'M'\nTry \"scontrol --help\" for more information\n"},
  };
  for (const auto& [args, err] : cases) EXPECT_EQ(scontrol(args).err, err) << args[0];
}

TEST_F(Scontrol, ReadsAHostFileForHostlist) {
  std::string path = testing::TempDir() + "/drover_hosts_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream f(path);
    f << "a3\na1,a2\nb[1-2]\n\n c1 \n";
  }
  // Real Slurm prints these two lines for the same file.
  EXPECT_EQ(scontrol({"show", "hostlist", path}).out, "a[3,1-2],b[1-2],c1\n");
  EXPECT_EQ(scontrol({"show", "hostlistsorted", path}).out, "a[1-3],b[1-2],c1\n");
  std::remove(path.c_str());
  Outcome dir = scontrol({"show", "hostlist", testing::TempDir()});
  EXPECT_EQ(dir.rc, 1);
  EXPECT_NE(dir.err.find("Error reading"), std::string::npos) << dir.err;
}

// The keywords that need the controller are src/client's (see
// tests/cluster for them against a live cluster); without a configuration
// they say where they looked. What is not built says so and exits 2.
TEST_F(Scontrol, ControllerKeywordsNameTheConfigTheyCouldNotRead) {
  const std::vector<std::vector<std::string>> cases = {
      {"show", "job", "107"},   {"show", "node", "gpu01"}, {"show", "partition"}, {"show", "config"},
      {"update", "JobId=1", "TimeLimit=5"}, {"requeue", "5"}, {"hold", "5"}, {"ping"},
      {"suspend", "5"}, {"resume", "5"}, {"top", "5"},
  };
  for (const auto& args : cases) {
    Outcome r = scontrol(args, {"DROVER_CONF=/nonexistent/slurm.conf"});
    EXPECT_EQ(r.rc, 1) << args[0];
    EXPECT_EQ(r.out, "") << args[0];
    EXPECT_NE(r.err.find("cannot read /nonexistent/slurm.conf"), std::string::npos) << args[0] << ": " << r.err;
  }
  Outcome none = scontrol({});  // no command and stdin at its end: nothing to do
  EXPECT_EQ(none.rc, 0) << none.err;
  EXPECT_EQ(none.out + none.err, "");
  Outcome listpids = scontrol({"listpids", "5"});
  EXPECT_EQ(listpids.rc, 2);
  EXPECT_NE(listpids.err.find("not implemented yet"), std::string::npos) << listpids.err;
}

TEST_F(Scontrol, HelpListsWhatWorks) {
  Outcome r = scontrol({"--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("show hostnames [LIST]"), std::string::npos);
  EXPECT_NE(r.out.find("With the controller (DROVER_CONF"), std::string::npos) << r.out;
}

// One reading of scontrol's options for both layers: anywhere among the
// words, short ones bundled, values attached or apart, -dd twice -d.
TEST(ScontrolOptions, ReadAnywhereWithTheirValues) {
  using drover::cli::ScontrolOptions;
  ScontrolOptions o;
  ASSERT_EQ(drover::cli::parse_scontrol_options({"-M", "anchor", "show", "-dd", "job", "-o", "5", "--quiet"}, o), 0);
  EXPECT_EQ(o.words, (std::vector<std::string>{"show", "job", "5"}));
  EXPECT_EQ(o.clusters, "anchor");
  EXPECT_EQ(o.details, 2);
  EXPECT_TRUE(o.one_line);
  EXPECT_TRUE(o.quiet);
  ScontrolOptions p;
  ASSERT_EQ(drover::cli::parse_scontrol_options({"--clusters=c2", "-u", "1000", "-av", "--details", "ping"}, p), 0);
  EXPECT_EQ(p.words, (std::vector<std::string>{"ping"}));
  EXPECT_EQ(p.clusters, "c2");
  EXPECT_EQ(p.details, 1);
  ScontrolOptions q;
  ASSERT_EQ(drover::cli::parse_scontrol_options({"-Mc3", "--", "-o"}, q), 0);
  EXPECT_EQ(q.clusters, "c3");
  EXPECT_EQ(q.words, (std::vector<std::string>{"-o"}));
  EXPECT_FALSE(q.one_line);
  // `show nodes=cpu01` and `show job=` are Slurm 22.05's too (anchor cluster): entity, then its name if any.
  auto words = [](std::vector<std::string> args) {
    ScontrolOptions w;
    EXPECT_EQ(drover::cli::parse_scontrol_options(args, w), 0);
    return w.words;
  };
  EXPECT_EQ(words({"show", "nodes=cpu01"}), (std::vector<std::string>{"show", "nodes", "cpu01"}));
  EXPECT_EQ(words({"sho", "job=12", "-d"}), (std::vector<std::string>{"sho", "job", "12"}));
  EXPECT_EQ(words({"show", "job="}), (std::vector<std::string>{"show", "job"}));
  EXPECT_EQ(words({"update", "JobId=12", "Nice=5"}), (std::vector<std::string>{"update", "JobId=12", "Nice=5"}));
}

}  // namespace
