// The key tables of every configuration file Drover reads (declared as data
// in *_keys.cpp). Parsers, `drover config show` and the reference generator
// all read these; nothing else knows a key's spelling.
#pragma once

#include <string>
#include <vector>

#include "config/key_table.hpp"
#include "config/model.hpp"

namespace drover::config {

const KeyTable<ClusterConfig>& global_keys();      // slurm.conf, outside NodeName/PartitionName lines
// The global options a command reads to reach the controller (ClusterName,
// SlurmctldHost, SlurmctldPort, StateSaveLocation; AuthInfo kept as written):
// the same definitions as global_keys() has for them.
const KeyTable<ClusterConfig>& command_keys();
const KeyTable<NodeConfig>& node_keys();           // NodeName= lines
const KeyTable<PartitionConfig>& partition_keys(); // PartitionName= lines
const KeyTable<SchedulerParams>& scheduler_parameter_keys();  // SchedulerParameters= items
const KeyTable<GresLine>& gres_keys();             // gres.conf
const KeyTable<QosConfig>& qos_keys();             // qos.conf

// The SchedulerParameters= global key (defined beside its item table).
KeyDef<ClusterConfig> scheduler_parameters_key();

// SchedulerParameters printed in full, defaults included ("bf_interval=30,...").
std::string show_scheduler_parameters(const SchedulerParams& p);

// slurm.conf words that start a line of their own kind and are accepted with
// no effect in Drover (DownNodes, FrontendName).
const std::vector<PassiveKey>& passive_line_kinds();

}  // namespace drover::config
