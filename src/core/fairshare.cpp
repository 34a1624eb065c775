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

// Fair Tree: visit siblings in decreasing level fair share; each user
// visited takes the next rank (from the top down). Tied users share a rank.
void rank_users(TreeNode* n, int64_t& next_rank, std::vector<std::pair<TreeNode*, int64_t>>& out) {
  double shares = 0, usage = 0;
  for (TreeNode* k : n->kids) {
    shares += k->shares;
    usage += k->usage;
  }
  std::vector<std::pair<double, TreeNode*>> order;
  for (TreeNode* k : n->kids) order.push_back({level_fairshare(k, shares, usage), k});
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return std::make_pair(a.second->account, a.second->user) < std::make_pair(b.second->account, b.second->user);
  });
  for (size_t i = 0; i < order.size();) {
    TreeNode* k = order[i].second;
    if (!k->user.empty()) {
      size_t j = i;
      while (j < order.size() && order[j].first == order[i].first && !order[j].second->user.empty()) ++j;
      for (size_t t = i; t < j; ++t) out.push_back({order[t].second, next_rank});
      next_rank -= static_cast<int64_t>(j - i);
      i = j;
    } else {
      rank_users(k, next_rank, out);
      ++i;
    }
  }
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
  rank_users(root, next, ranked);
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
