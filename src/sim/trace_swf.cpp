// The Standard Workload Format (Parallel Workloads Archive, v2.2): ';'
// header lines ("; MaxNodes: 256"), then one job per line in 18
// whitespace-separated numeric fields, -1 meaning unknown.
#include <array>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common/strings.hpp"
#include "sim/trace.hpp"
#include "sim/trace_fields.hpp"

namespace drover::sim {
namespace {

constexpr std::array<const char*, 18> kSwfFields = {
    "1 (job number)",       "2 (submit time)",          "3 (wait time)",         "4 (run time)",
    "5 (allocated processors)", "6 (average CPU time)", "7 (used memory)",       "8 (requested processors)",
    "9 (requested time)",   "10 (requested memory)",    "11 (status)",           "12 (user id)",
    "13 (group id)",        "14 (executable)",          "15 (queue)",            "16 (partition)",
    "17 (preceding job)",   "18 (think time)"};

struct SwfRecord {
  std::array<int64_t, 18> f{};
  int64_t operator[](int field) const { return f[field - 1]; }  // 1-based, as the format numbers them
};

// SWF numbers are integers, but some archives write "31405.00"; a fraction is rounded.
Result<SwfRecord> split_record(std::string_view line, const std::string& name, int64_t line_no) {
  SwfRecord r;
  std::size_t pos = 0;
  int field = 0;
  while (true) {
    while (pos < line.size() && std::isspace(static_cast<unsigned char>(line[pos]))) ++pos;
    if (pos >= line.size()) break;
    std::size_t end = pos;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end]))) ++end;
    if (field == 18) return field_error(name, line_no, "19", "an SWF record has 18 fields; this line has more");
    auto word = line.substr(pos, end - pos);
    auto v = parse_double(word);
    if (!v || !std::isfinite(*v)) {
      return field_error(name, line_no, kSwfFields[field], fmt::format("\"{}\" is not a number", word));
    }
    r.f[field++] = static_cast<int64_t>(std::llround(*v));
    pos = end;
  }
  if (field != 18) {
    return field_error(name, line_no, kSwfFields[field],
                       fmt::format("missing: an SWF record has 18 fields, this line has {}", field));
  }
  return r;
}

std::string lookup(const std::vector<std::pair<int64_t, std::string>>& map, int64_t key) {
  for (const auto& [k, v] : map)
    if (k == key) return v;
  return {};
}

void read_header(std::string_view line, Trace& t) {
  auto body = trim(line.substr(1));
  auto colon = body.find(':');
  if (colon == std::string_view::npos) return;
  auto key = trim(body.substr(0, colon));
  auto value = parse_int(trim(body.substr(colon + 1)));
  if (!value) return;
  if (iequals(key, "MaxNodes")) t.max_nodes = *value;
  if (iequals(key, "MaxProcs")) t.max_procs = *value;
}

// Fills the request from the processors, memory and ownership fields.
void fill_request(const SwfRecord& r, const SwfOptions& opts, core::JobSpec& s) {
  int64_t procs = r[8] > 0 ? r[8] : r[5];
  if (opts.procs == SwfProcs::kWholeNodes && opts.cpus_per_node > 0) {
    s.min_nodes = static_cast<int32_t>((procs + opts.cpus_per_node - 1) / opts.cpus_per_node);
    s.exclusive = true;
  } else {
    s.ntasks = static_cast<int32_t>(procs);
    s.cpus_per_task = 1;
    if (opts.use_memory && r[10] > 0) s.mem_per_cpu_mb = (r[10] + 1023) / 1024;
  }
  s.user = r[12] >= 0 ? fmt::format("user{}", r[12]) : "user";
  s.account = r[13] >= 0 ? fmt::format("group{}", r[13]) : "default";
  if (r[14] >= 0) s.name = fmt::format("app{}", r[14]);
  if (auto q = lookup(opts.queues, r[15]); !q.empty()) s.qos = q;
  if (auto p = lookup(opts.partitions, r[16]); !p.empty()) s.partitions = {p};
}

// Why a record is not replayed, or "" when it is.
std::string skip_reason(const SwfRecord& r) {
  if (r[1] <= 0) return "job number is not positive";
  if (r[2] < 0) return "no submit time";
  if (r[4] < 0) return "no run time";
  if ((r[8] > 0 ? r[8] : r[5]) <= 0) return "no processor count";
  return {};
}

}  // namespace

Result<Trace> read_swf(const std::string& text, const std::string& name, const SwfOptions& opts) {
  Trace t;
  t.format = "swf";
  std::map<std::string, int64_t> skips;
  Status st = for_each_line(text, [&](int64_t line_no, std::string_view line) -> Status {
    line = trim(line);
    if (line.empty()) return {};
    if (line[0] == ';') {
      read_header(line, t);
      return {};
    }
    auto rec = split_record(line, name, line_no);
    if (!rec) return rec.error();
    if (auto why = skip_reason(*rec); !why.empty()) {
      ++skips[why];
      return {};
    }
    TraceJob j;
    j.spec.id = (*rec)[1];
    j.label = std::to_string(j.spec.id);
    j.spec.submit_time = (*rec)[2];
    j.run_time = (*rec)[4];
    j.spec.time_limit = (*rec)[9] > 0 ? (*rec)[9] : -1;
    fill_request(*rec, opts, j.spec);
    j.fails = (*rec)[11] == 0;
    if (opts.feedback && (*rec)[17] > 0) {
      j.preceding = (*rec)[17];
      j.think_time = std::max<int64_t>(0, (*rec)[18]);
    }
    j.where = fmt::format("{}:{}", name, line_no);
    t.jobs.push_back(std::move(j));
    return {};
  });
  if (!st) return st.error();
  for (const auto& [why, n] : skips) {
    t.skipped += n;
    t.notes.push_back(fmt::format("{} SWF record(s) skipped: {}", n, why));
  }
  return t;
}

}  // namespace drover::sim
