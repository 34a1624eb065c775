// Fair share in the simulator, as the controller keeps it: usage (CPU-seconds
// times the QOS UsageFactor) charged into a core::UsageLedger as jobs run,
// decayed with PriorityDecayHalfLife, and core::FairShareFactors recomputed
// every interval (PriorityCalcPeriod) over a tree root > accounts > users
// with one share each (a trace carries no sacctmgr shares).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.hpp"
#include "core/fairshare.hpp"
#include "core/job.hpp"

namespace drover::sim {

class FairShareFeed {
 public:
  FairShareFeed(const core::Cluster& c, std::set<std::pair<std::string, std::string>> associations,
                Seconds interval);

  // Off unless priority/multifactor with PriorityWeightFairshare > 0.
  bool enabled() const { return enabled_; }

  // Charges `job` for [from, to).
  void charge(const core::RunningJob& job, core::Time from, core::Time to);
  // True when the factors are due for a recompute at `now` (call recompute then).
  bool due(core::Time now) const { return enabled_ && now >= next_; }
  void recompute(core::Time now);

  const core::FairShareFactors* factors() const { return enabled_ ? &factors_ : nullptr; }

 private:
  const core::Cluster& c_;
  bool enabled_ = false;
  Seconds interval_;
  core::Time next_ = 0;
  core::UsageLedger ledger_;
  std::set<std::pair<std::string, std::string>> assocs_;  // (account, user)
  core::FairShareFactors factors_;
};

}  // namespace drover::sim
