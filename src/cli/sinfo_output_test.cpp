// sinfo against real Slurm 22.05 output (testdata/slurm-22.05/sinfo_*.txt)
// and the parse rules of the clients that read sinfo (clients.md).
#include "cli/sinfo_output.hpp"
#include "cli/node_state.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "cli/cli_test_support.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using test::anchor_now;

struct SinfoCase {
  const char* golden;
  bool busy;
  const char* banner_time;  // the golden's own clock for -l
};

class SinfoGolden : public ::testing::TestWithParam<SinfoCase> {
 protected:
  void SetUp() override { test::use_utc(); }
};

TEST_P(SinfoGolden, MatchesRealSlurmByteForByte) {
  const SinfoCase& c = GetParam();
  test::Golden g = test::read_golden(c.golden);
  auto parts = test::anchor_partitions();
  auto nodes = c.busy ? test::anchor_nodes_busy() : test::anchor_nodes_idle();
  if (std::string(c.golden) == "sinfo_N_l_busy.txt") {
    // Slurm orders a node's lines of different partitions arbitrarily (its
    // sort is not stable); this capture happened to list them in reverse.
    std::reverse(parts.begin(), parts.end());
  }
  auto opts = parse_sinfo_options(test::golden_args(g.command), {});
  ASSERT_TRUE(opts.ok());
  CommandOutput out = render_sinfo(*opts, parts, nodes, test::utc(c.banner_time));
  EXPECT_EQ(out.out, g.output);
  EXPECT_EQ(out.err, "");
}

INSTANTIATE_TEST_SUITE_P(
    AnchorCluster, SinfoGolden,
    ::testing::Values(SinfoCase{"sinfo_idle.txt", false, "2026-11-29T21:51:13"},
                      SinfoCase{"sinfo_busy.txt", true, "2026-11-29T21:52:14"},
                      SinfoCase{"sinfo_o_PNGt_idle.txt", false, "2026-11-29T21:51:13"},
                      SinfoCase{"sinfo_o_PNGt_busy.txt", true, "2026-11-29T21:52:14"},
                      SinfoCase{"sinfo_N_l_idle.txt", false, "2026-11-29T21:51:13"},
                      SinfoCase{"sinfo_N_l_busy.txt", true, "2026-11-29T21:52:14"},
                      SinfoCase{"sinfo_gres_used.txt", true, "2026-11-29T21:52:14"}), [](const auto& i) { return test::test_name(i.param.golden); });

}  // namespace
}  // namespace drover::cli

namespace drover::cli {
namespace {

// The private Slurm instance with cpu01 draining (one job), cpu02 mixed
// (two jobs), cpu04 down, hm01 drained, gpu01-02 mixed (one job each).
std::vector<NodeView> oracle_drain_nodes() {
  auto nodes = test::anchor_nodes_idle();
  UnixTime when = test::utc("2026-11-29T23:55:37");
  for (auto& n : nodes) {
    if (n.name == "gpu01" || n.name == "gpu02" || n.name == "cpu01" || n.name == "cpu02") {
      n.state.base = NodeBase::kMixed;
      n.alloc_cpus = n.name == "cpu02" ? 2 : 1;
    }
    auto set_reason = [&](const char* reason) {
      n.reason = reason;
      n.reason_user = "root";
      n.reason_time = when;
    };
    if (n.name == "cpu01") {
      n.state.drain = true;
      set_reason("maint later");
    } else if (n.name == "cpu04") {
      n.state.base = NodeBase::kDown;
      set_reason("dead");
    } else if (n.name == "hm01") {
      n.state.drain = true;
      set_reason("disk bad");
    }
  }
  return nodes;
}

class SinfoOracle : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    test::use_utc();
    std::string dir = std::string(DROVER_SOURCE_DIR) + "/src/cli/testdata/oracle";
    setenv("DROVER_GOLDEN_DIR", dir.c_str(), 1);
  }
  void TearDown() override { unsetenv("DROVER_GOLDEN_DIR"); }
};

TEST_P(SinfoOracle, DrainedDownAndDrainingNodesMatchRealSlurm) {
  test::Golden g = test::read_golden(GetParam());
  auto opts = parse_sinfo_options(test::golden_args(g.command), {});
  ASSERT_TRUE(opts.ok());
  CommandOutput out =
      render_sinfo(*opts, test::anchor_partitions(), oracle_drain_nodes(), test::utc("2026-11-29T23:55:38"));
  EXPECT_EQ(out.out, g.output);
}

INSTANTIATE_TEST_SUITE_P(PrivateInstance, SinfoOracle,
                         ::testing::Values("sinfo_drain.txt", "sinfo_drain_R.txt", "sinfo_drain_s.txt",
                                           "sinfo_drain_l.txt", "sinfo_drain_N_l.txt", "sinfo_drain_C.txt",
                                           // -d: a node an admin set DOWN still responds (anchor cluster, 2026-12-06).
                                           "sinfo_drain_d.txt"), [](const auto& i) { return test::test_name(i.param); });

// User and UserLong: who set a node's reason, and their uid (Slurm 22.05
// on the anchor cluster, cpu03 drained by root: `root` and `root(0)`;
// `Unknown` for a node without a reason).
TEST(SinfoFields, UserLongNamesWhoSetTheReasonWithTheirUid) {
  test::use_utc();
  auto opts =
      parse_sinfo_options({"-h", "-N", "-n", "cpu0[1-3]", "-p", "compute", "-O", "NodeList:6,User:8,UserLong:10"}, {});
  ASSERT_TRUE(opts.ok());
  CommandOutput out =
      render_sinfo(*opts, test::anchor_partitions(), oracle_drain_nodes(), test::utc("2026-11-29T23:55:38"));
  EXPECT_EQ(out.out, "cpu01 root    root(0)   \ncpu02 Unknown Unknown   \ncpu03 Unknown Unknown   \n");
}

// The anchor cluster idle, nodes filtered away: a partition left without
// nodes is a line with 0 nodes and state n/a where the format names
// partitions, and no line where it does not (captured on the anchor
// cluster, Slurm 22.05).
class SinfoIdleOracle : public SinfoOracle {};

TEST_P(SinfoIdleOracle, PartitionsLeftWithoutNodesMatchRealSlurm) {
  test::Golden g = test::read_golden(GetParam());
  auto opts = parse_sinfo_options(test::golden_args(g.command), {});
  ASSERT_TRUE(opts.ok());
  CommandOutput out = render_sinfo(*opts, test::anchor_partitions(), test::anchor_nodes_idle(), anchor_now());
  EXPECT_EQ(out.out, g.output);
}

INSTANTIATE_TEST_SUITE_P(IdleAnchor, SinfoIdleOracle,
                         ::testing::Values("sinfo_idle_d.txt", "sinfo_idle_n_gpu01.txt", "sinfo_idle_d_fields.txt",
                                           "sinfo_idle_d_s.txt", "sinfo_idle_d_C.txt", "sinfo_idle_n_gpu01_lD.txt",
                                           "sinfo_idle_d_p_compute.txt", "sinfo_idle_R_P.txt", "sinfo_idle_R.txt",
                                           "sinfo_idle_t_drain_fields.txt"),
                         [](const auto& i) { return test::test_name(i.param); });

// -O AllocMem is a node's own: nodes with other amounts go to other lines,
// as Slurm 22.05 split them on the anchor cluster; CPUsState still sums.
TEST(SinfoFormat, AllocMemSplitsLinesByTheNodesAmount) {
  test::use_utc();
  auto opts = parse_sinfo_options({"-h", "-p", "training", "-O", "Partition:10,CPUsState:14,AllocMem:8"}, {});
  ASSERT_TRUE(opts.ok());
  CommandOutput out = render_sinfo(*opts, test::anchor_partitions(), test::anchor_nodes_busy(), anchor_now());
  EXPECT_EQ(out.out,
            "training  3/381/0/384   4096    \n"   // gpu01-03, one CPU each
            "training  2/126/0/128   8192    \n");  // gpu04, two
}

// -o %all (and SINFO_FORMAT=%all): every field, with Slurm 22.05's header
// on the anchor cluster, byte for byte.
TEST(SinfoFormat, AllIsEveryFieldAsSlurmJoinsThem) {
  test::use_utc();
  const std::string header =
      "AVAIL|ACTIVE_FEATURES|CPUS|TMP_DISK|FREE_MEM|AVAIL_FEATURES|GROUPS|OVERSUBSCRIBE|TIMELIMIT|MEMORY|HOSTNAMES|"
      "NODE_ADDR|PRIO_TIER|ROOT|JOB_SIZE|STATE|USER|VERSION|WEIGHT|S:C:T|NODES(A/I) |MAX_CPUS_PER_NODE |"
      "CPUS(A/I/O/T) |NODES |REASON |NODES(A/I/O/T) |GRES |TIMESTAMP |PRIO_JOB_FACTOR |DEFAULTTIME |PREEMPT_MODE |"
      "NODELIST |CPU_LOAD |PARTITION |PARTITION |ALLOCNODES |STATE |USER |CLUSTER |SOCKETS |CORES |THREADS \n";
  for (const auto& [args, env] : {std::pair<std::vector<std::string>, std::map<std::string, std::string>>{
                                      {"-p", "highmem", "-o", "%all"}, {}},
                                  {{"-p", "highmem"}, {{"SINFO_FORMAT", "%all"}}}}) {
    auto opts = parse_sinfo_options(args, env);
    ASSERT_TRUE(opts.ok());
    const std::string out = render_sinfo(*opts, test::anchor_partitions(), test::anchor_nodes_idle(), anchor_now()).out;
    ASSERT_EQ(out.substr(0, header.size()), header) << out;
    EXPECT_EQ(split(out.substr(header.size()), '|').size(), 42u) << out;
  }
}

// An INACTIVE partition is "inactive", cut to the field's width ("inact" in
// the default AVAIL column), as Slurm 22.05 printed it on the anchor cluster.
TEST(SinfoFormat, AnInactivePartitionIsCutToTheWidth) {
  test::use_utc();
  auto parts = test::anchor_partitions();
  for (auto& p : parts) {
    if (p.name == "compute") p.state = "INACTIVE";
  }
  auto opts = parse_sinfo_options({"-h", "-p", "compute", "-o", "%P %a|%.5a|%6a|"}, {});
  ASSERT_TRUE(opts.ok());
  EXPECT_EQ(render_sinfo(*opts, parts, test::anchor_nodes_idle(), anchor_now()).out,
            "compute* inactive|inact|inacti|\n");
}

// -t alloc takes mixed nodes too, -t idle only the idle ones (Slurm 22.05 on the anchor cluster, with
// gpu01 running one job: `sinfo -t alloc` listed "training 1 mix", `-t allocated,idle` all four).
TEST(SinfoStates, AllocTakesMixedNodes) {
  test::use_utc();
  auto nodes = test::anchor_nodes_idle();
  for (auto& n : nodes) {
    if (n.name == "gpu01") {
      n.state.base = NodeBase::kMixed;
      n.alloc_cpus = 4;
    }
  }
  auto run = [&](std::vector<std::string> args) {
    auto opts = parse_sinfo_options(args, {});
    EXPECT_TRUE(opts.ok());
    return render_sinfo(*opts, test::anchor_partitions(), nodes, anchor_now()).out;
  };
  EXPECT_EQ(run({"-h", "-p", "training", "-t", "alloc", "-o", "%P %D %t"}), "training 1 mix\n");
  EXPECT_EQ(run({"-h", "-p", "training", "-t", "idle", "-o", "%P %D %t"}), "training 3 idle\n");
  EXPECT_EQ(run({"-h", "-N", "-p", "training", "-t", "allocated,idle", "-o", "%N %t"}),
            "gpu01 mix\ngpu02 idle\ngpu03 idle\ngpu04 idle\n");
  // A state takes the nodes of that base state whatever their flags: -t idle
  // a drained idle node, -t mix a draining one (Slurm 22.05, anchor cluster:
  // `sinfo -p compute -t idle` listed "drain cpu02" and "idle cpu04").
  for (auto& n : nodes) {
    if (n.name == "gpu01") n.state.drain = true;
    if (n.name == "gpu02") n.state.drain = true;
  }
  EXPECT_EQ(run({"-h", "-N", "-p", "training", "-t", "idle", "-o", "%N %t"}),
            "gpu02 drain\ngpu03 idle\ngpu04 idle\n");
  EXPECT_EQ(run({"-h", "-N", "-p", "training", "-t", "mix", "-o", "%N %t"}), "gpu01 drng\n");
  EXPECT_EQ(run({"-h", "-N", "-p", "training", "-t", "drain", "-o", "%N %t"}), "gpu01 drng\ngpu02 drain\n");
}

// sinfo -T lists reservations, not partitions; with none, Slurm 22.05's
// words for that (checked on the anchor cluster). The table itself:
// ScontrolShow.ReservationsMatchSlurm.
TEST(SinfoReservations, SayThereAreNone) {
  for (const char* flag : {"-T", "--reservation"}) {
    auto opts = parse_sinfo_options({flag}, {});
    ASSERT_TRUE(opts.ok());
    CommandOutput out = render_sinfo(*opts, test::anchor_partitions(), {}, test::utc("2026-11-29T23:55:38"));
    EXPECT_EQ(out.out, "No reservations in the system\n") << flag;
    EXPECT_EQ(out.err, "");
  }
}

TEST(NodeStateNames, LongCompactAndCompleteForms) {
  struct Row {
    NodeState s;
    const char* lng;
    const char* compact;
    const char* complete;
  };
  auto st = [](NodeBase b) {
    NodeState s;
    s.base = b;
    return s;
  };
  NodeState drng = st(NodeBase::kMixed), drained = st(NodeBase::kIdle), down_nr = st(NodeBase::kDown),
            idle_save = st(NodeBase::kIdle), comp = st(NodeBase::kIdle), alloc = st(NodeBase::kAllocated);
  drng.drain = drained.drain = true;
  down_nr.not_responding = true;
  down_nr.drain = true;
  idle_save.powered_down = true;
  comp.completing = true;
  NodeState maint_idle = st(NodeBase::kIdle), maint_mix = st(NodeBase::kMixed), resv_idle = st(NodeBase::kIdle),
            resv_mix = st(NodeBase::kMixed);
  maint_idle.maint = maint_mix.maint = true;
  maint_idle.reserved = maint_mix.reserved = resv_idle.reserved = resv_mix.reserved = true;
  NodeState resv_nr = resv_idle, drained_nr = drained;
  resv_nr.not_responding = drained_nr.not_responding = true;
  for (const Row& r : {Row{st(NodeBase::kIdle), "idle", "idle", "IDLE"}, Row{alloc, "allocated", "alloc", "ALLOCATED"},
                       Row{st(NodeBase::kMixed), "mixed", "mix", "MIXED"}, Row{drng, "draining", "drng", "MIXED+DRAIN"},
                       Row{drained, "drained", "drain", "IDLE+DRAIN"}, Row{down_nr, "drained*", "drain*", "DOWN+DRAIN+NOT_RESPONDING"},
                       Row{idle_save, "powered_down~", "idle~", "IDLE+POWERED_DOWN"},
                       Row{comp, "completing", "comp", "IDLE+COMPLETING"},
                       Row{st(NodeBase::kDown), "down", "down", "DOWN"},
                       // Reservations, as the anchor cluster showed them: an idle
                       // node of a MAINT one "maint", a busy one "mix$"; a node of
                       // another active one "resv" (busy or not).
                       Row{maint_idle, "maint", "maint", "IDLE+MAINTENANCE+RESERVED"},
                       Row{maint_mix, "mixed$", "mix$", "MIXED+MAINTENANCE+RESERVED"},
                       Row{resv_idle, "reserved", "resv", "IDLE+RESERVED"},
                       Row{resv_mix, "reserved", "resv", "MIXED+RESERVED"},
                       // Not responding (the anchor's nodes with their slurmd stopped).
                       Row{resv_nr, "idle*", "idle*", "IDLE+RESERVED+NOT_RESPONDING"},
                       Row{drained_nr, "drained*", "drain*", "IDLE+DRAIN+NOT_RESPONDING"}}) {
    EXPECT_EQ(node_state_long(r.s), r.lng);
    EXPECT_EQ(node_state_compact(r.s), r.compact);
    EXPECT_EQ(node_state_complete(r.s), r.complete);
  }
}

// -o or -O beside -l is Slurm 22.05's fatal error; SINFO_FORMAT gives way to -l's banner instead.
TEST(SinfoOptions, FormatBesideLongIsRefusedAsSlurm) {
  for (const char* f : {"-o", "-O"}) {
    auto both = parse_sinfo_options({"-l", f, "%P"}, {});
    ASSERT_FALSE(both.ok()) << f;
    EXPECT_EQ(both.error().text, "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please "
                                 "remove one and retry.\n");
    EXPECT_EQ(both.error().exit_code, 1);
  }
  EXPECT_TRUE(parse_sinfo_options({"-l"}, {{"SINFO_FORMAT", "%P"}}).ok());
}

}  // namespace
}  // namespace drover::cli
