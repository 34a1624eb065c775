// The check report (ordering, summary, exit status, JSON) and config show.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/parse.hpp"
#include "config/report.hpp"

namespace drover::config {
namespace {

Diagnostics sample() {
  Diagnostics d;
  d.add(Severity::kWarning, "b-code", SourceLoc{"slurm.conf", 5, 3}, "K", "second");
  d.add(Severity::kError, "a-code", SourceLoc{"gres.conf", 1, 1}, "Name", "first", "do this");
  d.add(Severity::kWarning, "a-code", SourceLoc{"slurm.conf", 5, 3}, "K", "tie broken by code");
  d.add(Severity::kInfo, "i", SourceLoc{"slurm.conf", 9, 0}, "", "note");
  d.items()[1].related.push_back(SourceLoc{"slurm.conf", 2, 4});
  return d;
}

TEST(CheckReport, SortedByFileLineColumnThenCode) {
  std::vector<std::string> codes;
  for (const auto& d : sorted_diagnostics(sample())) codes.push_back(d.loc.str() + " " + d.code);
  EXPECT_EQ(codes, (std::vector<std::string>{"gres.conf:1:1 a-code", "slurm.conf:5:3 a-code", "slurm.conf:5:3 b-code",
                                             "slurm.conf:9 i"}));
}

TEST(CheckReport, TextEndsWithSummary) {
  EXPECT_EQ(check_report_text(sample()),
            "gres.conf:1:1: error: first [a-code]\n    see: slurm.conf:2:4\n    fix: do this\n"
            "slurm.conf:5:3: warning: tie broken by code [a-code]\n"
            "slurm.conf:5:3: warning: second [b-code]\n"
            "slurm.conf:9: info: note [i]\n"
            "1 error, 2 warnings, 1 info\n");
  EXPECT_EQ(check_report_text(Diagnostics{}), "0 errors, 0 warnings\n");
}

TEST(CheckReport, ExitStatus) {
  Diagnostics info;
  info.add(Severity::kInfo, "i", {}, "", "x");
  Diagnostics warn = info;
  warn.add(Severity::kWarning, "w", {}, "", "x");
  Diagnostics err = warn;
  err.add(Severity::kError, "e", {}, "", "x");
  EXPECT_EQ(check_exit_status(Diagnostics{}), 0);
  EXPECT_EQ(check_exit_status(info), 0);
  EXPECT_EQ(check_exit_status(warn), 1);
  EXPECT_EQ(check_exit_status(err), 2);
}

TEST(CheckReport, JsonCarriesEveryField) {
  auto doc = nlohmann::json::parse(check_report_json(sample(), "/etc/drover/slurm.conf", {"a", "b"}));
  EXPECT_EQ(doc["config"], "/etc/drover/slurm.conf");
  EXPECT_EQ(doc["files_read"], nlohmann::json::array({"a", "b"}));
  EXPECT_EQ(doc["summary"]["errors"], 1);
  EXPECT_EQ(doc["summary"]["warnings"], 2);
  EXPECT_EQ(doc["summary"]["info"], 1);
  ASSERT_EQ(doc["findings"].size(), 4u);
  const auto& f = doc["findings"][0];
  EXPECT_EQ(f["severity"], "error");
  EXPECT_EQ(f["code"], "a-code");
  EXPECT_EQ(f["file"], "gres.conf");
  EXPECT_EQ(f["line"], 1);
  EXPECT_EQ(f["column"], 1);
  EXPECT_EQ(f["key"], "Name");
  EXPECT_EQ(f["message"], "first");
  EXPECT_EQ(f["fix"], "do this");
  EXPECT_EQ(f["related"][0]["file"], "slurm.conf");
  EXPECT_EQ(f["related"][0]["line"], 2);
  EXPECT_EQ(f["related"][0]["column"], 4);
}

TEST(CheckReport, JsonSurvivesInvalidUtf8) {
  Diagnostics d;
  d.add(Severity::kWarning, "unknown-key", SourceLoc{"x", 1, 1}, "\xff", "unknown key \"\xff\"");
  auto doc = nlohmann::json::parse(check_report_json(d, "x", {}));
  EXPECT_EQ(doc["findings"].size(), 1u);
}

TEST(ShowConfig, FillsInDefaultsAndGroupsNodes) {
  ParseOptions opts;
  opts.follow_includes = false;
  ClusterConfig cfg = parse_slurm_conf_text(
      "ClusterName=demo\nNodeName=gpu[01-04] Gres=gpu:h100:8 CPUs=128 RealMemory=1000000 Sockets=2 CoresPerSocket=64\n"
      "NodeName=cpu01 NodeAddr=10.0.0.1\nPartitionName=compute Nodes=ALL Default=YES MaxTime=7-00:00:00\n",
      "slurm.conf", opts);
  parse_gres_conf_text("NodeName=gpu[01-04] Name=gpu Type=h100 File=/dev/nvidia[0-7]\n", "gres.conf", cfg);
  parse_qos_conf_text("Name=debug MaxTime=04:00:00 Priority=5000\n", "qos.conf", cfg);
  std::string out = show_config(cfg);
  for (const char* line : {
           "ClusterName             = demo\n",
           "SchedulerType           = sched/backfill\n",
           "SchedulerParameters     = bf_interval=30,bf_max_job_test=UNLIMITED,bf_resolution=60,bf_window=1440,"
           "bf_reserve_depth=UNLIMITED,bf_max_job_user=0,bf_max_job_part=0,bf_max_time=30,default_queue_depth=100,"
           "sched_interval=60,max_script_size=4194304\n",
           "DefMemPerCPU            = (null)\n",
           "NodeName=gpu[01-04] Port=6818 CPUs=128 Boards=1 Sockets=2 CoresPerSocket=64 ThreadsPerCore=1 "
           "RealMemory=1000000 TmpDisk=0 Gres=gpu:h100:8 Weight=1 State=UNKNOWN CoreSpecCount=0\n",
           "NodeName=cpu01 NodeAddr=10.0.0.1 Port=6818 CPUs=1 ",
           "PartitionName=compute Nodes=ALL Default=YES MaxTime=7-00:00:00 DefaultTime=7-00:00:00 MaxNodes=UNLIMITED ",
           "NodeName=gpu[01-04] Name=gpu Type=h100 File=/dev/nvidia[0-7] Count=8\n",
           "Name=debug Priority=5000 GrpJobs=UNLIMITED ",
           "MaxWall=04:00:00 UsageFactor=1\n",
       }) {
    EXPECT_NE(out.find(line), std::string::npos) << "missing: " << line << "\nin:\n" << out;
  }
}

}  // namespace
}  // namespace drover::config
