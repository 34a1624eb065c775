// `drover config show`: the effective configuration, printed through the key
// tables so that every default is filled in exactly as the parser applies it.
#include <algorithm>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "config/report.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

std::string quoted(const std::string& v) {
  return v.find_first_of(" \t#") == std::string::npos ? v : "\"" + v + "\"";
}

// "Key=value" words for every key of `table` with a non-empty value, skipping `skip`.
template <class T>
std::string words_of(const KeyTable<T>& table, const T& item, const std::vector<std::string>& skip) {
  std::string out;
  for (const auto& def : table.keys()) {
    if (std::find(skip.begin(), skip.end(), def.name) != skip.end()) continue;
    std::string v = def.show(item);
    if (v.empty()) continue;
    out += " " + def.name + "=" + quoted(v);
  }
  return out;
}

std::string globals_block(const ClusterConfig& cfg) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& def : global_keys().keys()) rows.emplace_back(def.name, def.show(cfg));
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return to_lower(a.first) < to_lower(b.first); });
  std::string out;
  for (const auto& [k, v] : rows) {
    std::string key = k;
    key.resize(std::max<std::size_t>(key.size(), 23), ' ');
    out += key + " = " + (v.empty() ? "(null)" : v) + "\n";
  }
  return out;
}

// Consecutive nodes that print the same (apart from their names) share a line.
std::string nodes_block(const ClusterConfig& cfg) {
  std::string out;
  std::vector<std::string> group;
  std::string group_words;
  auto flush = [&] {
    if (!group.empty()) out += "NodeName=" + hostlist_compress(group) + group_words + "\n";
    group.clear();
  };
  for (const auto& n : cfg.nodes) {
    std::vector<std::string> skip{"NodeName"};
    if (n.hostname == n.name) skip.push_back("NodeHostname");
    if (n.addr == n.hostname) skip.push_back("NodeAddr");
    NodeConfig shown = n;
    shown.port = cfg.node_port(n);
    std::string words = words_of(node_keys(), shown, skip);
    if (words != group_words) flush();
    group_words = words;
    group.push_back(n.name);
  }
  flush();
  return out;
}

std::string partitions_block(const ClusterConfig& cfg) {
  std::string out;
  for (const auto& p : cfg.partitions) {
    PartitionConfig shown = p;
    if (!shown.default_time) shown.default_time = shown.max_time;
    out += "PartitionName=" + p.name + words_of(partition_keys(), shown, {"PartitionName"}) + "\n";
  }
  return out;
}

std::string gres_block(const ClusterConfig& cfg) {
  std::string out;
  if (!cfg.gres_autodetect.empty()) out += "AutoDetect=" + cfg.gres_autodetect + "\n";
  for (const auto& g : cfg.gres_lines) {
    std::string nodes = g.nodes.empty() ? std::string("(none)") : hostlist_compress(g.nodes);
    GresLine shown = g;
    if (!shown.count) shown.count = g.device_count();
    out += "NodeName=" + nodes + words_of(gres_keys(), shown, {"NodeName"}) + "\n";
  }
  return out;
}

std::string qos_block(const ClusterConfig& cfg) {
  std::string out;
  for (const auto& q : cfg.qos) out += "Name=" + q.name + words_of(qos_keys(), q, {"Name"}) + "\n";
  return out;
}

std::string section(const std::string& title, const std::string& body) {
  return "\n# " + title + "\n" + (body.empty() ? "# (none)\n" : body);
}

}  // namespace

std::string show_config(const ClusterConfig& cfg) {
  std::string out = "# Drover's effective configuration (defaults filled in)\n";
  out += "# files read: " + join(cfg.files_read, ", ") + "\n";
  out += globals_block(cfg);
  out += section("Nodes (slurm.conf)", nodes_block(cfg));
  out += section("Partitions (slurm.conf)", partitions_block(cfg));
  out += section("Generic resources (" + (cfg.gres_conf_path.empty() ? std::string("no gres.conf") : cfg.gres_conf_path) + ")",
                 gres_block(cfg));
  out += section("QOS (" + (cfg.qos_conf_path.empty() ? std::string("no qos.conf") : cfg.qos_conf_path) + ")",
                 qos_block(cfg));
  return out;
}

}  // namespace drover::config
