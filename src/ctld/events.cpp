// The cluster's events, as Slurm's accounting keeps them for sreport and
// `sacctmgr show event`: each stretch of time a node was DOWN or DRAINed
// (with its reason and who set it), the cluster's configured TRES from the
// first start on a store (a new event when they change), and each advance
// reservation's window (reservation_events; reservation.cpp builds one).
// Written in the same batch as the change that causes them, so they are as
// durable.
#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "ctld/persist.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {

std::string event_key(const v1::ClusterEvent& e) {
  if (!e.reservation().empty()) return "@" + e.reservation() + "\t" + std::to_string(e.reservation_id());
  return e.node() + "\t" + std::to_string(e.start_time());
}

namespace {

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
                      : n.fail  ? "FAIL"
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
  if (!n.reason.empty()) e.set_reason_uid(n.reason_uid);  // who set it; SlurmUser for the controller's own
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

void ControllerState::reservation_events(int64_t now, Effects& fx) {
  std::map<std::string, v1::ClusterEvent> live;
  for (const auto& [name, r] : reservations_) {
    v1::ClusterEvent e = reservation_event(r);
    std::string key = event_key(e);
    auto was = resv_events_.find(key);
    if (was == resv_events_.end() || was->second.SerializeAsString() != e.SerializeAsString()) put_event(e, fx);
    live.emplace(std::move(key), std::move(e));
  }
  // Gone before its end (deleted): it ends now, or never began.
  for (auto& [key, e] : resv_events_) {
    if (live.count(key) || e.end_time() <= now) continue;
    e.set_end_time(std::max(e.start_time(), now));
    put_event(e, fx);
  }
  resv_events_ = std::move(live);
}

Status ControllerState::recover_events(const std::vector<std::string>& open_payloads) {
  for (const std::string& payload : open_payloads) {
    v1::ClusterEvent e;
    if (!e.ParseFromString(payload)) return make_error("state store: an event record is unreadable");
    if (e.end_time() != 0 || !e.reservation().empty()) continue;
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
