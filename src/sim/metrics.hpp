// What a simulation run measured: waits, bounded slowdown, utilisation per
// TRES and per partition, how jobs started, stranded GPUs, fairness between
// users, waits per QOS; plus the time series the plots draw.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.hpp"
#include "sim/driver.hpp"
#include "sim/trace.hpp"

namespace drover::sim {

inline constexpr double kSlowdownBound = 10.0;  // τ of the bounded slowdown, seconds

struct WaitStats {
  int64_t jobs = 0;
  double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0;
};

// Allocated over available, time-averaged over the makespan (0..1).
struct TresUse {
  double cpu = 0, gpu = 0, mem = 0;
};

struct Summary {
  int64_t trace_jobs = 0;  // jobs in the (sliced) trace
  int64_t jobs = 0;        // jobs that ran
  int64_t rejected = 0, never_ran = 0, timeouts = 0, failed = 0;
  double makespan_s = 0;   // first submit to last end
  WaitStats wait;          // over jobs that ran: start - submit
  double mean_bounded_slowdown = 0;  // max((wait + run) / max(run, τ), 1)
  TresUse utilization;
  std::map<std::string, TresUse> utilization_by_partition;  // utilisation of the partition's nodes
  double immediate_fraction = 0, backfilled_fraction = 0, reserved_fraction = 0;
  double stranded_gpu_hours = 0;
  double jain_fairness_by_user = 1;  // Jain's index over each user's mean bounded slowdown
  std::map<std::string, WaitStats> wait_by_qos;
  SimStats stats;
};

Summary summarize(const core::Cluster& c, const Trace& t, const SimResult& r);

// Linear interpolation between order statistics; `sorted` ascending, q in [0, 1].
double quantile(const std::vector<double>& sorted, double q);
// (Σx)² / (n Σx²); 1 for an empty or all-zero list.
double jain_index(const std::vector<double>& x);

// One metric as the tables print it.
struct MetricRow {
  std::string name;  // "mean_wait_s", "utilization.cpu", "wait_by_qos.normal.p95_s"
  double value = 0;
};
std::vector<MetricRow> metric_rows(const Summary& s);
// The first of those: counts, makespan, waits, bounded slowdown (summary.json's top-level figures).
std::vector<MetricRow> headline_rows(const Summary& s);

// A named line of (x, y) points.
struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

enum class Resource { kCpu, kGpu };
// Allocated fraction of each partition's CPUs or GPUs (and of the whole
// cluster, named "all", first) in `buckets` equal steps from the first
// submit to the last end; x in hours since the first submit. Partitions
// without that resource, and those over every node (the "all" line), are left out.
std::vector<Series> utilization_series(const core::Cluster& c, const SimResult& r, Resource res, int buckets = 300);
// The CDF of waits (x: wait in seconds, y: fraction of jobs waiting at most that), at most `points` points.
Series wait_cdf(const SimResult& r, const std::string& name, int points = 400);

}  // namespace drover::sim
