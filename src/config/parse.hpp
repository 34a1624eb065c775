// Text entry points of the configuration parsers. load_config (model.hpp)
// reads the files and calls these; tests and the fuzzer call them directly.
// None of them throws or stops at the first problem: every finding goes to
// ClusterConfig::diags with file:line:column.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.hpp"
#include "config/model.hpp"

namespace drover::config {

struct ParseOptions {
  // Follow Include lines (relative paths resolve against the including
  // file's directory). Off for fuzzing: the parser then touches no file.
  bool follow_includes = true;
  // Size caps (defaults below). The fuzzer lowers them so its time goes into
  // the parser's logic rather than into expanding huge host lists.
  std::size_t max_nodes = 0;              // 0: kMaxNodes
  std::size_t max_partition_members = 0;  // 0: kMaxPartitionMembers
  // What a command needs to find the controller: the global options of
  // command_keys() (tables.hpp), Include followed. NodeName, PartitionName,
  // NodeSet, DownNodes and FrontendName lines are skipped unread, and other
  // keys are neither applied nor checked; the controller and `drover config
  // check` read the whole file.
  bool globals_only = false;
};

inline constexpr int kMaxIncludeDepth = 16;
inline constexpr std::size_t kMaxConfigFileBytes = 64u << 20;
inline constexpr std::size_t kMaxNodes = 1u << 18;            // nodes in one configuration
inline constexpr std::size_t kMaxPartitionMembers = 1u << 22; // node names over all partitions (and over gres.conf)
// Bytes of NodeName line text times the nodes it defines, over all lines: a
// bound on the memory node definitions take (a 1 MB line naming 200,000
// nodes would otherwise be copied 200,000 times).
inline constexpr std::size_t kMaxNodeDefinitionBytes = std::size_t{1} << 28;

// slurm.conf text, as if read from `file_name` (used in locations and to
// resolve Include). Records file_name in files_read and slurm_conf_path.
ClusterConfig parse_slurm_conf_text(std::string_view text, std::string_view file_name,
                                    const ParseOptions& opts = {});

// gres.conf text into cfg.gres_lines / cfg.gres_autodetect; lines without
// NodeName apply to every node already in cfg.
void parse_gres_conf_text(std::string_view text, std::string_view file_name, ClusterConfig& cfg);

// qos.conf text into cfg.qos.
void parse_qos_conf_text(std::string_view text, std::string_view file_name, ClusterConfig& cfg);

// One QOS from its settings in qos.conf's spelling (sacctmgr keeps QOS this
// way); the error is the parser's first error, naming the QOS.
Result<QosConfig> parse_qos_settings(const std::string& name, const std::map<std::string, std::string>& settings);

// A PartitionName line's key as its table spells it, from the key typed in
// any case or (as scontrol accepts) an unambiguous abbreviation of at least
// three letters: "maxtim" -> "MaxTime". Anything else comes back as typed.
std::string partition_key_name(const std::string& typed);

// scontrol update PartitionName=NAME Key=Value...: `p` with the settings
// applied as on its PartitionName line (Nodes= expanded against cfg's nodes,
// ALL for every node). The error is the first problem, naming the key.
Result<PartitionConfig> update_partition_config(const ClusterConfig& cfg, const PartitionConfig& p,
                                                const std::vector<std::pair<std::string, std::string>>& settings);

// Whether a partition's Nodes= expression names a NodeSet (Slurm then shows
// the nodes themselves, sorted and ranged, as the partition's Nodes=).
bool names_node_set(const ClusterConfig& cfg, std::string_view expr);

// A configuration file's contents: regular files only, at most
// kMaxConfigFileBytes. Errors: "cannot read PATH: REASON".
Result<std::string> read_config_file(const std::string& path);

}  // namespace drover::config
