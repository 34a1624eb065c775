// The cluster's events, as Slurm's accounting keeps them for sreport and
// `sacctmgr show event`: each stretch of time a node was DOWN or DRAINed
// (with its reason and who set it), and the cluster's configured TRES from
// the first start on a store (a new event when they change). Written in the
// same batch as the node change that causes them, so they are as durable.
#include "common/hostlist.hpp"
#include "ctld/persist.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

std::string event_key(const v1::ClusterEvent& e) { return e.node() + "\t" + std::to_string(e.start_time()); }

bool same_tres(const v1::ClusterEvent& e, const TresMap& t) {
  return TresMap(e.tres().begin(), e.tres().end()) == t;
}

}  // namespace

void ControllerState::put_event(const v1::ClusterEvent& e, Effects& fx) const {
  std::string payload;
  e.SerializeToString(&payload);
  fx.batch.put(store::Put{kEventsTable, event_key(e), std::move(payload),
                          {{"end_time", e.end_time()}, {"node", e.node()}}});
}

void ControllerState::node_event(core::NodeIndex i, int64_t now, Effects& fx) {
  const NodeRt& n = nodes_[i];
  std::string state = n.down ? (n.responding || n.reason != "Not responding" ? "DOWN" : "DOWN*")
                      : n.drain ? "DRAIN"
                                : "";
  auto open = open_node_events_.find(i);
  if (open != open_node_events_.end()) {
    if (open->second.state() == state && open->second.reason() == n.reason) return;
    open->second.set_end_time(now);
    put_event(open->second, fx);
    open_node_events_.erase(open);
  }
  if (state.empty()) return;
  const core::NodeSpec& spec = bridge_->cluster().nodes[i];
  v1::ClusterEvent e;
  e.set_node(spec.name);
  e.set_start_time(now);
  e.set_state(state);
  e.set_reason(n.reason);
  if (n.reason_user != "slurm") e.set_reason_uid(n.reason_uid);
  TresMap tres;
  core::add_node_tres(spec, tres);
  tres["billing"] = spec.cpus;
  e.mutable_tres()->insert(tres.begin(), tres.end());
  put_event(e, fx);
  open_node_events_.emplace(i, std::move(e));
}

void ControllerState::cluster_event(int64_t now, Effects& fx) {
  for (auto& e : orphan_events_) {  // a node taken out of slurm.conf is down no longer
    e.set_end_time(now);
    put_event(e, fx);
  }
  orphan_events_.clear();
  TresMap tres = bridge_->cluster().total_tres;
  tres["billing"] = tres["cpu"];
  if (open_cluster_event_ && same_tres(*open_cluster_event_, tres)) return;
  if (open_cluster_event_) {
    open_cluster_event_->set_end_time(now);
    put_event(*open_cluster_event_, fx);
  }
  v1::ClusterEvent e;
  e.set_start_time(now);
  e.set_reason("Cluster Registered TRES");
  e.mutable_tres()->insert(tres.begin(), tres.end());
  std::vector<std::string> names;
  for (const auto& n : bridge_->cluster().nodes) names.push_back(n.name);
  e.set_nodes(hostlist_compress_slurm_sorted(names));
  put_event(e, fx);
  open_cluster_event_ = std::move(e);
}

Status ControllerState::recover_events(const std::vector<std::string>& open_payloads) {
  for (const std::string& payload : open_payloads) {
    v1::ClusterEvent e;
    if (!e.ParseFromString(payload)) return make_error("state store: an event record is unreadable");
    if (e.end_time() != 0) continue;
    if (e.node().empty()) {
      // Two open cluster events cannot be written; keep the later one if a store has them.
      if (!open_cluster_event_ || open_cluster_event_->start_time() < e.start_time()) open_cluster_event_ = e;
      continue;
    }
    core::NodeIndex i = bridge_->find_node(e.node());
    if (i >= 0) {
      open_node_events_[i] = std::move(e);
    } else {
      orphan_events_.push_back(std::move(e));
    }
  }
  return {};
}

}  // namespace drover::ctld
