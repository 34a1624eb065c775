// Checks that slurm.conf's Gres= and gres.conf agree — the seed's pitfall
// no. 1 ("job stuck PENDING (Resources) forever"). A node whose gres.conf
// devices fall short of its Gres= registers fewer GPUs than configured and is
// drained (Slurm: "gres/gpu count reported lower than configured"); a GPU
// without a device file is dropped by Slurm's gpu plugin altogether.
#include <algorithm>
#include <cctype>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "config/doctor_internal.hpp"

namespace drover::config::doctor {
namespace {

std::string describe_line(const GresLine& line) {
  if (!line.files.empty()) return "File=" + hostlist_compress(line.files);
  if (line.count) return "Count=" + std::to_string(*line.count);
  return "neither File= nor Count=, so one device";
}

std::vector<std::size_t> lines_named(const Facts& f, std::size_t node, const std::string& gres) {
  std::vector<std::size_t> out;
  for (std::size_t l : f.gres_lines_of(node)) {
    if (iequals(f.cfg.gres_lines[l].name, gres)) out.push_back(l);
  }
  return out;
}

std::string describe_lines(const Facts& f, const std::vector<std::size_t>& lines) {
  std::vector<std::string> parts;
  for (std::size_t l : lines) parts.push_back(describe_line(f.cfg.gres_lines[l]));
  return join(parts, "; ");
}

std::vector<SourceLoc> line_locs(const Facts& f, const std::vector<std::size_t>& lines) {
  std::vector<SourceLoc> out;
  for (std::size_t l : lines) out.push_back(f.cfg.gres_lines[l].loc);
  return out;
}

// A device-file range to suggest, in the style of the files already written:
// "/dev/nvidia[0-7]" for 8 devices.
std::string device_files(const Facts& f, const std::vector<std::size_t>& lines, int64_t count) {
  std::string prefix = "/dev/nvidia";
  for (std::size_t l : lines) {
    const auto& files = f.cfg.gres_lines[l].files;
    if (files.empty()) continue;
    prefix = files.front();
    while (!prefix.empty() && std::isdigit(static_cast<unsigned char>(prefix.back()))) prefix.pop_back();
    break;
  }
  if (count <= 1) return prefix + "0";
  return prefix + "[0-" + std::to_string(count - 1) + "]";
}

std::string gres_name_list(const std::vector<std::string>& names) { return join(names, ","); }

// --- GresTypes ---

void check_gres_types(const Facts& f, Diagnostics& out) {
  const auto& cfg = f.cfg;
  auto listed = [&](const std::string& name) {
    return std::any_of(cfg.gres_types.begin(), cfg.gres_types.end(),
                       [&](const std::string& t) { return iequals(t, name); });
  };
  std::vector<std::string> order;
  std::map<std::string, std::vector<SourceLoc>> uses;
  auto record = [&](const std::string& name, const SourceLoc& loc) {
    if (listed(name)) return;
    auto [it, fresh] = uses.try_emplace(name);
    if (fresh) order.push_back(name);
    for (const auto& seen : it->second) {
      if (seen.str() == loc.str()) return;
    }
    it->second.push_back(loc);
  };
  for (std::size_t n : f.unique_nodes) {
    for (const auto& spec : cfg.nodes[n].gres) record(spec.name, key_loc(cfg.nodes[n].key_locs, "Gres", cfg.nodes[n].loc));
  }
  for (const auto& line : cfg.gres_lines) record(line.name, key_loc(line.key_locs, "Name", line.loc));
  for (const auto& name : order) {
    const auto& locs = uses[name];
    std::vector<std::string> wanted = cfg.gres_types;
    wanted.push_back(name);
    std::string where = cfg.gres_types.empty() ? "GresTypes is not set"
                                               : "GresTypes=" + gres_name_list(cfg.gres_types) + " does not list it";
    auto& d = out.add(Severity::kError, "gres-type-undeclared", locs.front(), "GresTypes",
                      "gres '" + name + "' is used here but " + where +
                          "; a gres name GresTypes does not declare is invalid, so no job can be given a " + name,
                      "declare it in slurm.conf: GresTypes=" + gres_name_list(wanted));
    d.related.assign(locs.begin() + 1, locs.end());
    if (global_written(cfg, "GresTypes")) d.related.push_back(global_loc(cfg, "GresTypes"));
  }
}

// --- node lines against gres.conf ---

void missing_gpu_lines(const Facts& f, std::size_t n, const GresCounts& decl, NodeFindings& nf) {
  const auto& node = f.cfg.nodes[n];
  const bool have_file = !f.cfg.gres_conf_path.empty();
  std::string type = decl.by_type.size() == 1 && !decl.by_type.begin()->first.empty()
                         ? " Type=" + decl.by_type.begin()->first
                         : "";
  nf.add(n, Severity::kError, "gres-conf-missing", key_loc(node.key_locs, "Gres", node.loc), "Gres",
         "{nodes}: Gres=" + gres_counts_str("gpu", decl) + " but " +
             (have_file ? "gres.conf has no gpu line for these nodes" : "there is no gres.conf") +
             "; a GPU needs its device file (Slurm drops file-less GPUs), so each node registers 0 < " +
             std::to_string(decl.total) + " GPUs and is drained, and jobs that need them stay PENDING forever",
         std::string(have_file ? "add to gres.conf: " : "create gres.conf beside slurm.conf with: ") +
             "NodeName={nodes} Name=gpu" + type + " File=" + device_files(f, {}, decl.total) +
             " (or AutoDetect=nvml)");
}

void count_mismatch(const Facts& f, std::size_t n, const std::string& gres, const GresCounts& decl,
                    const GresCounts& found, const std::vector<std::size_t>& lines, NodeFindings& nf) {
  const auto& node = f.cfg.nodes[n];
  const SourceLoc loc = key_loc(node.key_locs, "Gres", node.loc);
  const std::string d = std::to_string(decl.total), g = std::to_string(found.total);
  const bool has_files = std::any_of(lines.begin(), lines.end(),
                                     [&](std::size_t l) { return !f.cfg.gres_lines[l].files.empty(); });
  const std::string give_all =
      has_files || iequals(gres, "gpu") ? "File=" + device_files(f, lines, decl.total) : "Count=" + d;
  // The node-line spelling to suggest keeps a single declared type: gpu:h100:4.
  const std::string type = decl.by_type.size() == 1 ? decl.by_type.begin()->first : "";
  const std::string agree = "make the two agree: Gres=" + gres + ":" + (type.empty() ? "" : type + ":") + g +
                            " on the node line if each node has " + g;
  Diagnostic* diag;
  if (decl.total > found.total) {
    diag = &nf.add(n, Severity::kError, "gres-count-mismatch", loc, "Gres",
                   "{nodes}: Gres=" + gres_counts_str(gres, decl) + " declares " + d + " per node but gres.conf gives " +
                       g + " (" + describe_lines(f, lines) + "); each node registers " + g + " < " + d +
                       " and is drained, so jobs that need its " + gres + " stay PENDING (Resources) forever",
                   agree + ", or give gres.conf all " + d + " (" + give_all + ")");
  } else {
    const int64_t extra = found.total - decl.total;
    diag = &nf.add(n, Severity::kWarning, "gres-count-mismatch", loc, "Gres",
                   "{nodes}: Gres=" + gres_counts_str(gres, decl) + " declares " + d + " per node but gres.conf gives " +
                       g + " (" + describe_lines(f, lines) + "); only the " + d + " declared " +
                       (decl.total == 1 ? "is" : "are") + " ever scheduled, the other " + std::to_string(extra) +
                       (extra == 1 ? " stays" : " stay") + " idle",
                   agree + ", or list only " + d + " in gres.conf");
  }
  diag->related = line_locs(f, lines);
}

std::map<std::string, int64_t> typed_only(const GresCounts& g) {
  std::map<std::string, int64_t> out;
  for (const auto& [type, count] : g.by_type) {
    if (!type.empty() && count > 0) out[type] = count;
  }
  return out;
}

void type_mismatch(const Facts& f, std::size_t n, const std::string& gres, const GresCounts& decl,
                   const GresCounts& found, const std::vector<std::size_t>& lines, NodeFindings& nf) {
  const auto declared_types = typed_only(decl), given_types = typed_only(found);
  if (declared_types.empty() || declared_types == given_types) return;
  const auto& node = f.cfg.nodes[n];
  const SourceLoc loc = key_loc(node.key_locs, "Gres", node.loc);
  const auto& [type, count] = *declared_types.begin();
  Diagnostic* diag;
  if (given_types.empty()) {
    diag = &nf.add(n, Severity::kWarning, "gres-type-missing", loc, "Gres",
                   "{nodes}: Gres=" + gres_counts_str(gres, decl) + " names a type but gres.conf gives untyped " +
                       gres_counts_str(gres, found) + " (no Type=); the declared type cannot be matched to the devices",
                   "add Type=" + type + " to the gres.conf line");
  } else {
    auto it = given_types.find(type);
    const int64_t have = it == given_types.end() ? 0 : it->second;
    diag = &nf.add(n, Severity::kError, "gres-type-mismatch", loc, "Gres",
                   "{nodes}: Gres=" + gres_counts_str(gres, decl) + " but gres.conf gives " +
                       gres_counts_str(gres, found) + "; the types disagree, so each node registers " +
                       std::to_string(have) + " < " + std::to_string(count) + " " + gres + ":" + type +
                       " and is drained",
                   "use the same type name in both files: Gres=" + gres_counts_str(gres, found) +
                       " on the node line, or Type=" + type + " in gres.conf");
  }
  diag->related = line_locs(f, lines);
}

// gres.conf gives a node a gres its node line does not declare (explicit NodeName= only:
// a line without NodeName= is the usual shared file and applies where it matches).
void undeclared_gres(const Facts& f, std::size_t n, NodeFindings& nf) {
  for (std::size_t l : f.gres_lines_of(n)) {
    const GresLine& line = f.cfg.gres_lines[l];
    if (line.node_expr.empty() || line.name.empty() || f.declared(n, line.name).total > 0) continue;
    nf.add(n, Severity::kWarning, "gres-conf-undeclared", line.loc, "NodeName",
           "gres.conf gives " + line.name + " to {nodes}, whose node lines declare no Gres=" + line.name +
               "; these devices are never scheduled",
           "add Gres=" + line.name + ":" + std::to_string(line.device_count()) +
               " to the node line, or take {nodes} out of this gres.conf line");
  }
}

std::vector<std::string> declared_names(const NodeConfig& node) {
  std::vector<std::string> names;
  for (const auto& spec : node.gres) {
    bool seen = std::any_of(names.begin(), names.end(), [&](const std::string& s) { return iequals(s, spec.name); });
    if (!seen) names.push_back(spec.name);
  }
  return names;
}

void check_node_gres(const Facts& f, Diagnostics& out) {
  NodeFindings nf;
  for (std::size_t n : f.unique_nodes) {
    if (f.autodetected(n)) continue;
    for (const auto& gres : declared_names(f.cfg.nodes[n])) {
      const GresCounts decl = f.declared(n, gres);
      if (decl.total == 0) continue;
      const auto lines = lines_named(f, n, gres);
      if (lines.empty()) {
        if (iequals(gres, "gpu")) missing_gpu_lines(f, n, decl, nf);
        continue;
      }
      const GresCounts found = f.from_gres_conf(n, gres);
      if (found.total != decl.total) {
        count_mismatch(f, n, gres, decl, found, lines, nf);
      } else {
        type_mismatch(f, n, gres, decl, found, lines, nf);
      }
    }
    if (!f.node_line_unreadable(n)) undeclared_gres(f, n, nf);
  }
  nf.flush(f.cfg, out);
}

// --- gres.conf lines on their own ---

std::vector<std::size_t> defined_nodes_of(const Facts& f, const GresLine& line) {
  std::vector<std::size_t> out;
  if (line.node_expr.empty() && line.nodes.empty()) return f.unique_nodes;
  for (const auto& name : line.nodes) {
    auto it = f.node_index.find(name);
    if (it != f.node_index.end()) out.push_back(it->second);
  }
  return out;
}

void fileless_gpu_line(const Facts& f, const GresLine& line, Diagnostics& out) {
  if (!iequals(line.name, "gpu") || !line.files.empty()) return;
  if (autodetect_on(line.autodetect) || (line.autodetect.empty() && autodetect_on(f.cfg.gres_autodetect))) return;
  const auto nodes = defined_nodes_of(f, line);
  if (nodes.empty()) return;
  // Without Count= either, suggest as many files as the nodes declare GPUs.
  int64_t devices = line.device_count();
  if (!line.count) {
    for (std::size_t n : nodes) devices = std::max(devices, f.declared(n, "gpu").total);
  }
  out.add(Severity::kError, "gres-gpu-no-file", line.loc, "File",
          "gres.conf gives gpu to " + nodes_str(f.cfg, nodes) + " with no File= (" + describe_line(line) +
              "); Slurm drops a GPU without a device file, so these nodes register 0 GPUs and are drained, and "
              "without device files no job could be bound to its own GPUs (CUDA_VISIBLE_DEVICES)",
          "list the device files: File=" + device_files(f, {}, devices) + " (or AutoDetect=nvml)");
}

void unknown_nodes_line(const Facts& f, const GresLine& line, Diagnostics& out) {
  std::vector<std::string> unknown;
  for (const auto& name : line.nodes) {
    if (!f.defined(name)) unknown.push_back(name);
  }
  if (unknown.empty()) return;
  std::vector<std::string> known;
  for (std::size_t n : f.unique_nodes) known.push_back(f.cfg.nodes[n].name);
  const bool all = unknown.size() == line.nodes.size();
  std::string fix = "correct NodeName= to nodes slurm.conf defines";
  if (all) {
    if (auto near = nearest(unknown.front(), known)) fix += " (did you mean " + *near + "?)";
  }
  out.add(Severity::kWarning, "gres-conf-unknown-node", key_loc(line.key_locs, "NodeName", line.loc), "NodeName",
          "gres.conf names " + hostlist_compress(unknown) + ", which slurm.conf does not define; " +
              (all ? "this line has no effect" : "the line does nothing for them"),
          fix + ", or remove " + (all ? "the line" : "them"));
}

}  // namespace

void check_gres(const Facts& f, Diagnostics& out) {
  check_gres_types(f, out);
  check_node_gres(f, out);
  for (const auto& line : f.cfg.gres_lines) {
    fileless_gpu_line(f, line, out);
    unknown_nodes_line(f, line, out);
  }
}

}  // namespace drover::config::doctor
