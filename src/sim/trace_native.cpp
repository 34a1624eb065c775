// Drover's own trace format (docs/sim.md): one job per CSV row (a header row
// names the columns, in any order) or per JSON-lines object (the same names
// as keys). It carries what SWF cannot: users, accounts, partitions, QOS,
// typed GPUs, constraints, memory, dependencies.
#include <functional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/gres.hpp"
#include "common/strings.hpp"
#include "common/units.hpp"
#include "sim/trace.hpp"
#include "sim/trace_fields.hpp"

namespace drover::sim {
namespace {

using Setter = std::function<Status(TraceJob&, std::string_view)>;

struct Column {
  const char* name;
  Setter set;
};

Status set_int(int32_t& out, std::string_view v, int64_t min) {
  auto n = parse_int(trim(v), min < 0);
  if (!n || *n < min || *n > INT32_MAX) return make_error(fmt::format("\"{}\" is not a whole number >= {}", v, min));
  out = static_cast<int32_t>(*n);
  return {};
}

Status set_mem(int64_t& out, std::string_view v) {
  auto mb = parse_memory_mb(trim(v));
  if (!mb) return mb.error();
  out = *mb;
  return {};
}

// "4" or "h100:4" (a count with an optional type).
Status set_gpus(core::GpuReq& out, std::string_view v) {
  auto parts = split(trim(v), ':');
  if (parts.size() > 2) return make_error(fmt::format("\"{}\" is not [TYPE:]COUNT", v));
  auto n = parse_int(parts.back());
  if (!n || *n < 0 || *n > INT32_MAX) return make_error(fmt::format("\"{}\" is not [TYPE:]COUNT", v));
  out.count = static_cast<int32_t>(*n);
  out.type = parts.size() == 2 ? parts[0] : "";
  return {};
}

// "N" or "MIN-MAX".
Status set_nodes(core::JobSpec& s, std::string_view v) {
  auto parts = split(trim(v), '-');
  if (parts.size() > 2) return make_error(fmt::format("\"{}\" is not N or MIN-MAX", v));
  if (auto st = set_int(s.min_nodes, parts[0], 1); !st) return st;
  if (parts.size() == 2) return set_int(s.max_nodes, parts[1], s.min_nodes);
  return {};
}

Status set_licenses(core::JobSpec& s, std::string_view v) {
  for (const auto& item : split(trim(v), ',')) {
    if (item.empty()) continue;
    auto colon = item.find(':');
    auto count = colon == std::string::npos ? std::optional<int64_t>(1) : parse_int(item.substr(colon + 1));
    if (!count || *count <= 0) return make_error(fmt::format("\"{}\" is not NAME[:COUNT]", item));
    s.licenses["license/" + item.substr(0, colon)] = *count;
  }
  return {};
}

Status set_state(TraceJob& j, std::string_view v) {
  if (iequals(trim(v), "COMPLETED") || trim(v).empty()) {
    j.fails = false;
  } else if (iequals(trim(v), "FAILED")) {
    j.fails = true;
  } else {
    return make_error(fmt::format("\"{}\" is not COMPLETED or FAILED", v));
  }
  return {};
}

Status set_gres(core::JobSpec& s, std::string_view v) {
  auto list = parse_gres_list(trim(v));
  if (!list) return list.error();
  s.gres = *list;
  return {};
}

Status set_time(int64_t& out, std::string_view v) {
  auto secs = parse_seconds(v);
  if (!secs) return secs.error();
  if (*secs < 0) return make_error(fmt::format("\"{}\" is negative", v));
  out = *secs;
  return {};
}

Status set_id(int64_t& out, std::string_view v) {
  auto n = parse_int(trim(v));
  if (!n || *n <= 0) return make_error(fmt::format("\"{}\" is not a positive job number", v));
  out = *n;
  return {};
}

Status set_text(std::string& out, std::string_view v) {
  out = std::string(trim(v));
  return {};
}

const std::vector<Column>& columns() {
  static const std::vector<Column> kColumns = {
      {"id", [](TraceJob& j, std::string_view v) { return set_id(j.spec.id, v); }},
      {"name", [](TraceJob& j, std::string_view v) { return set_text(j.spec.name, v); }},
      {"user", [](TraceJob& j, std::string_view v) { return set_text(j.spec.user, v); }},
      {"account", [](TraceJob& j, std::string_view v) { return set_text(j.spec.account, v); }},
      {"partition", [](TraceJob& j, std::string_view v) {
         j.spec.partitions.clear();
         for (const auto& p : split(trim(v), ','))
           if (!p.empty()) j.spec.partitions.push_back(p);
         return Status{};
       }},
      {"qos", [](TraceJob& j, std::string_view v) { return set_text(j.spec.qos, v); }},
      {"submit", [](TraceJob& j, std::string_view v) { return set_time(j.spec.submit_time, v); }},
      {"begin", [](TraceJob& j, std::string_view v) { return set_time(j.spec.begin_time, v); }},
      {"nodes", [](TraceJob& j, std::string_view v) { return set_nodes(j.spec, v); }},
      {"ntasks", [](TraceJob& j, std::string_view v) { return set_int(j.spec.ntasks, v, 1); }},
      {"ntasks_per_node", [](TraceJob& j, std::string_view v) { return set_int(j.spec.ntasks_per_node, v, 1); }},
      {"cpus_per_task", [](TraceJob& j, std::string_view v) { return set_int(j.spec.cpus_per_task, v, 1); }},
      {"mem", [](TraceJob& j, std::string_view v) { return set_mem(j.spec.mem_per_node_mb, v); }},
      {"mem_per_cpu", [](TraceJob& j, std::string_view v) { return set_mem(j.spec.mem_per_cpu_mb, v); }},
      {"mem_per_gpu", [](TraceJob& j, std::string_view v) { return set_mem(j.spec.mem_per_gpu_mb, v); }},
      {"gres", [](TraceJob& j, std::string_view v) { return set_gres(j.spec, v); }},
      {"gpus", [](TraceJob& j, std::string_view v) { return set_gpus(j.spec.gpus, v); }},
      {"gpus_per_node", [](TraceJob& j, std::string_view v) { return set_gpus(j.spec.gpus_per_node, v); }},
      {"gpus_per_task", [](TraceJob& j, std::string_view v) { return set_gpus(j.spec.gpus_per_task, v); }},
      {"cpus_per_gpu", [](TraceJob& j, std::string_view v) { return set_int(j.spec.cpus_per_gpu, v, 1); }},
      {"constraint", [](TraceJob& j, std::string_view v) { return set_text(j.spec.constraint, v); }},
      {"nodelist", [](TraceJob& j, std::string_view v) { return set_text(j.spec.nodelist, v); }},
      {"exclude", [](TraceJob& j, std::string_view v) { return set_text(j.spec.exclude, v); }},
      {"exclusive", [](TraceJob& j, std::string_view v) {
         auto f = parse_flag(v);
         if (!f) return Status(f.error());
         j.spec.exclusive = *f;
         return Status{};
       }},
      {"licenses", [](TraceJob& j, std::string_view v) { return set_licenses(j.spec, v); }},
      {"time_limit", [](TraceJob& j, std::string_view v) { return set_time(j.spec.time_limit, v); }},
      {"run_time", [](TraceJob& j, std::string_view v) { return set_time(j.run_time, v); }},
      {"state", [](TraceJob& j, std::string_view v) { return set_state(j, v); }},
      {"dependency", [](TraceJob& j, std::string_view v) {
         auto d = parse_dependency(v);
         if (!d) return Status(d.error());
         j.spec.dependency = *d;
         return Status{};
       }},
      {"array_job", [](TraceJob& j, std::string_view v) { return set_id(j.spec.array_job_id, v); }},
      {"array_task", [](TraceJob& j, std::string_view v) { return set_int(j.spec.array_task_id, v, 0); }},
      {"array_max", [](TraceJob& j, std::string_view v) { return set_int(j.spec.array_max_running, v, 1); }},
      {"nice", [](TraceJob& j, std::string_view v) { return set_int(j.spec.nice, v, -10000); }},
  };
  return kColumns;
}

const Column* find_column(std::string_view name) {
  for (const auto& c : columns())
    if (iequals(c.name, name)) return &c;
  return nullptr;
}

std::vector<std::string> column_names() {
  std::vector<std::string> names;
  for (const auto& c : columns()) names.emplace_back(c.name);
  return names;
}

// "unknown column; did you mean mem?" (the nearest name, or one the word
// starts with), else the list of columns.
std::string unknown_column(const std::string& key, const char* what) {
  auto guess = nearest(key, column_names());
  if (!guess) {
    for (const auto& c : columns())
      if (key.size() > 2 && istarts_with(key, c.name)) guess = c.name;
  }
  if (guess) return fmt::format("unknown {}; did you mean {}?", what, *guess);
  return fmt::format("unknown {} (known: {})", what, join(column_names(), ", "));
}

// A job with the defaults a row starts from: time limit "not given" (-1).
TraceJob blank_job(int64_t row) {
  TraceJob j;
  j.spec.id = row;
  j.spec.time_limit = -1;
  j.run_time = -1;
  return j;
}

// Defaults and checks once every field of a row is in.
Status finish_job(TraceJob& j, const std::string& name, int64_t line) {
  if (j.run_time < 0) return field_error(name, line, "run_time", "missing: every job needs its run time (seconds)");
  if (j.spec.user.empty()) j.spec.user = "user";
  if (j.spec.account.empty()) j.spec.account = "default";
  j.label = std::to_string(j.spec.id);
  j.where = fmt::format("{}:{}", name, line);
  return {};
}

// CSV fields of one line: ',' separated, "quoted, with "" for a quote".
Result<std::vector<std::string>> csv_fields(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  if (quoted) return make_error("a quoted field is not closed");
  return out;
}

Result<std::vector<const Column*>> csv_header(std::string_view line, const std::string& name, int64_t line_no) {
  auto fields = csv_fields(line);
  if (!fields) return field_error(name, line_no, "header", fields.error().message);
  std::vector<const Column*> cols;
  std::set<std::string> seen;
  for (const auto& f : *fields) {
    auto key = to_lower(trim(f));
    const Column* c = find_column(key);
    if (!c) return field_error(name, line_no, key.empty() ? "header" : key, unknown_column(key, "column"));
    if (!seen.insert(key).second) return field_error(name, line_no, key, "column given twice");
    cols.push_back(c);
  }
  if (!seen.count("submit")) return field_error(name, line_no, "submit", "the header has no submit column");
  if (!seen.count("run_time")) return field_error(name, line_no, "run_time", "the header has no run_time column");
  return cols;
}

Status apply_field(TraceJob& j, const Column& c, std::string_view value, const std::string& name, int64_t line) {
  if (trim(value).empty() && std::string_view(c.name) != "state") return {};
  if (auto st = c.set(j, value); !st) return field_error(name, line, c.name, st.error().message);
  return {};
}

std::string json_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return {};
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  return v.dump();
}

}  // namespace

Result<Trace> read_native_csv(const std::string& text, const std::string& name) {
  Trace t;
  t.format = "csv";
  std::vector<const Column*> cols;
  int64_t rows = 0;
  Status st = for_each_line(text, [&](int64_t line_no, std::string_view line) -> Status {
    if (trim(line).empty() || trim(line)[0] == '#') return {};
    if (cols.empty()) {
      auto header = csv_header(line, name, line_no);
      if (!header) return header.error();
      cols = std::move(*header);
      return {};
    }
    auto fields = csv_fields(line);
    if (!fields) return field_error(name, line_no, "row", fields.error().message);
    if (fields->size() != cols.size()) {
      return field_error(name, line_no, "row",
                         fmt::format("{} fields, but the header names {} columns", fields->size(), cols.size()));
    }
    TraceJob j = blank_job(++rows);
    for (std::size_t i = 0; i < cols.size(); ++i) {
      if (auto s = apply_field(j, *cols[i], (*fields)[i], name, line_no); !s) return s;
    }
    if (auto s = finish_job(j, name, line_no); !s) return s;
    t.jobs.push_back(std::move(j));
    return {};
  });
  if (!st) return st.error();
  if (cols.empty()) return make_error(fmt::format("{}:1: field header: the file has no header row", name));
  return t;
}

Result<Trace> read_native_jsonl(const std::string& text, const std::string& name) {
  Trace t;
  t.format = "jsonl";
  int64_t rows = 0;
  Status st = for_each_line(text, [&](int64_t line_no, std::string_view line) -> Status {
    if (trim(line).empty()) return {};
    auto obj = nlohmann::json::parse(line, nullptr, false);
    if (obj.is_discarded() || !obj.is_object()) {
      return field_error(name, line_no, "line", "not a JSON object");
    }
    TraceJob j = blank_job(++rows);
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const Column* c = find_column(it.key());
      if (!c) return field_error(name, line_no, it.key(), unknown_column(it.key(), "key"));
      if (auto s = apply_field(j, *c, json_text(it.value()), name, line_no); !s) return s;
    }
    if (!obj.contains("submit")) return field_error(name, line_no, "submit", "missing");
    if (auto s = finish_job(j, name, line_no); !s) return s;
    t.jobs.push_back(std::move(j));
    return {};
  });
  if (!st) return st.error();
  return t;
}

}  // namespace drover::sim
