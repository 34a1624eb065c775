// slurm.conf: global lines, NodeName lines, PartitionName lines, Include.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "config/lexer.hpp"
#include "config/line_apply.hpp"
#include "config/node_ports.hpp"
#include "config/parse.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

namespace fs = std::filesystem;

const char* const kGlobalWhere = "on a global line of slurm.conf";
const char* const kNodeWhere = "on a NodeName line";
const char* const kPartitionWhere = "on a PartitionName line";

// Values of NodeName lines that may list one value per node.
const char* const kPerNodeKeys[] = {"NodeHostname", "NodeAddr", "Port"};

struct NodeTemplate {
  NodeConfig node;
  std::map<std::string, Word> per_node;  // kPerNodeKeys as written
};

std::optional<OtherSection> find_elsewhere(std::string_view key, const std::string& here) {
  if (here != "global" && (global_keys().find(key) || global_keys().find_passive(key))) {
    return OtherSection{"a global slurm.conf option", "move it to a line of its own, outside NodeName/PartitionName lines"};
  }
  if (here != "node" && (node_keys().find(key) || node_keys().find_passive(key))) {
    return OtherSection{"a NodeName option", "move it onto the NodeName line(s) it describes, or delete it"};
  }
  if (here != "partition" && (partition_keys().find(key) || partition_keys().find_passive(key))) {
    return OtherSection{"a PartitionName option", "move it onto the PartitionName line(s) it should apply to, or delete it"};
  }
  return std::nullopt;
}

// Nodes= split at the commas outside brackets, each item trimmed.
std::vector<std::string_view> top_level_items(std::string_view expr) {
  std::vector<std::string_view> items;
  int depth = 0;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= expr.size(); ++i) {
    const char ch = i < expr.size() ? expr[i] : ',';
    if (ch == '[') ++depth;
    if (ch == ']') --depth;
    if (ch == ',' && depth <= 0) {
      items.push_back(trim(expr.substr(from, i - from)));
      from = i + 1;
    }
  }
  return items;
}

// A partition's Nodes=: host lists, NodeSet names (their Nodes= and every
// node with their Feature=) and ALL, separated by commas, each node once.
// Without a node set name (or ALL) it is one host list, expanded as written.
Result<std::vector<std::string>> partition_members(const ClusterConfig& cfg, std::string_view expr,
                                                   std::size_t room) {
  const std::vector<std::string_view> items = top_level_items(expr);
  auto find_set = [&](std::string_view name) -> const NodeSetConfig* {
    for (const auto& set : cfg.node_sets) {
      if (set.name == name) return &set;
    }
    return nullptr;
  };
  const bool named_set = std::any_of(items.begin(), items.end(), [&](std::string_view item) {
    return find_set(item) != nullptr || iequals(item, "ALL");
  });
  if (!named_set) return hostlist_expand(expr, room);
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& name) {
    if (seen.insert(name).second) out.push_back(name);
  };
  for (std::string_view item : items) {
    if (item.empty()) continue;
    const NodeSetConfig* set = find_set(item);
    if (iequals(item, "ALL")) {
      for (const auto& n : cfg.nodes) add(n.name);
    } else if (set) {
      if (!set->nodes_expr.empty()) {
        auto names = hostlist_expand(set->nodes_expr, room);
        if (!names) return make_error("node set " + set->name + ": " + names.error().message);
        for (const auto& n : *names) add(n);
      }
      if (!set->feature.empty()) {
        for (const auto& n : cfg.nodes) {
          if (std::find(n.features.begin(), n.features.end(), set->feature) != n.features.end()) add(n.name);
        }
      }
    } else {
      auto names = hostlist_expand(item, room);
      if (!names) return names.error();
      for (const auto& n : *names) add(n);
    }
    if (out.size() > room) return make_error("more than " + std::to_string(room) + " node names");
  }
  return out;
}

class SlurmConfParser {
 public:
  SlurmConfParser(ClusterConfig& cfg, const ParseOptions& opts)
      : cfg_(cfg),
        opts_(opts),
        max_nodes_(opts.max_nodes ? std::min(opts.max_nodes, kMaxNodes) : kMaxNodes),
        max_members_(opts.max_partition_members ? std::min(opts.max_partition_members, kMaxPartitionMembers)
                                                : kMaxPartitionMembers) {}

  void parse_file_text(std::string_view text, const std::string& file, int depth) {
    cfg_.files_read.push_back(file);
    include_stack_.push_back(canonical(file));
    static constexpr std::string_view kOtherLines[] = {"NodeName", "PartitionName", "NodeSet", "DownNodes",
                                                        "FrontendName"};
    std::span<const std::string_view> skip;
    if (opts_.globals_only) skip = kOtherLines;
    for (const auto& line : lex_config(text, file, cfg_.diags, skip)) handle_line(line, file, depth);
    include_stack_.pop_back();
  }

  void finish() {
    for (std::size_t i = 0; i < cfg_.partitions.size(); ++i) expand_partition_nodes(cfg_.partitions[i], i);
    for (const auto& [file, seen] : passive_) report_passive(cfg_.diags, seen);
  }

 private:
  void handle_line(const LogicalLine& line, const std::string& file, int depth) {
    const Word& first = line.words.front();
    if (iequals(first.key, "Include")) return handle_include(line, file, depth);
    if (first.has_value && iequals(first.key, "NodeName")) return opts_.globals_only ? void() : handle_node_line(line);
    if (first.has_value && iequals(first.key, "PartitionName")) {
      return opts_.globals_only ? void() : handle_partition_line(line);
    }
    if (first.has_value && iequals(first.key, "NodeSet")) return opts_.globals_only ? void() : handle_node_set_line(line);
    for (const auto& kind : passive_line_kinds()) {
      if (first.has_value && iequals(first.key, kind.name)) {
        passive_[file].add(kind.name + " lines", first.key_loc);
        return;
      }
    }
    handle_global_line(line);
  }

  // --- globals ---
  // A command (globals_only) applies the keys of command_keys() and leaves
  // the others unread and unchecked.
  void handle_global_line(const LogicalLine& line) {
    const auto& table = opts_.globals_only ? command_keys() : global_keys();
    for (const auto& w : line.words) {
      if (opts_.globals_only && !table.find(w.key) && !table.find_passive(w.key)) continue;
      if (misplaced_line_start(w)) continue;
      std::set<std::string> seen;  // duplicates across lines are found through globals_written
      const KeyDef<ClusterConfig>* def = nullptr;
      auto other = [](std::string_view k) { return find_elsewhere(k, "global"); };
      auto r = apply_word(table, cfg_, w, kGlobalWhere, seen, cfg_.diags, passive_[w.key_loc.file], other, &def);
      if (r == Applied::kStored) record_global(*def, w);
      if (r == Applied::kPassive) {
        const std::string& name = table.find_passive(w.key)->name;
        cfg_.passive_values[name] = w.value;
        cfg_.passive_locs[name] = w.key_loc;
      }
    }
  }

  bool misplaced_line_start(const Word& w) {
    for (const char* k : {"NodeName", "PartitionName", "Include"}) {
      if (iequals(w.key, k) && (w.has_value || std::string(k) == "Include")) {
        cfg_.diags.add(Severity::kError, "bad-syntax", w.key_loc, k,
                       std::string(k) + (std::string(k) == "Include" ? "" : "=") +
                           " must start its own line; this word was ignored",
                       "start a new line with it");
        return true;
      }
    }
    return false;
  }

  void record_global(const KeyDef<ClusterConfig>& def, const Word& w) {
    auto it = cfg_.globals_written.find(def.name);
    if (it != cfg_.globals_written.end() && !def.repeatable) {
      auto& d = cfg_.diags.add(Severity::kWarning, "duplicate-key", w.key_loc, def.name,
                               def.name + " is set again (first set at " + it->second.second.str() +
                                   "); the later value is used",
                               "keep one " + def.name + " line");
      d.related.push_back(it->second.second);
    }
    if (it != cfg_.globals_written.end() && def.repeatable) {
      it->second.first += "," + w.value;
      return;
    }
    cfg_.globals_written[def.name] = {w.value, w.key_loc};
  }

  // --- Include ---
  void handle_include(const LogicalLine& line, const std::string& file, int depth) {
    const Word& first = line.words.front();
    std::string target = first.has_value ? first.value : (line.words.size() > 1 ? line.words[1].key : "");
    SourceLoc where = first.has_value ? first.value_loc : (line.words.size() > 1 ? line.words[1].key_loc : first.key_loc);
    std::size_t used = first.has_value ? 1 : 2;
    if (target.empty() || line.words.size() > used || (!first.has_value && line.words[1].has_value)) {
      cfg_.diags.add(Severity::kError, "bad-syntax", first.key_loc, "Include",
                     "expected \"Include PATH\" with one file name", "write: Include /etc/slurm/nodes.conf");
      return;
    }
    if (!opts_.follow_includes) return;
    std::string path = resolve_include(target, file);
    if (depth + 1 > kMaxIncludeDepth) {
      include_error(where, "include-failed", "Include nested deeper than " + std::to_string(kMaxIncludeDepth) +
                                                 " files: " + path, "flatten the includes");
      return;
    }
    std::string canon = canonical(path);
    for (const auto& open : include_stack_) {
      if (open == canon) {
        include_error(where, "include-cycle", "Include of " + path + " would read it again (include cycle)",
                      "remove the Include that closes the cycle");
        return;
      }
    }
    auto text = read_config_file(path);
    if (!text) {
      include_error(where, "include-failed", text.error().message, "check the path; relative paths are taken from the including file's directory");
      return;
    }
    parse_file_text(*text, path, depth + 1);
  }

  std::string resolve_include(std::string target, const std::string& including_file) const {
    for (auto pos = target.find("%c"); pos != std::string::npos; pos = target.find("%c", pos + cfg_.cluster_name.size())) {
      target.replace(pos, 2, cfg_.cluster_name);
    }
    if (!target.empty() && target.front() == '/') return target;
    fs::path dir = fs::path(including_file).parent_path();
    return dir.empty() ? target : (dir / target).string();
  }

  static std::string canonical(const std::string& path) {
    std::error_code ec;
    auto p = fs::weakly_canonical(fs::path(path), ec);
    return ec ? path : p.string();
  }

  void include_error(const SourceLoc& where, const std::string& code, const std::string& msg, const std::string& fix) {
    cfg_.diags.add(Severity::kError, code, where, "Include", msg, fix);
  }

  // --- NodeName lines ---
  void handle_node_line(const LogicalLine& line) {
    const Word& head = line.words.front();
    NodeTemplate t = node_defaults_;
    std::set<std::string> seen{"NodeName"};
    auto other = [](std::string_view k) { return find_elsewhere(k, "node"); };
    for (std::size_t i = 1; i < line.words.size(); ++i) {
      const Word& w = line.words[i];
      if (misplaced_line_start(w)) continue;
      const KeyDef<NodeConfig>* def = nullptr;
      if (apply_word(node_keys(), t.node, w, kNodeWhere, seen, cfg_.diags, passive_[w.key_loc.file], other, &def) ==
          Applied::kStored) {
        t.node.key_locs[def->name] = w.key_loc;
        for (const char* k : kPerNodeKeys) {
          if (def->name == k) t.per_node[k] = w;
        }
      }
    }
    if (iequals(head.value, "DEFAULT")) {
      node_defaults_ = std::move(t);
      return;
    }
    add_nodes(head, line.loc, t);
  }

  void add_nodes(const Word& head, const SourceLoc& loc, NodeTemplate& t) {
    std::size_t room = max_nodes_ - std::min(max_nodes_, cfg_.nodes.size());
    if (head.value.empty() || iequals(head.value, "ALL")) {
      report_bad_value(cfg_.diags, head, "NodeName", "expected a host list such as gpu[01-32] (ALL is reserved)");
      return;
    }
    auto names = hostlist_expand(head.value, room);
    if (!names || names->empty()) {
      report_bad_value(cfg_.diags, head, "NodeName",
                       "expected a host list such as gpu[01-32], with at most " + std::to_string(max_nodes_) +
                           " nodes in all" + (names ? "" : " (" + names.error().message + ")"));
      return;
    }
    if (!charge_node_bytes(head, t, names->size())) return;
    derive_topology(t.node);
    auto hosts = per_node_values(t, "NodeHostname", names->size());
    auto addrs = per_node_values(t, "NodeAddr", names->size());
    auto ports = per_node_ports(t, names->size());
    for (std::size_t i = 0; i < names->size(); ++i) {
      NodeConfig n = t.node;
      n.name = (*names)[i];
      n.hostname = hosts.empty() ? n.name : hosts[hosts.size() == 1 ? 0 : i];
      n.addr = addrs.empty() ? n.hostname : addrs[addrs.size() == 1 ? 0 : i];
      if (!ports.empty()) n.port = ports[ports.size() == 1 ? 0 : i];
      n.loc = loc;
      cfg_.nodes.push_back(std::move(n));
    }
  }

  bool charge_node_bytes(const Word& head, const NodeTemplate& t, std::size_t count) {
    std::size_t line_bytes = 256 + t.node.reason.size();
    for (const auto& f : t.node.features) line_bytes += f.size() + 32;
    line_bytes += t.node.gres.size() * 96 + t.node.key_locs.size() * 64;
    node_bytes_ += line_bytes * count;
    if (node_bytes_ <= kMaxNodeDefinitionBytes) return true;
    report_bad_value(cfg_.diags, head, "NodeName",
                     "expected fewer or smaller node definitions: the NodeName lines so far define more than " +
                         std::to_string(kMaxNodeDefinitionBytes >> 20) + " MB of node data");
    return false;
  }

  // Slurm's rules: CPUs defaults to Boards*Sockets*CoresPerSocket*ThreadsPerCore;
  // with CPUs given and Sockets omitted, Sockets = CPUs/(Boards*CoresPerSocket*ThreadsPerCore).
  static void derive_topology(NodeConfig& n) {
    int64_t per_socket = int64_t{n.boards} * n.cores_per_socket * n.threads_per_core;
    bool cpus_given = n.key_locs.count("CPUs") > 0;
    bool sockets_given = n.key_locs.count("Sockets") > 0;
    if (!cpus_given) {
      int64_t cpus = per_socket * n.sockets;
      n.cpus = static_cast<int>(std::min<int64_t>(cpus, INT32_MAX));
    } else if (!sockets_given && per_socket > 0 && n.cpus % per_socket == 0 && n.cpus / per_socket >= 1) {
      n.sockets = static_cast<int>(n.cpus / per_socket);
    }
  }

  // One value for every node, one per node, or (on a count mismatch) an error and none.
  std::vector<std::string> per_node_values(const NodeTemplate& t, const std::string& key, std::size_t count) {
    auto it = t.per_node.find(key);
    if (it == t.per_node.end()) return {};
    auto list = hostlist_expand(it->second.value, max_nodes_);
    if (!list || list->empty()) {
      report_bad_value(cfg_.diags, it->second, key,
                       "expected a name, or a host list with one name per node of the line" +
                           (list ? std::string() : " (" + list.error().message + ")"));
      return {};
    }
    if (list->size() == 1 || list->size() == count) return *list;
    report_bad_value(cfg_.diags, it->second, key,
                     "expected one name, or one per node of the line (" + std::to_string(count) + "), found " +
                         std::to_string(list->size()));
    return {};
  }

  std::vector<int> per_node_ports(const NodeTemplate& t, std::size_t count) {
    auto it = t.per_node.find("Port");
    if (it == t.per_node.end()) return {};
    auto ports = expand_ports(it->second.value);
    if (!ports) return {};  // already reported when the key was applied
    if (ports->size() == 1 || ports->size() == count) return *ports;
    report_bad_value(cfg_.diags, it->second, "Port",
                     "expected one port, or one per node of the line (" + std::to_string(count) + "), found " +
                         std::to_string(ports->size()));
    return {};
  }

  // --- PartitionName lines ---
  // NodeSet=NAME Nodes=hostlist Feature=FEAT (either or both).
  void handle_node_set_line(const LogicalLine& line) {
    const Word& head = line.words.front();
    if (head.value.empty()) return report_bad_value(cfg_.diags, head, "NodeSet", "expected a node set name");
    NodeSetConfig set{head.value, "", "", line.loc};
    for (std::size_t i = 1; i < line.words.size(); ++i) {
      const Word& w = line.words[i];
      if (misplaced_line_start(w)) continue;
      if (iequals(w.key, "Nodes")) {
        set.nodes_expr = w.value;
      } else if (iequals(w.key, "Feature") || iequals(w.key, "Features")) {
        set.feature = w.value;
      } else {
        report_unknown_key(cfg_.diags, w, "on a NodeSet line", {"Nodes", "Feature"});
      }
    }
    for (const auto& other : cfg_.node_sets) {
      if (other.name == set.name) {
        cfg_.diags.add(Severity::kError, "duplicate-node-set", head.value_loc, "NodeSet",
                       "node set " + set.name + " is defined twice (first at " + other.loc.str() +
                           "); this line is ignored",
                       "merge the two lines into one");
        return;
      }
    }
    if (set.nodes_expr.empty() && set.feature.empty()) {
      cfg_.diags.add(Severity::kError, "bad-value", head.value_loc, "NodeSet",
                     "node set " + set.name + " has neither Nodes= nor Feature=, so it holds no node",
                     "add Nodes=<host list> or Feature=<feature>");
      return;
    }
    cfg_.node_sets.push_back(std::move(set));
  }

  void handle_partition_line(const LogicalLine& line) {
    const Word& head = line.words.front();
    PartitionConfig p = part_defaults_;
    SourceLoc nodes_loc = part_defaults_nodes_loc_;
    std::set<std::string> seen{"PartitionName"};
    auto other = [](std::string_view k) { return find_elsewhere(k, "partition"); };
    for (std::size_t i = 1; i < line.words.size(); ++i) {
      const Word& w = line.words[i];
      if (misplaced_line_start(w)) continue;
      const KeyDef<PartitionConfig>* def = nullptr;
      if (apply_word(partition_keys(), p, w, kPartitionWhere, seen, cfg_.diags, passive_[w.key_loc.file], other,
                     &def) == Applied::kStored) {
        p.key_locs[def->name] = w.key_loc;
        if (def->name == "Nodes") nodes_loc = w.value_loc;
      }
    }
    if (iequals(head.value, "DEFAULT")) {
      part_defaults_ = std::move(p);
      part_defaults_nodes_loc_ = nodes_loc;
      return;
    }
    add_partition(head, line.loc, std::move(p), nodes_loc);
  }

  void add_partition(const Word& head, const SourceLoc& loc, PartitionConfig p, const SourceLoc& nodes_loc) {
    if (head.value.empty()) {
      report_bad_value(cfg_.diags, head, "PartitionName", "expected a partition name");
      return;
    }
    if (const auto* first = cfg_.find_partition(head.value)) {
      auto& d = cfg_.diags.add(Severity::kError, "duplicate-partition", head.value_loc, "PartitionName",
                               "partition " + head.value + " is defined twice (first at " + first->loc.str() +
                                   "); this line is ignored",
                               "merge the two lines into one");
      d.related.push_back(first->loc);
      return;
    }
    p.name = head.value;
    p.loc = loc;
    cfg_.partitions.push_back(std::move(p));
    nodes_value_locs_.push_back(nodes_loc);
  }

  void expand_partition_nodes(PartitionConfig& p, std::size_t index) {
    if (p.nodes_expr.empty()) return;
    std::size_t room = max_members_ - std::min(max_members_, members_);
    Word w{"Nodes", p.key_locs["Nodes"], true, p.nodes_expr, nodes_value_locs_[index]};
    if (iequals(p.nodes_expr, "ALL")) {
      if (cfg_.nodes.size() > room) return report_too_many_members(w);
      for (const auto& n : cfg_.nodes) p.nodes.push_back(n.name);
      members_ += cfg_.nodes.size();
      return;
    }
    auto names = partition_members(cfg_, p.nodes_expr, room);
    if (!names) {
      report_bad_value(cfg_.diags, w, "Nodes",
                       "expected a host list such as gpu[01-32],cpu[01-16], NodeSet names, or ALL (" +
                           names.error().message + ")");
      return;
    }
    members_ += names->size();
    p.nodes = std::move(*names);
  }

  void report_too_many_members(const Word& w) {
    report_bad_value(cfg_.diags, w, "Nodes",
                     "expected at most " + std::to_string(max_members_) + " node names over all partitions");
  }

  ClusterConfig& cfg_;
  const ParseOptions& opts_;
  std::size_t max_nodes_;
  std::size_t max_members_;
  NodeTemplate node_defaults_;
  PartitionConfig part_defaults_;
  SourceLoc part_defaults_nodes_loc_;
  std::vector<SourceLoc> nodes_value_locs_;  // per partition, where its Nodes= value starts
  std::size_t members_ = 0;
  std::size_t node_bytes_ = 0;
  std::vector<std::string> include_stack_;
  std::map<std::string, PassiveSeen> passive_;  // per file
};

}  // namespace

ClusterConfig parse_slurm_conf_text(std::string_view text, std::string_view file_name, const ParseOptions& opts) {
  ClusterConfig cfg;
  cfg.slurm_conf_path = std::string(file_name);
  SlurmConfParser parser(cfg, opts);
  parser.parse_file_text(text, std::string(file_name), 0);
  parser.finish();
  return cfg;
}

std::string partition_key_name(const std::string& typed) {
  const auto& table = partition_keys();
  if (const auto* def = table.find(typed)) return def->name;
  if (typed.size() < 3 || table.find_passive(typed)) return typed;
  std::set<std::string> matches;
  for (const auto& s : table.spellings()) {
    if (istarts_with(s, typed)) {
      if (const auto* def = table.find(s)) matches.insert(def->name);
    }
  }
  return matches.size() == 1 ? *matches.begin() : typed;
}

Result<PartitionConfig> update_partition_config(const ClusterConfig& cfg, const PartitionConfig& p,
                                                const std::vector<std::pair<std::string, std::string>>& settings) {
  PartitionConfig out = p;
  Diagnostics diags;
  PassiveSeen passive;
  std::set<std::string> seen{"PartitionName"};
  auto other = [](std::string_view k) { return find_elsewhere(k, "partition"); };
  const std::string where = "in scontrol update PartitionName=" + p.name;
  bool nodes_given = false;
  for (const auto& [typed, v] : settings) {
    const std::string k = partition_key_name(typed);
    SourceLoc loc{"scontrol update", 1, 1};
    Word w{k, loc, true, v, loc};
    const KeyDef<PartitionConfig>* def = nullptr;
    std::size_t before = diags.items().size();
    Applied a = apply_word(partition_keys(), out, w, where, seen, diags, passive, other, &def);
    if (a == Applied::kPassive) return make_error(k + " has no effect in Drover; nothing was changed");
    if (a == Applied::kRejected) {
      std::string why = diags.items().size() > before ? diags.items()[before].message : k + " is not a partition setting";
      if (auto pos = why.find(" (ignored)"); pos != std::string::npos) why.erase(pos, 10);
      return make_error(why + "; nothing was changed");
    }
    if (def->name == "Nodes") nodes_given = true;
  }
  for (const auto& d : diags.items()) {
    if (d.severity == Severity::kError) return make_error(d.message);
  }
  if (nodes_given) {
    out.nodes.clear();
    if (iequals(out.nodes_expr, "ALL")) {
      for (const auto& n : cfg.nodes) out.nodes.push_back(n.name);
    } else if (!out.nodes_expr.empty()) {
      auto names = partition_members(cfg, out.nodes_expr, kMaxHostlistSize);
      if (!names) return make_error("Nodes=" + out.nodes_expr + ": " + names.error().message);
      for (const auto& n : *names) {
        if (!cfg.find_node(n)) return make_error("Nodes=" + out.nodes_expr + ": node " + n + " is not in slurm.conf");
      }
      out.nodes = std::move(*names);
    }
  }
  return out;
}

bool names_node_set(const ClusterConfig& cfg, std::string_view expr) {
  if (cfg.node_sets.empty()) return false;
  for (std::string_view item : top_level_items(expr)) {
    for (const auto& set : cfg.node_sets) {
      if (set.name == item) return true;
    }
  }
  return false;
}

}  // namespace drover::config
