// What each node has allocated over virtual time, integrated as it changes:
// CPU-, GPU- and memory-seconds, and the GPU-seconds stranded on nodes whose
// cores or memory were all taken (the GPUs could not be used by anyone).
#pragma once

#include <vector>

#include "core/cluster.hpp"
#include "core/job.hpp"
#include "sim/driver.hpp"

namespace drover::sim {

class NodeLedger {
 public:
  explicit NodeLedger(const core::Cluster& c);

  // A job takes (sign = +1) or gives back (sign = -1) its allocation at `now`.
  void apply(const core::Allocation& alloc, int sign, core::Time now);
  // Integrates every node up to `now` (call once at the end).
  void close(core::Time now);

  const std::vector<NodeTotals>& totals() const { return totals_; }
  // GPUs a node take holds (pools named "gpu").
  int32_t gpus_of(const core::NodeTake& take) const;

 private:
  struct Held {
    int64_t cpus = 0, mem_mb = 0, gpus = 0, exclusive = 0;
    core::Time since = 0;
  };
  void advance(core::NodeIndex n, core::Time now);

  const core::Cluster& c_;
  std::vector<Held> held_;
  std::vector<NodeTotals> totals_;
};

}  // namespace drover::sim
