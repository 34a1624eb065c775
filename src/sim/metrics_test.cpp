// Metrics, reports and plots on small runs whose figures can be worked out by hand.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/metrics.hpp"
#include "sim/report.hpp"
#include "sim/sim_test_util.hpp"
#include "sim/svg_plot.hpp"

namespace drover::sim {
namespace {

using testing::cluster_from;
using testing::four_nodes;
using testing::kEasy;
using testing::trace_from;

TEST(Metrics, QuantileAndJain) {
  std::vector<double> v = {0, 10, 20, 30, 40};
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 20);
  EXPECT_DOUBLE_EQ(quantile(v, 0.95), 38);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 40);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
  EXPECT_DOUBLE_EQ(jain_index({1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(jain_index({1, 0, 0, 0}), 0.25);
  EXPECT_DOUBLE_EQ(jain_index({}), 1.0);
}

struct Fixture {
  core::Cluster cluster = cluster_from(four_nodes(kEasy));
  Trace trace = trace_from(
      "id,submit,run_time,ntasks,time_limit,user\n"
      "1,0,100,2,100,a\n2,1,50,3,50,b\n3,2,90,1,90,a\n4,3,500,1,500,b\n5,4,500,1,500,a\n");
  SimResult result;
  Summary summary;
  Fixture() {
    result = std::move(*simulate(cluster, trace));
    summary = summarize(cluster, trace, result);
  }
};

// Starts 0, 100, 2, 3, 150 (the textbook EASY case); ends 100, 150, 92, 503, 650.
TEST(Metrics, SummaryOfTheTextbookCase) {
  Fixture f;
  const Summary& s = f.summary;
  EXPECT_EQ(s.jobs, 5);
  EXPECT_DOUBLE_EQ(s.makespan_s, 650);
  EXPECT_DOUBLE_EQ(s.wait.mean, (0 + 99 + 0 + 0 + 146) / 5.0);
  EXPECT_DOUBLE_EQ(s.wait.max, 146);
  EXPECT_DOUBLE_EQ(s.wait.p50, 0);
  // bounded slowdowns: 1, (99+50)/50, 1, 1, (146+500)/500
  EXPECT_NEAR(s.mean_bounded_slowdown, (1 + 149.0 / 50 + 1 + 1 + 646.0 / 500) / 5, 1e-12);
  const double cpu_s = 2 * 100 + 3 * 50 + 1 * 90 + 1 * 500 + 1 * 500;
  EXPECT_NEAR(s.utilization.cpu, cpu_s / (4 * 650.0), 1e-12);
  EXPECT_NEAR(s.utilization_by_partition.at("batch").cpu, s.utilization.cpu, 1e-12);
  EXPECT_DOUBLE_EQ(s.utilization.gpu, 0);
  EXPECT_DOUBLE_EQ(s.backfilled_fraction, 0.4);
  EXPECT_DOUBLE_EQ(s.reserved_fraction, 0.4);
  EXPECT_DOUBLE_EQ(s.immediate_fraction, 0.2);
  EXPECT_EQ(s.wait_by_qos.size(), 1u);
  // user a: slowdowns 1, 1, 1.292; b: 2.98, 1
  double a = (1 + 1 + 646.0 / 500) / 3, b = (149.0 / 50 + 1) / 2;
  EXPECT_NEAR(s.jain_fairness_by_user, (a + b) * (a + b) / (2 * (a * a + b * b)), 1e-12);
}

TEST(Metrics, UtilizationSeriesAndCdf) {
  Fixture f;
  auto cpu = utilization_series(f.cluster, f.result, Resource::kCpu, 65);
  ASSERT_EQ(cpu.size(), 1u);  // batch holds every node: only "all"
  EXPECT_EQ(cpu[0].name, "all");
  ASSERT_EQ(cpu[0].points.size(), 65u);
  double mean = 0;
  for (auto [x, y] : cpu[0].points) mean += y / 65;
  EXPECT_NEAR(mean, f.summary.utilization.cpu, 1e-9);
  // first 10 s: job 1 (2 CPUs), job 3 from 2 s, job 4 from 3 s: (20 + 8 + 7) / 10 of 4 CPUs
  EXPECT_NEAR(cpu[0].points[0].second, 3.5 / 4, 1e-9);
  EXPECT_TRUE(utilization_series(f.cluster, f.result, Resource::kGpu).empty());
  Series cdf = wait_cdf(f.result, "x", 4);
  ASSERT_FALSE(cdf.points.empty());
  EXPECT_DOUBLE_EQ(cdf.points.back().second, 1.0);
  EXPECT_DOUBLE_EQ(cdf.points.back().first, 146);
}

TEST(Report, JobsCsvAndSummaryJson) {
  Fixture f;
  RunReport r{"run", "c.conf", "t.csv", &f.cluster, &f.trace, &f.result, f.summary};
  std::string csv = jobs_csv(r);
  std::istringstream lines(csv);
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header, "id,user,account,partition,qos,submit,start,end,wait,run,nodes,cpus,gpus,mem_mb,state,how,note");
  EXPECT_EQ(first.substr(0, first.find(",COMPLETED")), "1,a,default,batch,,0,0,100,0,100,2,2,0,2000");
  EXPECT_NE(second.find(",99,50,3,3,0,"), std::string::npos) << second;
  EXPECT_NE(second.find("COMPLETED,reserved,"), std::string::npos) << second;

  auto j = nlohmann::json::parse(summary_json(r));
  for (const char* key : {"jobs", "makespan_s", "mean_wait_s", "p50_wait_s", "p95_wait_s", "p99_wait_s", "max_wait_s",
                          "mean_bounded_slowdown", "utilization", "backfilled_fraction", "stranded_gpu_hours",
                          "jain_fairness_by_user", "wait_by_qos"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["jobs"], 5);
  EXPECT_TRUE(j["utilization"].contains("cpu"));
  EXPECT_TRUE(j["utilization"].contains("gpu"));
  EXPECT_TRUE(j["utilization"].contains("mem"));
  EXPECT_TRUE(j["utilization"]["by_partition"].contains("batch"));
  EXPECT_EQ(summary_json(r), summary_json(r));  // deterministic: no wall-clock figures
  EXPECT_NE(summary_table(r).find("mean_bounded_slowdown"), std::string::npos);
}

TEST(Report, CompareTableHasRatios) {
  Fixture f;
  Fixture g;
  RunReport a{"A", "a.conf", "t.csv", &f.cluster, &f.trace, &f.result, f.summary};
  RunReport b{"B", "b.conf", "t.csv", &g.cluster, &g.trace, &g.result, g.summary};
  b.summary.wait.mean = a.summary.wait.mean * 2;
  std::string table = compare_table(a, b);
  EXPECT_NE(table.find("B/A"), std::string::npos);
  std::istringstream lines(table);
  std::string line;
  bool found = false;
  while (std::getline(lines, line)) {
    if (line.find("mean_wait_s") == std::string::npos) continue;
    found = true;
    EXPECT_NE(line.find("2.000"), std::string::npos) << line;
  }
  EXPECT_TRUE(found);
  auto j = nlohmann::json::parse(compare_json(a, b));
  EXPECT_DOUBLE_EQ(j["b_over_a"]["mean_wait_s"].get<double>(), 2.0);
}

TEST(Report, WritesTheFiles) {
  Fixture f;
  RunReport r{"run", "c.conf", "t.csv", &f.cluster, &f.trace, &f.result, f.summary};
  auto dir = std::filesystem::temp_directory_path() / ("drover-sim-report-" + std::to_string(::getpid()));
  auto files = write_run(dir.string(), r);
  ASSERT_TRUE(files.ok()) << files.error().message;
  EXPECT_EQ(files->size(), 4u);  // jobs.csv, summary.json, utilization_cpu.svg, wait_cdf.svg (no GPUs)
  for (const auto& f : *files) EXPECT_TRUE(std::filesystem::exists(f)) << f;
  std::filesystem::remove_all(dir);
}

TEST(Svg, RendersAxesLinesAndLegend) {
  Plot p;
  p.title = "a < b";
  p.x_label = "x";
  p.y_label = "y";
  p.lines.push_back(PlotLine{Series{"one", {{0, 0}, {1, 0.5}, {150, 1}}}, 0, false});
  p.lines.push_back(PlotLine{Series{"two", {{0, 1}, {2, 0}}}, 1, true});
  std::string svg = render_svg(p);
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("a &lt; b"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(svg.find(">one<"), std::string::npos);
  EXPECT_EQ(svg, render_svg(p));
  Plot logp = p;
  logp.x_log = true;
  EXPECT_NE(render_svg(logp).find(">100<"), std::string::npos);
}

}  // namespace
}  // namespace drover::sim
