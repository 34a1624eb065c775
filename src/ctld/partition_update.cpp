// scontrol update|create|delete PartitionName=NAME Key=Value...: partitions
// changed while the cluster runs. The changes are kept in the store (one meta
// value, a line per partition: "NAME<TAB>K=V..." an update, "+NAME<TAB>K=V..."
// a partition scontrol created, "-NAME" a slurm.conf partition it deleted)
// and laid over slurm.conf's partition lines at every start and reconfigure,
// as Slurm keeps its partitions' state; updating the same key again replaces
// it.
#include <algorithm>
#include <set>
#include <tuple>

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
  for (const auto& name : partitions_deleted_) {
    auto it = std::find_if(cfg.partitions.begin(), cfg.partitions.end(),
                           [&](const config::PartitionConfig& p) { return p.name == name; });
    if (it == cfg.partitions.end()) {
      notes.push_back("scontrol delete of PartitionName=" + name + " dropped: slurm.conf has no such partition now");
      dropped.push_back("-" + name);
      continue;
    }
    cfg.partitions.erase(it);
  }
  for (const auto& name : partitions_created_) {
    if (cfg.find_partition(name)) {
      notes.push_back("scontrol create of PartitionName=" + name + " dropped: slurm.conf defines it now");
      dropped.push_back(name);
      continue;
    }
    config::PartitionConfig fresh;
    fresh.name = name;
    auto it = partition_updates_.find(name);
    auto made = config::update_partition_config(
        cfg, fresh, it == partition_updates_.end() ? std::vector<std::pair<std::string, std::string>>{} : it->second);
    if (!made) {
      notes.push_back("scontrol create of PartitionName=" + name + " dropped: it no longer applies to slurm.conf (" +
                      made.error().message + ")");
      dropped.push_back(name);
      continue;
    }
    cfg.partitions.push_back(std::move(*made));
  }
  for (const auto& [name, settings] : partition_updates_) {
    if (created_by_scontrol(name)) continue;
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

bool ControllerState::created_by_scontrol(const std::string& partition) const {
  return std::find(partitions_created_.begin(), partitions_created_.end(), partition) != partitions_created_.end();
}

void ControllerState::forget_partition_changes(const std::vector<std::string>& dropped) {
  for (const auto& d : dropped) {
    if (!d.empty() && d[0] == '-') {
      partitions_deleted_.erase(d.substr(1));
      continue;
    }
    partition_updates_.erase(d);
    std::erase(partitions_created_, d);
  }
}

std::string ControllerState::partition_updates_text() const {
  std::string out;
  for (const auto& name : partitions_deleted_) out += "-" + name + "\n";
  auto line = [&](const std::string& prefix, const std::string& name) {
    out += prefix + name;
    if (auto it = partition_updates_.find(name); it != partition_updates_.end()) {
      for (const auto& [k, v] : it->second) out += "\t" + k + "=" + v;
    }
    out += "\n";
  };
  for (const auto& name : partitions_created_) line("+", name);
  for (const auto& [name, settings] : partition_updates_) {
    if (!created_by_scontrol(name)) {
      line("", name);
    }
  }
  return out;
}

Result<std::vector<std::string>> ControllerState::restore_partition_updates(const std::string& text) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> updates;
  std::vector<std::string> created;
  std::set<std::string> deleted;
  for (const auto& line : split(text, '\n')) {
    if (line.empty()) continue;
    auto fields = split(line, '\t');
    std::string name = fields[0];
    if (name[0] == '-') {
      deleted.insert(name.substr(1));
      continue;
    }
    if (name[0] == '+') {
      name.erase(0, 1);
      if (std::find(created.begin(), created.end(), name) == created.end()) created.push_back(name);
      updates[name];
    }
    for (std::size_t i = 1; i < fields.size(); ++i) {
      auto eq = fields[i].find('=');
      if (eq == std::string::npos) return make_error("stored partition update \"" + line + "\" is not NAME<TAB>KEY=VALUE...");
      merge(updates[name], fields[i].substr(0, eq), fields[i].substr(eq + 1));
    }
  }
  auto saved =
      std::make_tuple(std::move(partition_updates_), std::move(partitions_created_), std::move(partitions_deleted_));
  partition_updates_ = std::move(updates);
  partitions_created_ = std::move(created);
  partitions_deleted_ = std::move(deleted);
  std::vector<std::string> notes, dropped;
  config::ClusterConfig cfg = with_partition_updates(cfg_, notes, dropped);
  auto bridge = CoreBridge::create(cfg);
  if (!bridge) {
    std::tie(partition_updates_, partitions_created_, partitions_deleted_) = std::move(saved);
    return bridge.error();
  }
  forget_partition_changes(dropped);
  install_config(std::move(cfg), std::move(*bridge), settings_);
  return notes;
}

Status ControllerState::update_partition(const Caller& who, const v1::UpdatePartitionRequest& req, int64_t now,
                                         Effects& fx) {
  if (req.action() == v1::PARTITION_CREATE) return create_partition(who, req, fx);
  if (req.action() == v1::PARTITION_DELETE) return delete_partition(who, req.name(), fx);
  if (!who.privileged) {
    // Slurm 22.05's words for a user's update (anchor cluster: "slurm_update error: Invalid user id"), then why.
    return make_error("Invalid user id: only root, SlurmUser or an operator may update a partition; you are " +
                      who.describe());
  }
  const config::PartitionConfig* current = cfg_.find_partition(req.name());
  if (!current) return make_error("Invalid partition name specified");
  if (req.settings().empty()) return make_error("No changes specified for PartitionName=" + req.name());
  auto asked = settings_of(req);
  if (!asked) return asked.error();
  auto changed = config::update_partition_config(cfg_, *current, *asked);
  if (!changed) return make_error(changed.error().message);

  auto updates = partition_updates_;
  for (const auto& [k, v] : *asked) merge(updates[req.name()], k, v);
  config::ClusterConfig cfg = cfg_;
  for (auto& p : cfg.partitions) {
    if (p.name == req.name()) p = *changed;
  }
  (void)now;
  return install_partitions(std::move(cfg), std::move(updates), changed->is_default ? req.name() : "", fx);
}

Result<std::vector<std::pair<std::string, std::string>>> ControllerState::settings_of(
    const v1::UpdatePartitionRequest& req) {
  std::vector<std::pair<std::string, std::string>> asked;
  for (const auto& s : req.settings()) {
    if (s.value().find_first_of("\t\n") != std::string::npos) {
      return make_error(fmt::format("{}: a value may not hold a tab or a line break", s.key()));
    }
    if (iequals(s.key(), "PartitionName")) {
      return make_error("PartitionName may be given once (the partition to change)");
    }
    asked.emplace_back(s.key(), s.value());
  }
  return asked;
}

// Makes cfg (with `updates`) the running configuration, durably. A partition
// named in `new_default` is the one default: the others lose Default=YES, as
// in Slurm.
Status ControllerState::install_partitions(config::ClusterConfig cfg, PartitionSettings updates,
                                           const std::string& new_default, Effects& fx) {
  if (!new_default.empty()) {
    for (auto& p : cfg.partitions) {
      if (p.name == new_default || !p.is_default) continue;
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
  return {};
}

// scontrol create PartitionName=NAME Key=Value...: a new partition, with the
// built-in defaults for what is not given (not PartitionName=DEFAULT's);
// listed after slurm.conf's.
Status ControllerState::create_partition(const Caller& who, const v1::UpdatePartitionRequest& req, Effects& fx) {
  if (!who.privileged) {
    return make_error("Invalid user id: only root, SlurmUser or an operator may create a partition; you are " +
                      who.describe());
  }
  const std::string& name = req.name();
  if (name.empty() || iequals(name, "DEFAULT") || name.find_first_of(" \t\n,=+-") == 0 ||
      name.find_first_of(" \t\n,=") != std::string::npos || cfg_.find_partition(name)) {
    return make_error("Invalid partition name specified");
  }
  auto asked = settings_of(req);
  if (!asked) return asked.error();
  config::PartitionConfig fresh;
  fresh.name = name;
  auto made = config::update_partition_config(cfg_, fresh, *asked);
  if (!made) return make_error(made.error().message);
  auto updates = partition_updates_;
  updates[name].clear();  // a name deleted earlier keeps no old update
  for (const auto& [k, v] : *asked) merge(updates[name], k, v);
  config::ClusterConfig cfg = cfg_;
  const bool is_default = made->is_default;
  cfg.partitions.push_back(std::move(*made));
  partitions_created_.push_back(name);
  if (auto st = install_partitions(std::move(cfg), std::move(updates), is_default ? name : "", fx); !st) {
    partitions_created_.pop_back();
    return st;
  }
  return {};
}

// scontrol delete PartitionName=NAME: refused while a pending or running job
// is in it (a pending job's candidates count), as Slurm's.
Status ControllerState::delete_partition(const Caller& who, const std::string& name, Effects& fx) {
  if (!who.privileged) {
    return make_error("Invalid user id: only root, SlurmUser or an operator may delete a partition; you are " +
                      who.describe());
  }
  if (!cfg_.find_partition(name)) return make_error("Invalid partition name specified");
  for (core::JobId id : active_) {
    const v1::JobRecord& r = jobs_.at(id).rec;
    const auto& asked = r.desc().partitions();
    if (r.partition() == name || std::find(asked.begin(), asked.end(), name) != asked.end()) {
      return make_error("Partition is in use");
    }
  }
  config::ClusterConfig cfg = cfg_;
  std::erase_if(cfg.partitions, [&](const config::PartitionConfig& p) { return p.name == name; });
  auto updates = partition_updates_;
  updates.erase(name);
  const bool was_created = created_by_scontrol(name);
  auto created = partitions_created_;
  auto deleted = partitions_deleted_;
  if (was_created) {
    std::erase(partitions_created_, name);
  } else {
    partitions_deleted_.insert(name);
  }
  if (auto st = install_partitions(std::move(cfg), std::move(updates), "", fx); !st) {
    partitions_created_ = std::move(created);
    partitions_deleted_ = std::move(deleted);
    return st;
  }
  return {};
}

}  // namespace drover::ctld
