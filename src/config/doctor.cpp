// The config doctor's entry point and the helpers its check groups share.
//
// How the seed's checklist (section 7) maps onto the checks, for the items
// that can be judged from the files alone:
//   slurm.conf/gres.conf agree ........ doctor_gres.cpp (counts, types, missing
//                                       or unknown lines, GresTypes)
//   partitions by workload ............ doctor_partitions.cpp, doctor_gpu.cpp
//   QOS + backfill + multifactor ...... doctor_policy.cpp, doctor_qos.cpp
//   GPU jobs exclusive or isolated .... doctor_gres.cpp (device files for
//                                       binding), doctor_gpu.cpp (shared GPUs)
//   GPU models told apart by Feature .. doctor_gpu.cpp
// The hardware items (SXM Fabric Manager and driver versions) need the node
// itself: the node agent reports them, the doctor does not guess.
#include "config/doctor.hpp"

#include <algorithm>
#include <set>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "config/doctor_internal.hpp"

namespace drover::config {

Diagnostics check_config(const ClusterConfig& cfg) {
  const doctor::Facts facts(cfg);
  Diagnostics out;
  doctor::check_gres(facts, out);
  doctor::check_partitions(facts, out);
  doctor::check_policy(facts, out);
  doctor::check_gpu_layout(facts, out);
  doctor::check_nodes(facts, out);
  doctor::check_qos(facts, out);
  return out;
}

Diagnostics fatal_findings(const ClusterConfig& cfg) {
  // The codes of the findings Slurm 22.05's slurmctld stops at (checked on
  // the anchor's Slurm: "fatal: Invalid node names in partition zz",
  // "Duplicated NodeName cpu01 in the config file", "Invalid SlurmctldDebug
  // foo", "DebugFlags invalid: Nosuch").
  static const std::set<std::string> kFatal = {"partition-undefined-node", "duplicate-node", "debug-level-unknown",
                                               "debug-flag-unknown"};
  const Diagnostics all = check_config(cfg);  // named: a temporary's items() would dangle in the loop
  Diagnostics out;
  for (const auto& d : all.items()) {
    if (d.severity == Severity::kError && kFatal.count(d.code)) out.items().push_back(d);
  }
  return out;
}

Diagnostics start_errors(const ClusterConfig& cfg) {
  Diagnostics out;
  for (const auto& d : cfg.diags.items()) {
    if (d.severity == Severity::kError) out.items().push_back(d);
  }
  out.append(fatal_findings(cfg));
  return out;
}

namespace doctor {

bool autodetect_on(const std::string& value) { return !value.empty() && !iequals(value, "off"); }

Facts::Facts(const ClusterConfig& c)
    : cfg(c), gres_lines_of_node_(c.nodes.size()), partitions_of_node_(c.nodes.size()) {
  for (std::size_t i = 0; i < c.nodes.size(); ++i) {
    if (node_index.emplace(c.nodes[i].name, i).second) unique_nodes.push_back(i);
  }
  for (std::size_t l = 0; l < c.gres_lines.size(); ++l) {
    const GresLine& line = c.gres_lines[l];
    if (line.node_expr.empty() && line.nodes.empty()) {
      for (std::size_t n : unique_nodes) gres_lines_of_node_[n].push_back(l);
      continue;
    }
    std::set<std::size_t> seen;
    for (const auto& name : line.nodes) {
      auto it = node_index.find(name);
      if (it != node_index.end() && seen.insert(it->second).second) gres_lines_of_node_[it->second].push_back(l);
    }
  }
  for (std::size_t p = 0; p < c.partitions.size(); ++p) {
    for (std::size_t n : partition_nodes(c.partitions[p])) partitions_of_node_[n].push_back(p);
  }
  std::set<std::pair<std::string, int>> node_lines;
  for (const auto& n : c.nodes) node_lines.emplace(n.loc.file, n.loc.line);
  for (const auto& d : c.diags.items()) {
    std::pair<std::string, int> at{d.loc.file, d.loc.line};
    if (d.severity == Severity::kError && node_lines.count(at)) error_lines_.insert(at);
  }
}

bool Facts::node_line_unreadable(std::size_t node) const {
  return error_lines_.count({cfg.nodes[node].loc.file, cfg.nodes[node].loc.line}) > 0;
}

bool Facts::autodetected(std::size_t node) const {
  bool line_says_off = false;
  for (std::size_t l : gres_lines_of(node)) {
    const std::string& a = cfg.gres_lines[l].autodetect;
    if (autodetect_on(a)) return true;
    if (iequals(a, "off")) line_says_off = true;
  }
  return !line_says_off && autodetect_on(cfg.gres_autodetect);
}

GresCounts Facts::declared(std::size_t node, const std::string& gres) const {
  GresCounts g;
  for (const auto& spec : cfg.nodes[node].gres) {
    if (!iequals(spec.name, gres)) continue;
    g.by_type[spec.type] += spec.count;
    g.total += spec.count;
  }
  return g;
}

GresCounts Facts::from_gres_conf(std::size_t node, const std::string& gres) const {
  GresCounts g;
  for (std::size_t l : gres_lines_of(node)) {
    const GresLine& line = cfg.gres_lines[l];
    if (!iequals(line.name, gres)) continue;
    g.by_type[line.type] += line.device_count();
    g.total += line.device_count();
  }
  return g;
}

std::set<std::string> Facts::gpu_models(std::size_t node) const {
  std::set<std::string> models;
  for (const auto& [type, count] : declared(node, "gpu").by_type) {
    if (!type.empty() && count > 0) models.insert(type);
  }
  if (!models.empty()) return models;
  for (const auto& [type, count] : from_gres_conf(node, "gpu").by_type) {
    if (!type.empty() && count > 0) models.insert(type);
  }
  return models;
}

std::vector<std::size_t> Facts::partition_nodes(const PartitionConfig& p) const {
  if (iequals(p.nodes_expr, "ALL")) return unique_nodes;
  std::vector<std::size_t> out;
  std::set<std::size_t> seen;
  for (const auto& name : p.nodes) {
    auto it = node_index.find(name);
    if (it != node_index.end() && seen.insert(it->second).second) out.push_back(it->second);
  }
  return out;
}

SourceLoc key_loc(const KeyLocs& locs, const std::string& key, const SourceLoc& fallback) {
  auto it = locs.find(key);
  return it != locs.end() && it->second.known() ? it->second : fallback;
}

bool global_written(const ClusterConfig& cfg, const std::string& key) {
  return cfg.globals_written.count(key) > 0;
}

SourceLoc global_loc(const ClusterConfig& cfg, const std::string& key) {
  auto it = cfg.globals_written.find(key);
  if (it != cfg.globals_written.end() && it->second.second.known()) return it->second.second;
  return SourceLoc{cfg.slurm_conf_path, 0, 0};
}

std::vector<SourceLoc> unreadable_node_lines(const ClusterConfig& cfg) {
  std::vector<SourceLoc> out;
  for (const auto& d : cfg.diags.items()) {
    if (d.severity != Severity::kError || d.key != "NodeName") continue;
    if (d.loc.file == cfg.gres_conf_path || d.loc.file == cfg.qos_conf_path) continue;
    out.push_back(d.loc);
  }
  return out;
}

std::string nodes_str(const ClusterConfig& cfg, const std::vector<std::size_t>& nodes) {
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (std::size_t n : nodes) names.push_back(cfg.nodes[n].name);
  return hostlist_compress(names);
}

std::string gres_counts_str(const std::string& gres, const GresCounts& g) {
  std::vector<std::string> parts;
  for (const auto& [type, count] : g.by_type) {
    parts.push_back(gres + ":" + (type.empty() ? "" : type + ":") + std::to_string(count));
  }
  return parts.empty() ? gres + ":0" : join(parts, ",");
}

std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

Diagnostic& NodeFindings::add(std::size_t node, Severity sev, std::string code, SourceLoc loc, std::string key,
                              std::string message, std::string fix) {
  entries_.push_back(Entry{Diagnostic{sev, std::move(code), std::move(loc), std::move(key), std::move(message),
                                      std::move(fix), {}},
                           {node}});
  return entries_.back().diag;
}

namespace {
// Identity of a finding apart from the nodes it is about.
std::string signature(const Diagnostic& d) {
  std::string sig = std::to_string(static_cast<int>(d.severity));
  for (const std::string* part : {&d.code, &d.key, &d.message, &d.fix}) sig += '\x1f' + *part;
  sig += '\x1f' + d.loc.str();
  for (const auto& r : d.related) sig += '\x1f' + r.str();
  return sig;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (auto pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
}
}  // namespace

void NodeFindings::flush(const ClusterConfig& cfg, Diagnostics& out) {
  std::vector<Entry> merged;
  std::map<std::string, std::size_t> index;  // signature -> position in merged
  for (auto& e : entries_) {
    auto [it, fresh] = index.emplace(signature(e.diag), merged.size());
    if (fresh) {
      merged.push_back(std::move(e));
    } else {
      auto& nodes = merged[it->second].nodes;
      nodes.insert(nodes.end(), e.nodes.begin(), e.nodes.end());
    }
  }
  for (auto& m : merged) {
    const std::string list = nodes_str(cfg, m.nodes);
    replace_all(m.diag.message, "{nodes}", list);
    replace_all(m.diag.fix, "{nodes}", list);
    out.items().push_back(std::move(m.diag));
  }
  entries_.clear();
}

}  // namespace doctor
}  // namespace drover::config
