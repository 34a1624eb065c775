// scontrol update PartitionName=NAME Key=Value...: a partition changed
// while the cluster runs. The changes are kept in the store (one meta value,
// a line per partition) and laid over slurm.conf's partition lines at every
// start and reconfigure, as Slurm keeps its partitions' state; updating the
// same key again replaces it.
#include <fmt/format.h>

#include "common/strings.hpp"
#include "config/parse.hpp"
#include "ctld/persist.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

// Adds `kv` to `list`, replacing an earlier value of the same key.
void merge(std::vector<std::pair<std::string, std::string>>& list, const std::string& key, const std::string& value) {
  std::string k = config::partition_key_name(key);
  for (auto& [lk, lv] : list) {
    if (iequals(lk, k)) {
      lv = value;
      return;
    }
  }
  list.emplace_back(k, value);
}

}  // namespace

config::ClusterConfig ControllerState::with_partition_updates(config::ClusterConfig cfg, std::vector<std::string>& notes,
                                                              std::vector<std::string>& dropped) const {
  for (const auto& [name, settings] : partition_updates_) {
    config::PartitionConfig* p = nullptr;
    for (auto& q : cfg.partitions)
      if (q.name == name) p = &q;
    if (!p) {
      notes.push_back("scontrol update of PartitionName=" + name + " dropped: slurm.conf has no such partition");
      dropped.push_back(name);
      continue;
    }
    auto updated = config::update_partition_config(cfg, *p, settings);
    if (!updated) {
      notes.push_back("scontrol update of PartitionName=" + name + " dropped: it no longer applies to slurm.conf (" +
                      updated.error().message + ")");
      dropped.push_back(name);
      continue;
    }
    *p = std::move(*updated);
  }
  return cfg;
}

std::string ControllerState::partition_updates_text() const {
  std::string out;
  for (const auto& [name, settings] : partition_updates_) {
    out += name;
    for (const auto& [k, v] : settings) out += "\t" + k + "=" + v;
    out += "\n";
  }
  return out;
}

Result<std::vector<std::string>> ControllerState::restore_partition_updates(const std::string& text) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> updates;
  for (const auto& line : split(text, '\n')) {
    if (line.empty()) continue;
    auto fields = split(line, '\t');
    for (std::size_t i = 1; i < fields.size(); ++i) {
      auto eq = fields[i].find('=');
      if (eq == std::string::npos) return make_error("stored partition update \"" + line + "\" is not NAME<TAB>KEY=VALUE...");
      merge(updates[fields[0]], fields[i].substr(0, eq), fields[i].substr(eq + 1));
    }
  }
  auto saved = std::move(partition_updates_);
  partition_updates_ = std::move(updates);
  std::vector<std::string> notes, dropped;
  config::ClusterConfig cfg = with_partition_updates(cfg_, notes, dropped);
  auto bridge = CoreBridge::create(cfg);
  if (!bridge) {
    partition_updates_ = std::move(saved);
    return bridge.error();
  }
  for (const auto& name : dropped) partition_updates_.erase(name);
  install_config(std::move(cfg), std::move(*bridge), settings_);
  return notes;
}

Status ControllerState::update_partition(const Caller& who, const v1::UpdatePartitionRequest& req, int64_t now,
                                         Effects& fx) {
  if (!who.privileged) {
    return make_error("Access/permission denied: only root, SlurmUser or an operator may update a partition; you are " +
                      who.describe());
  }
  const config::PartitionConfig* current = cfg_.find_partition(req.name());
  if (!current) return make_error("Invalid partition name specified");
  if (req.settings().empty()) return make_error("No changes specified for PartitionName=" + req.name());
  std::vector<std::pair<std::string, std::string>> asked;
  for (const auto& s : req.settings()) {
    if (s.value().find_first_of("\t\n") != std::string::npos) {
      return make_error(fmt::format("{}: a value may not hold a tab or a line break", s.key()));
    }
    if (iequals(s.key(), "PartitionName")) return make_error("PartitionName may be given once (the partition to update)");
    asked.emplace_back(s.key(), s.value());
  }
  auto changed = config::update_partition_config(cfg_, *current, asked);
  if (!changed) return make_error(changed.error().message);

  auto updates = partition_updates_;
  for (const auto& [k, v] : asked) merge(updates[req.name()], k, v);
  config::ClusterConfig cfg = cfg_;
  for (auto& p : cfg.partitions) {
    if (p.name == req.name()) {
      p = *changed;
    } else if (changed->is_default && p.is_default) {
      // One default partition: the one named now takes over, as in Slurm.
      p.is_default = false;
      merge(updates[p.name], "Default", "NO");
    }
  }
  auto bridge = CoreBridge::create(cfg);
  if (!bridge) return bridge.error();
  partition_updates_ = std::move(updates);
  install_config(std::move(cfg), std::move(*bridge), settings_);
  fx.batch.set_meta(kPartitionUpdatesMeta, partition_updates_text());
  fx.reschedule = true;
  (void)now;
  return {};
}

}  // namespace drover::ctld
