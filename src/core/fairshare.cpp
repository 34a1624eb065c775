#include "core/fairshare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace drover::core {

namespace {

// One node of the association tree: an account (with children) or a user.
struct TreeNode {
  std::string account;
  std::string user;  // "" for an account
  double shares = 1;
  double usage = 0;  // own (users) or summed over the subtree (accounts)
  std::vector<TreeNode*> kids;
};

double sum_usage(TreeNode* n) {
  if (n->user.empty()) {
    n->usage = 0;
    for (TreeNode* k : n->kids) n->usage += sum_usage(k);
  }
  return n->usage;
}

double level_fairshare(const TreeNode* n, double shares_total, double usage_total) {
  double s = shares_total > 0 ? n->shares / shares_total : 0;
  double u = usage_total > 0 ? n->usage / usage_total : 0;
  if (u <= 0) return std::numeric_limits<double>::infinity();
  return s / u;
}

using Scored = std::pair<double, TreeNode*>;  // level fair share among its siblings, node

// The children of `n`, each with its level fair share among them.
std::vector<Scored> scored_kids(const TreeNode* n) {
  double shares = 0, usage = 0;
  for (TreeNode* k : n->kids) {
    shares += k->shares;
    usage += k->usage;
  }
  std::vector<Scored> out;
  for (TreeNode* k : n->kids) out.push_back({level_fairshare(k, shares, usage), k});
  return out;
}

// Fair Tree: siblings are visited in decreasing level fair share; each user
// visited takes the rank of the users not yet ranked (from the top down).
// Ties, as Slurm 22.05's on the anchor cluster (a user with no usage beside
// an account with none: both the user and the account's user ranked first):
// tied sibling users share a rank; tied sibling accounts have their children
// merged and sorted together; users tied with accounts share the rank of the
// first users ranked among those accounts' children (`carried`).
void rank_users(std::vector<Scored> level, int64_t& next_rank, std::vector<std::pair<TreeNode*, int64_t>>& out,
                std::vector<TreeNode*> carried) {
  std::stable_sort(level.begin(), level.end(), [](const Scored& a, const Scored& b) {
    if (a.first != b.first) return a.first > b.first;
    return std::make_pair(a.second->account, a.second->user) < std::make_pair(b.second->account, b.second->user);
  });
  for (size_t i = 0; i < level.size();) {
    size_t j = i;
    std::vector<TreeNode*> users = std::move(carried);
    carried.clear();
    std::vector<Scored> merged;
    for (; j < level.size() && level[j].first == level[i].first; ++j) {
      TreeNode* k = level[j].second;
      if (!k->user.empty()) {
        users.push_back(k);
      } else {
        for (const Scored& kid : scored_kids(k)) merged.push_back(kid);
      }
    }
    const bool accounts = std::any_of(level.begin() + static_cast<std::ptrdiff_t>(i),
                                      level.begin() + static_cast<std::ptrdiff_t>(j),
                                      [](const Scored& s) { return s.second->user.empty(); });
    if (accounts) {
      rank_users(std::move(merged), next_rank, out, std::move(users));
    } else {
      for (TreeNode* u : users) out.push_back({u, next_rank});
      next_rank -= static_cast<int64_t>(users.size());
    }
    i = j;
  }
  // Carried users whose accounts had no users to rank take the next rank.
  for (TreeNode* u : carried) out.push_back({u, next_rank});
  next_rank -= static_cast<int64_t>(carried.size());
}

}  // namespace

double FairShareFactors::factor(std::string_view account, std::string_view user) const {
  auto it = factors_.find({std::string(account), std::string(user)});
  return it == factors_.end() ? 1.0 : it->second;
}

FairShareFactors FairShareFactors::compute(const std::vector<Association>& assocs) {
  std::map<std::string, TreeNode> accounts;
  std::vector<TreeNode> users;
  users.reserve(assocs.size());
  accounts["root"].account = "root";
  for (const Association& a : assocs) {
    TreeNode& acct = accounts[a.account];
    acct.account = a.account;
    if (a.user.empty()) {
      acct.shares = a.shares;
    } else {
      users.push_back(TreeNode{a.account, a.user, static_cast<double>(a.shares), a.usage, {}});
    }
  }
  for (auto& [name, acct] : accounts) {
    if (name == "root") continue;
    std::string parent = "root";
    for (const Association& a : assocs) {
      if (a.account == name && a.user.empty() && !a.parent.empty()) parent = a.parent;
    }
    if (!accounts.count(parent) || parent == name) parent = "root";
    accounts[parent].kids.push_back(&acct);
  }
  for (TreeNode& u : users) accounts[u.account].kids.push_back(&u);
  TreeNode* root = &accounts["root"];
  sum_usage(root);
  int64_t n_users = static_cast<int64_t>(users.size());
  int64_t next = n_users;
  std::vector<std::pair<TreeNode*, int64_t>> ranked;
  rank_users(scored_kids(root), next, ranked, {});
  FairShareFactors f;
  for (const auto& [node, rank] : ranked) {
    f.factors_[{node->account, node->user}] = n_users > 0 ? static_cast<double>(rank) / n_users : 1.0;
  }
  return f;
}

void UsageLedger::decay_to(int64_t now) {
  if (now <= last_) return;
  if (last_ != 0 && half_life_ > 0) {
    double k = std::exp2(-static_cast<double>(now - last_) / static_cast<double>(half_life_));
    for (auto& [key, v] : usage_) v *= k;
  }
  last_ = now;
}

void UsageLedger::add(std::string_view account, std::string_view user, double amount, int64_t now) {
  decay_to(now);
  usage_[{std::string(account), std::string(user)}] += amount;
}

double UsageLedger::usage(std::string_view account, std::string_view user) const {
  auto it = usage_.find({std::string(account), std::string(user)});
  return it == usage_.end() ? 0.0 : it->second;
}

void UsageLedger::restore(std::map<std::pair<std::string, std::string>, double> usage, int64_t last) {
  usage_ = std::move(usage);
  last_ = last;
}

}  // namespace drover::core
