#include <cctype>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "common/strings.hpp"
#include "sim/trace.hpp"
#include "sim/trace_fields.hpp"

namespace drover::sim {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && iequals(s.substr(s.size() - suffix.size()), suffix);
}

std::string_view first_content_line(const std::string& text) {
  std::string_view found;
  (void)for_each_line(text, [&](int64_t, std::string_view line) -> Status {
    line = trim(line);
    if (line.empty() || line[0] == '#') return {};
    found = line;
    return make_error("stop");
  });
  return found;
}

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(fmt::format("cannot read trace {}: no such file or not readable", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status check_unique_ids(const Trace& t) {
  std::map<core::JobId, const TraceJob*> seen;
  for (const auto& j : t.jobs) {
    auto [it, fresh] = seen.emplace(j.spec.id, &j);
    if (!fresh) {
      return make_error(fmt::format("{}: field id: job {} is given twice (first at {})", j.where, j.label,
                                    it->second->where));
    }
  }
  return {};
}

Seconds adjusted_limit(Seconds limit, const TraceOptions& o) {
  if (limit < 0 || limit == kInfinite) return limit;
  double scaled = std::llround(static_cast<double>(limit) * o.limit_scale) + static_cast<double>(o.limit_shift);
  return std::max<Seconds>(1, static_cast<Seconds>(scaled));
}

}  // namespace

namespace {

std::string format_of_name(const std::string& path) {
  if (ends_with(path, ".swf")) return "swf";
  if (ends_with(path, ".csv")) return "csv";
  if (ends_with(path, ".jsonl") || ends_with(path, ".ndjson") || ends_with(path, ".json")) return "jsonl";
  return "";
}

std::string format_of_text(const std::string& text) {
  std::string_view first = first_content_line(text);
  if (first.empty()) return "swf";
  if (first[0] == ';' || std::isdigit(static_cast<unsigned char>(first[0]))) return "swf";
  if (first[0] == '{') return "jsonl";
  if (istarts_with(first, "$ sacct") || to_lower(first).find("jobid") != std::string::npos) return "sacct";
  return "csv";
}

}  // namespace

std::string guess_format(const std::string& path, const std::string& text) {
  std::string by_name = format_of_name(path);
  return by_name.empty() ? format_of_text(text) : by_name;
}

Status apply_trace_options(Trace& t, const TraceOptions& o) {
  if (auto st = check_unique_ids(t); !st) return st;
  const auto total = static_cast<int64_t>(t.jobs.size());
  if (o.first < 0 || (o.first > 0 && o.first >= total)) {
    return make_error(fmt::format("--jobs {}:{}: the trace has {} jobs (FIRST counts from 0)", o.first, o.count, total));
  }
  int64_t end = o.count < 0 ? total : std::min(total, o.first + o.count);
  if (o.first > 0 || end < total) {
    t.jobs = std::vector<TraceJob>(t.jobs.begin() + o.first, t.jobs.begin() + end);
    t.notes.push_back(fmt::format("jobs {} to {} of {} (--jobs {}:{})", o.first, end - 1, total, o.first, end - o.first));
  }
  for (auto& j : t.jobs) {
    if (j.spec.time_limit < 0 && o.missing_limit == MissingLimit::kRunTime) j.spec.time_limit = std::max<Seconds>(1, j.run_time);
    j.spec.time_limit = adjusted_limit(j.spec.time_limit, o);
    if (o.run_to_limit) j.run_time = -1;
  }
  return {};
}

Result<Trace> load_trace(const std::string& path, const TraceOptions& opts) {
  auto text = read_file(path);
  if (!text) return text.error();
  std::string format = opts.format.empty() ? guess_format(path, *text) : to_lower(opts.format);
  Result<Trace> t = make_error("");
  if (format == "swf") {
    t = read_swf(*text, path, opts.swf);
  } else if (format == "csv") {
    t = read_native_csv(*text, path);
  } else if (format == "jsonl") {
    t = read_native_jsonl(*text, path);
  } else if (format == "sacct") {
    t = read_sacct(*text, path);
  } else {
    return make_error(fmt::format("--format {}: expected swf, csv, jsonl or sacct", opts.format));
  }
  if (!t) {
    // The name chose the format, and the first line looks like another one
    // (`drover sim gen > jobs.swf` writes CSV): say so.
    if (std::string by_text = format_of_text(*text); opts.format.empty() && !format_of_name(path).empty() &&
                                                      by_text != format) {
      return make_error(fmt::format("{} (the format {} comes from the file's name, but its first line looks like {}: "
                                    "rename it or pass --format {})",
                                    t.error().message, format, by_text, by_text));
    }
    return t.error();
  }
  if (auto st = apply_trace_options(*t, opts); !st) return st.error();
  return t;
}

}  // namespace drover::sim
