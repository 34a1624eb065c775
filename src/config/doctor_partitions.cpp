// Checks of node and partition definitions: partitions naming nodes that do
// not exist, nodes no partition offers, the default partition, nodes defined
// twice, and partition QOS names that no QOS defines.
#include <algorithm>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "config/doctor_internal.hpp"

namespace drover::config::doctor {
namespace {

void undefined_nodes(const Facts& f, Diagnostics& out) {
  std::vector<std::string> known;
  for (std::size_t n : f.unique_nodes) known.push_back(f.cfg.nodes[n].name);
  for (const auto& p : f.cfg.partitions) {
    std::vector<std::string> missing;
    std::set<std::string> seen;
    for (const auto& name : p.nodes) {
      if (!f.defined(name) && seen.insert(name).second) missing.push_back(name);
    }
    if (missing.empty()) continue;
    const auto unreadable = unreadable_node_lines(f.cfg);
    std::string fix = "define them with a NodeName= line or correct the range";
    const bool none_defined = std::none_of(p.nodes.begin(), p.nodes.end(), [&](const std::string& n) { return f.defined(n); });
    if (!unreadable.empty()) {
      fix = "correct the NodeName line that could not be read (" + unreadable.front().str() + "), or " + fix;
    } else if (none_defined) {
      if (auto near = nearest(missing.front(), known)) fix += " (did you mean " + *near + "?)";
    }
    out.add(Severity::kError, "partition-undefined-node", key_loc(p.key_locs, "Nodes", p.loc), "Nodes",
            "partition " + p.name + " names " + hostlist_compress(missing) +
                ", which no NodeName line defines; Slurm refuses to start with such a partition",
            fix)
        .related = unreadable;
  }
}

void nodes_in_no_partition(const Facts& f, Diagnostics& out) {
  if (f.cfg.partitions.empty()) {
    if (!f.unique_nodes.empty()) {
      out.add(Severity::kError, "no-partitions", SourceLoc{f.cfg.slurm_conf_path, 0, 0}, "PartitionName",
              "slurm.conf defines no partition: every job submission is rejected",
              "add a PartitionName= line, e.g. PartitionName=compute Nodes=ALL Default=YES");
    }
    return;
  }
  NodeFindings nf;
  for (std::size_t n : f.unique_nodes) {
    if (!f.partitions_of(n).empty()) continue;
    nf.add(n, Severity::kWarning, "node-in-no-partition", f.cfg.nodes[n].loc, "NodeName",
           "{nodes}: in no partition, so no job can ever run on them",
           "add {nodes} to the Nodes= of the partition for their workload");
  }
  nf.flush(f.cfg, out);
}

void default_partition(const Facts& f, Diagnostics& out) {
  const auto& parts = f.cfg.partitions;
  if (parts.empty()) return;
  std::vector<const PartitionConfig*> defaults;
  for (const auto& p : parts) {
    if (p.is_default) defaults.push_back(&p);
  }
  if (defaults.empty()) {
    out.add(Severity::kWarning, "no-default-partition", parts.front().loc, "Default",
            "no partition says Default=YES: a job submitted without --partition is rejected",
            "mark the partition for everyday work Default=YES (the seed's is compute)");
    return;
  }
  if (defaults.size() == 1) return;
  std::vector<std::string> names;
  for (const auto* p : defaults) names.push_back(p->name);
  auto& d = out.add(Severity::kWarning, "several-default-partitions",
                    key_loc(defaults[1]->key_locs, "Default", defaults[1]->loc), "Default",
                    std::to_string(defaults.size()) + " partitions say Default=YES (" + join(names, ", ") +
                        "); there is only one default: Drover sends jobs without --partition to " + names.front() +
                        " (the first), Slurm to " + names.back() + " (the last)",
                    "keep Default=YES on one partition only");
  for (std::size_t i = 0; i < defaults.size(); ++i) {
    if (i != 1) d.related.push_back(key_loc(defaults[i]->key_locs, "Default", defaults[i]->loc));
  }
}

void duplicate_nodes(const Facts& f, Diagnostics& out) {
  NodeFindings nf;
  for (std::size_t i = 0; i < f.cfg.nodes.size(); ++i) {
    const std::size_t first = f.node_index.at(f.cfg.nodes[i].name);
    if (first == i) continue;
    nf.add(i, Severity::kError, "duplicate-node", f.cfg.nodes[i].loc, "NodeName",
           "{nodes}: already defined on an earlier NodeName line; a node may be defined only once, and Slurm "
           "refuses to start with a duplicate",
           "remove {nodes} from one of the two NodeName lines")
        .related.push_back(f.cfg.nodes[first].loc);
  }
  nf.flush(f.cfg, out);
}

// Partition QOS=/AllowQos= naming a QOS qos.conf does not define. "normal" is
// the QOS every Slurm site has, so it never counts as unknown.
void partition_qos(const Facts& f, Diagnostics& out) {
  const auto& cfg = f.cfg;
  if (cfg.qos.empty() && cfg.qos_conf_path.empty()) return;
  auto known = [&](const std::string& q) { return q == "normal" || cfg.find_qos(q) != nullptr; };
  std::vector<std::string> defined;
  for (const auto& q : cfg.qos) defined.push_back(q.name);
  for (const auto& p : cfg.partitions) {
    if (!p.qos.empty() && !known(p.qos)) {
      std::string fix = "define QOS " + p.qos + " in qos.conf or correct the name";
      if (auto near = nearest(p.qos, defined)) fix += " (did you mean " + *near + "?)";
      out.add(Severity::kWarning, "partition-unknown-qos", key_loc(p.key_locs, "QOS", p.loc), "QOS",
              "partition " + p.name + ": QOS=" + p.qos + " names no defined QOS, so no partition QOS limits apply",
              fix);
    }
    std::vector<std::string> unknown;
    for (const auto& q : p.allow_qos) {
      if (!iequals(q, "ALL") && !known(q)) unknown.push_back(q);
    }
    if (unknown.empty()) continue;
    const bool none_left = unknown.size() == p.allow_qos.size();
    out.add(Severity::kWarning, "partition-unknown-qos", key_loc(p.key_locs, "AllowQos", p.loc), "AllowQos",
            "partition " + p.name + ": AllowQos names " + join(unknown, ",") + ", which no QOS defines" +
                (none_left ? "; no job can use this partition" : ""),
            "define " + join(unknown, ",") + " in qos.conf or correct AllowQos");
  }
}

}  // namespace

void check_partitions(const Facts& f, Diagnostics& out) {
  duplicate_nodes(f, out);
  undefined_nodes(f, out);
  nodes_in_no_partition(f, out);
  default_partition(f, out);
  partition_qos(f, out);
}

}  // namespace drover::config::doctor
