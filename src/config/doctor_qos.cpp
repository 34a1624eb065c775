// Checks of QOS definitions against the cluster they govern: limits on
// resources the cluster does not have, and limits that can never bind because
// they exceed the whole cluster (or every node, or every partition's MaxTime).
// Seed 4.2: QOS is what enforces fairness; a limit that never binds enforces
// nothing while looking as if it did.
#include <algorithm>

#include "common/duration.hpp"
#include "common/strings.hpp"
#include "common/units.hpp"
#include "config/doctor_internal.hpp"

namespace drover::config::doctor {
namespace {

// What the cluster has of each countable resource: totals and the largest node.
struct Inventory {
  std::map<std::string, int64_t> total;
  std::map<std::string, int64_t> node_max;
  std::set<std::string> gres_types;  // "gpu:h100", for suggestions
  std::map<std::string, int64_t> licenses;
};

void add_node(Inventory& inv, const std::map<std::string, int64_t>& node) {
  for (const auto& [name, v] : node) {
    inv.total[name] += v;
    inv.node_max[name] = std::max(inv.node_max[name], v);
  }
}

// A node's gres as TRES: "gres/gpu" in total and "gres/gpu:h100" per type,
// the types from the node line or, when it gives none, from gres.conf.
void node_gres(const Facts& f, std::size_t n, std::map<std::string, int64_t>& tres, std::set<std::string>& types) {
  std::vector<std::string> names;
  for (const auto& spec : f.cfg.nodes[n].gres) {
    if (std::find(names.begin(), names.end(), spec.name) == names.end()) names.push_back(spec.name);
  }
  for (const auto& name : names) {
    const GresCounts decl = f.declared(n, name);
    tres["gres/" + name] += decl.total;
    GresCounts typed = decl;
    if (decl.by_type.size() == 1 && decl.by_type.count("")) typed = f.from_gres_conf(n, name);
    for (const auto& [type, count] : typed.by_type) {
      if (type.empty() || count <= 0) continue;
      tres["gres/" + name + ":" + type] += count;
      types.insert(name + ":" + type);
    }
  }
}

Inventory inventory(const Facts& f) {
  Inventory inv;
  for (std::size_t n : f.unique_nodes) {
    const auto& node = f.cfg.nodes[n];
    std::map<std::string, int64_t> tres{{"cpu", node.cpus}, {"mem", node.real_memory_mb}, {"node", 1}};
    node_gres(f, n, tres, inv.gres_types);
    add_node(inv, tres);
  }
  inv.licenses = f.cfg.licenses;
  for (const auto& [name, count] : inv.licenses) inv.total["license/" + name] = count;
  return inv;
}

std::string amount(const std::string& tres, int64_t v) {
  if (tres == "mem") return format_memory_mb(v) + " of memory";
  if (tres == "cpu") return with_commas(v) + " CPUs";
  if (tres == "node") return with_commas(v) + " nodes";
  if (tres == "gres/gpu") return with_commas(v) + " GPUs";
  if (istarts_with(tres, "gres/gpu:")) return with_commas(v) + " " + tres.substr(9) + " GPUs";
  return with_commas(v) + " " + tres;
}

std::string limit_str(const std::string& tres, int64_t v) {
  return tres + "=" + (tres == "mem" ? format_memory_mb(v) : std::to_string(v));
}

struct Field {
  const char* key;
  const TresMap QosConfig::*limits;
  bool per_node;
};

constexpr Field kFields[] = {
    {"GrpTRES", &QosConfig::grp_tres, false},
    {"MaxTRESPerJob", &QosConfig::max_tres_per_job, false},
    {"MaxTRESPerNode", &QosConfig::max_tres_per_node, true},
    {"MaxTRESPerUser", &QosConfig::max_tres_per_user, false},
};

void unknown_tres(const Inventory& inv, const QosConfig& q, const Field& field, const std::string& tres,
                  Diagnostics& out) {
  const SourceLoc at = key_loc(q.key_locs, field.key, q.loc);
  std::string why, fix = "correct the name or remove the limit";
  if (istarts_with(tres, "license/")) {
    std::vector<std::string> names;
    for (const auto& [name, count] : inv.licenses) names.push_back(name);
    why = "no license " + tres.substr(8) + " is defined (" +
          (names.empty() ? std::string("Licenses= is not set") : "Licenses= defines " + join(names, ",")) + ")";
    fix = "define it in slurm.conf (Licenses=" + tres.substr(8) + ":N) or remove the limit";
  } else {
    const std::string gres = tres.substr(5);
    const auto colon = gres.find(':');
    std::vector<std::string> known(inv.gres_types.begin(), inv.gres_types.end());
    why = colon == std::string::npos
              ? "no node has any " + gres
              : "no node has a " + gres.substr(colon + 1) + " " + gres.substr(0, colon) +
                    (known.empty() ? std::string() : " (types here: " + join(known, ", ") + ")");
    if (auto near = nearest(gres, known)) fix = "correct the name (did you mean gres/" + *near + "?) or remove the limit";
  }
  out.add(Severity::kWarning, "qos-unknown-tres", at, field.key,
          "QOS " + q.name + ": " + field.key + " limits " + tres + ", but " + why +
              "; a limit on a resource the cluster lacks never applies",
          fix);
}

void never_binds(const Inventory& inv, const QosConfig& q, const Field& field, const std::string& tres, int64_t v,
                 Diagnostics& out) {
  const auto& have = field.per_node ? inv.node_max : inv.total;
  auto it = have.find(tres);
  if (it == have.end() || v <= it->second) return;
  const std::string scope = field.per_node ? "any node has (at most " : "the whole cluster has (";
  out.add(Severity::kWarning, "qos-limit-never-binds", key_loc(q.key_locs, field.key, q.loc), field.key,
          "QOS " + q.name + ": " + field.key + " " + limit_str(tres, v) + " is more than " + scope +
              amount(tres, it->second) + "), so this limit never binds",
          "lower it to the share you mean to allow, or remove it");
}

bool is_countable_elsewhere(const std::string& tres) {
  return !istarts_with(tres, "gres/") && !istarts_with(tres, "license/");
}

void tres_limits(const Inventory& inv, const QosConfig& q, Diagnostics& out) {
  for (const auto& field : kFields) {
    for (const auto& [tres, v] : q.*field.limits) {
      if (!is_countable_elsewhere(tres) && !inv.total.count(tres)) {
        unknown_tres(inv, q, field, tres, out);
      } else {
        never_binds(inv, q, field, tres, v, out);
      }
    }
  }
}

// A QOS MaxWall longer than every partition's MaxTime never binds: the
// partition limit always stops the job first.
void max_wall(const Facts& f, const QosConfig& q, Diagnostics& out) {
  if (q.max_wall == kInfinite || f.cfg.partitions.empty()) return;
  const PartitionConfig* longest = nullptr;
  for (const auto& p : f.cfg.partitions) {
    if (!longest || p.max_time > longest->max_time) longest = &p;
  }
  if (longest->max_time == kInfinite || q.max_wall <= longest->max_time) return;
  const std::string key = q.key_locs.count("MaxWall") ? "MaxWall" : "MaxTime";
  out.add(Severity::kWarning, "qos-limit-never-binds", key_loc(q.key_locs, key, q.loc), key,
          "QOS " + q.name + ": MaxWall/MaxTime " + format_duration(q.max_wall) +
              " is longer than every partition's MaxTime (the longest is " + longest->name + "'s " +
              format_duration(longest->max_time) + "), so the partition limit always ends jobs first and this "
              "limit never binds",
          "lower it below " + format_duration(longest->max_time) + ", or remove it")
      .related.push_back(key_loc(longest->key_locs, "MaxTime", longest->loc));
}

void no_qos(const Facts& f, Diagnostics& out) {
  out.add(Severity::kInfo, "no-qos", SourceLoc{f.cfg.slurm_conf_path, 0, 0}, "",
          "no QOS is defined (no qos.conf was found): nothing limits how much of the cluster one group's jobs "
          "take, and no QOS priority orders them (seed 4.2: QOS enforces fairness)",
          "add a qos.conf beside slurm.conf with the QOS jobs run under, e.g. "
          "Name=normal Priority=1000 GrpTRES=gres/gpu=<half the GPUs> (seed 4.2)");
}

}  // namespace

void check_qos(const Facts& f, Diagnostics& out) {
  if (f.cfg.qos.empty()) {
    if (f.cfg.qos_conf_path.empty()) no_qos(f, out);
    return;
  }
  const Inventory inv = inventory(f);
  for (const auto& q : f.cfg.qos) {
    // The cluster's totals are unknown while a node line is unreadable.
    if (!f.any_node_line_unreadable()) tres_limits(inv, q, out);
    max_wall(f, q, out);
  }
}

}  // namespace drover::config::doctor
