// What the agent found against what slurm.conf/gres.conf declare. A node with
// less than declared is drained with a reason naming both numbers (Slurm's
// "gres/gpu count reported lower than configured (4 < 8)"), instead of being
// offered to jobs that can then never start on it.
#pragma once

#include <string>
#include <vector>

#include "agent/hw/hardware.hpp"
#include "config/model.hpp"

namespace drover::agent {

struct NodeCheck {
  std::vector<std::string> problems;  // one drain reason part each, in a fixed order
  bool ok() const { return problems.empty(); }
  // Slurm's single reason string: the parts joined with ", ".
  std::string drain_reason() const;
};

// Compares detected CPUs (count and sockets*cores*threads), RealMemory and
// GPU counts (per gres type where the config names one) with the node's
// configuration. Only "fewer than configured" is a problem, as in Slurm.
NodeCheck compare_with_config(const hw::NodeHardware& found, const config::NodeConfig& node);

// GPUs from gres.conf for `node_name` (Name=gpu lines; File= device files with
// their minor numbers, else Count=): the fallback when NVML finds none. A File=
// that does not exist is not a GPU found; it is named in `notes` instead.
std::vector<hw::GpuInfo> gpus_from_gres_conf(const config::ClusterConfig& cfg, const std::string& node_name,
                                             std::vector<std::string>* notes = nullptr);

}  // namespace drover::agent
