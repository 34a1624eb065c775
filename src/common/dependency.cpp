#include "common/dependency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include "common/strings.hpp"

namespace drover {

namespace {

std::optional<int64_t> count_of(std::string_view s, bool allow_zero = false) {
  auto v = parse_int(s);
  if (!v || *v < 0 || (*v == 0 && !allow_zero)) return std::nullopt;
  return v;
}


struct DepName {
  std::string_view name;
  DependencyType type;
};
constexpr std::array<DepName, 7> kDepNames{{{"after", DependencyType::kAfter},
                                            {"afterany", DependencyType::kAfterAny},
                                            {"afterburstbuffer", DependencyType::kAfterBurstBuffer},
                                            {"aftercorr", DependencyType::kAfterCorr},
                                            {"afternotok", DependencyType::kAfterNotOk},
                                            {"afterok", DependencyType::kAfterOk},
                                            {"singleton", DependencyType::kSingleton}}};

// Far beyond any wait that means something, small enough that minutes * 60 added to a time cannot overflow.
constexpr int64_t kMaxDelayMinutes = int64_t{1} << 40;

Result<DependencyTarget> parse_dep_target(std::string_view t) {
  DependencyTarget target;
  std::string_view id = t;
  if (auto plus = t.find('+'); plus != std::string_view::npos) {
    // Slurm takes "+minutes" after any type's job id and shows it back; only after: waits for it.
    auto minutes = count_of(t.substr(plus + 1));
    if (!minutes || *minutes > kMaxDelayMinutes)
      return make_error(fmt::format("\"{}\": the delay after '+' must be a whole number of minutes, at least 1", t));
    target.delay = *minutes * 60;
    id = t.substr(0, plus);
  }
  if (auto us = id.find('_'); us != std::string_view::npos) {
    auto task = count_of(id.substr(us + 1), true);
    if (!task) return make_error(fmt::format("\"{}\" is not a job id or jobid_taskid", t));
    target.array_task = *task;
    id = id.substr(0, us);
  }
  auto job = count_of(id);
  if (!job) return make_error(fmt::format("\"{}\" is not a job id", t));
  target.job_id = *job;
  return target;
}

Result<DependencyClause> parse_dep_clause(std::string_view c) {
  DependencyClause clause;
  auto parts = split(c, ':');
  if (parts.size() == 1 && count_of(parts[0])) {  // bare job id: afterany
    auto t = parse_dep_target(parts[0]);
    if (!t) return t.error();
    clause.targets.push_back(*t);
    return clause;
  }
  auto it = std::find_if(kDepNames.begin(), kDepNames.end(),
                         [&](const DepName& n) { return iequals(n.name, parts[0]); });
  if (it == kDepNames.end()) return make_error(fmt::format("unknown dependency type \"{}\"", parts[0]));
  clause.type = it->type;
  if (clause.type == DependencyType::kSingleton) {
    if (parts.size() != 1) return make_error("singleton takes no job ids");
    return clause;
  }
  if (parts.size() < 2) return make_error(fmt::format("\"{}\" names no job id", c));
  for (std::size_t i = 1; i < parts.size(); ++i) {
    auto t = parse_dep_target(parts[i]);
    if (!t) return t.error();
    clause.targets.push_back(*t);
  }
  return clause;
}

// A job named twice with the same type counts once, as the first time it was named (Slurm keeps the
// first too, delay included): "afterok:5,afterok:5+2" is "afterok:5"; "singleton,singleton" is one.
void drop_repeats(DependencySpec& spec) {
  std::vector<std::tuple<DependencyType, int64_t, std::optional<int64_t>>> seen;
  bool singleton = false;
  std::vector<DependencyClause> kept;
  for (auto& c : spec.clauses) {
    if (c.type == DependencyType::kSingleton) {
      if (!std::exchange(singleton, true)) kept.push_back(std::move(c));
      continue;
    }
    std::erase_if(c.targets, [&](const DependencyTarget& t) {
      auto key = std::make_tuple(c.type, t.job_id, t.array_task);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) return true;
      seen.push_back(key);
      return false;
    });
    if (!c.targets.empty()) kept.push_back(std::move(c));
  }
  spec.clauses = std::move(kept);
}

}  // namespace

Result<DependencySpec> parse_dependency(std::string_view s) {
  bool has_and = s.find(',') != std::string_view::npos;
  bool has_or = s.find('?') != std::string_view::npos;
  if (has_and && has_or) return make_error("',' (all of) and '?' (any of) cannot be mixed");
  if (s.empty()) return make_error("empty dependency");
  DependencySpec spec;
  spec.any_of = has_or;
  for (const auto& c : split(s, has_or ? '?' : ',')) {
    auto clause = parse_dep_clause(c);
    if (!clause) return clause.error();
    spec.clauses.push_back(*clause);
  }
  drop_repeats(spec);
  return spec;
}

std::string dependency_type_name(DependencyType t) {
  for (const auto& n : kDepNames)
    if (n.type == t) return std::string(n.name);
  return "?";
}

std::string format_dependency(const DependencySpec& d) {
  std::vector<std::string> clauses;
  for (const auto& c : d.clauses) {
    std::string text = dependency_type_name(c.type);
    for (const auto& t : c.targets) {
      text += fmt::format(":{}", t.job_id);
      if (t.array_task) text += fmt::format("_{}", *t.array_task);
      if (t.delay > 0) text += fmt::format("+{}", t.delay / 60);
    }
    clauses.push_back(std::move(text));
  }
  return join(clauses, d.any_of ? "?" : ",");
}

}  // namespace drover
