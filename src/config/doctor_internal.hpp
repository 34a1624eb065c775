// Internals of the config doctor (doctor*.cpp only): facts derived once from
// a ClusterConfig, location and formatting helpers, a collector that merges
// the same finding on many nodes into one diagnostic, and the check groups.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/diagnostic.hpp"
#include "config/model.hpp"

namespace drover::config::doctor {

// One gres (e.g. gpu) of one node, by type ("" = untyped) and in total.
struct GresCounts {
  std::map<std::string, int64_t> by_type;
  int64_t total = 0;
};

// What the checks need to know beyond the raw model, computed once.
class Facts {
 public:
  explicit Facts(const ClusterConfig& cfg);

  const ClusterConfig& cfg;
  // Index of each node's first definition; `unique_nodes` lists those indices
  // in definition order (a node defined twice appears once).
  std::map<std::string, std::size_t> node_index;
  std::vector<std::size_t> unique_nodes;

  bool defined(const std::string& node) const { return node_index.count(node) > 0; }
  // gres.conf lines that apply to a node (NodeName= naming it, or no NodeName=).
  const std::vector<std::size_t>& gres_lines_of(std::size_t node) const { return gres_lines_of_node_[node]; }
  // Whether the node's gres come from hardware detection (AutoDetect other than off).
  bool autodetected(std::size_t node) const;
  // A gres as declared on the node line (Gres=gpu:h100:8).
  GresCounts declared(std::size_t node, const std::string& gres) const;
  // A gres as gres.conf gives it to the node (device files, else Count, per line).
  GresCounts from_gres_conf(std::size_t node, const std::string& gres) const;
  bool is_gpu_node(std::size_t node) const { return declared(node, "gpu").total > 0; }
  // GPU models of a node: typed Gres= on the node line, else gres.conf Type=.
  std::set<std::string> gpu_models(std::size_t node) const;
  // A partition's nodes that are defined, deduplicated, in order (Nodes=ALL: every node).
  std::vector<std::size_t> partition_nodes(const PartitionConfig& p) const;
  // Whether the parser rejected a value on this node's line: its values may
  // be defaults rather than what the admin meant, so derived findings about
  // it would only echo the parser's error.
  bool node_line_unreadable(std::size_t node) const;
  bool any_node_line_unreadable() const { return !error_lines_.empty(); }
  // Partitions a node belongs to, by partition index.
  const std::vector<std::size_t>& partitions_of(std::size_t node) const { return partitions_of_node_[node]; }

 private:
  std::vector<std::vector<std::size_t>> gres_lines_of_node_;
  std::vector<std::vector<std::size_t>> partitions_of_node_;
  std::set<std::pair<std::string, int>> error_lines_;  // (file, line) of parser errors on node lines
};

// AutoDetect= values that detect hardware (anything but empty or "off").
bool autodetect_on(const std::string& value);
// A key's own location if the entity recorded one, else the entity's line.
SourceLoc key_loc(const KeyLocs& locs, const std::string& key, const SourceLoc& fallback);
// Where a slurm.conf global was written; slurm.conf itself (no line) if it was not.
SourceLoc global_loc(const ClusterConfig& cfg, const std::string& key);
bool global_written(const ClusterConfig& cfg, const std::string& key);
// NodeName lines of slurm.conf the parser rejected (their nodes are missing
// from the model, so findings about "undefined" nodes should point at them).
std::vector<SourceLoc> unreadable_node_lines(const ClusterConfig& cfg);
// Compressed host list of the given node indices, in the given order.
std::string nodes_str(const ClusterConfig& cfg, const std::vector<std::size_t>& nodes);
// "gpu:8" or "gpu:a100:4,gpu:h100:4" (untyped first, then types in order).
std::string gres_counts_str(const std::string& gres, const GresCounts& g);
// "1,234" for readability in messages about large totals.
std::string with_commas(int64_t n);

// Collects one finding per node and merges nodes that got the same finding
// (same code, location, message, fix and related locations) into one
// diagnostic. "{nodes}" in the message or fix is replaced by the compressed
// list of the merged nodes. Output keeps the order of first appearance.
class NodeFindings {
 public:
  Diagnostic& add(std::size_t node, Severity sev, std::string code, SourceLoc loc, std::string key,
                  std::string message, std::string fix = {});
  void flush(const ClusterConfig& cfg, Diagnostics& out);

 private:
  struct Entry {
    Diagnostic diag;
    std::vector<std::size_t> nodes;
  };
  std::vector<Entry> entries_;
};

// The check groups, each appending its findings in a deterministic order.
void check_gres(const Facts& f, Diagnostics& out);        // doctor_gres.cpp
void check_partitions(const Facts& f, Diagnostics& out);  // doctor_partitions.cpp
void check_policy(const Facts& f, Diagnostics& out);      // doctor_policy.cpp
void check_gpu_layout(const Facts& f, Diagnostics& out);  // doctor_gpu.cpp
void check_nodes(const Facts& f, Diagnostics& out);       // doctor_nodes.cpp
void check_qos(const Facts& f, Diagnostics& out);         // doctor_qos.cpp

}  // namespace drover::config::doctor
