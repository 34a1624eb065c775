// scontrol update NodeName=LIST: State= (DRAIN, DOWN, RESUME, ...) with
// Reason=, and the node settings an operator may change while the cluster
// runs: Weight=, AvailableFeatures= (Features=), ActiveFeatures= and
// Comment=. The settings are kept in each node's stored record and laid over
// slurm.conf's node line at every start and reconfigure, as Slurm keeps a
// node's state across restarts.
#include <algorithm>

#include "common/strings.hpp"
#include "ctld/log.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

constexpr const char* kNotSubset = "Active features not subset of available features";

std::vector<std::string> feature_list(const std::string& v) {
  std::vector<std::string> out;
  for (auto& f : split(v, ','))
    if (!f.empty()) out.push_back(std::move(f));
  return out;
}

bool subset(const std::vector<std::string>& part, const std::vector<std::string>& whole) {
  return std::all_of(part.begin(), part.end(),
                     [&](const std::string& f) { return std::find(whole.begin(), whole.end(), f) != whole.end(); });
}

// The canonical key of a node setting scontrol may update, or "".
std::string node_setting_key(const std::string& key) {
  if (iequals(key, "Weight")) return "Weight";
  if (iequals(key, "AvailableFeatures") || iequals(key, "Features")) {
    return "AvailableFeatures";
  }
  if (iequals(key, "ActiveFeatures")) return "ActiveFeatures";
  return "";
}

// Lays `updates` over one node's configuration: AvailableFeatures sets the
// features (and, without ActiveFeatures, makes them all active), as Slurm
// does for a cluster without a node features plugin.
Status apply_node_settings(config::NodeConfig& nc, const std::map<std::string, std::string>& updates) {
  for (const auto& [k, v] : updates) {
    if (k == "Weight") {
      auto w = parse_int(v);
      if (!w || *w < 0 || *w > UINT32_MAX) return make_error("Invalid node weight specified: " + v);
      nc.weight = static_cast<uint32_t>(*w);
    } else if (k == "AvailableFeatures") {
      nc.features = feature_list(v);
      nc.active_features.reset();
    }
  }
  if (auto it = updates.find("ActiveFeatures"); it != updates.end()) {
    auto active = feature_list(it->second);
    if (!subset(active, nc.features)) return make_error(kNotSubset);
    nc.active_features = std::move(active);
  }
  return {};
}

}  // namespace

config::ClusterConfig ControllerState::with_node_updates(config::ClusterConfig cfg,
                                                         std::vector<std::string>& notes) const {
  for (auto& nc : cfg.nodes) {
    core::NodeIndex i = bridge_->find_node(nc.name);
    if (i < 0 || nodes_[i].updates.empty()) continue;
    config::NodeConfig changed = nc;
    if (auto st = apply_node_settings(changed, nodes_[i].updates); !st) {
      notes.push_back("scontrol update of NodeName=" + nc.name + " not applied (kept for later): " +
                      st.error().message);
      continue;
    }
    nc = std::move(changed);
  }
  return cfg;
}

Status ControllerState::restore_node_updates() {
  bool any = std::any_of(nodes_.begin(), nodes_.end(), [](const NodeRt& n) { return !n.updates.empty(); });
  if (!any) return {};
  std::vector<std::string> notes;
  config::ClusterConfig cfg = with_node_updates(cfg_, notes);
  for (const auto& n : notes) log_line(n);
  auto bridge = CoreBridge::create(cfg);
  if (!bridge) {
    return make_error("the scontrol update NodeName= settings kept in the state store do not apply to " +
                      settings_.conf_path + ": " + bridge.error().message);
  }
  install_config(std::move(cfg), std::move(*bridge), settings_);
  return {};
}

Result<ControllerState::NodeUpdate> ControllerState::update_node(const Caller& who, const v1::UpdateNodeRequest& req,
                                                                int64_t now, Effects& fx) {
  // Slurm 22.05's words for a user's node update (anchor cluster: slurm_update error: Invalid user id).
  if (!who.privileged) return make_error(kInvalidUserId);
  std::map<std::string, std::string> asked;
  std::optional<std::string> comment;
  for (const auto& [k, v] : req.other()) {
    if (iequals(k, "Comment")) {
      comment = v;
      continue;
    }
    std::string key = node_setting_key(k);
    // scontrol refuses the keys Slurm does not know; these it knows.
    if (key.empty()) return make_error("Update of " + k + " is not built in Drover");
    asked[key] = v;
  }
  auto listed = node_indices(bridge_->cluster(), req.nodes());
  // Slurm names no node here (the reservations' Nodes= do).
  if (!listed || listed->empty()) return make_error("Invalid node name specified");
  std::vector<core::NodeIndex> idx = std::move(*listed);
  std::string state = to_upper(req.state());
  bool needs_reason = state == "DRAIN" || state == "DOWN" || state == "FAIL";
  if (needs_reason && req.reason().empty()) {
    return make_error("You must specify a reason when DOWNING or DRAINING a node. Request denied");
  }
  bool known = state.empty() || state == "DRAIN" || state == "DOWN" || state == "RESUME" || state == "IDLE" ||
               state == "UNDRAIN" || state == "FAIL";
  if (!known) {
    return make_error("Invalid node state specified: " + req.state() +
                      " (Drover takes DRAIN, DOWN, RESUME, UNDRAIN, IDLE, FAIL)");
  }
  // The settings first, for every node or none: a new configuration.
  std::map<core::NodeIndex, std::map<std::string, std::string>> settled;
  if (!asked.empty()) {
    config::ClusterConfig cfg = cfg_;
    for (core::NodeIndex i : idx) {
      const std::string& name = bridge_->cluster().nodes[i].name;
      auto nc = std::find_if(cfg.nodes.begin(), cfg.nodes.end(), [&](const auto& n) { return n.name == name; });
      if (nc == cfg.nodes.end()) return make_error("Invalid node name specified");
      auto merged = nodes_[i].updates;
      if (asked.count("AvailableFeatures") && !asked.count("ActiveFeatures")) {
        // New available features keep the active ones only if they hold them all.
        if (!subset(nc->active_features.value_or(nc->features), feature_list(asked["AvailableFeatures"]))) {
          return make_error(kNotSubset);
        }
        merged.erase("ActiveFeatures");
      }
      for (const auto& [k, v] : asked) merged[k] = v;
      if (auto st = apply_node_settings(*nc, merged); !st) return st.error();
      settled[i] = std::move(merged);
    }
    auto bridge = CoreBridge::create(cfg);
    if (!bridge) return bridge.error();
    install_config(std::move(cfg), std::move(*bridge), settings_);
  }
  NodeUpdate done;
  // Only a drained, down or failed node can resume (IDLE takes any); the
  // settings given with State=RESUME reach the others too.
  auto passed_over = [&](core::NodeIndex i) {
    const NodeRt& n = nodes_[i];
    return state == "RESUME" && !n.drain && !n.fail && !n.down && !n.invalid_reg;
  };
  if (state == "RESUME" && settled.empty() && !comment && std::all_of(idx.begin(), idx.end(), passed_over)) {
    return make_error("Invalid node state specified");
  }
  for (core::NodeIndex i : idx) {
    NodeRt& n = nodes_[i];
    const std::string& name = bridge_->cluster().nodes[i].name;
    if (comment) n.comment = *comment;
    if (auto it = settled.find(i); it != settled.end()) n.updates = std::move(it->second);
    if (passed_over(i)) {
      done.not_resumable.push_back(name);
      if (comment || !settled.empty()) put_node(i, now, fx);
      continue;
    }
    if (state == "DRAIN") n.drain = true;
    if (state == "FAIL") n.fail = true;  // Slurm 22.05: IDLE+FAIL, sinfo's fail (anchor cluster)
    if (state == "DOWN") n.down = true;
    if (state == "RESUME" || state == "IDLE") {
      n.drain = n.fail = n.down = n.invalid_reg = false;
      n.reason.clear();
    }
    if (state == "UNDRAIN") {
      n.drain = false;
      if (!n.down) n.reason.clear();  // Slurm 22.05: an undrained node that runs on shows no reason (anchor cluster)
    }
    if (!req.reason().empty() && state != "RESUME" && state != "IDLE") {
      n.reason = req.reason();
      n.reason_time = now;
      n.reason_uid = who.uid;
      n.reason_user = who.user;
    }
    put_node(i, now, fx);
    if (state == "DOWN") node_lost(i, "set DOWN by " + who.describe(), now, fx);
    done.updated.push_back(name);
  }
  fx.reschedule = true;
  return done;
}

}  // namespace drover::ctld
