// `drover sim gen`: a seeded generator of heterogeneous workloads shaped like
// the seed article's cluster: multi-node 8-GPU training jobs (--exclusive,
// 48 h limits), CPU preprocessing arrays (16 CPUs, 64G, 12 h), one-GPU
// inference jobs with 16 CPUs (short), and high-memory jobs on the fat
// nodes. Arrivals are a Poisson process; the class mix, the training sizes
// and the array sizes are options. Same seed and options, same trace. The
// defaults load the seed's cluster to roughly 60-80 % (the class mix is per
// submission; an array is one submission).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "core/cluster.hpp"
#include "sim/trace.hpp"

namespace drover::sim {

enum class JobClass { kTraining, kPreprocess, kInference, kHighmem };
inline constexpr int kJobClasses = 4;
const char* job_class_name(JobClass c);  // "training", "preprocess", "inference", "highmem"

struct GenOptions {
  uint64_t seed = 1;
  int64_t jobs = 1000;            // rows (array elements count one each)
  double rate_per_hour = 12;      // mean submissions per hour (an array is one submission)
  double mix[kJobClasses] = {0.15, 0.35, 0.35, 0.15};  // weights of training, preprocess, inference, highmem
  std::vector<std::pair<int32_t, double>> train_nodes = {{1, 0.4}, {2, 0.3}, {4, 0.2}, {8, 0.1}};
  int32_t array_min = 1, array_max = 16;  // preprocessing array elements
  int32_t users = 24;
  int32_t accounts = 4;
  double runtime_scale = 1.0;     // every run time times this (limits unchanged)
};

// Which partition and QOS each class goes to, and the node sizes that bound
// its requests. From a cluster (by what its partitions hold) or, without
// one, the seed's names and sizes.
struct ClassTarget {
  std::string partition;
  std::string qos;
  int32_t node_cpus = 64;
  int64_t node_mem_mb = 256000;
  int32_t node_gpus = 0;
  std::vector<std::string> gpu_features;  // features telling GPU models apart (h100, a100)
};
struct GenTargets {
  ClassTarget of[kJobClasses];
};
// Errors when a class with a weight above 0 has no partition to go to.
GenTargets seed_targets();
Result<GenTargets> targets_for(const core::Cluster& c, const GenOptions& opts);

// Parses "training=0.2,preprocess=0.4,..." into opts.mix; "1:0.5,2:0.5" into train_nodes.
Status parse_mix(std::string_view s, GenOptions& opts);
Status parse_train_nodes(std::string_view s, GenOptions& opts);

std::vector<TraceJob> generate(const GenOptions& opts, const GenTargets& targets);

}  // namespace drover::sim
