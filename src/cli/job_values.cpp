#include "cli/job_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>

#include "common/strings.hpp"

namespace drover::cli {

std::optional<int64_t> parse_count(std::string_view s, bool allow_zero) {
  auto v = parse_int(s);
  if (!v || *v < 0 || (*v == 0 && !allow_zero)) return std::nullopt;
  return v;
}

std::optional<JobStepRef> parse_job_step_ref(std::string_view text) {
  const auto dot = text.find('.');
  const std::string_view job = text.substr(0, dot);
  const auto us = job.find('_');
  JobStepRef r;
  auto id = parse_count(job.substr(0, us));
  if (!id) return std::nullopt;
  r.job = *id;
  if (us != std::string_view::npos) {
    r.array_task = parse_count(job.substr(us + 1), true);
    if (!r.array_task) return std::nullopt;
  }
  if (dot != std::string_view::npos) {
    const std::string_view step = text.substr(dot + 1);
    r.step = step == "batch" ? std::optional<int64_t>(kBatchStep) : parse_count(step, true);
    if (!r.step) return std::nullopt;
  }
  return r;
}

std::string step_id_text(int64_t step) { return step == kBatchStep ? "batch" : std::to_string(step); }

// ---- arrays -----------------------------------------------------------------

std::vector<int64_t> ArraySpec::task_ids() const {
  std::set<int64_t> ids;
  for (const auto& r : ranges)
    for (int64_t i = r.first; i <= r.last; i += r.step) ids.insert(i);
  return {ids.begin(), ids.end()};
}

namespace {

Result<ArrayRange> parse_array_range(std::string_view item, int64_t max_task_id) {
  ArrayRange r;
  std::string_view body = item;
  if (auto colon = body.find(':'); colon != std::string_view::npos) {
    auto step = parse_count(body.substr(colon + 1));
    if (!step) return make_error(fmt::format("step in \"{}\" must be a positive integer", item));
    r.step = *step;
    body = body.substr(0, colon);
  }
  auto dash = body.find('-');
  auto first = parse_count(body.substr(0, dash), true);
  auto last = dash == std::string_view::npos ? first : parse_count(body.substr(dash + 1), true);
  if (!first || !last) return make_error(fmt::format("\"{}\" is not an index or a range of indexes", item));
  if (*last < *first) return make_error(fmt::format("range \"{}\" ends before it starts", item));
  if (max_task_id > 0 && *last > max_task_id)
    return make_error(fmt::format("index {} in \"{}\" exceeds the largest allowed index {}", *last, item, max_task_id));
  r.first = *first;
  r.last = *last;
  return r;
}

}  // namespace

Result<ArraySpec> parse_array_spec(std::string_view s, int64_t max_task_id) {
  ArraySpec spec;
  std::string_view list = s;
  if (auto pct = s.find('%'); pct != std::string_view::npos) {
    auto throttle = parse_count(s.substr(pct + 1), true);
    if (!throttle) return make_error(fmt::format("throttle \"{}\" must be a number", s.substr(pct + 1)));
    spec.max_running = *throttle;
    list = s.substr(0, pct);
  }
  if (list.empty()) return make_error("no array indexes given");
  for (const auto& item : split(list, ',')) {
    auto r = parse_array_range(item, max_task_id);
    if (!r) return r.error();
    spec.ranges.push_back(*r);
  }
  return spec;
}

std::string format_array_spec(const ArraySpec& a) {
  std::vector<std::string> parts;
  for (const auto& r : a.ranges) {
    std::string p = r.first == r.last ? std::to_string(r.first) : fmt::format("{}-{}", r.first, r.last);
    if (r.step != 1) p += fmt::format(":{}", r.step);
    parts.push_back(std::move(p));
  }
  std::string out = join(parts, ",");
  if (a.max_running > 0) out += fmt::format("%{}", a.max_running);
  return out;
}

// ---- signals ------------------------------------------------------------------

namespace {
struct SigName {
  std::string_view name;
  int number;
};
constexpr std::array<SigName, 22> kSignals{{
    {"HUP", 1},   {"INT", 2},    {"QUIT", 3},  {"ILL", 4},    {"TRAP", 5},   {"ABRT", 6},
    {"BUS", 7},   {"FPE", 8},    {"KILL", 9},  {"USR1", 10},  {"SEGV", 11},  {"USR2", 12},
    {"PIPE", 13}, {"ALRM", 14},  {"TERM", 15}, {"STKFLT", 16}, {"CHLD", 17}, {"CONT", 18},
    {"STOP", 19}, {"TSTP", 20},  {"TTIN", 21}, {"TTOU", 22},
}};
}  // namespace

int signal_number(std::string_view name) {
  if (auto n = parse_int(name)) return (*n > 0 && *n < 65) ? static_cast<int>(*n) : 0;
  std::string_view bare = istarts_with(name, "SIG") ? name.substr(3) : name;
  for (const auto& s : kSignals)
    if (iequals(s.name, bare)) return s.number;
  return 0;
}

std::string signal_name(int signo) {
  for (const auto& s : kSignals)
    if (s.number == signo) return std::string(s.name);
  return std::to_string(signo);
}

Result<SignalSpec> parse_signal_spec(std::string_view s) {
  SignalSpec spec;
  std::string_view rest = s;
  while (rest.size() >= 2 && rest[1] == ':' && (rest[0] == 'B' || rest[0] == 'R')) {
    (rest[0] == 'B' ? spec.batch_shell_only : spec.reservation_overlap) = true;
    rest.remove_prefix(2);
  }
  auto at = rest.find('@');
  spec.signal = signal_number(rest.substr(0, at));
  if (spec.signal == 0) return make_error(fmt::format("\"{}\" is not a signal name or number", rest.substr(0, at)));
  if (at != std::string_view::npos) {
    auto secs = parse_count(rest.substr(at + 1), true);
    if (!secs || *secs > 65535)
      return make_error(fmt::format("time \"{}\" must be 0..65535 seconds", rest.substr(at + 1)));
    spec.lead_time = *secs;
  }
  return spec;
}

// ---- export -------------------------------------------------------------------

namespace {

// Splits on commas outside single or double quotes; quotes are removed.
std::vector<std::string> split_export_items(std::string_view s) {
  std::vector<std::string> items(1);
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0; else items.back() += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ',') {
      items.emplace_back();
    } else {
      items.back() += c;
    }
  }
  return items;
}

}  // namespace

Result<ExportSpec> parse_export_spec(std::string_view s) {
  ExportSpec spec;
  spec.all = false;
  for (const auto& item : split_export_items(s)) {
    if (iequals(item, "ALL")) {
      spec.all = true;
    } else if (iequals(item, "NONE")) {
      spec.none = true;
    } else if (item.empty()) {
      return make_error("empty variable name in the list");
    } else if (auto eq = item.find('='); eq != std::string::npos) {
      if (eq == 0) return make_error(fmt::format("\"{}\" has no variable name", item));
      spec.assigned.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    } else {
      spec.names.push_back(item);
    }
  }
  if (spec.none && spec.all) return make_error("NONE cannot be combined with ALL");
  return spec;
}

Result<Sharing> parse_exclusive(std::optional<std::string_view> value) {
  if (!value) return Sharing::kExclusive;
  if (iequals(*value, "user")) return Sharing::kExclusiveUser;
  if (iequals(*value, "mcs")) return Sharing::kExclusiveMcs;
  return make_error(fmt::format("\"{}\" is not user or mcs", *value));
}

Result<NodeRange> parse_node_range(std::string_view s) {
  auto dash = s.find('-');
  auto min = parse_count(s.substr(0, dash), true);
  auto max = dash == std::string_view::npos ? min : parse_count(s.substr(dash + 1), true);
  if (!min || !max) return make_error(fmt::format("\"{}\" is not a valid node count", s));
  if (*max < *min)
    return make_error(fmt::format("Maximum node count {} is less than minimum node count {}", *max, *min));
  return NodeRange{*min, *max};
}

Result<GpuCount> parse_gpu_count(std::string_view s) {
  GpuCount g;
  std::string_view count = s;
  if (auto colon = s.rfind(':'); colon != std::string_view::npos) {
    g.type = std::string(s.substr(0, colon));
    if (istarts_with(g.type, "gpu:")) g.type = g.type.substr(4);
    count = s.substr(colon + 1);
  }
  auto n = parse_count(count, true);
  if (!n || g.type.find(':') != std::string::npos)
    return make_error(fmt::format("\"{}\" is not [type:]count", s));
  g.count = *n;
  return g;
}

}  // namespace drover::cli
