// The scheduling core's cluster (core::Cluster) from a loaded configuration:
// nodes with their gres pools (device ids and close cores from gres.conf),
// partitions, QOS, priority weights and SchedulerParameters. The controller
// and the simulator both build their core from this one function.
#pragma once

#include "common/result.hpp"
#include "config/model.hpp"
#include "core/cluster.hpp"

namespace drover::config {

// Errors only for what the core cannot represent at all (a node with no
// cores); everything else the doctor reports is left to the doctor.
Result<core::Cluster> build_core_cluster(const ClusterConfig& cfg);
// One QOS in the core's terms (sacctmgr's QOS go through here too).
core::QosSpec core_qos(const QosConfig& q);
// A PreemptMode as written ("REQUEUE", "SUSPEND,GANG"; "": kCluster).
core::PreemptMode preempt_mode_value(std::string_view written);

}  // namespace drover::config
