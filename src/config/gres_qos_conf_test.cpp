// gres.conf and qos.conf parsers: values, defaults and exact diagnostics.
#include <gtest/gtest.h>

#include "common/strings.hpp"
#include "config/parse.hpp"

namespace drover::config {
namespace {

std::vector<std::string> formatted(const Diagnostics& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags.items()) out.push_back(d.format());
  return out;
}

ClusterConfig with_nodes() {
  ParseOptions opts;
  opts.follow_includes = false;
  return parse_slurm_conf_text("NodeName=gpu[01-02],cpu01", "slurm.conf", opts);
}

ClusterConfig gres(std::string_view text) {
  ClusterConfig cfg = with_nodes();
  parse_gres_conf_text(text, "gres.conf", cfg);
  return cfg;
}

ClusterConfig qos(std::string_view text) {
  ClusterConfig cfg;
  parse_qos_conf_text(text, "qos.conf", cfg);
  return cfg;
}

TEST(GresConf, SeedLine) {
  auto cfg = gres("NodeName=gpu[01-02] Name=gpu File=/dev/nvidia[0-7]");
  EXPECT_TRUE(cfg.diags.empty()) << formatted(cfg.diags).at(0);
  ASSERT_EQ(cfg.gres_lines.size(), 1u);
  const auto& g = cfg.gres_lines[0];
  EXPECT_EQ(g.nodes, (std::vector<std::string>{"gpu01", "gpu02"}));
  EXPECT_EQ(g.name, "gpu");
  EXPECT_EQ(g.files.size(), 8u);
  EXPECT_EQ(g.files.back(), "/dev/nvidia7");
  EXPECT_EQ(g.device_count(), 8);
  EXPECT_EQ(g.key_locs.at("File").str(), "gres.conf:1:30");
  EXPECT_EQ(cfg.gres_conf_path, "gres.conf");
}

TEST(GresConf, NoNodeNameMeansEveryNodeAndAllKeys) {
  auto cfg = gres("AutoDetect=off\nname=gpu TYPE=a100 Count=4 Cores=0-3,8 Links=-1,2 Flags=CountOnly,nvidia_gpu_env");
  EXPECT_TRUE(cfg.diags.empty()) << formatted(cfg.diags).at(0);
  EXPECT_EQ(cfg.gres_autodetect, "off");
  ASSERT_EQ(cfg.gres_lines.size(), 1u);
  const auto& g = cfg.gres_lines[0];
  EXPECT_EQ(g.nodes, (std::vector<std::string>{"gpu01", "gpu02", "cpu01"}));
  EXPECT_EQ(g.type, "a100");
  EXPECT_EQ(g.device_count(), 4);
  EXPECT_EQ(g.cores, (std::vector<int>{0, 1, 2, 3, 8}));
  EXPECT_EQ(g.links, "-1,2");
  EXPECT_EQ(g.flags, "CountOnly,nvidia_gpu_env");
}

TEST(GresConf, CountSuffixAndPerNodeAutoDetect) {
  // AutoDetect=nvidia: Slurm 23.11's word, written by a public gres.conf; taken as NVML detection.
  auto cfg = gres("NodeName=cpu01 Name=bandwidth Count=4G\nNodeName=gpu01 AutoDetect=NVML\nNodeName=gpu02 AutoDetect=nvidia");
  EXPECT_TRUE(cfg.diags.empty()) << formatted(cfg.diags).at(0);
  ASSERT_EQ(cfg.gres_lines.size(), 3u);
  EXPECT_EQ(cfg.gres_lines[2].autodetect, "nvidia");
  EXPECT_EQ(*cfg.gres_lines[0].count, int64_t{4} << 30);
  EXPECT_EQ(cfg.gres_lines[1].name, "");
  EXPECT_EQ(cfg.gres_lines[1].autodetect, "nvml");
  EXPECT_EQ(cfg.gres_autodetect, "");
}

struct DiagCase {
  const char* name;
  const char* text;
  std::vector<std::string> want;
};

class GresConfDiagnostics : public ::testing::TestWithParam<DiagCase> {};
TEST_P(GresConfDiagnostics, ReportsExactly) { EXPECT_EQ(formatted(gres(GetParam().text).diags), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(
    Gres, GresConfDiagnostics,
    ::testing::Values(
        DiagCase{"missing_name", "NodeName=gpu01 File=/dev/nvidia0",
                 {"gres.conf:1:1: error: gres.conf line has no Name= (the generic resource it describes); it is "
                  "ignored [missing-key]\n    fix: add Name=gpu (or the resource's name listed in GresTypes)"}},
        DiagCase{"bad_count", "Name=gpu Count=eight",
                 {"gres.conf:1:16: error: invalid value \"eight\" for Count: expected a count such as 8, or with a "
                  "suffix such as 4G [bad-value]"}},
        DiagCase{"bad_cores", "Name=gpu Cores=3-1",
                 {"gres.conf:1:16: error: invalid value \"3-1\" for Cores: expected core ids and ranges such as "
                  "0-31,64-95 (ids up to 65535) [bad-value]"}},
        DiagCase{"bad_flag", "Name=gpu Flags=Fast",
                 {"gres.conf:1:16: error: invalid value \"Fast\" for Flags: expected comma-separated flags from "
                  "CountOnly, nvidia_gpu_env, amd_gpu_env, intel_gpu_env, opencl_env, no_gpu_env, one_sharing or "
                  "all_sharing [bad-value]"}},
        DiagCase{"bad_autodetect", "AutoDetect=yes",
                 {"gres.conf:1:12: error: invalid value \"yes\" for AutoDetect: expected nvml, nvidia, rsmi, oneapi, "
                  "nrt or off [bad-value]"}},
        DiagCase{"unknown_key", "Name=gpu Typ=h100",
                 {"gres.conf:1:10: warning: unknown key \"Typ\" in gres.conf (ignored); did you mean Type? "
                  "[unknown-key]\n    fix: write Type=..., or remove the key"}},
        DiagCase{"slurm_conf_key", "NodeName=gpu01 Name=gpu Gres=gpu:8",
                 {"gres.conf:1:25: warning: Gres is a slurm.conf NodeName option; in gres.conf it has no effect "
                  "[key-wrong-section]\n    fix: in gres.conf write Name=gpu Type=... File=... instead"}},
        DiagCase{"passive_key", "Name=gpu MultipleFiles=/dev/a,/dev/b",
                 {"gres.conf:1:10: info: accepted, no effect in Drover: MultipleFiles [key-no-effect]"}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(GresConf, RejectedNodeNameAppliesNowhere) {
  auto cfg = gres("Name=gpu Count=1 NodeName=");
  EXPECT_TRUE(cfg.gres_lines.empty());
  EXPECT_EQ(formatted(cfg.diags),
            std::vector<std::string>{"gres.conf:1:27: error: invalid value \"\" for NodeName: expected a host list "
                                     "such as gpu[01-32] [bad-value]"});
}

TEST(QosConf, SeedLines) {
  auto cfg = qos(
      "# qos.conf\n"
      "Name=normal GrpTRES=cpu=16000,gres/gpu=256 Priority=1000\n"
      "Name=training GrpTRES=gres/gpu=128 Priority=3000\n"
      "Name=debug MaxTime=04:00:00 Priority=5000\n");
  EXPECT_TRUE(cfg.diags.empty()) << formatted(cfg.diags).at(0);
  ASSERT_EQ(cfg.qos.size(), 3u);
  const auto* normal = cfg.find_qos("normal");
  ASSERT_NE(normal, nullptr);
  EXPECT_EQ(normal->priority, 1000);
  EXPECT_EQ(normal->grp_tres, (TresMap{{"cpu", 16000}, {"gres/gpu", 256}}));
  EXPECT_EQ(normal->max_wall, kInfinite);
  EXPECT_EQ(cfg.find_qos("debug")->max_wall, 4 * 3600);
  EXPECT_EQ(cfg.find_qos("training")->loc.str(), "qos.conf:3:1");
  EXPECT_EQ(cfg.find_qos("training")->key_locs.at("GrpTRES").str(), "qos.conf:3:15");
}

TEST(QosConf, EveryKeyAndAliases) {
  auto cfg = qos(
      "Name=big MaxWall=2-00:00:00 GrpJobs=10 GrpSubmitJobs=20 MaxTRESPerJob=gres/gpu=8 MaxTRESPerNode=cpu=64 "
      "MaxTRESPU=gres/gpu=16 MaxJobsPU=4 MaxSubmitJobsPerUser=8 UsageFactor=0.5 Flags=DenyOnLimit,NoReserve "
      "Description=\"big jobs\"");
  EXPECT_TRUE(cfg.diags.empty()) << formatted(cfg.diags).at(0);
  const auto& q = cfg.qos.at(0);
  EXPECT_EQ(q.max_wall, 2 * 86400);
  EXPECT_EQ(q.grp_jobs, 10);
  EXPECT_EQ(q.grp_submit_jobs, 20);
  EXPECT_EQ(q.max_tres_per_job.at("gres/gpu"), 8);
  EXPECT_EQ(q.max_tres_per_node.at("cpu"), 64);
  EXPECT_EQ(q.max_tres_per_user.at("gres/gpu"), 16);
  EXPECT_EQ(q.max_jobs_per_user, 4);
  EXPECT_EQ(q.max_submit_jobs_per_user, 8);
  EXPECT_DOUBLE_EQ(q.usage_factor, 0.5);
  EXPECT_TRUE(q.deny_on_limit);
  EXPECT_TRUE(q.no_reserve);
  EXPECT_EQ(q.description, "big jobs");
}

TEST(QosConf, Defaults) {
  auto cfg = qos("Name=plain");
  const auto& q = cfg.qos.at(0);
  EXPECT_EQ(q.priority, 0);
  EXPECT_EQ(q.grp_jobs, kUnlimited);
  EXPECT_EQ(q.max_jobs_per_user, kUnlimited);
  EXPECT_DOUBLE_EQ(q.usage_factor, 1.0);
  EXPECT_FALSE(q.deny_on_limit);
}

class QosConfDiagnostics : public ::testing::TestWithParam<DiagCase> {};
TEST_P(QosConfDiagnostics, ReportsExactly) { EXPECT_EQ(formatted(qos(GetParam().text).diags), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(
    Qos, QosConfDiagnostics,
    ::testing::Values(
        DiagCase{"missing_name", "Priority=10",
                 {"qos.conf:1:1: error: qos.conf line has no Name= (the QOS it defines); it is ignored "
                  "[missing-key]\n    fix: start the line with Name=<qos name>"}},
        DiagCase{"duplicate", "Name=a\nName=a Priority=2",
                 {"qos.conf:2:6: error: QOS a is defined twice (first at qos.conf:1:1); this line is ignored "
                  "[duplicate-qos]\n    see: qos.conf:1:1\n    fix: merge the two lines into one"}},
        DiagCase{"bad_priority", "Name=a Priority=high",
                 {"qos.conf:1:17: error: invalid value \"high\" for Priority: expected an integer from 0 to "
                  "4294967295 [bad-value]"}},
        DiagCase{"bad_flag", "Name=a Flags=DenyOnLimit,Sometimes",
                 {"qos.conf:1:14: error: invalid value \"DenyOnLimit,Sometimes\" for Flags: expected comma-separated "
                  "flags from DenyOnLimit, NoReserve, EnforceUsageThreshold, NoDecay, OverPartQOS, "
                  "PartitionMaxNodes, PartitionMinNodes, PartitionTimeLimit, RequiresReservation or "
                  "UsageFactorSafe [bad-value]"}},
        DiagCase{"bad_usage_factor", "Name=a UsageFactor=-1",
                 {"qos.conf:1:20: error: invalid value \"-1\" for UsageFactor: expected a number from 0 to 1000000 "
                  "[bad-value]"}},
        DiagCase{"unknown_key", "Name=a MaxWal=10",
                 {"qos.conf:1:8: warning: unknown key \"MaxWal\" in qos.conf (ignored); did you mean MaxWall? "
                  "[unknown-key]\n    fix: write MaxWall=..., or remove the key"}},
        DiagCase{"passive_key", "Name=a UsageThreshold=0.5",
                 {"qos.conf:1:8: info: accepted, no effect in Drover: UsageThreshold [key-no-effect]"}},
        DiagCase{"bad_preempt_mode", "Name=a PreemptMode=SOMETIMES",
                 {"qos.conf:1:20: error: invalid value \"SOMETIMES\" for PreemptMode: expected comma-separated "
                  "modes from OFF, CANCEL, REQUEUE, SUSPEND, GANG, WITHIN or CLUSTER [bad-value]"}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(QosConf, BadTresNamesTheTresError) {
  auto cfg = qos("Name=a GrpTRES=cpu=lots");
  auto err = parse_tres("cpu=lots");
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(formatted(cfg.diags),
            std::vector<std::string>{"qos.conf:1:16: error: invalid value \"cpu=lots\" for GrpTRES: expected a TRES "
                                     "list such as cpu=16000,gres/gpu=256 (" + err.error().message + ") [bad-value]"});
}

}  // namespace
}  // namespace drover::config
