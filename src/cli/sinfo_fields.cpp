// sinfo's field table: -o letters, -O names, headers, values and how each
// field groups nodes into lines.
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "cli/display_values.hpp"
#include "cli/sinfo_internal.hpp"
#include "common/gres.hpp"
#include "common/hostlist.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using Row = SinfoRow;
using Getter = std::function<int64_t(const NodeView&)>;

// The minimum, followed by '+' when some node has more ("256000+").
std::string min_plus(const Row& r, const Getter& get) {
  if (r.nodes.empty()) return "0";
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const NodeView* n : r.nodes) {
    lo = std::min(lo, get(*n));
    hi = std::max(hi, get(*n));
  }
  return hi > lo ? fmt::format("{}+", lo) : std::to_string(lo);
}

std::string hostlist_of(const Row& r, const std::function<std::string(const NodeView&)>& get) {
  std::vector<std::string> names;
  for (const NodeView* n : r.nodes) names.push_back(get(*n));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return hostlist_compress_slurm_sorted(std::move(names));
}

std::string load_range(const Row& r) {
  double lo = 1e300, hi = -1;
  for (const NodeView* n : r.nodes) {
    if (n->cpu_load < 0) return "N/A";
    lo = std::min(lo, n->cpu_load);
    hi = std::max(hi, n->cpu_load);
  }
  if (hi < 0) return "N/A";
  return hi > lo ? fmt::format("{:.2f}-{:.2f}", lo, hi) : fmt::format("{:.2f}", lo);
}

std::string free_mem_range(const Row& r) {
  if (r.nodes.empty()) return "0";  // a partition's line without nodes (Slurm 22.05's)
  int64_t lo = INT64_MAX, hi = -1;
  for (const NodeView* n : r.nodes) {
    if (n->free_memory_mb < 0) return "N/A";
    lo = std::min(lo, n->free_memory_mb);
    hi = std::max(hi, n->free_memory_mb);
  }
  if (hi < 0) return "N/A";
  return hi > lo ? fmt::format("{}-{}", lo, hi) : std::to_string(lo);
}

struct Counts {
  int64_t alloc = 0, idle = 0, other = 0, total = 0;
};

// A/I/O/T of CPUs: CPUs not allocated on an unavailable node are "other".
Counts cpu_counts(const Row& r) {
  Counts c;
  for (const NodeView* n : r.nodes) {
    int64_t total = n->cpus_effective > 0 ? n->cpus_effective : n->cpus;
    int64_t other = n->state.unavailable() ? total - n->alloc_cpus : 0;
    c.alloc += n->alloc_cpus;
    c.other += other;
    c.idle += total - n->alloc_cpus - other;
    c.total += total;
  }
  return c;
}

// A/I/O/T of nodes: busy nodes are allocated (draining ones too).
Counts node_counts(const Row& r) {
  Counts c;
  for (const NodeView* n : r.nodes) {
    if (n->state.busy()) ++c.alloc;
    else if (n->state.unavailable()) ++c.other;
    else ++c.idle;
    ++c.total;
  }
  return c;
}

// The line's first node; a partition without nodes has an empty one.
const NodeView& first(const Row& r) {
  static const NodeView kNone{};
  return r.nodes.empty() ? kNone : *r.nodes.front();
}
// A node state field: n/a for a partition without nodes.
template <class F>
std::string state_or_na(const Row& r, F&& f) {
  return r.nodes.empty() ? std::string("n/a") : std::string(f(first(r).state));
}


// Slurm 22.05 on the anchor cluster: "up", "down", "drain", "inactive".
std::string avail(const PartitionView& p) { return to_lower(p.state); }

std::string job_size(const PartitionView& p) {
  int64_t lo = std::max<int64_t>(1, p.min_nodes);
  std::string hi = p.max_nodes > 0 ? std::to_string(p.max_nodes) : "infinite";
  return fmt::format("{}-{}", lo, hi);
}

std::string all_or(const std::string& s) { return iequals(s, "ALL") ? "all" : s; }

std::string partition_name(const Row& r, bool star) {
  return r.part->name + (star && r.part->is_default ? "*" : "");
}

SinfoField F(char code, std::string_view name, std::string_view header, SinfoSplit split,
             std::function<std::string(const Row&)> value, bool cut_header = true) {
  return SinfoField{Field<Row>{FieldInfo{code, name, header, true, cut_header}, std::move(value)}, split};
}

std::string reason_of(const NodeView& n) { return or_text(n.reason, "none"); }

}  // namespace

std::string gres_used_text(const NodeView& n) {
  std::vector<std::string> parts;
  for (const GresUse& g : n.gres_used) {
    if (g.type.empty() && g.count == 0) parts.push_back(fmt::format("{}:0", g.name));
    else parts.push_back(fmt::format("{}:{}{}{}(IDX:{})", g.name, g.type, g.type.empty() ? "" : ":", g.count,
                                     g.indexes.empty() ? "N/A" : g.indexes));
  }
  return parts.empty() ? "(null)" : join(parts, ",");
}

const std::vector<SinfoField>& sinfo_field_table() {
  using S = SinfoSplit;
  static const std::vector<SinfoField> table = {
      F('a', "Available", "AVAIL", S::kValue, [](const Row& r) { return avail(*r.part); }),
      F('A', "NodeAI", "NODES(A/I)", S::kNone, [](const Row& r) {
        Counts c = node_counts(r);
        return fmt::format("{}/{}", c.alloc, c.idle);
      }),
      F('b', "features_act", "ACTIVE_FEATURES", S::kValue,
        [](const Row& r) { return or_text(first(r).features_active, "(null)"); }),
      F('B', "MaxCPUsPerNode", "MAX_CPUS_PER_NODE", S::kValue, [](const Row& r) {
        return r.part->max_cpus_per_node > 0 ? std::to_string(r.part->max_cpus_per_node) : "UNLIMITED";
      }),
      F('c', "CPUs", "CPUS", S::kExact, [](const Row& r) { return min_plus(r, [](const NodeView& n) { return n.cpus; }); }),
      F('C', "CPUsState", "CPUS(A/I/O/T)", S::kNone, [](const Row& r) {
        Counts c = cpu_counts(r);
        return fmt::format("{}/{}/{}/{}", c.alloc, c.idle, c.other, c.total);
      }),
      F('d', "Disk", "TMP_DISK", S::kExact,
        [](const Row& r) { return min_plus(r, [](const NodeView& n) { return n.tmp_disk_mb; }); }),
      F('D', "Nodes", "NODES", S::kNone, [](const Row& r) { return std::to_string(r.nodes.size()); }),
      F('e', "FreeMem", "FREE_MEM", S::kExact, free_mem_range),
      F('E', "Reason", "REASON", S::kValue, [](const Row& r) { return reason_of(first(r)); }),
      F('f', "Features", "AVAIL_FEATURES", S::kValue, [](const Row& r) { return or_text(first(r).features, "(null)"); }),
      F('F', "NodeAIOT", "NODES(A/I/O/T)", S::kNone, [](const Row& r) {
        Counts c = node_counts(r);
        return fmt::format("{}/{}/{}/{}", c.alloc, c.idle, c.other, c.total);
      }),
      F('g', "Groups", "GROUPS", S::kValue, [](const Row& r) { return all_or(r.part->allow_groups); }),
      F('G', "Gres", "GRES", S::kValue, [](const Row& r) { return format_gres_list(first(r).gres); }),
      F(0, "GresUsed", "GRES_USED", S::kValue, [](const Row& r) { return gres_used_text(first(r)); }),
      F('h', "OverSubscribe", "OVERSUBSCRIBE", S::kValue, [](const Row& r) { return r.part->over_subscribe; }),
      F('H', "TimeStamp", "TIMESTAMP", S::kValue, [](const Row& r) { return time_or(first(r).reason_time, "Unknown"); }),
      F('I', "PriorityJobFactor", "PRIO_JOB_FACTOR", S::kValue,
        [](const Row& r) { return std::to_string(r.part->priority_job_factor); }),
      F('l', "Time", "TIMELIMIT", S::kValue, [](const Row& r) { return limit_text(r.part->max_time, "infinite"); }),
      F('L', "DefaultTime", "DEFAULTTIME", S::kValue, [](const Row& r) {
        return r.part->default_time == kNotSet ? std::string("n/a") : limit_text(r.part->default_time, "infinite");
      }),
      F('m', "Memory", "MEMORY", S::kExact,
        [](const Row& r) { return min_plus(r, [](const NodeView& n) { return n.real_memory_mb; }); }),
      F('M', "PreemptMode", "PREEMPT_MODE", S::kValue, [](const Row& r) { return r.part->preempt_mode; }),
      F('n', "NodeHost", "HOSTNAMES", S::kNone, [](const Row& r) {
        return hostlist_of(r, [](const NodeView& n) { return n.hostname.empty() ? n.name : n.hostname; });
      }, false),
      F('N', "NodeList", "NODELIST", S::kNone, [](const Row& r) {
        return hostlist_of(r, [](const NodeView& n) { return n.name; });
      }, false),
      F('o', "NodeAddr", "NODE_ADDR", S::kNone, [](const Row& r) {
        return hostlist_of(r, [](const NodeView& n) { return n.addr.empty() ? n.name : n.addr; });
      }, false),
      F('O', "CPUsLoad", "CPU_LOAD", S::kExact, load_range),
      F('p', "PriorityTier", "PRIO_TIER", S::kValue, [](const Row& r) { return std::to_string(r.part->priority_tier); }),
      SinfoField{Field<Row>{FieldInfo{'P', "Partition", "PARTITION", true, true, '*'},
                            [](const Row& r) { return partition_name(r, true); }},
                 S::kPartition},
      F('r', "Root", "ROOT", S::kValue, [](const Row& r) { return std::string(r.part->root_only ? "yes" : "no"); }),
      F('R', "PartitionName", "PARTITION", S::kPartition, [](const Row& r) { return partition_name(r, false); }),
      F('s', "Size", "JOB_SIZE", S::kValue, [](const Row& r) { return job_size(*r.part); }),
      F('S', "AllocNodes", "ALLOCNODES", S::kValue, [](const Row& r) { return all_or(r.part->alloc_nodes); }),
      F('t', "StateCompact", "STATE", S::kValue,
        [](const Row& r) { return state_or_na(r, [](const auto& st) { return node_state_compact(st); }); }),
      F('T', "StateLong", "STATE", S::kValue,
        [](const Row& r) { return state_or_na(r, [](const auto& st) { return node_state_long(st); }); }),
      F(0, "StateComplete", "STATECOMPLETE", S::kValue,
        [](const Row& r) {
          return state_or_na(r, [](const auto& st) { return to_lower(node_state_complete(st)); });
        }),
      F('u', "User", "USER", S::kValue, [](const Row& r) { return or_text(first(r).reason_user, "Unknown"); }),
      F('U', "UserLong", "USER", S::kValue,
        [](const Row& r) {
          const auto& n = first(r);
          return n.reason_user.empty() ? std::string("Unknown")
                                       : n.reason_user + "(" + std::to_string(n.reason_uid) + ")";
        }),
      F('v', "Version", "VERSION", S::kValue, [](const Row& r) { return first(r).version; }),
      F('V', "Cluster", "CLUSTER", S::kNone, [](const Row&) { return std::string("N/A"); }),
      F('w', "Weight", "WEIGHT", S::kValue, [](const Row& r) { return std::to_string(first(r).weight); }),
      F('X', "Sockets", "SOCKETS", S::kExact,
        [](const Row& r) { return min_plus(r, [](const NodeView& n) { return n.sockets; }); }),
      F('Y', "Cores", "CORES", S::kExact,
        [](const Row& r) { return min_plus(r, [](const NodeView& n) { return n.cores_per_socket; }); }),
      F('Z', "Threads", "THREADS", S::kExact,
        [](const Row& r) { return min_plus(r, [](const NodeView& n) { return n.threads_per_core; }); }),
      F('z', "SocketCoreThread", "S:C:T", S::kExact, [](const Row& r) {
        return fmt::format("{}:{}:{}", min_plus(r, [](const NodeView& n) { return n.sockets; }),
                           min_plus(r, [](const NodeView& n) { return n.cores_per_socket; }),
                           min_plus(r, [](const NodeView& n) { return n.threads_per_core; }));
      }),
      // -O only
      // A node's own: nodes that differ go to different lines (Slurm 22.05
      // on the anchor cluster: one busy node apart from the idle ones).
      F(0, "AllocMem", "ALLOCMEM", S::kValue, [](const Row& r) { return std::to_string(first(r).alloc_memory_mb); }),
      F(0, "Comment", "COMMENT", S::kValue, [](const Row& r) { return or_text(first(r).comment, "(null)"); }),
      F(0, "Extra", "EXTRA", S::kValue, [](const Row& r) { return or_text(first(r).extra, "(null)"); }),
      F(0, "Port", "PORT", S::kValue, [](const Row& r) { return std::to_string(first(r).port); }),
  };
  return table;
}

const std::vector<Field<SinfoRow>>& sinfo_fields() {
  static const std::vector<Field<SinfoRow>> fields = [] {
    std::vector<Field<SinfoRow>> v;
    for (const auto& f : sinfo_field_table()) v.push_back(f.field);
    return v;
  }();
  return fields;
}

}  // namespace drover::cli
