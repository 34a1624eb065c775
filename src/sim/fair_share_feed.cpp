#include "sim/fair_share_feed.hpp"

#include <map>

namespace drover::sim {

FairShareFeed::FairShareFeed(const core::Cluster& c, std::set<std::pair<std::string, std::string>> associations,
                             Seconds interval)
    : c_(c),
      enabled_(c.priority.kind == core::PriorityKind::kMultifactor && c.priority.weight_fairshare > 0),
      interval_(interval > 0 ? interval : 300),
      ledger_(c.priority.decay_half_life),
      assocs_(std::move(associations)) {}

void FairShareFeed::charge(const core::RunningJob& job, core::Time from, core::Time to) {
  if (!enabled_ || to <= from || !job.spec) return;
  double factor = job.qos >= 0 ? c_.qos[job.qos].usage_factor : 1.0;
  double amount = static_cast<double>(job.alloc.total_cpus()) * static_cast<double>(to - from) * factor;
  ledger_.add(job.spec->account, job.spec->user, amount, to);
}

void FairShareFeed::recompute(core::Time now) {
  if (!enabled_) return;
  ledger_.decay_to(now);
  std::map<std::string, double> account_usage;
  std::vector<core::Association> rows;
  for (const auto& [account, user] : assocs_) {
    double u = ledger_.usage(account, user);
    account_usage[account] += u;
    rows.push_back(core::Association{account, user, account, 1, u});
  }
  for (const auto& [account, usage] : account_usage) rows.push_back(core::Association{account, "", "", 1, usage});
  factors_ = core::FairShareFactors::compute(rows);
  next_ = now + interval_;
}

}  // namespace drover::sim
