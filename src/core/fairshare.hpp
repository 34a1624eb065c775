// Fair share, as Slurm's priority/multifactor computes it by default (the
// Fair Tree algorithm): associations form a tree (root > accounts > users),
// each with shares; usage is decayed with PriorityDecayHalfLife. Siblings are
// ranked by level fair share (shares fraction / usage fraction); a depth-first
// walk in that order ranks every user, and a user's factor is its rank over
// the number of users (the best-served last: factor 1/N; the least-served
// first: 1.0). Users with equal standing share a rank.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/duration.hpp"

namespace drover::core {

struct Association {
  std::string account;         // this association's account
  std::string user;            // "" for the account itself
  std::string parent;          // account rows: the parent account ("" = root)
  uint32_t shares = 1;
  double usage = 0;            // decayed usage (CPU-seconds times the QOS UsageFactor)
};

class FairShareFactors {
 public:
  // Factor for a user in an account; 1.0 for an association not in the tree.
  double factor(std::string_view account, std::string_view user) const;
  // Every user association's factor, by (account, user).
  const std::map<std::pair<std::string, std::string>, double>& all() const { return factors_; }

  static FairShareFactors compute(const std::vector<Association>& assocs);

 private:
  std::map<std::pair<std::string, std::string>, double> factors_;
};

// Decayed usage per (account, user): usage halves every half life. Pure: the
// caller passes the time; the controller persists the values.
class UsageLedger {
 public:
  explicit UsageLedger(Seconds half_life = 7 * 86400) : half_life_(half_life) {}
  // Decay everything to `now`, then add `amount` for the association.
  void add(std::string_view account, std::string_view user, double amount, int64_t now);
  void decay_to(int64_t now);
  double usage(std::string_view account, std::string_view user) const;
  const std::map<std::pair<std::string, std::string>, double>& all() const { return usage_; }
  int64_t last_decay() const { return last_; }
  void restore(std::map<std::pair<std::string, std::string>, double> usage, int64_t last);

 private:
  Seconds half_life_;
  int64_t last_ = 0;
  std::map<std::pair<std::string, std::string>, double> usage_;
};

}  // namespace drover::core
