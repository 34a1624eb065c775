// load_config, path resolution, the anchor cluster's real Slurm config, and
// the generated reference staying in sync with docs/config-reference.md.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "config/model.hpp"
#include "config/parse.hpp"
#include "config/report.hpp"
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

TEST(ResolveConfigPath, FlagThenEnvironmentThenDefault) {
  EXPECT_EQ(resolve_config_path("/a/slurm.conf", "/b/slurm.conf"), "/a/slurm.conf");
  EXPECT_EQ(resolve_config_path("", "/b/slurm.conf"), "/b/slurm.conf");
  EXPECT_EQ(resolve_config_path("", ""), "/etc/drover/slurm.conf");
  EXPECT_EQ(resolve_config_path("", nullptr), "/etc/drover/slurm.conf");
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

TEST(ConfigReference, CommittedDocMatchesTheKeyTables) {
  std::string path = std::string(DROVER_SOURCE_DIR) + "/docs/config-reference.md";
  std::ifstream in(path);
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_TRUE(committed.str() == config_reference_markdown())
      << "docs/config-reference.md is out of date with the key tables in src/config/*_keys.cpp; regenerate it:\n"
         "  build/bin/drover config reference > docs/config-reference.md";
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
