#include "config/model.hpp"

namespace drover::config {

int64_t GresLine::device_count() const {
  if (!files.empty()) return static_cast<int64_t>(files.size());
  if (count) return *count;
  return 1;
}

namespace {
template <class T>
const T* find_by_name(const std::vector<T>& items, std::string_view name) {
  for (const auto& item : items) {
    if (item.name == name) return &item;
  }
  return nullptr;
}
}  // namespace

const NodeConfig* ClusterConfig::find_node(std::string_view name) const { return find_by_name(nodes, name); }
const PartitionConfig* ClusterConfig::find_partition(std::string_view name) const {
  return find_by_name(partitions, name);
}
const QosConfig* ClusterConfig::find_qos(std::string_view name) const { return find_by_name(qos, name); }

const PartitionConfig* ClusterConfig::default_partition() const {
  for (const auto& p : partitions) {
    if (p.is_default) return &p;
  }
  return nullptr;
}

}  // namespace drover::config
