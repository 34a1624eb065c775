#include "common/dependency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

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

Result<DependencyTarget> parse_dep_target(std::string_view t, DependencyType type) {
  DependencyTarget target;
  std::string_view id = t;
  if (auto plus = t.find('+'); plus != std::string_view::npos) {
    auto minutes = count_of(t.substr(plus + 1), true);
    if (!minutes || type != DependencyType::kAfter)
      return make_error(fmt::format("\"{}\": a +minutes delay is only allowed with after:", t));
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
    auto t = parse_dep_target(parts[0], DependencyType::kAfterAny);
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
    auto t = parse_dep_target(parts[i], clause.type);
    if (!t) return t.error();
    clause.targets.push_back(*t);
  }
  return clause;
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
