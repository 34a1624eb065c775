// Hostile input: the parsers never crash, never point outside the text, and
// keep memory bounded. (A coverage-guided fuzzer drives the same entry
// points; this is the deterministic floor that runs with every test pass.)
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "config/parse.hpp"

namespace drover::config {
namespace {

const char* const kSeed =
    "ClusterName=seed\n"
    "SchedulerType=sched/backfill # backfill\n"
    "SchedulerParameters=bf_interval=0,bf_continue,bf_window=2880\n"
    "PriorityType=priority/multifactor\nPriorityWeightTRES=CPU=1000,GRES/gpu=5000\n"
    "NodeName=DEFAULT RealMemory=1000\n"
    "NodeName=gpu[01-32] Gres=gpu:8 CPUs=128 RealMemory=1000000 Sockets=2 CoresPerSocket=64 ThreadsPerCore=1 \\\n"
    "  Feature=h100,bigmem Port=[17001-17032] NodeAddr=\"10.0.0.[1-32]\"\n"
    "PartitionName=DEFAULT State=UP\n"
    "PartitionName=training Nodes=gpu[01-32] Default=NO MaxTime=INFINITE State=UP\n"
    "PartitionName=compute Nodes=ALL Default=YES MaxTime=7-00:00:00 OverSubscribe=FORCE:2\n"
    "MaxNodes=32\nInclude extra.conf\n";

const char* const kGres = "AutoDetect=off\nNodeName=gpu[01-32] Name=gpu Type=h100 File=/dev/nvidia[0-7] Cores=0-63\n";
const char* const kQos = "Name=normal GrpTRES=cpu=16000,gres/gpu=256 Priority=1000 Flags=DenyOnLimit\n"
                         "Name=debug MaxTime=04:00:00 Priority=5000\n";

std::string mutate(std::string s, std::mt19937& rng) {
  static const std::string kAlphabet = "=[]-,:\"\\#\n \t0123456789aZ%(){}";
  std::uniform_int_distribution<int> op(0, 3);
  int edits = 1 + static_cast<int>(rng() % 8);
  for (int i = 0; i < edits && !s.empty(); ++i) {
    std::size_t pos = rng() % s.size();
    switch (op(rng)) {
      case 0: s[pos] = kAlphabet[rng() % kAlphabet.size()]; break;
      case 1: s.insert(pos, 1, kAlphabet[rng() % kAlphabet.size()]); break;
      case 2: s.erase(pos, 1 + rng() % 8); break;
      default: s.insert(pos, s.substr(rng() % s.size(), 1 + rng() % 40)); break;
    }
  }
  return s;
}

int line_count(const std::string& s) { return 1 + static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

void expect_locations_inside(const ClusterConfig& cfg, const std::string& file, const std::string& text) {
  for (const auto& d : cfg.diags.items()) {
    if (d.loc.file != file) continue;
    EXPECT_GE(d.loc.line, 1) << d.format();
    EXPECT_LE(d.loc.line, line_count(text)) << d.format();
    EXPECT_GE(d.loc.column, 0) << d.format();
  }
}

TEST(ParserRobustness, MutatedConfigsParseWithLocationsInsideTheText) {
  std::mt19937 rng(20240601);
  ParseOptions opts;
  opts.follow_includes = false;
  for (int i = 0; i < 3000; ++i) {
    std::string conf = mutate(kSeed, rng);
    std::string gres = mutate(kGres, rng);
    std::string qos = mutate(kQos, rng);
    ClusterConfig cfg = parse_slurm_conf_text(conf, "s.conf", opts);
    parse_gres_conf_text(gres, "g.conf", cfg);
    parse_qos_conf_text(qos, "q.conf", cfg);
    expect_locations_inside(cfg, "s.conf", conf);
    expect_locations_inside(cfg, "g.conf", gres);
    expect_locations_inside(cfg, "q.conf", qos);
    ASSERT_LE(cfg.nodes.size(), kMaxNodes);
    if (::testing::Test::HasFailure()) {
      ADD_FAILURE() << "input:\n" << conf << "\n---\n" << gres << "\n---\n" << qos;
      return;
    }
  }
}

TEST(ParserRobustness, WideNodeLinesAreRefusedNotCopied) {
  std::string features;
  for (int i = 0; i < 20000; ++i) features += (i ? ",f" : "f") + std::to_string(i);
  ParseOptions opts;
  opts.follow_includes = false;
  ClusterConfig cfg = parse_slurm_conf_text("NodeName=n[1-200000] Features=" + features, "s.conf", opts);
  EXPECT_TRUE(cfg.nodes.empty());
  ASSERT_EQ(cfg.diags.items().size(), 1u);
  EXPECT_EQ(cfg.diags.items()[0].format(),
            "s.conf:1:10: error: invalid value \"n[1-200000]\" for NodeName: expected fewer or smaller node "
            "definitions: the NodeName lines so far define more than 256 MB of node data [bad-value]");
}

TEST(ParserRobustness, ManyGresLinesOverManyNodesAreBounded) {
  ParseOptions opts;
  opts.follow_includes = false;
  ClusterConfig cfg = parse_slurm_conf_text("NodeName=n[1-100000]", "s.conf", opts);
  std::string gres;
  for (int i = 0; i < 100; ++i) gres += "Name=gpu Count=1\n";
  parse_gres_conf_text(gres, "g.conf", cfg);
  std::size_t names = 0;
  for (const auto& g : cfg.gres_lines) names += g.nodes.size();
  EXPECT_LE(names, kMaxPartitionMembers);
  EXPECT_EQ(cfg.gres_lines.size(), kMaxPartitionMembers / 100000);
  EXPECT_TRUE(cfg.diags.has_errors());
}

}  // namespace
}  // namespace drover::config
