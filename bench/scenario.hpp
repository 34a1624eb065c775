// Seeded benchmark scenarios for the scheduling core. scale-10k: the
// 10,000-node cluster of examples/scale-10k, about 30,000 running jobs
// filling it, and N pending jobs (60% CPU 1-16 cores, 25% 1-8 GPUs on one
// node, 10% exclusive multi-node GPU of 2-32 nodes, 5% highmem), submitted
// by 200 users over the last day.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "core/scheduler.hpp"

namespace drover::bench {

struct Scenario {
  std::string name;
  core::Cluster cluster;
  std::deque<core::JobSpec> specs;  // stable addresses for running and pending
  std::vector<core::RunningJob> running;
  std::vector<const core::JobSpec*> pending;
  core::FairShareFactors fairshare;
  core::Time now = 0;
};

// The cluster of examples/scale-10k (read through the config parser).
Result<core::Cluster> scale10k_cluster(const std::string& source_dir);

// Fill `s.cluster` with about `running` running jobs (placed by the core
// itself on the empty cluster), then add `pending` pending jobs.
void add_running_scale10k(Scenario& s, int64_t running, uint64_t seed);
void add_pending_scale10k(Scenario& s, int64_t pending, uint64_t seed);

}  // namespace drover::bench
