// What `drover sim run` and `drover sim compare` write: jobs.csv,
// summary.json, the SVG plots, and the tables printed on the terminal.
#pragma once

#include <string>
#include <vector>

#include "common/result.hpp"
#include "core/cluster.hpp"
#include "sim/driver.hpp"
#include "sim/metrics.hpp"
#include "sim/trace.hpp"

namespace drover::sim {

// One simulated configuration, with what it ran and what it measured.
struct RunReport {
  std::string label;        // "A", "B" or the config path
  std::string config_path;
  std::string trace_path;
  const core::Cluster* cluster = nullptr;
  const Trace* trace = nullptr;
  const SimResult* result = nullptr;
  Summary summary;
};

std::string jobs_csv(const RunReport& r);
// summary.json: every figure of Summary, the trace's notes; no wall-clock
// times (the file is deterministic).
std::string summary_json(const RunReport& r);
std::string summary_table(const RunReport& r);
// One row per metric: A, B and B / A ("-" where A is 0).
std::string compare_table(const RunReport& a, const RunReport& b);
std::string compare_json(const RunReport& a, const RunReport& b);

// Writes jobs.csv, summary.json, utilization_cpu.svg, utilization_gpu.svg
// (when the cluster has GPUs) and wait_cdf.svg into `dir` (created).
// Returns the files written.
Result<std::vector<std::string>> write_run(const std::string& dir, const RunReport& r);
// Writes a/ and b/ (as write_run), compare.json and the overlay plots.
Result<std::vector<std::string>> write_compare(const std::string& dir, const RunReport& a, const RunReport& b);

}  // namespace drover::sim
