// The core built from a real configuration: the anchor cluster that ran
// real Slurm 22.05 (testdata/anchor). Its submit refusals and priorities
// are checked against what Slurm printed there.
#include "config/core_cluster.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <fstream>
#include <functional>
#include <sstream>

#include "common/strings.hpp"
#include "config/test_files.hpp"
#include "core/demand.hpp"
#include "core/priority.hpp"
#include "core/request.hpp"
#include "core/scheduler.hpp"

namespace drover::config {
namespace {

std::string anchor_dir() { return std::string(DROVER_SOURCE_DIR) + "/src/config/testdata/anchor"; }

core::Cluster anchor() {
  auto cfg = load_config({anchor_dir() + "/slurm.conf", {}, {}});
  EXPECT_TRUE(cfg.ok());
  auto c = build_core_cluster(*cfg);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return *c;
}

TEST(CoreCluster, AnchorNodesPartitionsQosAndWeights) {
  core::Cluster c = anchor();
  ASSERT_EQ(c.nodes.size(), 9u);
  const core::NodeSpec& g1 = c.nodes[c.find_node("gpu01")];
  EXPECT_EQ(g1.cores(), 128);
  EXPECT_EQ(g1.mem_mb, 1000000);
  ASSERT_EQ(g1.gres.size(), 1u);
  EXPECT_EQ(g1.gres[0].type, "h100");
  EXPECT_EQ(g1.gres[0].device_ids, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(g1.features, std::vector<std::string>{"h100"});
  ASSERT_EQ(c.partitions.size(), 4u);
  EXPECT_EQ(c.partitions[c.find_partition("interactive")].nodes.size(), 8u);
  EXPECT_EQ(c.partitions[c.find_partition("interactive")].default_time, 3600);
  EXPECT_TRUE(c.partitions[c.find_partition("compute")].is_default);
  ASSERT_EQ(c.qos.size(), 3u);
  EXPECT_EQ(c.qos[c.find_qos("debug")].max_wall, 4 * 3600);
  EXPECT_EQ(c.qos[c.find_qos("normal")].grp_tres.at("gres/gpu"), 256);
  EXPECT_EQ(c.priority.kind, core::PriorityKind::kMultifactor);
  EXPECT_EQ(c.priority.weight_tres.at("gres/gpu"), 5000);
  EXPECT_EQ(c.sched.policy, core::QueuePolicy::kBackfill);
  EXPECT_EQ(c.total_tres.at("cpu"), 4 * 128 + 5 * 64);
  EXPECT_EQ(*c.def_mem_per_cpu_mb, 4096);
}

// DefCpuPerGPU gives a GPU job that names neither --cpus-per-gpu nor
// --cpus-per-task its CPUs: the partition's value, else the global one.
TEST(CoreCluster, DefCpuPerGpuFromThePartitionElseTheCluster) {
  testing::ScratchDir dir;
  const std::string conf = dir.write("slurm.conf",
      "ClusterName=c\nSlurmctldHost=head\nGresTypes=gpu\nDefCpuPerGPU=4\n"
      "NodeName=g[1-2] CPUs=64 RealMemory=100000 Gres=gpu:8\n"
      "PartitionName=own Nodes=g1 DefCpuPerGPU=6\nPartitionName=global Nodes=g2 Default=YES\n");
  dir.write("gres.conf", "NodeName=g[1-2] Name=gpu File=/dev/nvidia[0-7]\n");
  auto cfg = load_config({conf, {}, {}});
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  EXPECT_EQ(cfg->def_cpu_per_gpu, 4);
  auto c = build_core_cluster(*cfg);
  ASSERT_TRUE(c.ok()) << c.error().message;
  auto cpus_per_gpu = [&](const char* part, auto ask) {
    core::JobSpec job;
    job.gres = {GresSpec{"gpu", "", 2}};
    ask(job);
    auto d = core::resolve_demand(*c, job, c->find_partition(part));
    EXPECT_TRUE(d.ok());
    return d.ok() ? d->cpus_per_gpu : -1;
  };
  auto as_is = [](core::JobSpec&) {};
  EXPECT_EQ(cpus_per_gpu("own", as_is), 6);
  EXPECT_EQ(cpus_per_gpu("global", as_is), 4);
  EXPECT_EQ(cpus_per_gpu("global", [](core::JobSpec& j) { j.cpus_per_gpu = 3; }), 3);
  EXPECT_EQ(cpus_per_gpu("global", [](core::JobSpec& j) { j.cpus_per_task = 2; }), 0);
  EXPECT_EQ(cpus_per_gpu("global", [](core::JobSpec& j) { j.gres.clear(); }), 0);
}

// ---- what real Slurm answered to jobs that can never run ---------------------

struct NeverCase {
  const char* golden;
  std::function<void(core::JobSpec&)> ask;
};

struct Golden {
  bool accepted = false;
  std::vector<std::string> details;
  std::string error;
};

Golden read_golden(const std::string& name) {
  std::ifstream in(anchor_dir() + "/never/" + name + ".txt");
  Golden g;
  std::string line;
  const std::string err = "sbatch: error: ", failed = "Batch job submission failed: ";
  while (std::getline(in, line)) {
    if (line.rfind("Submitted batch job", 0) == 0) g.accepted = true;
    if (line.rfind(err, 0) != 0) continue;
    std::string text = line.substr(err.size());
    if (text.rfind(failed, 0) == 0) {
      g.error = text.substr(failed.size());
    } else {
      g.details.push_back(text);
    }
  }
  return g;
}

class NeverTest : public ::testing::TestWithParam<NeverCase> {};

TEST_P(NeverTest, SameAnswerAsSlurm) {
  core::Cluster c = anchor();
  core::JobSpec job;
  job.id = 200;
  job.user = "alice";
  GetParam().ask(job);
  core::SubmitContext ctx;
  ctx.enforce_accounts = true;
  ctx.user_accounts = {"research"};
  core::SubmitVerdict v = core::check_submit(c, job, ctx);
  Golden g = read_golden(GetParam().golden);
  ASSERT_EQ(v.accepted, g.accepted) << v.error << " / " << v.drover_line;
  if (!g.accepted) {
    EXPECT_EQ(v.details, g.details);
    EXPECT_EQ(v.error, g.error);
    EXPECT_EQ(v.drover_line.rfind("drover: ", 0), 0u) << v.drover_line;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Anchor, NeverTest,
    ::testing::Values(
        NeverCase{"never_bad_account", [](core::JobSpec& j) { j.partitions = {"compute"}; j.account = "nosuchacct"; }},
        NeverCase{"never_bad_partition", [](core::JobSpec& j) { j.partitions = {"nonexistent"}; }},
        NeverCase{"never_bad_qos", [](core::JobSpec& j) { j.partitions = {"compute"}; j.qos = "nosuchqos"; }},
        NeverCase{"never_constraint", [](core::JobSpec& j) { j.partitions = {"training"}; j.constraint = "nonexistent"; }},
        NeverCase{"never_cpus_too_many", [](core::JobSpec& j) { j.partitions = {"compute"}; j.cpus_per_task = 65; }},
        NeverCase{"never_feature_gres_mismatch",
                  [](core::JobSpec& j) {
                    j.partitions = {"training"};
                    j.constraint = "h100";
                    j.gres = {GresSpec{"gpu", "a100", 1}};
                  }},
        NeverCase{"never_gpu_on_cpu_part", [](core::JobSpec& j) { j.partitions = {"compute"}; j.gres = {GresSpec{"gpu", "", 1}}; }},
        NeverCase{"never_gres_gpu16", [](core::JobSpec& j) { j.partitions = {"training"}; j.gres = {GresSpec{"gpu", "", 16}}; }},
        NeverCase{"never_h100_3nodes",
                  [](core::JobSpec& j) {
                    j.partitions = {"training"};
                    j.gres = {GresSpec{"gpu", "h100", 8}};
                    j.min_nodes = 3;
                  }},
        NeverCase{"never_mem_too_big", [](core::JobSpec& j) { j.partitions = {"compute"}; j.mem_per_node_mb = 2000 * 1024; }},
        NeverCase{"never_nodes_too_many", [](core::JobSpec& j) { j.partitions = {"compute"}; j.min_nodes = 5; }},
        NeverCase{"never_qos_maxwall",
                  [](core::JobSpec& j) {
                    j.partitions = {"training"};
                    j.qos = "debug";
                    j.time_limit = 5 * 3600;
                    j.gres = {GresSpec{"gpu", "", 1}};
                  }},
        NeverCase{"never_time_interactive", [](core::JobSpec& j) { j.partitions = {"interactive"}; j.time_limit = 5 * 3600; }},
        NeverCase{"never_time_over_part", [](core::JobSpec& j) { j.partitions = {"compute"}; j.time_limit = 8 * 86400; }}),
    [](const ::testing::TestParamInfo<NeverCase>& i) { return std::string(i.param.golden); });

// A job with two mistakes is refused for the one Slurm 22.05 checks first (each pair was submitted on the
// anchor cluster): -w's names, partition, account, the association's QOS, the QOS, licenses, -x's names,
// features, then what no node can hold.
TEST(CoreCluster, TwoMistakesAreRefusedInSlurmsOrder) {
  struct Case {
    const char* what;
    std::function<void(core::JobSpec&)> ask;
    bool qos_not_in_association;
    std::string error;
  };
  const std::string kNode = "Invalid node name specified", kPart = "Invalid partition name specified",
                    kAcct = "Invalid account or account/partition combination specified",
                    kQos = "Invalid qos specification", kFeat = "Invalid feature specification",
                    kLic = "Invalid license specification";
  const Case cases[] = {
      {"-p nopart -w nonode", [](core::JobSpec& j) { j.partitions = {"nopart"}; j.nodelist = "nonode"; }, false, kNode},
      {"-p nopart --qos noqos", [](core::JobSpec& j) { j.partitions = {"nopart"}; j.qos = "noqos"; }, false, kPart},
      {"-p nopart -A noacct", [](core::JobSpec& j) { j.partitions = {"nopart"}; j.account = "noacct"; }, false, kPart},
      {"-p nopart, QOS not allowed", [](core::JobSpec& j) { j.partitions = {"nopart"}; }, true, kPart},
      {"--qos noqos -A noacct", [](core::JobSpec& j) { j.qos = "noqos"; j.account = "noacct"; }, false, kAcct},
      {"-A noacct, QOS not allowed", [](core::JobSpec& j) { j.account = "noacct"; }, true, kAcct},
      {"-C nofeat -w nonode", [](core::JobSpec& j) { j.constraint = "nofeat"; j.nodelist = "nonode"; }, false, kNode},
      {"-C nofeat --qos noqos", [](core::JobSpec& j) { j.constraint = "nofeat"; j.qos = "noqos"; }, false, kQos},
      {"-C nofeat, QOS not allowed", [](core::JobSpec& j) { j.constraint = "nofeat"; }, true, kQos},
      {"-x nonode -C nofeat", [](core::JobSpec& j) { j.exclude = "nonode"; j.constraint = "nofeat"; }, false, kNode},
      {"-x nonode --qos noqos", [](core::JobSpec& j) { j.exclude = "nonode"; j.qos = "noqos"; }, false, kQos},
      {"-x nonode -A noacct", [](core::JobSpec& j) { j.exclude = "nonode"; j.account = "noacct"; }, false, kAcct},
      {"-L nolic -x nonode", [](core::JobSpec& j) { j.licenses = {{"license/nolic", 1}}; j.exclude = "nonode"; },
       false, kLic},
      {"-L nolic --qos noqos", [](core::JobSpec& j) { j.licenses = {{"license/nolic", 1}}; j.qos = "noqos"; }, false,
       kQos},
      {"-p compute -c 65 -x nonode",
       [](core::JobSpec& j) { j.partitions = {"compute"}; j.cpus_per_task = 65; j.exclude = "nonode"; }, false, kNode},
      {"-w cpu01 -x cpu01 -C nofeat",
       [](core::JobSpec& j) { j.nodelist = "cpu01"; j.exclude = "cpu01"; j.constraint = "nofeat"; }, false, kNode},
      {"-w cpu01 -x cpu[01-02] -c 65", [](core::JobSpec& j) { j.nodelist = "cpu01"; j.exclude = "cpu[01-02]"; j.cpus_per_task = 65; },
       false, kNode},
      {"-w cpu01 -x cpu01 --qos noqos", [](core::JobSpec& j) { j.nodelist = "cpu01"; j.exclude = "cpu01"; j.qos = "noqos"; },
       false, kQos},
      {"-p training --gres=gpu:9 -C nofeat",
       [](core::JobSpec& j) { j.partitions = {"training"}; j.gres = {GresSpec{"gpu", "", 9}}; j.constraint = "nofeat"; },
       false, kFeat},
  };
  core::Cluster c = anchor();
  for (const Case& k : cases) {
    core::JobSpec job;
    job.user = "alice";
    k.ask(job);
    core::SubmitContext ctx;
    ctx.enforce_accounts = true;
    ctx.user_accounts = {"research"};
    if (k.qos_not_in_association) ctx.assoc_qos_refusal = core::Refusal{{}, kQos, "drover: not allowed"};
    core::SubmitVerdict v = core::check_submit(c, job, ctx);
    EXPECT_FALSE(v.accepted) << k.what;
    EXPECT_EQ(v.error, k.error) << k.what << " / " << v.drover_line;
  }
}

TEST(CoreCluster, AcceptedJobsShowSlurmsPendingReasonAtOnce) {
  core::Cluster c = anchor();
  core::JobSpec job;
  job.partitions = {"compute"};
  job.min_nodes = 5;
  EXPECT_EQ(core::check_submit(c, job, {}).pending_reason, core::Reason::kPartitionNodeLimit);
  job = {};
  job.partitions = {"training"};
  job.qos = "debug";
  job.time_limit = 5 * 3600;
  EXPECT_EQ(core::check_submit(c, job, {}).pending_reason, core::Reason::kQosMaxWallDurationPerJobLimit);
}

// Partitions' AllowGroups, RootOnly, DisableRootJobs and AllocNodes, in the
// words Slurm 22.05 refused such jobs with on the anchor cluster; a job of
// several partitions runs in those that admit it; the simulator's jobs
// (identity unknown) are not checked.
TEST(CoreCluster, PartitionsAdmitOnlyTheirGroupsRootAndHosts) {
  testing::ScratchDir dir;
  for (const char* f : {"slurm.conf", "gres.conf", "qos.conf"}) {
    std::ifstream in(anchor_dir() + "/" + f);
    std::stringstream text;
    text << in.rdbuf();
    dir.write(f, text.str());
  }
  std::ofstream(dir.path("slurm.conf"), std::ios::app)
      << "PartitionName=grouped Nodes=cpu[01-04] AllowGroups=alice\n"
         "PartitionName=rootonly Nodes=cpu[01-04] RootOnly=YES\n"
         "PartitionName=noroot Nodes=cpu[01-04] DisableRootJobs=YES\n"
         "PartitionName=fromlogin Nodes=cpu[01-04] AllocNodes=login[01-02]\n";
  auto cfg = load_config({dir.path("slurm.conf"), {}, {}});
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  auto built = build_core_cluster(*cfg);
  ASSERT_TRUE(built.ok()) << built.error().message;
  const core::Cluster& c = *built;
  auto verdict = [&](const char* parts, uint32_t uid, std::vector<std::string> groups, const char* host) {
    core::JobSpec job;
    job.partitions = split(parts, ',');
    job.user = uid == 0 ? "root" : "bob";
    job.uid = uid;
    job.identity_known = true;
    job.groups = std::move(groups);
    job.alloc_node = host;
    return core::check_submit(c, job, {});
  };
  EXPECT_TRUE(verdict("grouped", 2001, {"bob", "alice"}, "vm").accepted);
  EXPECT_TRUE(verdict("grouped", 0, {"root"}, "vm").accepted) << "root always may";
  auto v = verdict("grouped", 2002, {"bob"}, "vm");
  EXPECT_EQ(v.error, "User's group not permitted to use this partition");
  EXPECT_EQ(v.drover_line, "drover: partition grouped admits members of alice (AllowGroups); bob is in bob");
  EXPECT_EQ(verdict("rootonly", 2002, {"bob"}, "vm").error, "Access/permission denied");
  EXPECT_TRUE(verdict("rootonly", 0, {"root"}, "vm").accepted);
  EXPECT_EQ(verdict("noroot", 0, {"root"}, "vm").error, "Invalid user id");
  EXPECT_TRUE(verdict("noroot", 2002, {"bob"}, "vm").accepted);
  v = verdict("fromlogin", 0, {"root"}, "vm");
  EXPECT_EQ(v.error, "Access/permission denied");
  EXPECT_EQ(v.drover_line,
            "drover: partition fromlogin takes jobs submitted from login01,login02 (AllocNodes); this one comes from vm");
  EXPECT_TRUE(verdict("fromlogin", 2002, {"bob"}, "login02").accepted);
  v = verdict("rootonly,compute", 2002, {"bob"}, "vm");
  ASSERT_TRUE(v.accepted);
  EXPECT_EQ(c.partitions[v.partition].name, "compute");
  core::JobSpec sim;
  sim.partitions = {"rootonly"};
  sim.user = "user01";
  sim.uid = 1;
  EXPECT_TRUE(core::check_submit(c, sim, {}).accepted);
}

TEST(CoreCluster, DrovesLineSaysWhichRequirementNoNodeMeets) {
  core::Cluster c = anchor();
  core::JobSpec job;
  job.partitions = {"training"};
  job.constraint = "h100";
  job.gres = {GresSpec{"gpu", "a100", 1}};
  core::SubmitVerdict v = core::check_submit(c, job, {});
  EXPECT_EQ(v.drover_line,
            "drover: no node of partition training that the job may use has gpu:a100:1 per node (they have "
            "gpu:h100:8)");
  job = {};
  job.partitions = {"compute"};
  job.cpus_per_task = 65;
  v = core::check_submit(c, job, {});
  EXPECT_EQ(v.drover_line, "drover: the job needs 65 CPUs on one node; the largest node of partition compute has 64");
}

// -N's top bounds --ntasks-per-node's nodes, as Slurm 22.05's sbatch and
// salloc were refused on the anchor cluster (-N1 -n2 --ntasks-per-node=1,
// -N1 -n4 --ntasks-per-node=2); -N2-4 -n4 --ntasks-per-node=1 ran on four.
TEST(CoreCluster, TasksPerNodeBeyondTheNodeCountIsRefused) {
  core::Cluster c = anchor();
  core::JobSpec job;
  job.partitions = {"compute"};
  job.min_nodes = 1;
  job.ntasks = 2;
  job.ntasks_per_node = 1;
  core::SubmitVerdict v = core::check_submit(c, job, {});
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.error, "Requested node configuration is not available");
  EXPECT_EQ(v.drover_line, "drover: 2 tasks at --ntasks-per-node=1 need 2 nodes; -N allows at most 1");
  job.min_nodes = 2;
  job.max_nodes = 4;
  job.ntasks = 4;
  EXPECT_TRUE(core::check_submit(c, job, {}).accepted);
  job.min_nodes = job.max_nodes = 0;  // no -N: as many nodes as the tasks need
  EXPECT_TRUE(core::check_submit(c, job, {}).accepted);
}

// ---- sprio on the anchor cluster (golden sprio.txt) ----------------------------

// Fair Tree's ties, as Slurm 22.05 ranked them on the anchor cluster
// (2026-12-06, sshare -a -l after a priority pass): root's user and a new
// account chem, neither with usage, are tied at inf; the user shares the rank
// of chem's user (1.0 both of 5), alice and dave (no usage) share the next
// (0.6), research's root user with usage comes last (0.2).
TEST(CoreCluster, FairTreeTiesAsSlurmRankedThem) {
  core::FairShareFactors fs = core::FairShareFactors::compute({
      {"root", "root", "", 1, 0},
      {"chem", "", "", 1, 0},
      {"chem", "alice", "", 1, 0},
      {"research", "", "", 1, 0},
      {"research", "alice", "", 1, 0},
      {"research", "dave", "", 1, 0},
      {"research", "root", "", 1, 144278},
  });
  EXPECT_NEAR(fs.factor("root", "root"), 1.0, 1e-9);
  EXPECT_NEAR(fs.factor("chem", "alice"), 1.0, 1e-9);
  EXPECT_NEAR(fs.factor("research", "alice"), 0.6, 1e-9);
  EXPECT_NEAR(fs.factor("research", "dave"), 0.6, 1e-9);
  EXPECT_NEAR(fs.factor("research", "root"), 0.2, 1e-9);
  // Two accounts tied (the same shares and usage): their users are merged
  // and ranked together, b's u3 (level 1.0) before a's u2 (0.5).
  core::FairShareFactors merged = core::FairShareFactors::compute({
      {"a", "", "", 1, 0},
      {"a", "u1", "", 1, 0},
      {"a", "u2", "", 1, 10},
      {"b", "", "", 1, 0},
      {"b", "u3", "", 1, 10},
  });
  EXPECT_NEAR(merged.factor("a", "u1"), 1.0, 1e-9);
  EXPECT_NEAR(merged.factor("b", "u3"), 2.0 / 3, 1e-9);
  EXPECT_NEAR(merged.factor("a", "u2"), 1.0 / 3, 1e-9);
}

TEST(CoreCluster, PriorityFactorsAsSlurmComputedThem) {
  core::Cluster c = anchor();
  core::FairShareFactors fs = core::FairShareFactors::compute({
      {"root", "root", "", 1, 0},
      {"research", "", "", 1, 0},
      {"research", "alice", "", 1, 18239},
      {"research", "root", "", 1, 0},
  });
  EXPECT_NEAR(fs.factor("research", "alice"), 1.0 / 3, 1e-9);
  EXPECT_NEAR(fs.factor("research", "root"), 2.0 / 3, 1e-9);
  EXPECT_NEAR(fs.factor("root", "root"), 1.0, 1e-9);

  struct Row {
    std::function<void(core::JobSpec&)> ask;
    int64_t total, job_size, qos;
    std::map<std::string, int64_t> tres;
  };
  std::vector<Row> rows = {
      // 108: -p training --gres=gpu:8: 3333 + 56 + 1000 + 2000 + cpu=2 + gres/gpu=1250
      {[](core::JobSpec& j) { j.partitions = {"training"}; j.gres = {GresSpec{"gpu", "", 8}}; j.time_limit = 3600; },
       7641, 56, 2000, {{"cpu", 2}, {"gres/gpu", 1250}}},
      // 120: -p compute -t 8-00:00:00
      {[](core::JobSpec& j) { j.partitions = {"compute"}; j.time_limit = 8 * 86400; }, 6393, 56, 2000, {{"cpu", 4}}},
      // 121: -p interactive -t 5:00:00
      {[](core::JobSpec& j) { j.partitions = {"interactive"}; j.time_limit = 5 * 3600; }, 6390, 56, 2000, {{"cpu", 1}}},
      // 122: -p training --qos=debug -t 5:00:00 --gres=gpu:1
      {[](core::JobSpec& j) {
         j.partitions = {"training"};
         j.qos = "debug";
         j.time_limit = 5 * 3600;
         j.gres = {GresSpec{"gpu", "", 1}};
       },
       14547, 56, 10000, {{"cpu", 2}, {"gres/gpu", 156}}},
      // 126: -p compute -N5
      {[](core::JobSpec& j) { j.partitions = {"compute"}; j.min_nodes = 5; }, 6633, 281, 2000, {{"cpu", 20}}},
  };
  for (const Row& row : rows) {
    core::JobSpec job;
    job.id = 108;
    job.user = "alice";
    job.account = "research";
    row.ask(job);
    int32_t part = c.find_partition(job.partitions[0]);
    core::PriorityBreakdown b = core::job_priority(c, job, part, &fs, 1000, 1000);
    EXPECT_EQ(b.total, row.total) << job.partitions[0];
    EXPECT_EQ(std::llround(b.fairshare), 3333);
    EXPECT_EQ(std::llround(b.job_size), row.job_size);
    EXPECT_EQ(std::llround(b.partition), 1000);
    EXPECT_EQ(std::llround(b.qos), row.qos);
    EXPECT_EQ(std::llround(b.age), 0);
    std::map<std::string, int64_t> tres;
    for (const auto& [k, v] : b.tres) tres[k] = std::llround(v);
    EXPECT_EQ(tres, row.tres) << job.partitions[0];
  }
}

// A job in `part` asking for -N nodes -n tasks (0: not asked), as the
// anchor's priority and billing comparisons submitted them (as root unless
// another user and account are named).
core::JobSpec anchor_job(const std::string& part, int32_t nodes, int32_t tasks, const std::string& user = "root",
                         const std::string& account = "root") {
  core::JobSpec j;
  j.id = 1;
  j.user = user;
  j.account = account;
  j.partitions = {part};
  j.min_nodes = nodes;
  j.ntasks = tasks;
  return j;
}

// PriorityFlags=INCR_ONLY: a pending job's fair share falls (its user's
// usage grew), its priority does not, also over a new revision of the job
// (the controller hands the priority it had in JobSpec::priority_floor);
// without the flag it falls. A held job's is 0 all the same.
TEST(CoreCluster, IncrOnlyKeepsAPriorityFromFalling) {
  auto shares = [](double alice_usage) {
    return core::FairShareFactors::compute({{"root", "root", "", 1, 0},
                                            {"research", "", "", 1, 0},
                                            {"research", "alice", "", 1, alice_usage},
                                            {"research", "root", "", 1, 0}});
  };
  const core::FairShareFactors idle = shares(0), busy = shares(18239);
  for (bool incr : {false, true}) {
    SCOPED_TRACE(incr ? "INCR_ONLY" : "without");
    core::Cluster c = anchor();
    c.priority.incr_only = incr;
    core::Scheduler s(c);
    const int32_t compute = c.find_partition("compute");
    core::JobSpec j = anchor_job("compute", 5, 0, "alice", "research");  // waits (PartitionNodeLimit)
    j.submit_time = 1000;
    std::vector<const core::JobSpec*> pending = {&j};
    core::CycleInput in;
    in.now = 1000;
    in.pending = pending;
    in.fairshare = &idle;
    core::CycleResult first = s.run_cycle(in);
    ASSERT_EQ(first.pending.size(), 1u);
    in.fairshare = &busy;
    core::CycleResult later = s.run_cycle(in);
    ASSERT_EQ(later.pending.size(), 1u);
    const int64_t was = first.pending[0].priority, fallen = core::job_priority(c, j, compute, &busy, 1000, 1000).total;
    ASSERT_LT(fallen, was) << "the usage lowers the fair-share factor";
    EXPECT_EQ(later.pending[0].priority, incr ? was : fallen);
    core::JobSpec again = j;  // updated: a new revision, its stored priority with it
    again.revision = 2;
    again.priority_floor = later.pending[0].priority;
    pending = {&again};
    in.pending = pending;
    EXPECT_EQ(s.run_cycle(in).pending[0].priority, incr ? was : fallen);
    EXPECT_EQ(core::job_priority(c, again, compute, &busy, 1000, 1000).total, incr ? was : fallen) << "sprio's total";
    again.hold = core::Hold::kUser;
    again.revision = 3;
    EXPECT_EQ(s.run_cycle(in).pending[0].priority, 0);
  }
}

// PriorityFlags=NO_NORMAL_*: Slurm 22.05 on the anchor cluster (2026-12-07,
// squeue %Q of jobs waiting for a --begin): NO_NORMAL_QOS put a normal job
// (Priority=1000, PriorityWeightQOS=10000) from 5560 to 10003560;
// NO_NORMAL_TRES a one-CPU compute job (PriorityWeightTRES=CPU=1000) from
// 5560 to 6556 and a -N2 -n64 one from 5899 to 69649; a training job with
// --gres=gpu:2 (GRES/gpu=5000) from 5203 to 15889.
TEST(CoreCluster, PriorityFlagsThatLeaveFactorsUnnormalized) {
  core::Cluster c = anchor();
  auto job = [](const std::string& part, int32_t nodes, int32_t tasks, int32_t gpus) {
    core::JobSpec j = anchor_job(part, nodes, tasks, "alice", "research");
    if (gpus > 0) j.gres = {GresSpec{"gpu", "", gpus}};
    j.time_limit = 600;
    return j;
  };
  auto total = [&](const core::JobSpec& j) {
    return core::job_priority(c, j, c.find_partition(j.partitions[0]), nullptr, 1000, 1000).total;
  };
  const core::JobSpec one = job("compute", 1, 1, 0), wide = job("compute", 2, 64, 0), gpus = job("training", 1, 1, 2);
  const int64_t base_one = total(one), base_wide = total(wide), base_gpus = total(gpus);
  c.priority.raw_qos = true;
  EXPECT_EQ(total(one) - base_one, 10'000'000 - 2000);
  c.priority.raw_qos = false;
  c.priority.raw_tres = true;
  EXPECT_EQ(total(one) - base_one, 6556 - 5560);
  EXPECT_EQ(total(wide) - base_wide, 69649 - 5899);
  EXPECT_EQ(total(gpus) - base_gpus, 15889 - 5203);
  c.priority.raw_tres = false;
  c.priority.raw_partition = true;  // every PriorityJobFactor is 1 here: the factor was 1 already
  EXPECT_EQ(total(one), base_one);
}

// PriorityFlags=SMALL_RELATIVE_TO_TIME on the anchor cluster: Slurm 22.05's
// squeue %Q for eleven jobs waiting for --begin, with a fresh accounting
// store (fair share 1, as here with no usage), first without, then with
// PriorityFavorSmall=YES.
TEST(CoreCluster, SmallRelativeToTimeDividesJobSizeByTimeLimit) {
  core::Cluster c = anchor();
  c.priority.size_relative_to_time = true;
  struct Case {
    std::string part;
    int32_t nodes, tasks;
    Seconds limit;
    bool exclusive;
    int64_t slurm, slurm_favor_small;
  };
  const std::vector<Case> cases = {
      {"compute", 0, 0, 600, false, 13015, 13992},         // -t 10
      {"compute", 0, 0, 6000, false, 13005, 14002},        // -t 100
      {"compute", 2, 64, 600, false, 13272, 14227},        // -t 10 -N2 -n64
      {"compute", 2, 64, 60000, false, 13250, 14249},      // -t 1000 -N2 -n64
      {"compute", 0, 0, -1, false, 13003, 14003},          // the partition's 7 days
      {"training", 0, 0, -1, false, 13001, 14001},         // UNLIMITED
      {"interactive", 0, 0, -1, false, 13003, 13999},      // DefaultTime 1 h
      {"training", 4, 0, 60, true, 13452, 13563},          // -t 1 -N4 --exclusive
      {"compute", 0, 200, 60, false, 14021, 14540},        // -t 1 -n 200
      {"compute", 0, 0, 30, false, 13115, 13892},          // -t 0:30, a minute
      {"compute", 3, 0, 2 * 86400, false, 13011, 14011},   // -t 2-0 -N3
  };
  for (bool favor_small : {false, true}) {
    c.priority.favor_small = favor_small;
    for (const Case& k : cases) {
      core::JobSpec j = anchor_job(k.part, k.nodes, k.tasks);
      j.time_limit = k.limit;
      j.exclusive = k.exclusive;
      EXPECT_EQ(core::job_priority(c, j, c.find_partition(k.part), nullptr, 1000, 1000).total,
                favor_small ? k.slurm_favor_small : k.slurm)
          << k.part << " -N" << k.nodes << " -n" << k.tasks << " -t" << k.limit << "s favor_small=" << favor_small;
    }
  }
}

// TRESBillingWeights on the anchor cluster (compute CPU=1.0,Mem=0.25G;
// training CPU=0.3,GRES/gpu=2.0; interactive CPU=0.5,Mem=1G,Node=3): the
// billing= that Slurm 22.05's scontrol showed for the partitions and for
// seven jobs, summed and with PriorityFlags=MAX_TRES; fractions cut off,
// and a billing of 0 left out.
TEST(CoreCluster, TresBillingWeightsAsSlurmBilledThem) {
  core::Cluster c = anchor();
  c.partitions[c.find_partition("compute")].billing_weights = {{"cpu", 1.0}, {"mem", 0.25 / 1024}};
  c.partitions[c.find_partition("training")].billing_weights = {{"cpu", 0.3}, {"gres/gpu", 2.0}};
  c.partitions[c.find_partition("interactive")].billing_weights = {{"cpu", 0.5}, {"mem", 1.0 / 1024}, {"node", 3.0}};
  struct Case {
    std::string part;
    int32_t nodes, tasks, gpus;
    int64_t mem_mb;
    int64_t sum, max;  // -1: no billing= item
  };
  const std::vector<Case> cases = {
      {"compute", 0, 1, 0, 8192, 3, 2},     {"training", 0, 1, 1, -1, 2, 2},  {"training", 0, 5, 0, -1, 1, 1},
      {"interactive", 2, 3, 0, 1500, 10, 6}, {"training", 0, 1, 0, -1, -1, -1}, {"compute", 0, 3, 0, 8192, 5, 3},
      {"training", 0, 7, 3, -1, 8, 6},
  };
  const std::map<std::string, std::pair<int64_t, int64_t>> partitions = {
      {"compute", {506, 256}}, {"training", {217, 153}}, {"interactive", {5314, 4906}}};
  for (bool max_tres : {false, true}) {
    c.priority.max_tres = max_tres;
    for (const auto& [name, want] : partitions) {
      const core::PartitionSpec& p = c.partitions[c.find_partition(name)];
      EXPECT_EQ(core::billing_count(core::billing_units(c, p, p.total_tres)), max_tres ? want.second : want.first)
          << name << " max_tres=" << max_tres;
    }
    for (const Case& k : cases) {
      core::JobSpec j = anchor_job(k.part, k.nodes, k.tasks);
      j.mem_per_node_mb = k.mem_mb;
      if (k.gpus > 0) j.gres = {GresSpec{"gpu", "", k.gpus}};
      auto sum = core::summarize(c, j, c.find_partition(k.part));
      ASSERT_TRUE(sum.ok()) << sum.error().message;
      auto it = sum->tres.find("billing");
      EXPECT_EQ(it == sum->tres.end() ? -1 : it->second, max_tres ? k.max : k.sum)
          << k.part << " -N" << k.nodes << " -n" << k.tasks << " gpus " << k.gpus << " max_tres=" << max_tres;
    }
  }
}

// ---- the busy anchor cluster of the golden captures ------------------------------

// gpu01-03 each hold an 8-GPU job for two hours, gpu04 a 2-GPU job for one;
// then: train-wait (8 GPUs, 1 h), train-wait2 (the same), train-bf (a100:4,
// 30 min). Slurm planned train-wait on gpu04 when the 2-GPU job ends
// (Resources), train-wait2 when the GPUs free again (Priority), and started
// train-bf at once on gpu04's free GPUs (squeue_start.txt).
TEST(CoreCluster, BusyAnchorPlansAsSlurmDid) {
  core::Cluster c = anchor();
  core::Scheduler s(c);
  const core::Time t0 = 1'008'000;  // a multiple of bf_resolution (60 s)
  std::deque<core::JobSpec> specs;
  auto job = [&](core::JobId id, const std::string& name, int32_t gpus, const std::string& type, Seconds limit) {
    core::JobSpec& j = specs.emplace_back();
    j.id = id;
    j.name = name;
    j.user = "alice";
    j.account = "research";
    j.partitions = {"training"};
    j.gres = {GresSpec{"gpu", type, gpus}};
    j.time_limit = limit;
    j.submit_time = t0 + id;
    return &j;
  };
  std::vector<core::RunningJob> run;
  const char* full[] = {"gpu01", "gpu02", "gpu03"};
  for (int i = 0; i < 3; ++i) {
    core::RunningJob r;
    r.spec = job(100 + i, "train-full", 8, "", 7200);
    r.start = t0;
    r.end = t0 + 7200;
    core::NodeTake t;
    t.node = c.find_node(full[i]);
    t.cores = {0};
    t.cpus = 1;
    t.mem_mb = 4096;
    t.gres = {core::GresTake{0, 8, {0, 1, 2, 3, 4, 5, 6, 7}}};
    r.alloc.nodes = {t};
    run.push_back(r);
  }
  core::RunningJob small;
  small.spec = job(104, "train-gpu2", 2, "", 3600);
  small.start = t0;
  small.end = t0 + 3600;
  core::NodeTake t;
  t.node = c.find_node("gpu04");
  t.cores = {0};
  t.cpus = 1;
  t.mem_mb = 4096;
  t.gres = {core::GresTake{0, 2, {0, 1}}};
  small.alloc.nodes = {t};
  run.push_back(small);
  std::vector<const core::JobSpec*> pending = {job(108, "train-wait", 8, "", 3600), job(109, "train-wait2", 8, "", 3600),
                                               job(110, "train-bf", 4, "a100", 1800)};
  core::CycleInput in;
  in.now = t0 + 120;
  in.running = run;
  in.pending = pending;
  core::CycleResult r = s.run_cycle(in);
  ASSERT_EQ(r.starts.size(), 1u);
  EXPECT_EQ(r.starts[0].job->name, "train-bf");
  EXPECT_EQ(c.nodes[r.starts[0].alloc.nodes[0].node].name, "gpu04");
  EXPECT_EQ(r.starts[0].kind, core::StartKind::kBackfilled);
  ASSERT_EQ(r.pending.size(), 2u);
  EXPECT_EQ(r.pending[0].job->id, 108);
  EXPECT_EQ(r.pending[0].reason, core::Reason::kResources);
  EXPECT_EQ(r.pending[0].nodes, std::vector<core::NodeIndex>{c.find_node("gpu04")});
  EXPECT_EQ(r.pending[0].start, t0 + 3600);
  EXPECT_TRUE(r.pending[0].reserved);
  // Every GPU node is free again at t0 + 2 h (Slurm chose gpu04 among them).
  EXPECT_EQ(r.pending[1].reason, core::Reason::kPriority);
  EXPECT_EQ(r.pending[1].nodes.size(), 1u);
  EXPECT_EQ(r.pending[1].start, t0 + 7200);
}

// A job of several partitions starts where it ranks highest, whatever
// order it names them in: its TRES factor weighs one CPU against each
// partition's total, so the one-node highmem ranks over compute, and
// compute over interactive (Slurm 22.05 on the anchor cluster, idle).
TEST(CoreCluster, AJobOfSeveralPartitionsStartsWhereItRanksHighest) {
  core::Cluster c = anchor();
  core::Scheduler s(c);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"compute", "highmem"}, "highmem"},   {{"highmem", "compute"}, "highmem"},
      {{"compute", "interactive"}, "compute"}, {{"interactive", "compute"}, "compute"},
      {{"training", "interactive"}, "training"}};
  core::JobId id = 1;
  for (const auto& [parts, where] : cases) {
    core::JobSpec j;
    j.id = id++;
    j.user = "alice";
    j.account = "research";
    j.partitions = parts;
    j.time_limit = 600;
    j.submit_time = 1'000'000;
    const std::vector<const core::JobSpec*> pending = {&j};
    core::CycleInput in;
    in.now = 1'000'010;
    in.pending = pending;
    core::CycleResult r = s.run_cycle(in);
    ASSERT_EQ(r.starts.size(), 1u) << where;
    EXPECT_EQ(c.partitions[r.starts[0].partition].name, where) << parts[0] << "," << parts[1];
  }
}

}  // namespace
}  // namespace drover::config
