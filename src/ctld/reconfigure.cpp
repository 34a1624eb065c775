// scontrol reconfigure: a changed slurm.conf applied to the running
// controller. What the agents or the controller's sockets were started with
// cannot change under them; such a change is refused, whole, naming each
// difference, and the controller keeps the configuration it has.
#include <fmt/format.h>

#include "common/strings.hpp"
#include "ctld/persist.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

std::string gres_text(const std::vector<GresSpec>& list) {
  std::vector<std::string> parts;
  for (const auto& g : list) parts.push_back(g.str());
  return parts.empty() ? "(none)" : join(parts, ",");
}

std::string devices_text(const core::NodeSpec& n) {
  std::vector<std::string> parts;
  for (const auto& g : n.gres) {
    std::vector<std::string> ids;
    for (int32_t d : g.device_ids) ids.push_back(std::to_string(d));
    parts.push_back(g.name + (g.type.empty() ? "" : ":" + g.type) + "[" + join(ids, ",") + "]");
  }
  return join(parts, " ");
}

// What differs in a node between the two configurations that its agent (or
// the allocations running on it) depend on.
void node_differences(const config::ClusterConfig& was, const config::NodeConfig& a, const core::NodeSpec& sa,
                      const config::ClusterConfig& now, const config::NodeConfig& b, const core::NodeSpec& sb,
                      std::vector<std::string>& out) {
  auto diff = [&](const char* key, const std::string& x, const std::string& y) {
    if (x != y) out.push_back(fmt::format("NodeName={}: {} {} -> {}", a.name, key, x, y));
  };
  diff("NodeAddr", a.addr, b.addr);
  diff("NodeHostname", a.hostname, b.hostname);
  diff("Port", std::to_string(was.node_port(a)), std::to_string(now.node_port(b)));
  diff("CPUs", std::to_string(a.cpus), std::to_string(b.cpus));
  diff("Boards", std::to_string(a.boards), std::to_string(b.boards));
  diff("Sockets", std::to_string(a.sockets), std::to_string(b.sockets));
  diff("CoresPerSocket", std::to_string(a.cores_per_socket), std::to_string(b.cores_per_socket));
  diff("ThreadsPerCore", std::to_string(a.threads_per_core), std::to_string(b.threads_per_core));
  diff("RealMemory", std::to_string(a.real_memory_mb), std::to_string(b.real_memory_mb));
  diff("Gres", gres_text(a.gres), gres_text(b.gres));
  diff("gres.conf devices", devices_text(sa), devices_text(sb));
  diff("CoreSpecCount", std::to_string(a.core_spec_count), std::to_string(b.core_spec_count));
  diff("MemSpecLimit", a.mem_spec_limit_mb ? std::to_string(*a.mem_spec_limit_mb) : "(none)",
       b.mem_spec_limit_mb ? std::to_string(*b.mem_spec_limit_mb) : "(none)");
}

}  // namespace

Result<std::vector<std::string>> ControllerState::reconfigure(config::ClusterConfig cfg, Settings settings,
                                                              int64_t now, Effects& fx) {
  // scontrol update PartitionName= changes outlive a reconfigure, as Slurm's do.
  std::vector<std::string> changes, dropped;
  cfg = with_partition_updates(std::move(cfg), changes, dropped);
  cfg = with_node_updates(std::move(cfg), changes);  // scontrol update NodeName= settings too
  auto bridge = CoreBridge::create(cfg);
  if (!bridge) return bridge.error();
  const core::Cluster& was = bridge_->cluster();
  const core::Cluster& next = (*bridge)->cluster();

  // What needs a restart.
  std::vector<std::string> refused;
  auto fixed = [&](const char* key, const std::string& a, const std::string& b) {
    if (a != b) refused.push_back(fmt::format("{} {} -> {}", key, a.empty() ? "(none)" : a, b.empty() ? "(none)" : b));
  };
  fixed("ClusterName", settings_.cluster_name, settings.cluster_name);
  fixed("SlurmctldHost/SlurmctldPort", settings_.tcp_address, settings.tcp_address);
  fixed("StateSaveLocation", settings_.state_dir, settings.state_dir);
  fixed("AuthInfo key", settings_.key_path, settings.key_path);
  fixed("SlurmUser (uid)", std::to_string(settings_.slurm_user_uid), std::to_string(settings.slurm_user_uid));
  // What the agents read when they start (they are not told to read slurm.conf again).
  fixed("KillWait", std::to_string(cfg_.kill_wait), std::to_string(cfg.kill_wait));
  fixed("SlurmdSpoolDir", cfg_.slurmd_spool_dir, cfg.slurmd_spool_dir);
  for (const char* key : {"TaskPlugin", "ProctrackType", "DisableRootJobs", "SlurmdParameters", "Prolog", "Epilog",
                          "PrologEpilogTimeout", "HealthCheckProgram", "HealthCheckInterval", "HealthCheckNodeState",
                          "TaskProlog", "TaskEpilog"}) {
    const std::string* a = cfg_.passive(key);
    const std::string* b = cfg.passive(key);
    fixed(key, a ? *a : "", b ? *b : "");
  }
  std::vector<std::string> old_names, new_names;
  for (const auto& n : was.nodes) old_names.push_back(n.name);
  for (const auto& n : next.nodes) new_names.push_back(n.name);
  if (old_names != new_names) {
    std::vector<std::string> added, removed;
    for (const auto& n : new_names)
      if (std::find(old_names.begin(), old_names.end(), n) == old_names.end()) added.push_back(n);
    for (const auto& n : old_names)
      if (std::find(new_names.begin(), new_names.end(), n) == new_names.end()) removed.push_back(n);
    refused.push_back(fmt::format("the node list changed (added: {}; removed: {}{})", added.empty() ? "none" : join(added, ","),
                                  removed.empty() ? "none" : join(removed, ","),
                                  added.empty() && removed.empty() ? "; the same nodes in another order" : ""));
  } else {
    for (std::size_t i = 0; i < was.nodes.size(); ++i) {
      const config::NodeConfig* a = cfg_.find_node(was.nodes[i].name);
      const config::NodeConfig* b = cfg.find_node(next.nodes[i].name);
      if (a && b) node_differences(cfg_, *a, was.nodes[i], cfg, *b, next.nodes[i], refused);
    }
  }
  // Partitions that jobs still use.
  std::set<std::string> gone;
  for (const auto& p : was.partitions) {
    if ((*bridge)->find_partition(p.name) < 0) gone.insert(p.name);
  }
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    std::vector<std::string> names(j.spec.partitions.begin(), j.spec.partitions.end());
    if (holds_resources(j) || names.empty()) names = {j.rec.partition()};
    for (const auto& p : names) {
      if (gone.count(p)) {
        refused.push_back(fmt::format("PartitionName={} is gone, but job {} ({}) is in it", p, job_label(j.rec),
                                      is_pending(j) ? "pending" : "running"));
      }
    }
  }
  if (!refused.empty()) {
    return make_error(fmt::format(
        "nothing changed: {} in {} cannot take effect while the cluster runs:\n  {}\n"
        "Put {} back, or restart the cluster (drover down; drover up): the controller recovers every job, and "
        "the agents read their nodes' lines when they start.",
        refused.size() == 1 ? "this change" : "these changes", settings_.conf_path, join(refused, "\n  "),
        refused.size() == 1 ? "it" : "them"));
  }

  // What changes, for the log.
  for (const auto& p : next.partitions) {
    if (bridge_->find_partition(p.name) < 0) changes.push_back("PartitionName=" + p.name + " added");
  }
  for (const auto& p : gone) changes.push_back("PartitionName=" + p + " removed");
  for (std::size_t i = 0; i < was.nodes.size(); ++i) {
    if (was.nodes[i].features != next.nodes[i].features)
      changes.push_back(fmt::format("NodeName={}: Features {} -> {}", next.nodes[i].name,
                                    join(was.nodes[i].features, ","), join(next.nodes[i].features, ",")));
    if (was.nodes[i].weight != next.nodes[i].weight)
      changes.push_back(fmt::format("NodeName={}: Weight {} -> {}", next.nodes[i].name, was.nodes[i].weight,
                                    next.nodes[i].weight));
  }

  settings.conf_path = settings_.conf_path;
  forget_partition_changes(dropped);
  if (!dropped.empty()) fx.batch.set_meta(kPartitionUpdatesMeta, partition_updates_text());
  install_config(std::move(cfg), std::move(*bridge), std::move(settings));
  fx.reschedule = true;
  config_time_ = now;
  return changes;
}

void ControllerState::install_config(config::ClusterConfig cfg, std::unique_ptr<CoreBridge> bridge, Settings settings) {
  bridge->set_qos(acct_.qos_specs());
  bridge->set_assocs(settings.enforce_limits ? acct_.assoc_limits() : std::vector<core::AssocLimitSpec>{});
  const Seconds half_life = bridge->cluster().priority.decay_half_life;
  if (ledger_ && bridge_->cluster().priority.decay_half_life != half_life) {
    core::UsageLedger fresh(half_life);
    fresh.restore(ledger_->all(), ledger_->last_decay());
    ledger_ = std::move(fresh);
  }
  cfg_ = std::move(cfg);
  bridge_ = std::move(bridge);
  settings_ = std::move(settings);
  next_job_id_ = std::max(next_job_id_, settings_.first_job_id);  // a raised FirstJobId, as at a restart
  for (auto& [_, j] : jobs_) {
    if (holds_resources(j)) j.alloc = allocation_from_proto(*bridge_, j.rec.alloc());
    refresh_spec(j);  // the core's caches held the old cluster
    j.counted_revision = 0;
  }
  fairshare_dirty_ = true;
}

}  // namespace drover::ctld
