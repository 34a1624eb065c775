#include "common/rlimits.hpp"

#include <cstdint>

#include "common/strings.hpp"

namespace drover {

const std::vector<RlimitKind>& rlimit_kinds() {
  static const std::vector<RlimitKind> kinds = {
      {"AS", RLIMIT_AS},           {"CORE", RLIMIT_CORE},     {"CPU", RLIMIT_CPU},       {"DATA", RLIMIT_DATA},
      {"FSIZE", RLIMIT_FSIZE},     {"MEMLOCK", RLIMIT_MEMLOCK}, {"NOFILE", RLIMIT_NOFILE}, {"NPROC", RLIMIT_NPROC},
      {"RSS", RLIMIT_RSS},         {"STACK", RLIMIT_STACK},
  };
  return kinds;
}

namespace {

unsigned all_kinds() { return (1u << rlimit_kinds().size()) - 1; }

std::string value_text(rlim_t v) { return v == RLIM_INFINITY ? "unlimited" : std::to_string(v); }

}  // namespace

Result<unsigned> parse_rlimit_list(std::string_view text) {
  if (trim(text).empty()) return all_kinds();
  unsigned bits = 0;
  for (const auto& raw : split(text, ',')) {
    const std::string word(trim(raw));
    if (iequals(word, "ALL")) {
      bits = all_kinds();
      continue;
    }
    if (iequals(word, "NONE")) continue;
    bool known = false;
    for (std::size_t i = 0; i < rlimit_kinds().size(); ++i) {
      if (iequals(word, rlimit_kinds()[i].name)) {
        bits |= 1u << i;
        known = true;
      }
    }
    if (!known) return make_error("Bad rlimit name: " + word);
  }
  return bits;
}

Result<unsigned> check_propagation_keys(std::string_view conf_list, std::string_view conf_except) {
  const bool list = !trim(conf_list).empty(), except = !trim(conf_except).empty();
  if (list && except) {
    return make_error("PropagateResourceLimits and PropagateResourceLimitsExcept exclude each other: give one");
  }
  if (except) {
    auto out = parse_rlimit_list(conf_except);
    if (!out) return make_error("PropagateResourceLimitsExcept=" + std::string(conf_except) + ": " + out.error().message);
    return all_kinds() & ~*out;
  }
  auto in = parse_rlimit_list(conf_list);
  if (!in) return make_error("PropagateResourceLimits=" + std::string(conf_list) + ": " + in.error().message);
  return *in;
}

Result<unsigned> rlimits_to_propagate(const std::optional<std::string>& option, std::string_view conf_list,
                                      std::string_view conf_except) {
  if (option) return parse_rlimit_list(*option);
  return check_propagation_keys(conf_list, conf_except);
}

std::vector<std::pair<std::string, std::string>> rlimit_env(unsigned chosen) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < rlimit_kinds().size(); ++i) {
    if (!(chosen & (1u << i))) continue;
    struct rlimit r {};
    if (getrlimit(static_cast<__rlimit_resource_t>(rlimit_kinds()[i].resource), &r) != 0) continue;
    out.emplace_back(std::string(kRlimitEnvPrefix) + rlimit_kinds()[i].name, value_text(r.rlim_cur));
  }
  return out;
}

std::vector<PropagatedLimit> take_rlimits(std::map<std::string, std::string>& env) {
  std::vector<PropagatedLimit> out;
  for (auto it = env.lower_bound(std::string(kRlimitEnvPrefix));
       it != env.end() && std::string_view(it->first).substr(0, kRlimitEnvPrefix.size()) == kRlimitEnvPrefix;) {
    const std::string_view name = std::string_view(it->first).substr(kRlimitEnvPrefix.size());
    for (const auto& k : rlimit_kinds()) {
      if (name != k.name) continue;
      if (it->second == "unlimited") {
        out.push_back({k.resource, k.name, RLIM_INFINITY});
      } else if (auto v = parse_int(it->second); v && *v >= 0) {
        out.push_back({k.resource, k.name, static_cast<rlim_t>(*v)});
      }
    }
    it = env.erase(it);
  }
  return out;
}

RlimitPlan plan_rlimit(const PropagatedLimit& want, const struct rlimit& have) {
  RlimitPlan p{have, {}};
  p.limit.rlim_cur = want.value;
  if (have.rlim_max != RLIM_INFINITY && (want.value == RLIM_INFINITY || want.value > have.rlim_max)) {
    p.limit.rlim_cur = have.rlim_max;
    p.note = std::string("RLIMIT_") + want.name + " of " + value_text(want.value) +
             " from the submit host is above this node's hard limit; the task has " + value_text(have.rlim_max);
  }
  return p;
}

}  // namespace drover
