#include "cli/sinfo_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "cli/display_options.hpp"
#include "cli/display_values.hpp"
#include "cli/job_options.hpp"
#include "cli/json_output.hpp"
#include "cli/sinfo_internal.hpp"
#include "common/hostlist.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

// "-o %all": every field, each lower-case letter's joined by "|" and each
// capital's followed by " |" (the last by a blank only), in Slurm 22.05's
// order and with its letters (anchor cluster).
std::string sinfo_percent_format(const std::string& v) {
  if (v != "%all") return v;
  std::string out;
  for (char c : std::string_view("abcdefghlmnoprstuvwz")) out += std::string("%") + c + "|";
  constexpr std::string_view kCapitals = "ABCDEFGHILMNOPRSTUVXYZ";
  for (std::size_t i = 0; i < kCapitals.size(); ++i) {
    out += std::string("%") + kCapitals[i] + (i + 1 < kCapitals.size() ? " |" : " ");
  }
  return out;
}

// ---- options ------------------------------------------------------------------------

enum SiOpt {
  kAll, kDead, kExact, kFuture, kFormat, kFormatLong, kNoHeader, kHelp, kIterate, kLong, kLocal, kClusters,
  kNodes, kNodeOriented, kPartition, kResponding, kListReasons, kSummarize, kSort, kStates, kUsage, kVerbose,
  kVersion, kReservation, kHide, kNoConvert, kFederation, kJson, kYaml,
};

const std::vector<OptionSpec>& sinfo_specs() {
  static const std::vector<OptionSpec> specs = {
      {kAll, "all", 'a', ArgKind::kNone},             {kDead, "dead", 'd', ArgKind::kNone},
      {kExact, "exact", 'e', ArgKind::kNone},         {kFederation, "federation", 0, ArgKind::kNone},
      {kFuture, "future", 0, ArgKind::kNone},         {kFormat, "format", 'o', ArgKind::kRequired},
      {kFormatLong, "Format", 'O', ArgKind::kRequired}, {kNoHeader, "noheader", 'h', ArgKind::kNone},
      {kHelp, "help", 0, ArgKind::kNone},             {kHide, "hide", 0, ArgKind::kNone},
      {kIterate, "iterate", 'i', ArgKind::kRequired}, {kLong, "long", 'l', ArgKind::kNone},
      {kLocal, "local", 0, ArgKind::kNone},           {kClusters, "clusters", 'M', ArgKind::kRequired},
      {kNodes, "nodes", 'n', ArgKind::kRequired},     {kNodeOriented, "Node", 'N', ArgKind::kNone},
      {kNoConvert, "noconvert", 0, ArgKind::kNone},   {kPartition, "partition", 'p', ArgKind::kRequired},
      {kResponding, "responding", 'r', ArgKind::kNone}, {kListReasons, "list-reasons", 'R', ArgKind::kNone},
      {kSummarize, "summarize", 's', ArgKind::kNone}, {kSort, "sort", 'S', ArgKind::kRequired},
      {kStates, "states", 't', ArgKind::kRequired},   {kReservation, "reservation", 'T', ArgKind::kNone},
      {kUsage, "usage", 0, ArgKind::kNone},           {kVerbose, "verbose", 'v', ArgKind::kNone},
      {kVersion, "version", 'V', ArgKind::kNone},     {kJson, "json", 0, ArgKind::kNone},
      {kYaml, "yaml", 0, ArgKind::kNone},
  };
  return specs;
}

// The words -t takes, as Slurm 22.05's sinfo lists them when one is not:
// a state's long name or a beginning of it ("alloc"), or a compact name.
constexpr const char* kValidStates =
    "unknown,down,idle,allocated,?,mixed,future,drain,drained,draining,no_respond,reserved,perfctrs,cloud,"
    "completing,powering_down,powered_down,power_down,powering_up,fail,maint,reboot,reboot^,unknown";

bool known_state_word(const std::string& word) {
  const std::string w = to_lower(word);
  if (w.empty()) return false;
  for (const auto& name : split(kValidStates, ',')) {
    if (name.compare(0, w.size(), w) == 0) return true;
  }
  for (const char* compact : {"alloc", "mix", "drng", "comp", "resv", "npc", "plnd", "boot", "failg", "inval",
                              "pow_dn", "pow_up"}) {
    if (w == compact) return true;
  }
  return false;
}

CliResult<bool> apply_option(SinfoOptions& o, const ScannedOption& opt) {
  const std::string v = opt.value.value_or("");
  switch (opt.id) {
    case kAll: o.all = true; break;
    case kDead: o.dead_only = true; break;
    case kExact: o.exact = true; break;
    case kFuture: o.future = true; break;
    case kFormat: o.format = sinfo_percent_format(v); o.format_given = true; break;
    case kFormatLong: o.format_long = v; o.format_given = true; break;
    case kNoHeader: o.noheader = true; break;
    case kHelp: case kUsage: o.print_help = true; break;
    case kLong: o.long_format = true; break;
    case kNodes: {
      auto hosts = hostlist_expand(v);
      if (!hosts) return cli_error("sinfo", fmt::format("Invalid node name list: {} ({})", v, hosts.error().message));
      o.nodes = *hosts;
      break;
    }
    case kNodeOriented: o.node_oriented = true; break;
    case kPartition: o.partitions = comma_list(v); break;
    case kResponding: o.responding_only = true; break;
    case kListReasons: o.list_reasons = true; break;
    case kSummarize: o.summarize = true; break;
    case kSort: o.sort = v; break;
    case kStates:
      o.states = comma_list(v);
      for (const auto& st : o.states) {
        if (!known_state_word(st)) {
          return CliError{fmt::format("sinfo: error: Bad state string: \"{}\"\nsinfo: error: valid states: {}\n", st,
                                      kValidStates),
                          1};
        }
      }
      break;
    case kVersion: o.print_version = true; break;
    case kClusters: o.clusters = v; break;
    case kIterate: {
      auto n = parse_iterate("sinfo", v);
      if (!n) return n.error();
      o.iterate_s = *n;
      break;
    }
    case kReservation: o.reservations = true; break;
    case kJson: o.json = true; break;
    case kYaml: return CliError{yaml_not_built("sinfo"), kExitError};
    default: break;  // accepted; no effect on one local cluster
  }
  return true;
}

// ---- selection and grouping -------------------------------------------------------------

bool state_selected(const SinfoOptions& o, const NodeState& s) {
  if (o.responding_only && s.not_responding) return false;
  // --dead: nodes that do not respond, not those an admin set DOWN (Slurm 22.05 on the anchor cluster).
  if (o.dead_only && !s.not_responding) return false;
  if (o.states.empty()) return true;
  for (const auto& want : o.states) {
    std::string w = to_lower(want);
    std::string lng = node_state_long(s), cmp = node_state_compact(s);
    auto bare = [](std::string x) {
      while (!x.empty() && std::string_view("*~#!%$@^-").find(x.back()) != std::string_view::npos) x.pop_back();
      return x;
    };
    // "alloc" takes a mixed node too (Slurm 22.05 on the anchor: `sinfo -t alloc` listed the mixed ones).
    const bool busy = s.base == NodeBase::kAllocated || s.base == NodeBase::kMixed;
    if (w == bare(lng) || w == bare(cmp) || (w == "drain" && s.drain) || ((w == "alloc" || w == "allocated") && busy))
      return true;
    // A base state matches whatever flags the node has too: `-t idle` lists
    // a drained (idle) node, as Slurm 22.05's did on the anchor cluster.
    static const std::map<std::string, NodeBase, std::less<>> kBases = {
        {"idle", NodeBase::kIdle},   {"down", NodeBase::kDown},       {"mix", NodeBase::kMixed},
        {"mixed", NodeBase::kMixed}, {"future", NodeBase::kFuture},   {"futr", NodeBase::kFuture},
        {"unknown", NodeBase::kUnknown}, {"unk", NodeBase::kUnknown}, {"error", NodeBase::kError},
        {"err", NodeBase::kError}};
    if (auto base = kBases.find(w); base != kBases.end() && base->second == s.base) return true;
  }
  return false;
}

bool node_selected(const SinfoOptions& o, const NodeView& n) {
  if (n.state.base == NodeBase::kFuture && !o.future) return false;
  if (!o.nodes.empty() && std::find(o.nodes.begin(), o.nodes.end(), n.name) == o.nodes.end()) return false;
  // -R lists the nodes that are down, drained, draining, failing or failed.
  if (o.list_reasons && !(n.state.drain || n.state.fail || n.state.base == NodeBase::kDown)) return false;
  return state_selected(o, n.state);
}

bool partition_selected(const SinfoOptions& o, const PartitionView& p) {
  if (!o.partitions.empty()) return std::find(o.partitions.begin(), o.partitions.end(), p.name) != o.partitions.end();
  return o.all || !p.hidden;
}

// The grouping key of one (partition, node) pair under `layout`.
std::string group_key(const FormatLayout& layout, const SinfoOptions& o, const PartitionView& p, const NodeView& n) {
  const auto& table = sinfo_field_table();
  SinfoRow single{&p, {&n}};
  std::string key;
  for (const auto& item : layout.items) {
    if (item.field < 0) continue;
    const SinfoField& f = table[item.field];
    bool splits = f.split == SinfoSplit::kValue || f.split == SinfoSplit::kPartition ||
                  (f.split == SinfoSplit::kExact && o.exact);
    if (splits) key += f.field.value(single) + '\x1f';
  }
  return key;
}

struct Grouped {
  std::vector<SinfoRow> rows;
  std::vector<std::size_t> part_index;  // configured position of each row's partition
};

Grouped group_nodes(const FormatLayout& layout, const SinfoOptions& o, const std::vector<PartitionView>& parts,
                    const std::map<std::string, const NodeView*>& by_name) {
  Grouped g;
  const auto& table = sinfo_field_table();
  const bool names_partitions = std::any_of(layout.items.begin(), layout.items.end(), [&](const auto& item) {
    return item.field >= 0 && table[item.field].split == SinfoSplit::kPartition;
  });
  std::map<std::string, std::size_t> row_of_key;
  std::vector<std::set<std::string>> members;
  for (std::size_t pi = 0; pi < parts.size(); ++pi) {
    const PartitionView& p = parts[pi];
    if (!partition_selected(o, p)) continue;
    bool kept_one = false;
    for (const auto& name : p.node_names) {
      auto it = by_name.find(name);
      if (it == by_name.end() || !node_selected(o, *it->second)) continue;
      kept_one = true;
      const NodeView* n = it->second;
      std::string key = o.node_oriented ? "" : group_key(layout, o, p, *n);
      auto found = row_of_key.find(key);
      if (o.node_oriented || found == row_of_key.end()) {
        if (!o.node_oriented) row_of_key[key] = g.rows.size();
        g.rows.push_back(SinfoRow{&p, {n}});
        g.part_index.push_back(pi);
        members.push_back({n->name});
      } else if (members[found->second].insert(n->name).second) {
        g.rows[found->second].nodes.push_back(n);
      }
    }
    // A partition left without nodes (none configured, or none that -n, -t,
    // -d or -r keep) is a line of its own, with no nodes and state n/a,
    // where the format names partitions, as Slurm 22.05 shows it (checked on
    // the anchor cluster: `sinfo -d`, `sinfo -t drain`, `sinfo -n gpu01`,
    // `sinfo -R -o "%P %t"`; `sinfo -d -o %C` and `sinfo -R` print the
    // header alone).
    if (!kept_one && names_partitions && !o.node_oriented) {
      g.rows.push_back(SinfoRow{&p, {}});
      g.part_index.push_back(pi);
      members.push_back({});
    }
  }
  return g;
}

// ---- ordering -------------------------------------------------------------------------------

int compare_rows(std::string_view key, const SinfoRow& a, std::size_t pa, const SinfoRow& b, std::size_t pb) {
  // A partition without nodes has no node values: it sorts after the others.
  if (!key.empty() && std::string_view("tTNncmwE").find(key[0]) != std::string_view::npos &&
      (a.nodes.empty() || b.nodes.empty())) {
    return static_cast<int>(a.nodes.empty()) - static_cast<int>(b.nodes.empty());
  }
  auto cmp = [](const auto& x, const auto& y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (key == "#P") return cmp(pa, pb);
  switch (key.empty() ? '\0' : key[0]) {
    case 'P': case 'R': return cmp(a.part->name, b.part->name);
    case 't': case 'T':
      return cmp(node_state_sort_key(a.nodes.front()->state), node_state_sort_key(b.nodes.front()->state));
    case 'N': case 'n': return cmp(a.nodes.front()->name, b.nodes.front()->name);
    case 'D': return cmp(a.nodes.size(), b.nodes.size());
    case 'c': return cmp(a.nodes.front()->cpus, b.nodes.front()->cpus);
    case 'm': return cmp(a.nodes.front()->real_memory_mb, b.nodes.front()->real_memory_mb);
    case 'w': return cmp(a.nodes.front()->weight, b.nodes.front()->weight);
    case 'E': return cmp(a.nodes.front()->reason, b.nodes.front()->reason);
    default: return 0;
  }
}

void sort_rows(Grouped& g, const std::string& spec) {
  std::vector<std::pair<std::string, bool>> keys;
  for (const auto& k : split(spec, ',')) {
    if (k.empty()) continue;
    bool desc = k[0] == '-';
    keys.emplace_back((k[0] == '-' || k[0] == '+') ? k.substr(1) : k, desc);
  }
  std::vector<std::size_t> idx(g.rows.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) {
    for (const auto& [key, desc] : keys) {
      int c = compare_rows(key, g.rows[x], g.part_index[x], g.rows[y], g.part_index[y]);
      if (c != 0) return desc ? c > 0 : c < 0;
    }
    return false;
  });
  Grouped sorted;
  for (std::size_t i : idx) {
    sorted.rows.push_back(g.rows[i]);
    sorted.part_index.push_back(g.part_index[i]);
  }
  g = std::move(sorted);
}

// ---- formats --------------------------------------------------------------------------------

// Default formats; '#' marks Slurm's columns sized to the longest value
// (at least the given width).
std::string default_format(const SinfoOptions& o) {
  if (o.list_reasons) return "%20E %9u %19H %N";
  if (o.summarize) return "%#9P %.5a %.10l %.16F %N";
  if (o.node_oriented && o.long_format)
    return "%#9N %.6D %#.9P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E";
  if (o.node_oriented) return "%#9N %.6D %#.9P %6t";
  if (o.long_format) return "%#9P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N";
  return "%#9P %.5a %.10l %.6D %.6t %N";
}

// Parses a default format: "%#..." items get auto_width.
FormatLayout parse_default(const std::string& fmt, std::span<const FieldInfo> infos) {
  std::string plain;
  std::vector<bool> auto_items;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] == '%') auto_items.push_back(i + 1 < fmt.size() && fmt[i + 1] == '#');
    if (fmt[i] == '#') continue;
    plain += fmt[i];
  }
  FormatLayout layout = parse_percent_format(plain, infos).layout;
  for (std::size_t i = 0; i < layout.items.size() && i < auto_items.size(); ++i)
    layout.items[i].auto_width = auto_items[i];
  return layout;
}

}  // namespace

CliResult<SinfoOptions> parse_sinfo_options(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& env) {
  SinfoOptions o;
  if (auto it = env.find("SINFO_FORMAT"); it != env.end()) o.format = sinfo_percent_format(it->second);
  if (auto it = env.find("SINFO_SORT"); it != env.end()) o.sort = it->second;
  if (auto it = env.find("SINFO_PARTITION"); it != env.end()) o.partitions = split(it->second, ',');
  if (env.count("SINFO_ALL")) o.all = true;
  auto parsed = scan_display_options(args, sinfo_specs(), "sinfo", std::move(o), apply_option);
  if (parsed && parsed->long_format && parsed->format_given) return format_and_long_refusal("sinfo");
  return parsed;
}

// sinfo -T: one line per reservation, the name column as wide as the
// longest name (at least the header's), as Slurm 22.05 prints it.
std::string render_sinfo_reservations(const std::vector<ReservationView>& resvs, bool header) {
  if (resvs.empty()) return "No reservations in the system\n";
  size_t w = std::string_view("RESV_NAME").size();
  for (const auto& r : resvs) w = std::max(w, r.name.size());
  std::string out;
  auto line = [&](std::string_view name, std::string_view state, std::string_view start, std::string_view end,
                  std::string_view dur, std::string_view nodes) {
    out += fmt::format("{:<{}}  {:>8}  {:>19}  {:>19}  {:>11}  {}\n", name, w, state, start, end, dur, nodes);
  };
  if (header) line("RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST");
  for (const auto& r : resvs) {
    line(r.name, r.active ? "ACTIVE" : "INACTIVE", format_timestamp(r.start_time), format_timestamp(r.end_time),
         format_duration_hms(r.end_time > r.start_time ? r.end_time - r.start_time : 0), r.nodes);
  }
  return out;
}

CommandOutput render_sinfo(const SinfoOptions& opts, const std::vector<PartitionView>& partitions,
                           const std::vector<NodeView>& nodes, UnixTime now,
                           const std::vector<ReservationView>& reservations) {
  if (auto early = version_or_usage(opts.print_version, opts.print_help,
                                    "Usage: sinfo [-adelNRrsv] [-i seconds] [-t states] [-p partition] [-n nodes]\n"
                                    "             [-S fields] [-o format] [-O Format]\n"))
    return *early;
  CommandOutput result;
  if (opts.reservations) {
    if (!opts.noheader) result.out = cluster_banner(opts.cluster_banner);
    result.out += render_sinfo_reservations(reservations, !opts.noheader);
    return result;
  }
  const auto& fields = sinfo_fields();
  auto infos = field_infos(fields);
  FormatLayout layout;
  if (opts.format_long) {
    ParsedFormat p = parse_long_format(*opts.format_long, infos);
    for (const auto& bad : p.invalid) result.err += fmt::format("sinfo: error: Invalid job format specification: {}\n", bad);
    layout = p.layout;
  } else if (opts.format) {
    ParsedFormat p = parse_percent_format(*opts.format, infos);
    for (const auto& bad : p.invalid) result.err += fmt::format("Invalid node format specification: {}\n", bad);
    layout = p.layout;
  } else {
    layout = parse_default(default_format(opts), infos);
  }
  std::map<std::string, const NodeView*> by_name;
  for (const auto& n : nodes) by_name[n.name] = &n;
  Grouped g = group_nodes(layout, opts, partitions, by_name);
  sort_rows(g, opts.sort.value_or(opts.node_oriented ? "N" : "#P,-t"));
  if ((opts.long_format || opts.iterate_s > 0) && !opts.noheader) result.out = banner_time(now) + "\n";
  if (!opts.noheader) result.out += cluster_banner(opts.cluster_banner);
  result.out += render_table(layout, fields, g.rows, !opts.noheader);
  return result;
}

}  // namespace drover::cli
