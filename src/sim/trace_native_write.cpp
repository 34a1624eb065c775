// Writing Drover's native trace format (what `drover sim gen` produces).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <optional>

#include "common/dependency.hpp"
#include "common/gres.hpp"
#include "common/strings.hpp"
#include "common/units.hpp"
#include "sim/trace.hpp"
#include "sim/trace_fields.hpp"

namespace drover::sim {
namespace {

DependencyType dep_type(core::DepKind k) {
  switch (k) {
    case core::DepKind::kAfter: return DependencyType::kAfter;
    case core::DepKind::kAfterAny: return DependencyType::kAfterAny;
    case core::DepKind::kAfterOk: return DependencyType::kAfterOk;
    case core::DepKind::kAfterNotOk: return DependencyType::kAfterNotOk;
    case core::DepKind::kAfterCorr: return DependencyType::kAfterCorr;
    case core::DepKind::kSingleton: return DependencyType::kSingleton;
  }
  return DependencyType::kAfterAny;
}

// One clause per item ("afterok:3,afterany:4"): it reads back to the same items.
std::string dependency_text(const core::Dependency& d) {
  DependencySpec spec;
  spec.any_of = d.any;
  for (const auto& item : d.items) {
    DependencyClause c;
    c.type = dep_type(item.kind);
    if (item.kind != core::DepKind::kSingleton) {
      c.targets.push_back(DependencyTarget{
          item.job, item.array_task >= 0 ? std::optional<int64_t>(item.array_task) : std::nullopt, item.delay});
    }
    spec.clauses.push_back(std::move(c));
  }
  return spec.clauses.empty() ? std::string() : format_dependency(spec);
}

std::string gpus_text(const core::GpuReq& g) {
  if (g.count <= 0) return {};
  return g.type.empty() ? std::to_string(g.count) : g.type + ":" + std::to_string(g.count);
}

std::string positive(int64_t v) { return v > 0 ? std::to_string(v) : std::string(); }

std::string mem_text(int64_t mb) { return mb >= 0 ? format_memory_mb(mb) : std::string(); }

std::string nodes_text(const core::JobSpec& s) {
  if (s.min_nodes <= 0) return {};
  if (s.max_nodes > s.min_nodes) return fmt::format("{}-{}", s.min_nodes, s.max_nodes);
  return std::to_string(s.min_nodes);
}

std::string limit_text(Seconds limit) {
  if (limit == kInfinite) return "UNLIMITED";
  return limit >= 0 ? std::to_string(limit) : std::string();
}

std::vector<std::pair<const char*, std::string>> fields(const TraceJob& j) {
  const core::JobSpec& s = j.spec;
  return {
      {"id", std::to_string(s.id)},
      {"name", s.name},
      {"user", s.user},
      {"account", s.account},
      {"partition", join(s.partitions, ",")},
      {"qos", s.qos},
      {"submit", std::to_string(s.submit_time)},
      {"nodes", nodes_text(s)},
      {"ntasks", positive(s.ntasks)},
      {"ntasks_per_node", positive(s.ntasks_per_node)},
      {"cpus_per_task", positive(s.cpus_per_task)},
      {"mem", mem_text(s.mem_per_node_mb)},
      {"mem_per_cpu", mem_text(s.mem_per_cpu_mb)},
      {"gres", s.gres.empty() ? std::string() : format_gres_list(s.gres)},
      {"gpus", gpus_text(s.gpus)},
      {"gpus_per_node", gpus_text(s.gpus_per_node)},
      {"constraint", s.constraint},
      {"exclusive", s.exclusive ? "yes" : ""},
      {"time_limit", limit_text(s.time_limit)},
      {"run_time", std::to_string(j.run_time)},
      {"state", j.fails ? "FAILED" : ""},
      {"dependency", dependency_text(s.dependency)},
      {"array_job", positive(s.array_job_id)},
      {"array_task", s.array_job_id > 0 ? std::to_string(s.array_task_id) : std::string()},
  };
}

}  // namespace

std::string write_native_csv(const std::vector<TraceJob>& jobs) {
  std::string out;
  TraceJob blank;
  std::vector<std::string> names;
  for (const auto& [name, value] : fields(blank)) names.emplace_back(name);
  out += join(names, ",") + "\n";
  for (const auto& j : jobs) {
    std::vector<std::string> values;
    for (const auto& [name, value] : fields(j)) values.push_back(csv_quote(value));
    out += join(values, ",") + "\n";
  }
  return out;
}

std::string write_native_jsonl(const std::vector<TraceJob>& jobs) {
  std::string out;
  for (const auto& j : jobs) {
    nlohmann::ordered_json obj;
    for (const auto& [name, value] : fields(j)) {
      if (value.empty()) continue;
      auto n = parse_int(value, true);
      if (n) {
        obj[name] = *n;  // counts and seconds as JSON numbers
      } else {
        obj[name] = value;
      }
    }
    out += obj.dump() + "\n";
  }
  return out;
}

}  // namespace drover::sim
