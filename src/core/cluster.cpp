#include "core/cluster.hpp"

#include <algorithm>
#include <map>

namespace drover::core {

int32_t NodeSpec::cores() const { return sockets * cores_per_socket; }

int32_t NodeSpec::gpus() const {
  int32_t n = 0;
  for (const GresPool& p : gres) {
    if (p.name == "gpu") n += p.count;
  }
  return n;
}

bool NodeSpec::has_feature(std::string_view f) const {
  return std::binary_search(features.begin(), features.end(), f, std::less<>());
}

int32_t Cluster::find_partition(std::string_view name) const {
  for (size_t i = 0; i < partitions.size(); ++i) {
    if (partitions[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

int32_t Cluster::find_qos(std::string_view name) const {
  for (size_t i = 0; i < qos.size(); ++i) {
    if (qos[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

int32_t Cluster::find_assoc(std::string_view account, std::string_view user) const {
  if (assoc_index_.empty()) return -1;
  auto it = assoc_index_.find(std::make_pair(std::string(account), std::string(user)));
  return it == assoc_index_.end() ? -1 : it->second;
}

void Cluster::set_assocs(std::vector<AssocLimitSpec> a) {
  assocs = std::move(a);
  assoc_index_.clear();
  for (size_t i = 0; i < assocs.size(); ++i) {
    assoc_index_.emplace(std::make_pair(assocs[i].account, assocs[i].user), static_cast<int32_t>(i));
    AssocLimitSpec::InForce& f = assocs[i].in_force;
    f = {};
    // Up from the row itself: the first value set wins.
    for (int32_t up = static_cast<int32_t>(i); up >= 0 && up < static_cast<int32_t>(assocs.size());
         up = assocs[up].parent) {
      const AssocLimitSpec& s = assocs[up];
      if (f.max_jobs == kNoLimit) f.max_jobs = s.max_jobs;
      if (f.max_submit_jobs == kNoLimit) f.max_submit_jobs = s.max_submit_jobs;
      if (f.max_wall == kInfinite) f.max_wall = s.max_wall;
      for (const auto& [name, v] : s.max_tres_per_job) f.max_tres_per_job.emplace(name, v);
    }
  }
}

NodeIndex Cluster::find_node(std::string_view name) const {
  auto it = node_index_.find(name);
  return it == node_index_.end() ? -1 : it->second;
}

int32_t Cluster::default_partition() const {
  for (size_t i = 0; i < partitions.size(); ++i) {
    if (partitions[i].is_default) return static_cast<int32_t>(i);
  }
  return -1;
}

std::string gres_tres_name(std::string_view name, std::string_view type) {
  std::string s = "gres/";
  s += name;
  if (!type.empty()) {
    s += ':';
    s += type;
  }
  return s;
}

void add_node_tres(const NodeSpec& n, TresMap& t) {
  t["cpu"] += n.cpus;
  t["mem"] += n.mem_mb;
  t["node"] += 1;
  for (const GresPool& p : n.gres) {
    if (p.no_consume) continue;
    t[gres_tres_name(p.name, "")] += p.count;
    if (!p.type.empty()) t[gres_tres_name(p.name, p.type)] += p.count;
  }
}

namespace {

std::string group_key(const NodeSpec& n) {
  std::string k = std::to_string(n.sockets) + "/" + std::to_string(n.cores_per_socket) + "/" +
                  std::to_string(n.threads_per_core) + "/" + std::to_string(n.cpus) + "/" + std::to_string(n.mem_mb) +
                  "/w" + std::to_string(n.weight) + "/t" + std::to_string(n.tmp_disk_mb) + "|";
  for (const GresPool& g : n.gres) {
    k += g.name + ":" + g.type + ":" + std::to_string(g.count) + (g.no_consume ? "n" : "") + ",";
  }
  k += "|";
  for (const std::string& f : n.features) k += f + ",";
  k += "|";
  for (int32_t p : n.partitions) k += std::to_string(p) + ",";
  return k;
}

}  // namespace

void Cluster::finalize() {
  node_index_.clear();
  total_tres.clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeSpec& n = nodes[i];
    node_index_.emplace(n.name, static_cast<NodeIndex>(i));
    std::sort(n.features.begin(), n.features.end());
    n.features.erase(std::unique(n.features.begin(), n.features.end()), n.features.end());
    n.partitions.clear();
    add_node_tres(n, total_tres);
  }
  for (size_t p = 0; p < partitions.size(); ++p) {
    PartitionSpec& part = partitions[p];
    part.total_tres.clear();
    for (NodeIndex ni : part.nodes) {
      nodes[ni].partitions.push_back(static_cast<int32_t>(p));
      add_node_tres(nodes[ni], part.total_tres);
    }
  }
  for (NodeSpec& n : nodes) {
    std::sort(n.partitions.begin(), n.partitions.end());
    n.partitions.erase(std::unique(n.partitions.begin(), n.partitions.end()), n.partitions.end());
  }
  groups.clear();
  group_of.assign(nodes.size(), 0);
  std::map<std::string, int32_t> by_key;
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto [it, fresh] = by_key.emplace(group_key(nodes[i]), static_cast<int32_t>(groups.size()));
    if (fresh) groups.emplace_back();
    group_of[i] = it->second;
    groups[it->second].members.push_back(static_cast<NodeIndex>(i));
  }
}

}  // namespace drover::core
