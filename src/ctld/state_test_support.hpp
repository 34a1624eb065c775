// What ControllerState's tests share: a small cluster (c1, c2: 4 CPUs; g1:
// 8 CPUs, 2 h100; partitions cpu (default) and gpu), a state built from it
// with more slurm.conf lines, and the agents' registrations.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>

#include "config/parse.hpp"
#include "ctld/state.hpp"

namespace drover::ctld::state_testing {

inline constexpr const char* kConf =
    "ClusterName=t\nSlurmctldHost=localhost\nDefMemPerCPU=100\nMinJobAge=600\nGresTypes=gpu\n"
    "NodeName=c[1-2] CPUs=4 RealMemory=4000\n"
    "NodeName=g1 CPUs=8 RealMemory=8000 Gres=gpu:h100:2 Feature=h100\n"
    "PartitionName=cpu Nodes=c[1-2] Default=YES MaxTime=1:00:00\n"
    "PartitionName=gpu Nodes=g1\n";

inline std::unique_ptr<ControllerState> make_state(const std::string& extra = "") {
  config::ClusterConfig cfg = config::parse_slurm_conf_text(kConf + extra, "test.conf");
  auto settings = settings_from_config(cfg, "test.conf");
  EXPECT_TRUE(settings) << settings.error().message;
  auto bridge = CoreBridge::create(cfg);
  EXPECT_TRUE(bridge) << bridge.error().message;
  return std::make_unique<ControllerState>(cfg, std::move(*bridge), *settings);
}

inline v1::NodeReport report(const std::string& node, int64_t agent_start = 100) {
  v1::NodeReport r;
  r.set_node(node);
  r.set_agent_start_time(agent_start);
  return r;
}

// Every node registers at `now`, and the nodes a test's extra lines added.
inline void register_all(ControllerState& st, int64_t now, std::initializer_list<const char*> added = {}) {
  for (auto list : {std::initializer_list<const char*>{"c1", "c2", "g1"}, added}) {
    for (const char* n : list) {
      Effects fx;
      ASSERT_TRUE(st.node_report(report(n), true, now, fx));
    }
  }
}

// Every node's heartbeat at `now`: a test that moves the clock on by more
// than SlurmdTimeout/3 sends one, as the agents would have, or the nodes
// are silent and take no new job (ControllerState::silent).
inline void heard_all(ControllerState& st, int64_t now) {
  for (const auto& n : st.node_infos(now)) {
    Effects fx;
    ASSERT_TRUE(st.node_report(report(n.name().c_str()), false, now, fx));
  }
}

}  // namespace drover::ctld::state_testing
