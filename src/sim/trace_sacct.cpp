// A site's own history as `sacct` prints it: `--parsable2` ('|' between
// fields, a header row first; `--parsable`'s trailing '|' is accepted too),
// or sacct's default fixed-width table (a header row, then a row of dashes
// that marks each column). Lines of a captured session ("$ sacct ...",
// "[exit 0]") are skipped. Step rows ("93.batch") are not jobs and are
// skipped; so are jobs that never started.
#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common/strings.hpp"
#include "common/tres.hpp"
#include "sim/trace.hpp"
#include "sim/trace_fields.hpp"

namespace drover::sim {
namespace {

// Column positions for the fixed-width form: [begin, end) of each dash run.
using Spans = std::vector<std::pair<std::size_t, std::size_t>>;

bool is_dash_row(std::string_view line) {
  auto t = trim(line);
  return !t.empty() && t.find_first_not_of("- ") == std::string_view::npos;
}

Spans dash_spans(std::string_view line) {
  Spans spans;
  std::size_t i = 0;
  while (i < line.size()) {
    if (line[i] != '-') {
      ++i;
      continue;
    }
    std::size_t b = i;
    while (i < line.size() && line[i] == '-') ++i;
    spans.emplace_back(b, i);
  }
  return spans;
}

std::vector<std::string> cut(std::string_view line, const Spans& spans) {
  std::vector<std::string> out;
  for (auto [b, e] : spans) {
    out.emplace_back(b < line.size() ? trim(line.substr(b, e - b)) : std::string_view());
  }
  return out;
}

std::vector<std::string> pipe_fields(std::string_view line, std::size_t want) {
  auto f = split(line, '|');
  if (f.size() == want + 1 && f.back().empty()) f.pop_back();  // --parsable's trailing '|'
  for (auto& v : f) v = std::string(trim(v));
  return f;
}

// One data row, by lower-case column name.
class Row {
 public:
  Row(const std::vector<std::string>& names, std::vector<std::string> values) : values_(std::move(values)) {
    for (std::size_t i = 0; i < names.size() && i < values_.size(); ++i) index_[names[i]] = i;
  }
  bool has(const std::string& col) const { return index_.count(col) > 0; }
  std::string get(const std::string& col) const {
    auto it = index_.find(col);
    return it == index_.end() ? std::string() : values_[it->second];
  }

 private:
  std::vector<std::string> values_;
  std::map<std::string, std::size_t> index_;
};

bool no_time(std::string_view v) { return v.empty() || iequals(v, "Unknown") || iequals(v, "None"); }

struct Ctx {
  const std::string& name;
  int64_t line;
  Error err(std::string_view field, std::string_view msg) const { return field_error(name, line, field, msg); }
};

Result<std::optional<int64_t>> time_field(const Row& r, const std::string& col, const Ctx& c) {
  auto v = r.get(col);
  if (no_time(v)) return std::optional<int64_t>();
  auto t = parse_iso_utc(v);
  if (!t) return c.err(col, t.error().message);
  return std::optional<int64_t>(*t);
}

// Run time: End - Start, else Elapsed; nullopt for a job still running.
Result<std::optional<Seconds>> run_time(const Row& r, int64_t start, const Ctx& c) {
  auto end = time_field(r, "end", c);
  if (!end) return end.error();
  if (*end) return std::optional<Seconds>(std::max<int64_t>(0, **end - start));
  if (r.has("elapsed") && !r.get("elapsed").empty() && !iequals(r.get("state"), "RUNNING")) {
    auto e = parse_duration(r.get("elapsed"));
    if (!e) return c.err("elapsed", e.error().message);
    return std::optional<Seconds>(*e);
  }
  return std::optional<Seconds>();
}

Result<TresMap> job_tres(const Row& r, const Ctx& c) {
  for (const char* col : {"reqtres", "alloctres"}) {
    if (r.get(col).empty()) continue;
    auto t = parse_tres(r.get(col));
    if (!t) return c.err(col, t.error().message);
    if (t->count("cpu")) return *t;
  }
  for (const char* col : {"reqcpus", "alloccpus", "ncpus"}) {
    if (r.get(col).empty()) continue;
    auto n = parse_int(r.get(col));
    if (!n) return c.err(col, fmt::format("\"{}\" is not a CPU count", r.get(col)));
    TresMap t{{"cpu", *n}};
    if (auto nodes = parse_int(r.get("nnodes"))) t["node"] = *nodes;
    return t;
  }
  return c.err("ReqTRES", "no CPU count: give ReqTRES or AllocTRES (or ReqCPUS/AllocCPUS/NCPUS)");
}

// The GPU request: per node when it divides evenly, else per job.
void gpu_request(const TresMap& tres, int32_t nodes, core::JobSpec& s) {
  for (const auto& [name, count] : tres) {
    if (name.rfind("gres/gpu:", 0) != 0 || count <= 0) continue;
    std::string type = name.substr(9);
    if (count % nodes == 0) {
      s.gres.push_back(GresSpec{"gpu", type, count / nodes, false});
    } else {
      s.gpus = core::GpuReq{type, static_cast<int32_t>(count)};
    }
    return;  // a job holds one GPU type; the untyped total repeats it
  }
  auto it = tres.find("gres/gpu");
  if (it == tres.end() || it->second <= 0) return;
  if (it->second % nodes == 0) {
    s.gres.push_back(GresSpec{"gpu", "", it->second / nodes, false});
  } else {
    s.gpus = core::GpuReq{"", static_cast<int32_t>(it->second)};
  }
}

void fill_request(const TresMap& tres, core::JobSpec& s) {
  auto get = [&](const char* k, int64_t d) { auto it = tres.find(k); return it == tres.end() ? d : it->second; };
  int32_t nodes = static_cast<int32_t>(std::max<int64_t>(1, get("node", 1)));
  int64_t cpus = std::max<int64_t>(1, get("cpu", 1));
  s.min_nodes = nodes;
  s.ntasks = static_cast<int32_t>(cpus);
  if (cpus % nodes == 0) s.ntasks_per_node = static_cast<int32_t>(cpus / nodes);
  s.cpus_per_task = 1;
  if (int64_t mem = get("mem", -1); mem > 0) s.mem_per_node_mb = (mem + nodes - 1) / nodes;
  gpu_request(tres, nodes, s);
}

Result<Seconds> time_limit(const Row& r, const Ctx& c) {
  auto v = r.get("timelimit");
  if (v.empty() || iequals(v, "Partition_Limit")) return Seconds{-1};
  auto d = parse_duration(v);
  if (!d) return c.err("Timelimit", d.error().message);
  return *d;
}

// The job of a row, or nullopt with a skip reason.
struct RowJob {
  std::optional<TraceJob> job;
  std::string skip;
  bool running = false;
};

Result<RowJob> row_job(const Row& r, const Ctx& c) {
  std::string id = r.get("jobid");
  if (id.empty()) return c.err("JobID", "empty");
  if (id.find('.') != std::string::npos) return RowJob{std::nullopt, "job steps (not jobs)"};
  if (id.find('[') != std::string::npos || id.find('+') != std::string::npos) {
    return RowJob{std::nullopt, "pending array ranges and heterogeneous jobs"};
  }
  auto start = time_field(r, "start", c);
  if (!start) return start.error();
  auto submit = time_field(r, "submit", c);
  if (!submit) return submit.error();
  std::string state = to_upper(r.get("state"));
  bool allocated = !r.get("alloctres").empty() || parse_int(r.get("alloccpus")).value_or(0) > 0;
  bool started = *start || (!r.has("start") && allocated);
  if (!started || state.rfind("PENDING", 0) == 0) return RowJob{std::nullopt, "jobs that never started"};
  TraceJob j;
  j.label = id;
  j.spec.submit_time = *submit ? **submit : (*start ? **start : 0);
  auto run = run_time(r, *start ? **start : 0, c);
  if (!run) return run.error();
  auto limit = time_limit(r, c);
  if (!limit) return limit.error();
  j.spec.time_limit = *limit;
  RowJob out;
  out.running = state.rfind("RUNNING", 0) == 0;
  if (!*run && !out.running) return c.err("End", "no run time: give End and Start, or Elapsed");
  if (*run) {
    j.run_time = **run;
  } else if (*limit > 0 && *limit != kInfinite) {
    j.run_time = *limit;  // still running: assume it runs to its limit
  } else if (!r.get("elapsed").empty()) {
    auto e = parse_duration(r.get("elapsed"));  // still running, no limit known: what it has run so far
    if (!e) return c.err("Elapsed", e.error().message);
    j.run_time = *e;
  } else {
    return c.err("End", "no run time: give End and Start, or Elapsed");
  }
  auto tres = job_tres(r, c);
  if (!tres) return tres.error();
  fill_request(*tres, j.spec);
  j.spec.user = r.get("user").empty() ? "user" : r.get("user");
  j.spec.account = r.get("account").empty() ? "default" : r.get("account");
  j.spec.qos = r.get("qos");
  if (!r.get("partition").empty()) j.spec.partitions = split(r.get("partition"), ',');
  j.spec.constraint = r.get("constraints");
  j.spec.name = r.get("jobname");
  j.fails = state.rfind("FAILED", 0) == 0 || state.rfind("OUT_OF_ME", 0) == 0 || state.rfind("NODE_FAIL", 0) == 0 ||
            state.rfind("CANCELLED", 0) == 0;
  j.where = fmt::format("{}:{}", c.name, c.line);
  out.job = std::move(j);
  return out;
}

// Numeric ids: "96_0" keeps 96 as its array job; each row gets its own id.
void assign_ids(Trace& t) {
  std::map<std::string, core::JobId> used;
  core::JobId next = 1;
  for (const auto& j : t.jobs) {
    auto n = parse_int(j.label.substr(0, j.label.find('_')));
    if (n) next = std::max(next, *n + 1);
  }
  for (auto& j : t.jobs) {
    auto us = j.label.find('_');
    if (us == std::string::npos) {
      j.spec.id = parse_int(j.label).value_or(next++);
      continue;
    }
    j.spec.array_job_id = parse_int(j.label.substr(0, us)).value_or(0);
    j.spec.array_task_id = static_cast<int32_t>(parse_int(j.label.substr(us + 1)).value_or(0));
    j.spec.id = j.spec.array_task_id == 0 && j.spec.array_job_id > 0 && !used.count(j.label.substr(0, us))
                    ? j.spec.array_job_id
                    : next++;
    used[j.label.substr(0, us)] = j.spec.id;
  }
}

// Times as seconds after the first submit.
void rebase(Trace& t) {
  if (t.jobs.empty()) return;
  int64_t t0 = t.jobs.front().spec.submit_time;
  for (const auto& j : t.jobs) t0 = std::min(t0, j.spec.submit_time);
  for (auto& j : t.jobs) j.spec.submit_time -= t0;
}

}  // namespace

Result<Trace> read_sacct(const std::string& text, const std::string& name) {
  Trace t;
  t.format = "sacct";
  std::vector<std::string> header;
  std::string header_line;
  int64_t header_no = 0;
  Spans spans;
  bool piped = false;
  std::map<std::string, int64_t> skips;
  int64_t running = 0;
  Status st = for_each_line(text, [&](int64_t line_no, std::string_view line) -> Status {
    if (trim(line).empty() || line.rfind("$ ", 0) == 0 || line.rfind("[exit", 0) == 0) return {};
    if (header.empty() && header_line.empty()) {
      header_line = std::string(line);
      header_no = line_no;
      piped = line.find('|') != std::string_view::npos;
      if (piped) {
        for (const auto& f : pipe_fields(line, 0)) header.push_back(to_lower(f));
        if (!header.empty() && header.back().empty()) header.pop_back();
      }
      return {};
    }
    if (header.empty()) {  // fixed-width: this must be the dash row
      if (!is_dash_row(line)) {
        return field_error(name, line_no, "header",
                           "expected `sacct --parsable2` ('|' between fields) or sacct's table (a row of dashes under the header)");
      }
      spans = dash_spans(line);
      for (auto& h : cut(header_line, spans)) header.push_back(to_lower(h));
      return {};
    }
    auto values = piped ? pipe_fields(line, header.size()) : cut(line, spans);
    if (values.size() != header.size()) {
      return field_error(name, line_no, "row",
                         fmt::format("{} fields, but the header (line {}) names {}", values.size(), header_no, header.size()));
    }
    auto rj = row_job(Row(header, std::move(values)), Ctx{name, line_no});
    if (!rj) return rj.error();
    if (!rj->job) {
      ++skips[rj->skip];
      return {};
    }
    running += rj->running;
    t.jobs.push_back(std::move(*rj->job));
    return {};
  });
  if (!st) return st.error();
  if (header.empty()) return make_error(fmt::format("{}:1: field header: no sacct header row", name));
  if (std::find(header.begin(), header.end(), "jobid") == header.end()) {
    return field_error(name, header_no, "JobID", "the header has no JobID column");
  }
  if (std::find(header.begin(), header.end(), "submit") == header.end()) {
    t.notes.push_back("no Submit column: every job is submitted at its Start, or at time 0 when that is missing too");
  }
  for (const auto& [why, n] : skips) {
    t.skipped += n;
    t.notes.push_back(fmt::format("{} row(s) skipped: {}", n, why));
  }
  if (running) {
    t.notes.push_back(fmt::format(
        "{} job(s) still running: each runs to its time limit (or, with none, for the time elapsed so far)", running));
  }
  assign_ids(t);
  rebase(t);
  return t;
}

}  // namespace drover::sim
