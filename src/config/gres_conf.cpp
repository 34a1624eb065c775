// gres.conf: one line per device group, optionally limited to NodeName
// nodes; a line with only AutoDetect= sets the global AutoDetect.
#include <algorithm>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "config/lexer.hpp"
#include "config/line_apply.hpp"
#include "config/parse.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

const char* const kWhere = "in gres.conf";

std::optional<OtherSection> gres_elsewhere(std::string_view key) {
  if (iequals(key, "Gres")) {
    return OtherSection{"a slurm.conf NodeName option", "in gres.conf write Name=gpu Type=... File=... instead"};
  }
  return std::nullopt;
}

// `expanded` counts node names over all gres.conf lines, bounded like partitions' members.
bool expand_gres_nodes(GresLine& g, const Word* node_word, const ClusterConfig& cfg, Diagnostics& diags,
                       std::size_t& expanded) {
  std::size_t own = g.files.size() + g.cores.size();
  expanded += own;
  std::size_t room = kMaxPartitionMembers - std::min(kMaxPartitionMembers, expanded);
  if (own > 0 && room == 0) {
    diags.add(Severity::kError, "bad-value", g.loc, "File",
              "gres.conf lines list more than " + std::to_string(kMaxPartitionMembers) +
                  " nodes, files and cores in all; this line is ignored");
    return false;
  }
  if (g.node_expr.empty()) {
    if (cfg.nodes.size() > room) {
      diags.add(Severity::kError, "bad-value", g.loc, "NodeName",
                "gres.conf lines name more than " + std::to_string(kMaxPartitionMembers) +
                    " nodes in all; this line is ignored");
      return false;
    }
    for (const auto& n : cfg.nodes) g.nodes.push_back(n.name);
    expanded += g.nodes.size();
    return true;
  }
  auto names = hostlist_expand(g.node_expr, std::min(room, kMaxNodes));
  if (!names) {
    report_bad_value(diags, *node_word, "NodeName",
                     "expected a host list such as gpu[01-32] (" + names.error().message + ")");
    return false;
  }
  g.nodes = std::move(*names);
  expanded += g.nodes.size();
  return true;
}

void handle_line(const LogicalLine& line, ClusterConfig& cfg, PassiveSeen& passive, std::size_t& expanded) {
  GresLine g;
  g.loc = line.loc;
  std::set<std::string> seen;
  const Word* node_word = nullptr;
  bool node_given = false;
  for (const auto& w : line.words) {
    node_given = node_given || iequals(w.key, "NodeName");
    const KeyDef<GresLine>* def = nullptr;
    if (apply_word(gres_keys(), g, w, kWhere, seen, cfg.diags, passive, gres_elsewhere, &def) != Applied::kStored) {
      continue;
    }
    g.key_locs[def->name] = w.key_loc;
    if (def->name == "NodeName") node_word = &w;
  }
  bool has_name = g.key_locs.count("Name") > 0;
  bool has_auto = g.key_locs.count("AutoDetect") > 0;
  if (!has_name && has_auto && !node_given) {
    cfg.gres_autodetect = g.autodetect;
    return;
  }
  if (!has_name && !has_auto) {
    if (g.key_locs.empty()) return;  // every word was rejected and reported
    cfg.diags.add(Severity::kError, "missing-key", line.loc, "Name",
                  "gres.conf line has no Name= (the generic resource it describes); it is ignored",
                  "add Name=gpu (or the resource's name listed in GresTypes)");
    return;
  }
  if (node_given && !node_word) return;  // its NodeName was rejected (reported): apply it nowhere
  if (!expand_gres_nodes(g, node_word, cfg, cfg.diags, expanded)) return;
  cfg.gres_lines.push_back(std::move(g));
}

}  // namespace

void parse_gres_conf_text(std::string_view text, std::string_view file_name, ClusterConfig& cfg) {
  cfg.gres_conf_path = std::string(file_name);
  cfg.files_read.emplace_back(file_name);
  std::size_t expanded = 0;
  for_each_line(text, file_name, cfg.diags, [&cfg, &expanded](const LogicalLine& line, PassiveSeen& passive) {
    handle_line(line, cfg, passive, expanded);
  });
}

}  // namespace drover::config
