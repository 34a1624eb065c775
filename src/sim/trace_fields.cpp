#include "sim/trace_fields.hpp"

#include <fmt/format.h>

#include "common/strings.hpp"

namespace drover::sim {

Error field_error(const std::string& name, int64_t line, std::string_view field, std::string_view message) {
  return make_error(fmt::format("{}:{}: field {}: {}", name, line, field, message));
}

std::string csv_quote(std::string_view v) {
  if (v.find_first_of(",\"\n") == std::string_view::npos) return std::string(v);
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

Result<Seconds> parse_seconds(std::string_view s) {
  s = trim(s);
  if (auto n = parse_int(s)) return *n;
  if (s.find(':') == std::string_view::npos && s.find('-') == std::string_view::npos && !iequals(s, "INFINITE") &&
      !iequals(s, "UNLIMITED")) {
    return make_error(fmt::format("\"{}\" is not seconds (a whole number) or a Slurm duration (D-HH:MM:SS)", s));
  }
  return parse_duration(s);
}

Result<bool> parse_flag(std::string_view s) {
  s = trim(s);
  if (s.empty() || iequals(s, "no") || iequals(s, "false") || s == "0") return false;
  if (iequals(s, "yes") || iequals(s, "true") || s == "1") return true;
  return make_error(fmt::format("\"{}\" is not yes/no, true/false or 1/0", s));
}

namespace {

struct DepWord {
  std::string_view word;
  core::DepKind kind;
};
constexpr DepWord kDepWords[] = {{"after", core::DepKind::kAfter},           {"afterany", core::DepKind::kAfterAny},
                                 {"afterok", core::DepKind::kAfterOk},       {"afternotok", core::DepKind::kAfterNotOk},
                                 {"singleton", core::DepKind::kSingleton}};

// "12", "96_2", "5+10" (after: only) into one item of `kind`.
Result<core::DepItem> dep_item(std::string_view text, core::DepKind kind) {
  core::DepItem item;
  item.kind = kind;
  std::string_view id = text;
  if (auto plus = text.find('+'); plus != std::string_view::npos) {
    auto minutes = parse_int(text.substr(plus + 1));
    if (!minutes || kind != core::DepKind::kAfter) {
      return make_error(fmt::format("\"{}\": +minutes is only allowed after after:", text));
    }
    item.delay = *minutes * 60;
    id = text.substr(0, plus);
  }
  if (auto us = id.find('_'); us != std::string_view::npos) {
    auto task = parse_int(id.substr(us + 1));
    if (!task) return make_error(fmt::format("\"{}\" is not JOBID_TASK", text));
    item.array_task = *task;
    id = id.substr(0, us);
  }
  auto job = parse_int(id);
  if (!job || *job <= 0) return make_error(fmt::format("\"{}\" is not a job id", text));
  item.job = *job;
  return item;
}

Status dep_clause(std::string_view clause, core::Dependency& out) {
  auto parts = split(clause, ':');
  if (parts.size() == 1 && parse_int(parts[0])) {
    auto item = dep_item(parts[0], core::DepKind::kAfterAny);
    if (!item) return item.error();
    out.items.push_back(*item);
    return {};
  }
  const DepWord* word = nullptr;
  for (const auto& w : kDepWords)
    if (iequals(w.word, parts[0])) word = &w;
  if (!word) return make_error(fmt::format("unknown dependency type \"{}\" (after, afterany, afterok, afternotok, singleton)", parts[0]));
  if (word->kind == core::DepKind::kSingleton) {
    if (parts.size() != 1) return make_error("singleton takes no job ids");
    out.items.push_back(core::DepItem{core::DepKind::kSingleton, 0, -1, 0});
    return {};
  }
  if (parts.size() < 2) return make_error(fmt::format("\"{}\" names no job id", clause));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    auto item = dep_item(parts[i], word->kind);
    if (!item) return item.error();
    out.items.push_back(*item);
  }
  return {};
}

}  // namespace

Result<core::Dependency> parse_dependency(std::string_view s) {
  s = trim(s);
  core::Dependency dep;
  if (s.empty()) return dep;
  bool all = s.find(',') != std::string_view::npos;
  dep.any = s.find('?') != std::string_view::npos;
  if (all && dep.any) return make_error("',' (all of) and '?' (any of) cannot be mixed");
  for (const auto& clause : split(s, dep.any ? '?' : ',')) {
    if (auto st = dep_clause(clause, dep); !st) return st.error();
  }
  return dep;
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil, written out here).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

Result<int64_t> parse_iso_utc(std::string_view s) {
  s = trim(s);
  auto bad = [&] { return make_error(fmt::format("\"{}\" is not a time stamp YYYY-MM-DDTHH:MM:SS", s)); };
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return bad();
  auto num = [&](std::size_t pos, std::size_t len) { return parse_int(s.substr(pos, len)); };
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), sec = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !sec) return bad();
  if (*mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *sec > 60) return bad();
  return days_from_civil(*y, *mo, *d) * 86400 + *h * 3600 + *mi * 60 + *sec;
}

}  // namespace drover::sim
