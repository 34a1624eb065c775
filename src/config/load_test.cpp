// load_config, path resolution, the anchor cluster's real Slurm config, and
// the generated reference staying in sync with docs/config-reference.md.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "config/model.hpp"
#include "config/parse.hpp"
#include "config/report.hpp"
#include "config/tables.hpp"
#include "config/test_files.hpp"

namespace drover::config {
namespace {

std::vector<std::string> not_info(const Diagnostics& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags.items()) {
    if (d.severity != Severity::kInfo) out.push_back(d.format());
  }
  return out;
}

TEST(ResolveConfigPath, FlagThenDroverConfThenSlurmConfThenDefault) {
  EXPECT_EQ(resolve_config_path("/a/slurm.conf", "/b/slurm.conf", "/c/slurm.conf"), "/a/slurm.conf");
  EXPECT_EQ(resolve_config_path("", "/b/slurm.conf", "/c/slurm.conf"), "/b/slurm.conf");
  EXPECT_EQ(resolve_config_path("", "", "/c/slurm.conf"), "/c/slurm.conf");
  EXPECT_EQ(resolve_config_path("", nullptr, "/c/slurm.conf"), "/c/slurm.conf");
  EXPECT_EQ(resolve_config_path("", "/b/slurm.conf"), "/b/slurm.conf");
  EXPECT_EQ(resolve_config_path("", "", ""), "/etc/drover/slurm.conf");
  EXPECT_EQ(resolve_config_path("", nullptr, nullptr), "/etc/drover/slurm.conf");
}

TEST(LoadConfig, ReadsCompanionFilesBesideSlurmConf) {
  testing::ScratchDir dir;
  std::string conf = dir.write("slurm.conf", "NodeName=gpu01 Gres=gpu:2\n");
  dir.write("gres.conf", "Name=gpu File=/dev/nvidia[0-1]\n");
  dir.write("qos.conf", "Name=normal Priority=10\n");
  auto cfg = load_config({conf, {}, {}});
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_TRUE(cfg->diags.empty());
  EXPECT_EQ(cfg->files_read, (std::vector<std::string>{conf, dir.path("gres.conf"), dir.path("qos.conf")}));
  EXPECT_EQ(cfg->slurm_conf_path, conf);
  ASSERT_EQ(cfg->gres_lines.size(), 1u);
  EXPECT_EQ(cfg->gres_lines[0].nodes, std::vector<std::string>{"gpu01"});
  EXPECT_EQ(cfg->qos.at(0).priority, 10);
}

TEST(LoadConfig, CompanionsAreOptionalUnlessNamed) {
  testing::ScratchDir dir;
  std::string conf = dir.write("slurm.conf", "ClusterName=x\n");
  auto cfg = load_config({conf, {}, {}});
  ASSERT_TRUE(cfg.ok());
  EXPECT_TRUE(cfg->diags.empty());
  EXPECT_EQ(cfg->gres_conf_path, "");
  EXPECT_EQ(cfg->qos_conf_path, "");

  auto named = load_config({conf, dir.path("nope-gres.conf"), {}});
  ASSERT_TRUE(named.ok());
  ASSERT_EQ(named->diags.items().size(), 1u);
  EXPECT_EQ(named->diags.items()[0].format(),
            dir.path("nope-gres.conf") + ": error: cannot read " + dir.path("nope-gres.conf") +
                ": No such file or directory [file-unreadable]\n    fix: fix the file's permissions or path");
}

// What a command reads to reach the controller: the global options (also
// from an Include), none of the nodes, partitions or companion files.
TEST(LoadConfig, GlobalsOnlyReadsTheGlobalOptionsAndNothingElse) {
  testing::ScratchDir dir;
  dir.write("more.conf", "SlurmctldPort=7777\nPartitionName=p Nodes=n[1-2] MaxTime=bogus\n");
  std::string conf = dir.write("slurm.conf",
                               "ClusterName=c1\nSlurmctldHost=head(10.0.0.1)\nStateSaveLocation=/var/spool/c1\n"
                               "NodeName=n[1-2] CPUs=lots\nInclude more.conf\n");
  dir.write("gres.conf", "Name=gpu File=/dev/nvidia[0-1] Bogus=1\n");
  LoadOptions globals{conf, {}, {}};
  globals.globals_only = true;
  auto g = load_config(globals);
  ASSERT_TRUE(g.ok()) << g.error().message;
  EXPECT_EQ(g->cluster_name, "c1");
  EXPECT_EQ(g->slurmctld_hosts, std::vector<std::string>{"head(10.0.0.1)"});
  EXPECT_EQ(g->slurmctld_port, 7777);
  EXPECT_EQ(g->state_save_location, "/var/spool/c1");
  EXPECT_TRUE(g->nodes.empty());
  EXPECT_TRUE(g->partitions.empty());
  EXPECT_TRUE(g->gres_lines.empty());
  EXPECT_TRUE(not_info(g->diags).empty()) << g->diags.items().front().format();

  auto full = load_config({conf, {}, {}});
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->nodes.size(), 2u);
  EXPECT_GE(not_info(full->diags).size(), 3u) << "CPUs=lots, MaxTime=bogus and Bogus=1 are reported in full";
}

// A command's reading gives the controller's address as the full reading
// does: aliases, repeats, AuthInfo, Include with %c, keys among others on a
// line; a NodeName line's continuation is not read as global options.
TEST(LoadConfig, GlobalsOnlyFindsTheControllerAsTheFullReadingDoes) {
  testing::ScratchDir dir;
  dir.write("c1-ctld.conf", "SlurmctldPort=6900-6903 StateSaveLocation=\"/var/spool/c 1\"\n");
  std::string conf = dir.write(
      "slurm.conf",
      "ClusterName=c1 SlurmUser=slurm\n"
      "ControlMachine=head(10.0.0.1)\n"
      "SlurmctldHost=backup\n"
      "AuthInfo=socket=/run/x,key=/etc/k.key  # the cluster key\n"
      "Include %c-ctld.conf\n"
      "NodeName=n[1-2] CPUs=4 \\\n"
      "   ClusterName=not-this-one\n"
      "nodename=n3 CPUs=4\n"
      "PartitionName=p Nodes=n[1-3] Default=YES\n");
  LoadOptions globals{conf, {}, {}};
  globals.globals_only = true;
  auto g = load_config(globals);
  auto full = load_config({conf, {}, {}});
  ASSERT_TRUE(g.ok() && full.ok());
  EXPECT_EQ(g->cluster_name, "c1");
  EXPECT_EQ(g->slurmctld_hosts, (std::vector<std::string>{"head(10.0.0.1)", "backup"}));
  EXPECT_EQ(g->slurmctld_port, 6900);
  EXPECT_EQ(g->state_save_location, "/var/spool/c 1");
  EXPECT_EQ(g->passive_values.at("AuthInfo"), "socket=/run/x,key=/etc/k.key");
  EXPECT_EQ(g->cluster_name, full->cluster_name);
  EXPECT_EQ(g->slurmctld_hosts, full->slurmctld_hosts);
  EXPECT_EQ(g->slurmctld_port, full->slurmctld_port);
  EXPECT_EQ(g->state_save_location, full->state_save_location);
  EXPECT_EQ(g->passive_values.at("AuthInfo"), full->passive_values.at("AuthInfo"));
  EXPECT_EQ(full->nodes.size(), 3u);
  EXPECT_TRUE(g->nodes.empty());
  const std::string default_user = ClusterConfig().slurm_user;
  EXPECT_EQ(g->slurm_user, default_user) << "keys a command does not need are not applied";
  EXPECT_EQ(full->slurm_user, "slurm");
  EXPECT_TRUE(not_info(g->diags).empty()) << g->diags.items().front().format();
}

TEST(LoadConfig, MissingSlurmConfIsAnError) {
  auto cfg = load_config({"/nonexistent/drover/slurm.conf", {}, {}});
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().message, "cannot read /nonexistent/drover/slurm.conf: No such file or directory");
}

TEST(LoadConfig, DirectoryIsNotAConfig) {
  testing::ScratchDir dir;
  auto cfg = load_config({dir.path(), {}, {}});
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.error().message, "cannot read " + dir.path() + ": not a regular file");
}

// The anchor cluster's slurm.conf and gres.conf ran on real Slurm 22.05: Drover
// must read them with no warning and no error.
TEST(AnchorConfig, LoadsWithoutWarningsOrErrors) {
  std::string conf = std::string(DROVER_SOURCE_DIR) + "/../shared/anchors/slurm/etc/slurm.conf";
  if (!std::filesystem::exists(conf)) GTEST_SKIP() << "anchor config not found at " << conf;
  auto cfg = load_config({conf, {}, {}});
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(not_info(cfg->diags), std::vector<std::string>{});
  EXPECT_EQ(cfg->cluster_name, "anchor");
  ASSERT_EQ(cfg->nodes.size(), 9u);
  const auto* gpu02 = cfg->find_node("gpu02");
  ASSERT_NE(gpu02, nullptr);
  EXPECT_EQ(gpu02->port, 17002);
  EXPECT_EQ(gpu02->hostname, "localhost");
  EXPECT_EQ(gpu02->addr, "127.0.0.1");
  EXPECT_EQ(gpu02->cpus, 128);
  EXPECT_EQ(gpu02->gres.at(0).str(), "gpu:h100:8");
  EXPECT_EQ(cfg->find_node("hm01")->features, std::vector<std::string>{"highmem"});
  ASSERT_EQ(cfg->partitions.size(), 4u);
  EXPECT_EQ(cfg->find_partition("interactive")->nodes.size(), 8u);
  EXPECT_EQ(*cfg->find_partition("interactive")->default_time, 3600);
  EXPECT_EQ(cfg->default_partition()->name, "compute");
  EXPECT_EQ(cfg->priority_weight_tres.at("gres/gpu"), 5000);
  EXPECT_EQ(cfg->gres_autodetect, "off");
  ASSERT_EQ(cfg->gres_lines.size(), 2u);
  EXPECT_EQ(cfg->gres_lines[1].type, "a100");
  EXPECT_EQ(cfg->gres_lines[1].device_count(), 8);
}

// The seed's own files, as the seed writes them (comments in Chinese, the
// stray top-level MaxNodes=32): everything loads; the one finding is MaxNodes.
TEST(SeedConfig, LoadsWithOnlyTheMisplacedMaxNodes) {
  testing::ScratchDir dir;
  std::string conf = dir.write("slurm.conf",
                               "# 节点声明（GPU 节点）\n"
                               "NodeName=gpu[01-32] Gres=gpu:8 CPUs=128 RealMemory=1000000 Sockets=2 CoresPerSocket=64 "
                               "ThreadsPerCore=1\n"
                               "NodeName=cpu[01-16] CPUs=64 RealMemory=256000\n"
                               "NodeName=hgpu[01-16] Gres=gpu:8 Feature=h100,bigmem\n"
                               "NodeName=lgpu[01-16] Gres=gpu:8 Feature=a100\n"
                               "# 分区\n"
                               "PartitionName=training Nodes=gpu[01-32] Default=NO MaxTime=INFINITE State=UP\n"
                               "PartitionName=compute Nodes=cpu[01-16] Default=YES MaxTime=7-00:00:00 State=UP\n"
                               "# 每节点最多允许的并发作业数（GPU 分区按卡数限制）\n"
                               "MaxNodes=32\n"
                               "# 调度关键参数（slurm.conf）\n"
                               "SchedulerType=sched/backfill # 回填：小作业填大作业空隙\n"
                               "PriorityType=priority/multifactor # 多因子优先级（年龄/公平性/QOS）\n");
  dir.write("gres.conf", "# gres.conf —— 每节点 8 张卡\nNodeName=gpu[01-32] Name=gpu File=/dev/nvidia[0-7]\n");
  dir.write("qos.conf",
            "# qos.conf\n"
            "Name=normal GrpTRES=cpu=16000,gres/gpu=256 Priority=1000\n"
            "Name=training GrpTRES=gres/gpu=128 Priority=3000\n"
            "Name=debug MaxTime=04:00:00 Priority=5000\n");
  auto cfg = load_config({conf, {}, {}});
  ASSERT_TRUE(cfg.ok());
  EXPECT_EQ(not_info(cfg->diags),
            std::vector<std::string>{conf + ":10:1: warning: MaxNodes is a PartitionName option; on a global line of "
                                            "slurm.conf it has no effect [key-wrong-section]\n"
                                            "    fix: move it onto the PartitionName line(s) it should apply to, or "
                                            "delete it"});
  EXPECT_EQ(cfg->nodes.size(), 80u);
  EXPECT_EQ(cfg->find_node("hgpu16")->features, (std::vector<std::string>{"h100", "bigmem"}));
  EXPECT_EQ(cfg->scheduler_type, "sched/backfill");
  EXPECT_EQ(cfg->priority_type, "priority/multifactor");
  EXPECT_EQ(cfg->qos.size(), 3u);
  EXPECT_EQ(cfg->gres_lines.at(0).nodes.size(), 32u);
}

TEST(ConfigReference, CommittedDocMatchesTheKeyTables) {
  std::string path = std::string(DROVER_SOURCE_DIR) + "/docs/config-reference.md";
  std::ifstream in(path);
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_TRUE(committed.str() == config_reference_markdown())
      << "docs/config-reference.md is out of date with the key tables in src/config/*_keys.cpp; regenerate it:\n"
         "  build/bin/drover config reference > docs/config-reference.md";
}

// The commands' keys are the global table's own definitions, not copies
// that could drift from them.
TEST(CommandKeys, AreTheGlobalKeysOfTheSameNames) {
  const auto& cmd = command_keys();
  // ClusterName, SlurmctldHost, SlurmctldPort, StateSaveLocation, MessageTimeout, GresTypes
  ASSERT_EQ(cmd.keys().size(), 6u);
  for (const auto& k : cmd.keys()) {
    const auto* g = global_keys().find(k.name);
    ASSERT_NE(g, nullptr) << k.name;
    EXPECT_EQ(k.name, g->name);
    EXPECT_EQ(k.aliases, g->aliases) << k.name;
    EXPECT_EQ(k.values, g->values) << k.name;
    EXPECT_EQ(k.doc, g->doc) << k.name;
    EXPECT_EQ(k.repeatable, g->repeatable) << k.name;
  }
  // AuthInfo, SrunProlog, SrunEpilog, PropagateResourceLimits, PropagateResourceLimitsExcept, WaitTime
  ASSERT_EQ(cmd.passive().size(), 6u);
  for (const auto& k : cmd.passive()) {
    const auto* g = global_keys().find_passive(k.name);
    ASSERT_NE(g, nullptr) << k.name;
    EXPECT_EQ(k.daemons, g->daemons) << k.name;
  }
}

TEST(ConfigReference, ListsEveryTable) {
  std::string doc = config_reference_markdown();
  for (const char* needle : {"## slurm.conf: global keys", "| `SchedulerParameters` |", "| `bf_reserve_depth` |",
                             "| `RealMemory` |", "| `OverSubscribe` | Shared |", "## gres.conf", "| `GrpTRES` |",
                             "`MailProg`", "`DownNodes`"}) {
    EXPECT_NE(doc.find(needle), std::string::npos) << needle;
  }
}

}  // namespace
}  // namespace drover::config
