// Job priority as Slurm's priority/multifactor defines it, with a breakdown
// per factor for sprio. Each factor is a fraction in [0, 1] multiplied by its
// PriorityWeight*:
//   age        min(1, (now - eligible) / PriorityMaxAge)
//   fairshare  FairShareFactors (Fair Tree)
//   job size   (min_nodes / cluster nodes + cpus / cluster CPUs) / 2
//              (1 - that with PriorityFavorSmall=YES)
//   partition  PriorityJobFactor / the largest PriorityJobFactor
//   qos        QOS Priority / the largest QOS Priority
//   tres       per TRES: weight * requested / the partition's total
// priority = sum of the weighted factors - (nice), truncated to an integer;
// never below 1. priority/basic: jobs in submit order (older first).
// Queue order: partition PriorityTier (higher first), then priority, then
// submit time, then job id.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/cluster.hpp"
#include "core/fairshare.hpp"
#include "core/job.hpp"

namespace drover::core {

struct PriorityBreakdown {
  // Weighted values (factor * weight), as sprio prints them.
  double age = 0, fairshare = 0, job_size = 0, partition = 0, qos = 0;
  std::map<std::string, double> tres;  // "cpu" -> 2.0, "gres/gpu" -> 1250.0
  int64_t nice = 0;                    // subtracted
  int64_t site = 0;
  // Unweighted factors in [0, 1] (sprio -n).
  double age_factor = 0, fairshare_factor = 0, job_size_factor = 0, partition_factor = 0,
         qos_factor = 0;
  int64_t total = 0;
};

// `eligible` is when the job became eligible (submit, begin time, dependency
// met); age accrues from then. `partition` indexes Cluster::partitions.
PriorityBreakdown job_priority(const Cluster& c, const JobSpec& job, int32_t partition,
                               const FairShareFactors* fs, Time now, Time eligible);

}  // namespace drover::core
