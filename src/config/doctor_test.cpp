// Unit tests of the config doctor on configurations built in code (no parser):
// each case starts from a clean cluster, makes one mistake, and states the
// exact findings an admin must see — severity, code, location, the values
// the message must name, and the other locations involved.
#include "config/doctor.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "config/doctor_test_builder.hpp"

namespace drover::config {
namespace {

using testing::at;
using testing::ConfigBuilder;
using testing::names;

struct Expected {
  Severity severity;
  std::string code;
  std::string loc;                    // SourceLoc::str()
  std::vector<std::string> mentions;  // substrings of message or fix
  std::vector<std::string> related;   // exact, in order
};

struct Case {
  std::string name;
  std::function<void(ConfigBuilder&)> mistake;
  std::vector<Expected> expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

ConfigBuilder clean() {
  ConfigBuilder b;
  b.cfg = ConfigBuilder::clean();
  return b;
}

NodeConfig& node(ConfigBuilder& b, const std::string& name) {
  for (auto& n : b.cfg.nodes) {
    if (n.name == name) return n;
  }
  throw std::runtime_error("no node " + name);
}

void edit_nodes(ConfigBuilder& b, const std::string& prefix, const std::function<void(NodeConfig&)>& edit) {
  for (auto& n : b.cfg.nodes) {
    if (n.name.rfind(prefix, 0) == 0) edit(n);
  }
}

PartitionConfig& part(ConfigBuilder& b, const std::string& name) {
  for (auto& p : b.cfg.partitions) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no partition " + name);
}

std::vector<std::string> nvidia(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("/dev/nvidia" + std::to_string(i));
  return out;
}

void expect_findings(const ClusterConfig& cfg, const std::vector<Expected>& expected) {
  const Diagnostics got = check_config(cfg);
  std::string all;
  for (const auto& d : got.items()) all += d.format() + "\n";
  ASSERT_EQ(got.items().size(), expected.size()) << all;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const Diagnostic& d = got.items()[i];
    const Expected& e = expected[i];
    SCOPED_TRACE(d.format());
    EXPECT_EQ(d.severity, e.severity);
    EXPECT_EQ(d.code, e.code);
    EXPECT_EQ(d.loc.str(), e.loc);
    for (const auto& m : e.mentions) {
      EXPECT_TRUE(d.message.find(m) != std::string::npos || d.fix.find(m) != std::string::npos) << "missing: " << m;
    }
    std::vector<std::string> related;
    for (const auto& r : d.related) related.push_back(r.str());
    EXPECT_EQ(related, e.related);
    EXPECT_FALSE(d.fix.empty()) << "every finding says what to do";
  }
}

constexpr Severity E = Severity::kError;
constexpr Severity W = Severity::kWarning;
constexpr Severity I = Severity::kInfo;

const std::vector<Case>& gres_cases() {
  static const std::vector<Case> cases = {
      {"clean", [](ConfigBuilder&) {}, {}},
      {"node declares more GPUs than gres.conf gives",
       [](ConfigBuilder& b) { edit_nodes(b, "gpu", [](NodeConfig& n) { n.gres = {{"gpu", "", 8}}; }); },
       {{E, "gres-count-mismatch", "slurm.conf:5:75",
         {"gpu[01-02]: Gres=gpu:8", "gres.conf gives 4", "File=/dev/nvidia[0-3]", "registers 4 < 8",
          "PENDING (Resources) forever", "Gres=gpu:4 on the node line", "File=/dev/nvidia[0-7]"},
         {"gres.conf:1"}}}},
      {"gres.conf gives more GPUs than the node declares",
       [](ConfigBuilder& b) { b.cfg.gres_lines[0].files = nvidia(8); },
       {{W, "gres-count-mismatch", "slurm.conf:5:75",
         {"Gres=gpu:4 declares 4", "gres.conf gives 8", "File=/dev/nvidia[0-7]", "the other 4 stay idle"},
         {"gres.conf:1"}}}},
      {"types disagree between the files",
       [](ConfigBuilder& b) {
         edit_nodes(b, "gpu", [](NodeConfig& n) { n.gres = {{"gpu", "h100", 4}}; });
         b.cfg.gres_lines[0].type = "a100";
       },
       {{E, "gres-type-mismatch", "slurm.conf:5:75",
         {"Gres=gpu:h100:4 but gres.conf gives gpu:a100:4", "registers 0 < 4 gpu:h100", "Type=h100"},
         {"gres.conf:1"}}}},
      {"typed node line, untyped gres.conf",
       [](ConfigBuilder& b) { edit_nodes(b, "gpu", [](NodeConfig& n) { n.gres = {{"gpu", "h100", 4}}; }); },
       {{W, "gres-type-missing", "slurm.conf:5:75", {"untyped gpu:4", "add Type=h100"}, {"gres.conf:1"}}}},
      {"untyped node line, typed gres.conf is fine", [](ConfigBuilder& b) { b.cfg.gres_lines[0].type = "h100"; }, {}},
      {"GPU node with no gres.conf line",
       [](ConfigBuilder& b) {
         b.nodes(names("hgpu", 1, 2), 7, [](NodeConfig& n) { n.gres = {{"gpu", "", 8}}; });
         auto& gpu = part(b, "gpu");
         gpu.nodes.push_back("hgpu01");
         gpu.nodes.push_back("hgpu02");
       },
       {{E, "gres-conf-missing", "slurm.conf:7:75",
         {"hgpu[01-02]: Gres=gpu:8", "gres.conf has no gpu line", "registers 0 < 8",
          "NodeName=hgpu[01-02] Name=gpu File=/dev/nvidia[0-7]"},
         {}}}},
      {"GPU nodes and no gres.conf at all",
       [](ConfigBuilder& b) {
         b.cfg.gres_conf_path.clear();
         b.cfg.gres_lines.clear();
       },
       {{E, "gres-conf-missing", "slurm.conf:5:75", {"there is no gres.conf", "create gres.conf"}, {}}}},
      {"AutoDetect supplies the devices",
       [](ConfigBuilder& b) {
         b.cfg.gres_lines.clear();
         b.cfg.gres_autodetect = "nvml";
       },
       {}},
      {"file-less GPU line",
       [](ConfigBuilder& b) {
         b.cfg.gres_lines[0].files.clear();
         b.cfg.gres_lines[0].count = 4;
       },
       {{E, "gres-gpu-no-file", "gres.conf:1", {"gpu[01-02] with no File= (Count=4)", "File=/dev/nvidia[0-3]"}, {}}}},
      {"gres.conf names nodes beyond slurm.conf",
       [](ConfigBuilder& b) { b.cfg.gres_lines[0].nodes = names("gpu", 1, 4); },
       {{W, "gres-conf-unknown-node", "gres.conf:1:1", {"gres.conf names gpu[03-04]", "does nothing for them"}, {}}}},
      {"gres.conf NodeName typo leaves the real nodes without devices",
       [](ConfigBuilder& b) { b.cfg.gres_lines[0].nodes = names("gpu", 1, 2, 1); },
       {{E, "gres-conf-missing", "slurm.conf:5:75", {"gpu[01-02]"}, {}},
        {W, "gres-conf-unknown-node", "gres.conf:1:1", {"gpu[1-2]", "this line has no effect", "did you mean gpu01?"},
         {}}}},
      {"gres name missing from GresTypes",
       [](ConfigBuilder& b) {
         b.cfg.gres_types.clear();
         b.cfg.globals_written.erase("GresTypes");
       },
       {{E, "gres-type-undeclared", "slurm.conf:5:75", {"'gpu'", "GresTypes is not set", "GresTypes=gpu"},
         {"gres.conf:1:22"}}}},
      {"a node line whose Gres= the parser rejected is left to the parser's error",
       [](ConfigBuilder& b) {
         b.cfg.diags.add(Severity::kError, "bad-value", at("slurm.conf", 5, 75), "Gres", "bad gres");
         edit_nodes(b, "gpu", [](NodeConfig& n) { n.gres.clear(); });
       },
       {}},
      {"gres.conf gives GPUs to nodes that declare none",
       [](ConfigBuilder& b) { b.gres_line(names("cpu", 1, 2), "gpu", "", nvidia(2), 2); },
       {{W, "gres-conf-undeclared", "gres.conf:2", {"gives gpu to cpu[01-02]", "Gres=gpu:2"}, {}}}},
  };
  return cases;
}

const std::vector<Case>& partition_cases() {
  static const std::vector<Case> cases = {
      {"partition names undefined nodes",
       [](ConfigBuilder& b) { part(b, "gpu").nodes = names("gpu", 1, 4); },
       {{E, "partition-undefined-node", "slurm.conf:8:20", {"partition gpu names gpu[03-04]"}, {}}}},
      {"partition names only misspelt nodes",
       [](ConfigBuilder& b) { part(b, "gpu").nodes = names("gpu", 1, 2, 1); },
       {{E, "partition-undefined-node", "slurm.conf:8:20", {"names gpu[1-2]", "did you mean gpu01?"}, {}},
        {W, "node-in-no-partition", "slurm.conf:5", {"gpu[01-02]: in no partition"}, {}}}},
      {"partition names nodes whose NodeName line could not be read",
       [](ConfigBuilder& b) {
         b.cfg.diags.add(Severity::kError, "bad-value", at("slurm.conf", 7, 10), "NodeName", "bad host list");
         part(b, "gpu").nodes = names("gpu", 1, 4);
       },
       {{E, "partition-undefined-node", "slurm.conf:8:20",
         {"names gpu[03-04]", "correct the NodeName line that could not be read (slurm.conf:7:10)"},
         {"slurm.conf:7:10"}}}},
      {"node in no partition",
       [](ConfigBuilder& b) { b.nodes(names("cpu", 3, 4), 7); },
       {{W, "node-in-no-partition", "slurm.conf:7", {"cpu[03-04]: in no partition"}, {}}}},
      {"no default partition",
       [](ConfigBuilder& b) { part(b, "cpu").is_default = false; },
       {{W, "no-default-partition", "slurm.conf:8", {"without --partition is rejected"}, {}}}},
      {"two default partitions",
       [](ConfigBuilder& b) { part(b, "gpu").is_default = true; },
       {{W, "several-default-partitions", "slurm.conf:9:40", {"(gpu, cpu)", "to gpu (the first)", "to cpu (the last)"},
         {"slurm.conf:8:40"}},
        {W, "gpu-nodes-in-default-partition", "slurm.conf:8:20", {"holds only GPU nodes (gpu[01-02])"}, {}}}},
      {"node defined twice",
       [](ConfigBuilder& b) { b.nodes({"gpu02"}, 7, [](NodeConfig& n) { n.gres = {{"gpu", "", 4}}; }); },
       {{E, "duplicate-node", "slurm.conf:7", {"gpu02: already defined on an earlier NodeName line"}, {"slurm.conf:5"}}}},
      {"partition QOS that no QOS defines",
       [](ConfigBuilder& b) {
         part(b, "gpu").qos = "nromal";
         part(b, "gpu").key_locs["QOS"] = at("slurm.conf", 8, 60);
       },
       {{W, "partition-unknown-qos", "slurm.conf:8:60", {"QOS=nromal", "did you mean normal?"}, {}}}},
      {"AllowQos naming only unknown QOS",
       [](ConfigBuilder& b) {
         b.qos("debug", 2);
         part(b, "gpu").allow_qos = {"dbug"};
       },
       {{W, "partition-unknown-qos", "slurm.conf:8", {"AllowQos names dbug", "no job can use this partition"}, {}}}},
      {"no partitions at all",
       [](ConfigBuilder& b) { b.cfg.partitions.clear(); },
       {{E, "no-partitions", "slurm.conf", {"every job submission is rejected"}, {}}}},
  };
  return cases;
}

const std::vector<Case>& policy_cases() {
  static const std::vector<Case> cases = {
      {"backfill off",
       [](ConfigBuilder& b) {
         b.cfg.scheduler_type = "sched/builtin";
         b.global("SchedulerType", "sched/builtin", 4);
       },
       {{W, "backfill-off", "slurm.conf:4", {"sched/builtin", "small jobs queue long", "SchedulerType=sched/backfill"},
         {}}}},
      {"controller scripts: one that cannot run, one not an absolute path",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["PrologSlurmctld"] = "/nonexistent/ctld_prolog.sh";
         b.cfg.passive_locs["PrologSlurmctld"] = at("slurm.conf", 7);
         b.cfg.passive_values["EpilogSlurmctld"] = "ctld_epilog.sh";
         b.cfg.passive_locs["EpilogSlurmctld"] = at("slurm.conf", 8);
       },
       {{W, "script-missing", "slurm.conf:7",
         {"PrologSlurmctld program /nonexistent/ctld_prolog.sh does not exist on this host; if it is the same on "
          "the controller's host, it fails as each job starts: every batch job is requeued held"},
         {}},
        {W, "script-not-absolute", "slurm.conf:8",
         {"EpilogSlurmctld=ctld_epilog.sh is not an absolute path: the controller runs it from /"}, {}}}},
      {"task prolog that cannot run, task epilog not an absolute path",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["TaskProlog"] = "/nonexistent/task_prolog.sh";
         b.cfg.passive_locs["TaskProlog"] = at("slurm.conf", 7);
         b.cfg.passive_values["TaskEpilog"] = "task_epilog.sh";
         b.cfg.passive_locs["TaskEpilog"] = at("slurm.conf", 8);
       },
       {{W, "script-missing", "slurm.conf:7",
         {"TaskProlog program /nonexistent/task_prolog.sh does not exist", "every task fails before it starts"}, {}},
        {W, "script-not-absolute", "slurm.conf:8",
         {"TaskEpilog=task_epilog.sh is not an absolute path", "each job's working directory"}, {}}}},
      {"health check that cannot run, in a state that does not exist",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["HealthCheckProgram"] = "/nonexistent/nhc";
         b.cfg.passive_locs["HealthCheckProgram"] = at("slurm.conf", 7);
         b.cfg.passive_values["HealthCheckNodeState"] = "IDLE,BUSY";
         b.cfg.passive_locs["HealthCheckNodeState"] = at("slurm.conf", 8);
       },
       {{W, "script-missing", "slurm.conf:7", {"/nonexistent/nhc does not exist", "checks nothing"}, {}},
        {E, "health-state-unknown", "slurm.conf:8", {"unknown state 'BUSY'", "ALLOC, ANY, CYCLE, IDLE and MIXED"},
         {}}}},
      {"a task sampling interval the agents cannot read",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["JobAcctGatherFrequency"] = "task=often";
         b.cfg.passive_locs["JobAcctGatherFrequency"] = at("slurm.conf", 7);
       },
       {{E, "acct-gather-frequency", "slurm.conf:7",
         {"JobAcctGatherFrequency=task=often: 'task=often' is not SECONDS nor TYPE=SECONDS", "every 30 s"}, {}}}},
      {"log levels and debug flags the daemons do not know",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["SlurmctldDebug"] = "loud";
         b.cfg.passive_locs["SlurmctldDebug"] = at("slurm.conf", 7);
         b.cfg.passive_values["SlurmdDebug"] = "debug3";
         b.cfg.passive_locs["SlurmdDebug"] = at("slurm.conf", 8);
         b.cfg.passive_values["DebugFlags"] = "Backfill,Sched";
         b.cfg.passive_locs["DebugFlags"] = at("slurm.conf", 9);
       },
       {{E, "debug-level-unknown", "slurm.conf:7", {"SlurmctldDebug=loud is not a log level"}, {}},
        {E, "debug-flag-unknown", "slurm.conf:9", {"DebugFlags=Backfill,Sched: Invalid DebugFlag: Sched"}, {}}}},
      {"requeue exit codes the controller cannot read",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["RequeueExit"] = "1-9,18";
         b.cfg.passive_locs["RequeueExit"] = at("slurm.conf", 7);
         b.cfg.passive_values["RequeueExitHold"] = "10-x";
         b.cfg.passive_locs["RequeueExitHold"] = at("slurm.conf", 8);
       },
       {{E, "requeue-exit-invalid", "slurm.conf:8",
         {"RequeueExitHold=10-x: '10-x' is not an exit code (0-255) or a range of them (lo-hi)"}, {}}}},
      {"resource limit propagation the controller cannot read",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["PropagateResourceLimits"] = "STACK";
         b.cfg.passive_locs["PropagateResourceLimits"] = at("slurm.conf", 7);
         b.cfg.passive_values["PropagateResourceLimitsExcept"] = "MEMLOCK";
         b.cfg.passive_locs["PropagateResourceLimitsExcept"] = at("slurm.conf", 8);
       },
       {{E, "propagate-invalid", "slurm.conf:8",
         {"PropagateResourceLimits and PropagateResourceLimitsExcept exclude each other"}, {}}}},
      {"every PrivateData word is built",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["PrivateData"] = "jobs,usage,Users,accounts,cloud,events,nodes,partitions,reservations";
         b.cfg.passive_locs["PrivateData"] = at("slurm.conf", 4);
       },
       {}},
      {"a PrivateData word that is not one",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["PrivateData"] = "jobs,jobz";
         b.cfg.passive_locs["PrivateData"] = at("slurm.conf", 4);
       },
       {{W, "private-data-unknown", "slurm.conf:4", {"PrivateData=jobs,jobz: jobz is not a word it takes"}, {}}}},
      {"priority flags Drover does not build",
       [](ConfigBuilder& b) {
         b.cfg.priority_flags = {"NO_NORMAL_QOS", "SMALL_RELATIVE_TO_TIME", "FAIR_TREE", "MAX_TRES", "ACCRUE_ALWAYS",
                                 "INCR_ONLY", "CALCULATE_RUNNING", "NO_NORMAL_ASSOC", "DEPTH_OBLIVIOUS"};
         b.global("PriorityFlags",
                  "NO_NORMAL_QOS,SMALL_RELATIVE_TO_TIME,FAIR_TREE,MAX_TRES,ACCRUE_ALWAYS,INCR_ONLY,CALCULATE_RUNNING,"
                  "NO_NORMAL_ASSOC,DEPTH_OBLIVIOUS",
                  6);
       },
       {{W, "priority-flag-not-built", "slurm.conf:6",
         {"PriorityFlags: NO_NORMAL_ASSOC, DEPTH_OBLIVIOUS are not built in Drover"}, {}}}},
      {"the normalisations Drover leaves out, size per minute and accrue always are built",
       [](ConfigBuilder& b) {
         b.cfg.priority_flags = {"NO_NORMAL_ALL", "NO_NORMAL_PART", "SMALL_RELATIVE_TO_TIME", "ACCRUE_ALWAYS"};
         b.global("PriorityFlags", "NO_NORMAL_ALL,NO_NORMAL_PART,SMALL_RELATIVE_TO_TIME,ACCRUE_ALWAYS", 6);
       },
       {}},
      {"private jobs are built",
       [](ConfigBuilder& b) { b.cfg.passive_values["PrivateData"] = "jobs"; },
       {}},
      {"a limit name that is not one",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["PropagateResourceLimitsExcept"] = "MEMLOCK,LOCKS";
         b.cfg.passive_locs["PropagateResourceLimitsExcept"] = at("slurm.conf", 5);
       },
       {{E, "propagate-invalid", "slurm.conf:5",
         {"PropagateResourceLimitsExcept=MEMLOCK,LOCKS: Bad rlimit name: LOCKS"}, {}}}},
      {"switches the controller reads as whole numbers",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["JobRequeue"] = "1";
         b.cfg.passive_locs["JobRequeue"] = at("slurm.conf", 7);
         b.cfg.passive_values["KillOnBadExit"] = "yes";
         b.cfg.passive_locs["KillOnBadExit"] = at("slurm.conf", 8);
         b.cfg.passive_values["InactiveLimit"] = "-30";
         b.cfg.passive_locs["InactiveLimit"] = at("slurm.conf", 9);
       },
       {{E, "whole-number-expected", "slurm.conf:8", {"KillOnBadExit=yes is not a whole number"}, {}},
        {E, "whole-number-expected", "slurm.conf:9", {"InactiveLimit=-30 is not a whole number", "a number of seconds"}, {}}}},
      {"preemption by QOS: a mode not built, a QOS not defined",
       [](ConfigBuilder& b) {
         b.cfg.preempt_type = "preempt/qos";
         b.global("PreemptType", "preempt/qos", 7);
         b.cfg.preempt_mode = "SUSPEND,GANG";
         b.global("PreemptMode", "SUSPEND,GANG", 8);
         QosConfig& high = b.qos("high", 2);
         high.preempt = {"normal", "scratch"};
         high.key_locs["Preempt"] = at("qos.conf", 2, 30);
       },
       {{W, "preempt-mode-not-built", "slurm.conf:8",
         {"PreemptMode=SUSPEND,GANG: Drover does not build suspension or gang scheduling", "keep running"}, {}},
        {E, "preempt-unknown-qos", "qos.conf:2:30", {"QOS high: Preempt=normal,scratch names QOS scratch"}, {}}}},
      {"preemption by QOS whose mode is OFF",
       [](ConfigBuilder& b) {
         b.cfg.preempt_type = "preempt/qos";
         b.global("PreemptType", "preempt/qos", 7);
         b.qos("high", 2).preempt = {"normal"};
       },
       {{W, "preempt-no-effect", "slurm.conf:7", {"PreemptType=preempt/qos with PreemptMode=OFF preempts nothing"},
         {}}}},
      {"preemption by QOS that preempts nothing, and a Preempt list without it",
       [](ConfigBuilder& b) {
         QosConfig& high = b.qos("high", 2);
         high.preempt = {"normal"};
         high.key_locs["Preempt"] = at("qos.conf", 2, 30);
       },
       {{W, "preempt-no-effect", "qos.conf:2:30",
         {"QOS high: Preempt=normal has no effect while PreemptType=preempt/none"}, {}}}},
      {"preemption by QOS with REQUEUE: nothing to say",
       [](ConfigBuilder& b) {
         b.cfg.preempt_type = "preempt/qos";
         b.global("PreemptType", "preempt/qos", 7);
         b.cfg.preempt_mode = "REQUEUE";
         b.global("PreemptMode", "REQUEUE", 8);
         b.qos("high", 2).preempt = {"normal"};
       },
       {}},
      {"prolog and epilog that cannot run",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["Prolog"] = "/nonexistent/drover/prolog.sh";
         b.cfg.passive_locs["Prolog"] = at("slurm.conf", 7);
         b.cfg.passive_values["Epilog"] = "epilog.sh";
         b.cfg.passive_locs["Epilog"] = at("slurm.conf", 8);
       },
       {{W, "script-missing", "slurm.conf:7", {"/nonexistent/drover/prolog.sh does not exist", "requeued held"}, {}},
        {W, "script-not-absolute", "slurm.conf:8", {"Epilog=epilog.sh is not an absolute path", "Epilog error"}, {}}}},
      {"prolog and epilog in place",
       [](ConfigBuilder& b) {
         b.cfg.passive_values["Prolog"] = "/bin/true";
         b.cfg.passive_locs["Prolog"] = at("slurm.conf", 7);
       },
       {}},
      {"priority type left at basic",
       [](ConfigBuilder& b) {
         b.cfg.priority_type = "priority/basic";
         b.cfg.globals_written.erase("PriorityType");
       },
       {{W, "priority-not-multifactor", "slurm.conf",
         {"PriorityType is not set, so it is priority/basic", "no priority config", "priority/multifactor"}, {}}}},
      {"multifactor with every weight 0",
       [](ConfigBuilder& b) {
         b.cfg.priority_weight_age = b.cfg.priority_weight_fairshare = b.cfg.priority_weight_qos = 0;
         b.qos("debug", 2).priority = 5000;
       },
       {{W, "priority-weights-zero", "slurm.conf:3", {"every PriorityWeight* is 0", "normal=100, debug=5000"}, {}}}},
      {"TRES weight alone is a weight", [](ConfigBuilder& b) {
         b.cfg.priority_weight_age = b.cfg.priority_weight_fairshare = b.cfg.priority_weight_qos = 0;
         b.cfg.priority_weight_tres = {{"gres/gpu", 5000}};
       },
       {{W, "priority-no-age", "slurm.conf:3", {"PriorityWeightAge is 0"}, {}}}},
      {"no age weight",
       [](ConfigBuilder& b) { b.cfg.priority_weight_age = 0; },
       {{W, "priority-no-age", "slurm.conf:3", {"PriorityWeightAge is 0", "PriorityWeightAge=1000"}, {}}}},
      {"PriorityMaxAge 0",
       [](ConfigBuilder& b) {
         b.cfg.priority_max_age = 0;
         b.global("PriorityMaxAge", "0", 4);
       },
       {{W, "priority-no-age", "slurm.conf:4", {"PriorityMaxAge=0", "PriorityWeightAge=1000 has no effect"}, {}}}},
      {"QOS priorities without a QOS weight",
       [](ConfigBuilder& b) {
         b.cfg.priority_weight_qos = 0;
         b.qos("high", 2).priority = 500;
       },
       {{W, "qos-priority-unused", "slurm.conf:3", {"(normal=100, high=500)", "PriorityWeightQOS is 0"},
         {"qos.conf:1:13", "qos.conf:2:13"}}}},
  };
  return cases;
}

const std::vector<Case>& layout_cases() {
  static const std::vector<Case> cases = {
      {"two GPU models on one node",
       [](ConfigBuilder& b) {
         edit_nodes(b, "gpu", [](NodeConfig& n) { n.gres = {{"gpu", "h100", 2}, {"gpu", "a100", 2}}; });
         b.cfg.gres_lines[0].files = nvidia(2);
         b.cfg.gres_lines[0].type = "h100";
         b.gres_line(names("gpu", 1, 2), "gpu", "a100", {"/dev/nvidia2", "/dev/nvidia3"}, 2);
       },
       {{W, "node-mixed-gpu-models", "slurm.conf:5:75", {"gpu[01-02]: 2 GPU models on one node (a100, h100)"}, {}}}},
      {"GPU nodes in the default CPU partition at the same Weight",
       [](ConfigBuilder& b) {
         auto& cpu = part(b, "cpu");
         cpu.nodes.insert(cpu.nodes.end(), {"gpu01", "gpu02"});
       },
       {{W, "gpu-nodes-in-default-partition", "slurm.conf:9:20",
         {"holds GPU nodes gpu[01-02] whose Weight (lowest 1)", "cpu[01-02], highest 1", "Weight=100"},
         {"slurm.conf:5"}}}},
      {"GPU nodes in the default partition behind a higher Weight are fine",
       [](ConfigBuilder& b) {
         auto& cpu = part(b, "cpu");
         cpu.nodes.insert(cpu.nodes.end(), {"gpu01", "gpu02"});
         edit_nodes(b, "gpu", [](NodeConfig& n) { n.weight = 100; });
       },
       {}},
      {"shared GPUs in a partition that is not exclusive",
       [](ConfigBuilder& b) {
         edit_nodes(b, "gpu", [](NodeConfig& n) { n.gres.push_back({"mps", "", 400}); });
         b.cfg.gres_types.push_back("mps");
       },
       {{W, "gpu-partition-not-isolated", "slurm.conf:8:20", {"gres mps on gpu[01-02]", "GPU memory not isolated"},
         {}}}},
      {"shared GPUs in an exclusive partition are fine",
       [](ConfigBuilder& b) {
         edit_nodes(b, "gpu", [](NodeConfig& n) { n.gres.push_back({"mps", "", 400}); });
         b.cfg.gres_types.push_back("mps");
         part(b, "gpu").oversubscribe = "EXCLUSIVE";
       },
       {}},
      {"two GPU models in one partition without features",
       [](ConfigBuilder& b) {
         node(b, "gpu01").gres = {{"gpu", "h100", 4}};
         node(b, "gpu02").gres = {{"gpu", "a100", 4}};
         b.cfg.gres_lines[0].nodes = {"gpu01"};
         b.cfg.gres_lines[0].type = "h100";
         b.gres_line({"gpu02"}, "gpu", "a100", nvidia(4), 2);
       },
       {{W, "partition-gpu-models-no-feature", "slurm.conf:8:20",
         {"mixes GPU models a100 (gpu02) and h100 (gpu01)", "Feature=a100 on gpu02, Feature=h100 on gpu01"}, {}}}},
      {"two GPU models told apart by features are fine",
       [](ConfigBuilder& b) {
         node(b, "gpu01").gres = {{"gpu", "h100", 4}};
         node(b, "gpu01").features = {"h100", "bigmem"};
         node(b, "gpu02").gres = {{"gpu", "a100", 4}};
         node(b, "gpu02").features = {"a100"};
         b.cfg.gres_lines[0].nodes = {"gpu01"};
         b.cfg.gres_lines[0].type = "h100";
         b.gres_line({"gpu02"}, "gpu", "a100", nvidia(4), 2);
       },
       {}},
      {"one partition for everything",
       [](ConfigBuilder& b) {
         b.cfg.partitions.clear();
         b.partition("all", {"gpu01", "gpu02", "cpu01", "cpu02"}, 8).is_default = true;
       },
       {{W, "gpu-nodes-in-default-partition", "slurm.conf:8:20", {"holds GPU nodes gpu[01-02]"}, {"slurm.conf:5"}},
        {W, "partitions-not-by-workload", "slurm.conf:8", {"every partition mixes GPU and CPU nodes"}, {}}}},
  };
  return cases;
}

const std::vector<Case>& node_cases() {
  static const std::vector<Case> cases = {
      {"CPUs disagree with the layout",
       [](ConfigBuilder& b) { edit_nodes(b, "cpu", [](NodeConfig& n) { n.cpus = 96; }); },
       {{W, "node-cpu-layout", "slurm.conf:6:21", {"cpu[01-02]: CPUs=96", "threads (32)", "uses 32"}, {}}}},
      {"CPUs equal to the cores of a hyper-threaded node are fine",
       [](ConfigBuilder& b) { edit_nodes(b, "cpu", [](NodeConfig& n) { n.threads_per_core = 2; }); },
       {}},
      {"GPU node left with the default single CPU",
       [](ConfigBuilder& b) {
         edit_nodes(b, "gpu", [](NodeConfig& n) {
           n.cpus = 1;
           n.key_locs.erase("CPUs");
         });
       },
       {{W, "gpu-node-few-cpus", "slurm.conf:5", {"gpu[01-02]: 4 GPUs but only 1 CPU (CPUs= is not set"}, {}}}},
      {"memory left at the default",
       [](ConfigBuilder& b) {
         edit_nodes(b, "cpu", [](NodeConfig& n) {
           n.real_memory_mb = 1;
           n.key_locs.erase("RealMemory");
         });
       },
       {{W, "node-memory-unset", "slurm.conf:6", {"cpu[01-02]: RealMemory is 1 MB (not set", "CR_Core_Memory"}, {}}}},
      {"memory not consumable: RealMemory does not matter",
       [](ConfigBuilder& b) {
         b.cfg.select_type_parameters = "CR_Core";
         edit_nodes(b, "cpu", [](NodeConfig& n) { n.real_memory_mb = 1; });
       },
       {}},
      {"DefMemPerCPU larger than the nodes' memory per CPU",
       [](ConfigBuilder& b) {
         b.cfg.def_mem_per_cpu_mb = 8192;
         b.global("DefMemPerCPU", "8G", 4);
       },
       {{W, "def-mem-exceeds-node", "slurm.conf:4", {"gpu[01-02]: DefMemPerCPU=8G", "at most 31 of the 32 CPUs"},
         {"slurm.conf:5"}},
        {W, "def-mem-exceeds-node", "slurm.conf:4", {"cpu[01-02]: DefMemPerCPU=8G", "at most 15 of the 32", "4000"},
         {"slurm.conf:6"}}}},
      {"a partition's DefMemPerCPU overrides the global one",
       [](ConfigBuilder& b) {
         b.cfg.def_mem_per_cpu_mb = 8192;
         b.global("DefMemPerCPU", "8G", 4);
         part(b, "gpu").def_mem_per_cpu_mb = 4096;
         part(b, "cpu").def_mem_per_cpu_mb = 300000;
         part(b, "cpu").key_locs["DefMemPerCPU"] = at("slurm.conf", 9, 70);
       },
       {{W, "def-mem-exceeds-node", "slurm.conf:9:70",
         {"partition cpu's DefMemPerCPU=300000M", "cannot run there at all"}, {"slurm.conf:6"}}}},
  };
  return cases;
}

const std::vector<Case>& qos_cases() {
  static const std::vector<Case> cases = {
      {"QOS limits a GPU type the cluster lacks",
       [](ConfigBuilder& b) {
         node(b, "gpu01").gres = {{"gpu", "a100", 4}};
         node(b, "gpu02").gres = {{"gpu", "a100", 4}};
         b.cfg.gres_lines[0].type = "a100";
         b.cfg.qos[0].grp_tres = {{"gres/gpu:v100", 2}};
       },
       {{W, "qos-unknown-tres", "qos.conf:1:27",
         {"GrpTRES limits gres/gpu:v100", "no node has a v100 gpu (types here: gpu:a100)", "did you mean gres/gpu:a100?"},
         {}}}},
      {"QOS limits an undefined license",
       [](ConfigBuilder& b) { b.cfg.qos[0].max_tres_per_job = {{"license/fsbw", 10}}; },
       {{W, "qos-unknown-tres", "qos.conf:1:60", {"no license fsbw is defined (Licenses= is not set)", "Licenses=fsbw:N"},
         {}}}},
      {"QOS limits a defined license within its count is fine",
       [](ConfigBuilder& b) {
         b.global("Licenses", "fsbw:20", 4);
         b.cfg.licenses = {{"fsbw", 20}};
         b.cfg.qos[0].grp_tres = {{"license/fsbw", 10}};
       },
       {}},
      {"GrpTRES above the whole cluster",
       [](ConfigBuilder& b) { b.cfg.qos[0].grp_tres = {{"cpu", 16000}, {"gres/gpu", 256}}; },
       {{W, "qos-limit-never-binds", "qos.conf:1:27", {"GrpTRES cpu=16000", "the whole cluster has (128 CPUs)"}, {}},
        {W, "qos-limit-never-binds", "qos.conf:1:27", {"GrpTRES gres/gpu=256", "(8 GPUs)"}, {}}}},
      {"memory limit above the cluster uses memory units",
       [](ConfigBuilder& b) { b.cfg.qos[0].grp_tres = {{"mem", 4 * 1024 * 1024}}; },
       {{W, "qos-limit-never-binds", "qos.conf:1:27", {"mem=4T", "(750G of memory)"}, {}}}},
      {"MaxTRESPerNode above every node",
       [](ConfigBuilder& b) { b.cfg.qos[0].max_tres_per_node = {{"gres/gpu", 8}}; },
       {{W, "qos-limit-never-binds", "qos.conf:1:80", {"MaxTRESPerNode gres/gpu=8", "any node has (at most 4 GPUs)"}, {}}}},
      {"MaxWall above every partition's MaxTime",
       [](ConfigBuilder& b) { b.cfg.qos[0].max_wall = 3 * 86400; },
       {{W, "qos-limit-never-binds", "qos.conf:1:45", {"MaxWall/MaxTime 3-00:00:00", "gpu's 2-00:00:00"}, {"slurm.conf:8:52"}}}},
      {"MaxWall binds where a partition is unlimited",
       [](ConfigBuilder& b) {
         b.cfg.qos[0].max_wall = 3 * 86400;
         part(b, "gpu").max_time = kInfinite;
       },
       {}},
      {"no QOS at all is a note",
       [](ConfigBuilder& b) {
         b.cfg.qos.clear();
         b.cfg.qos_conf_path.clear();
       },
       {{I, "no-qos", "slurm.conf", {"no QOS is defined", "qos.conf"}, {}}}},
  };
  return cases;
}

class DoctorCase : public ::testing::TestWithParam<Case> {};

TEST_P(DoctorCase, FindsExactlyTheMistake) {
  ConfigBuilder b = clean();
  GetParam().mistake(b);
  expect_findings(b.cfg, GetParam().expected);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string out;
  for (char c : info.param.name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

INSTANTIATE_TEST_SUITE_P(Gres, DoctorCase, ::testing::ValuesIn(gres_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Partitions, DoctorCase, ::testing::ValuesIn(partition_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Policy, DoctorCase, ::testing::ValuesIn(policy_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Layout, DoctorCase, ::testing::ValuesIn(layout_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Nodes, DoctorCase, ::testing::ValuesIn(node_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Qos, DoctorCase, ::testing::ValuesIn(qos_cases()), case_name);

TEST(Doctor, MergesOneFindingOnManyNodeLinesPerLine) {
  ConfigBuilder b = clean();
  b.nodes(names("hgpu", 1, 16), 7, [](NodeConfig& n) { n.gres = {{"gpu", "", 8}}; });
  b.nodes(names("lgpu", 1, 16), 10, [](NodeConfig& n) { n.gres = {{"gpu", "", 8}}; });
  auto& gpu = part(b, "gpu");
  for (auto prefix : {"hgpu", "lgpu"}) {
    for (const auto& n : names(prefix, 1, 16)) gpu.nodes.push_back(n);
  }
  const auto got = check_config(b.cfg).items();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].message.substr(0, 12), "hgpu[01-16]:");
  EXPECT_EQ(got[1].message.substr(0, 12), "lgpu[01-16]:");
}

TEST(Doctor, FormatsAFindingWithBothLocationsAndTheFix) {
  ConfigBuilder b = clean();
  edit_nodes(b, "gpu", [](NodeConfig& n) { n.gres = {{"gpu", "", 8}}; });
  const auto got = check_config(b.cfg).items();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].format(),
            "slurm.conf:5:75: error: gpu[01-02]: Gres=gpu:8 declares 8 per node but gres.conf gives 4 "
            "(File=/dev/nvidia[0-3]); each node registers 4 < 8 and is drained, so jobs that need its gpu stay "
            "PENDING (Resources) forever [gres-count-mismatch]\n"
            "    see: gres.conf:1\n"
            "    fix: make the two agree: Gres=gpu:4 on the node line if each node has 4, or give gres.conf all 8 "
            "(File=/dev/nvidia[0-7])");
}

TEST(Doctor, IsDeterministic) {
  ConfigBuilder b = clean();
  b.cfg.scheduler_type = "sched/builtin";
  b.cfg.priority_weight_age = 0;
  part(b, "gpu").nodes = names("gpu", 1, 4);
  b.nodes(names("cpu", 3, 4), 7);
  const auto first = check_config(b.cfg).items();
  const auto second = check_config(b.cfg).items();
  ASSERT_EQ(first.size(), second.size());
  ASSERT_EQ(first.size(), 4u);
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_EQ(first[i].format(), second[i].format());
}

// What the controller refuses to start or reconfigure with (fatal_findings):
// the errors Slurm's slurmctld stops at, not the doctor's other errors.
TEST(Doctor, FatalFindingsAreTheOnesSlurmsControllerStopsAt) {
  ConfigBuilder b = clean();
  edit_nodes(b, "gpu", [](NodeConfig& n) { n.gres = {{"gpu", "", 8}}; });  // gres-count-mismatch: not fatal
  ASSERT_TRUE(check_config(b.cfg).has_errors());
  EXPECT_TRUE(fatal_findings(b.cfg).empty());
  part(b, "gpu").nodes.push_back("nosuch");
  const Diagnostics fatal = fatal_findings(b.cfg);
  ASSERT_EQ(fatal.items().size(), 1u);
  EXPECT_EQ(fatal.items()[0].code, "partition-undefined-node");
}

TEST(Doctor, PartitionWithNodesAllCoversEveryNode) {
  ConfigBuilder b = clean();
  b.nodes(names("cpu", 3, 4), 7);
  b.partition("everything", {}, 10).nodes_expr = "ALL";
  const Diagnostics got = check_config(b.cfg);
  for (const auto& d : got.items()) {
    EXPECT_NE(d.code, "node-in-no-partition") << d.format();
    EXPECT_NE(d.code, "partition-undefined-node") << d.format();
  }
}

}  // namespace
}  // namespace drover::config
