#include "ctld/core_bridge.hpp"

#include "ctld/interim_core.hpp"

namespace drover::ctld {

// Holds the core's Scheduler once the core is linked (it keeps caches
// derived from the cluster between cycles). Empty with the interim placer.
struct CoreBridge::SchedulerHolder {};

CoreBridge::CoreBridge(core::Cluster cluster)
    : cluster_(std::move(cluster)), scheduler_(std::make_unique<SchedulerHolder>()) {
  for (core::NodeIndex i = 0; i < static_cast<core::NodeIndex>(cluster_.nodes.size()); ++i) {
    node_index_.emplace(cluster_.nodes[i].name, i);
  }
}

CoreBridge::~CoreBridge() = default;

Result<std::unique_ptr<CoreBridge>> CoreBridge::create(const config::ClusterConfig& cfg) {
  auto cluster = interim::build_cluster(cfg);
  if (!cluster) return cluster.error();
  return std::unique_ptr<CoreBridge>(new CoreBridge(std::move(*cluster)));
}

std::string CoreBridge::reason_name(core::Reason r) { return interim::reason_name(r); }

const char* CoreBridge::implementation() { return "interim first-fit (src/core not merged yet)"; }

core::SubmitVerdict CoreBridge::check_submit(const core::JobSpec& job, const core::SubmitContext& ctx) const {
  return interim::check_submit(cluster_, job, ctx);
}

Result<core::RequestSummary> CoreBridge::summarize(const core::JobSpec& job, int32_t partition) const {
  return interim::summarize(cluster_, job, partition);
}

core::CycleResult CoreBridge::run_cycle(const core::CycleInput& in, core::PassKind pass) {
  (void)pass;
  return interim::run_cycle(cluster_, in);
}

int32_t CoreBridge::find_partition(std::string_view name) const {
  for (int32_t i = 0; i < static_cast<int32_t>(cluster_.partitions.size()); ++i) {
    if (cluster_.partitions[i].name == name) return i;
  }
  return -1;
}

int32_t CoreBridge::find_qos(std::string_view name) const {
  for (int32_t i = 0; i < static_cast<int32_t>(cluster_.qos.size()); ++i) {
    if (cluster_.qos[i].name == name) return i;
  }
  return -1;
}

core::NodeIndex CoreBridge::find_node(std::string_view name) const {
  auto it = node_index_.find(name);
  return it == node_index_.end() ? -1 : it->second;
}

int32_t CoreBridge::default_partition() const {
  for (int32_t i = 0; i < static_cast<int32_t>(cluster_.partitions.size()); ++i) {
    if (cluster_.partitions[i].is_default) return i;
  }
  return -1;
}

}  // namespace drover::ctld
