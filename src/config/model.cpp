#include "config/model.hpp"

#include "common/strings.hpp"

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

const std::string* ClusterConfig::passive(const std::string& key) const {
  auto it = passive_values.find(key);
  return it == passive_values.end() ? nullptr : &it->second;
}

SourceLoc ClusterConfig::passive_loc(const std::string& key) const {
  auto it = passive_locs.find(key);
  return it == passive_locs.end() ? SourceLoc{slurm_conf_path, 0, 0} : it->second;
}

std::string ClusterConfig::passive_text(const std::string& key) const {
  const std::string* v = passive(key);
  return v ? std::string(trim(*v)) : std::string();
}

std::optional<std::string> ClusterConfig::passive_item(const std::string& key, std::string_view item) const {
  const std::string* list = passive(key);
  if (!list) return std::nullopt;
  for (const auto& part : split(*list, ',')) {
    auto eq = part.find('=');
    if (eq != std::string::npos && iequals(part.substr(0, eq), item)) return part.substr(eq + 1);
  }
  return std::nullopt;
}

std::string ClusterConfig::auth_key_path() const {
  auto key = passive_item("AuthInfo", "key");
  return key && !key->empty() ? *key : "/etc/drover/drover.key";
}

std::string ClusterConfig::auth_socket_path() const {
  auto socket = passive_item("AuthInfo", "socket");
  return socket && !socket->empty() ? *socket : "/run/drover/auth.sock";
}

std::string ClusterConfig::controller_host() const {
  if (slurmctld_hosts.empty()) return "localhost";
  const std::string& entry = slurmctld_hosts.front();
  auto open = entry.find('(');
  if (open == std::string::npos) return entry;
  return entry.substr(open + 1, entry.size() - open - 2);
}

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
