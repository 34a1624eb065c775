// `drover config check|show|reference` end to end: output and exit status.
#include <cstdlib>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "config/test_files.hpp"

namespace drover::cli {
namespace {

struct Outcome {
  int status;
  std::string out;
  std::string err;
};

Outcome run(const Args& args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int status = config_main(args);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  return {status, out, err};
}

// Lines that keep the config doctor quiet (multifactor priority with an age
// factor, a default memory per CPU), so a test sees only the findings it provokes.
const char* const kDoctorQuiet = "PriorityType=priority/multifactor\nPriorityWeightAge=1000\nDefMemPerCPU=100\n";

TEST(ConfigCheck, CleanConfigExitsZero) {
  config::testing::ScratchDir dir;
  dir.write("qos.conf", "Name=normal\n");
  std::string conf = dir.write("slurm.conf", std::string("ClusterName=x\nNodeName=n1 RealMemory=1000\n") +
                                                 "PartitionName=p Nodes=n1 Default=YES\n" + kDoctorQuiet);
  Outcome r = run({"check", "--config", conf});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1), "0 errors, 0 warnings\n");
}

TEST(ConfigCheck, WarningsExitOneErrorsExitTwoSorted) {
  config::testing::ScratchDir dir;
  dir.write("qos.conf", "Name=normal\n");
  std::string conf = dir.write("slurm.conf", std::string("MaxNodes=32\nNodeName=n1 CPUs=x\n") +
                                                 "PartitionName=p Nodes=n1 Default=YES\n" + kDoctorQuiet);
  Outcome r = run({"check", "--config=" + conf});
  EXPECT_EQ(r.status, 2);
  auto first = r.out.find(conf + ":1:1: warning: MaxNodes is a PartitionName option");
  auto second = r.out.find(conf + ":2:18: error: invalid value \"x\" for CPUs");
  EXPECT_NE(first, std::string::npos) << r.out;
  EXPECT_NE(second, std::string::npos) << r.out;
  EXPECT_LT(first, second);
  EXPECT_NE(r.out.find("\n1 error, 1 warning"), std::string::npos) << r.out;

  std::string warn_only = dir.write("w/slurm.conf", "MaxNodes=32\n");
  EXPECT_EQ(run({"check", "--config", warn_only}).status, 1);
}

TEST(ConfigCheck, MissingConfigIsAClearError) {
  Outcome r = run({"check", "--config", "/nonexistent/slurm.conf"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out,
            "/nonexistent/slurm.conf: error: cannot read /nonexistent/slurm.conf: No such file or directory "
            "[config-unreadable]\n"
            "    fix: give the configuration with --config PATH or DROVER_CONF=PATH (default: /etc/drover/slurm.conf)\n"
            "1 error, 0 warnings\n");
}

TEST(ConfigCheck, EnvironmentNamesTheConfig) {
  config::testing::ScratchDir dir;
  std::string conf = dir.write("slurm.conf", "MaxNodes=1\n");
  ::setenv("DROVER_CONF", conf.c_str(), 1);
  Outcome r = run({"check"});
  ::unsetenv("DROVER_CONF");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find(conf + ":1:1: warning"), std::string::npos) << r.out;
}

TEST(ConfigCheck, JsonDocument) {
  config::testing::ScratchDir dir;
  dir.write("qos.conf", "Name=normal\n");
  std::string conf = dir.write("slurm.conf", std::string("NodeName=n1 RealMemory=1000 Wieght=1\n") +
                                                 "PartitionName=p Nodes=n1 Default=YES\n" + kDoctorQuiet);
  Outcome r = run({"check", "--json", "--config", conf});
  EXPECT_EQ(r.status, 1);
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["config"], conf);
  EXPECT_EQ(doc["summary"]["warnings"], 1);
  ASSERT_EQ(doc["findings"].size(), 1u);
  EXPECT_EQ(doc["findings"][0]["code"], "unknown-key");
  EXPECT_EQ(doc["findings"][0]["key"], "Wieght");
  EXPECT_EQ(doc["findings"][0]["column"], 29);
}

TEST(ConfigShow, PrintsEffectiveConfig) {
  config::testing::ScratchDir dir;
  std::string conf = dir.write("slurm.conf", "ClusterName=demo\nNodeName=n[1-2] CPUs=4\n");
  Outcome r = run({"show", "--config", conf});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("ClusterName             = demo\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NodeName=n[1-2] Port=6818 CPUs=4 "), std::string::npos) << r.out;
}

TEST(ConfigShow, MissingConfigExitsTwo) {
  Outcome r = run({"show", "--config", "/nonexistent/slurm.conf"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("cannot read /nonexistent/slurm.conf"), std::string::npos);
}

TEST(ConfigReference, PrintsMarkdown) {
  Outcome r = run({"reference"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("# Drover configuration reference\n", 0), 0u);
}

TEST(ConfigCommand, UsageErrors) {
  for (const Args& args : {Args{}, Args{"bogus"}, Args{"check", "--config"}, Args{"check", "--frob"},
                           Args{"check", "a", "b"}, Args{"reference", "--json"}}) {
    Outcome r = run(args);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("usage: drover config check"), std::string::npos);
  }
  // --help says what check's exit status means (scripts and CI gate on it).
  Outcome help = run({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("exits 0 when it finds no warning or error (info only), 1 with warnings, 2 with errors"),
            std::string::npos)
      << help.out;
}

}  // namespace
}  // namespace drover::cli
