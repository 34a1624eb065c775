#include "config/acct_gather.hpp"

#include "common/strings.hpp"

namespace drover::config {

Result<int64_t> task_sampling_interval(const std::string& value) {
  std::string_view v = trim(value);
  if (v.empty()) return int64_t{30};  // Slurm's default
  if (auto n = parse_int(v)) return *n;
  int64_t task = 30;
  for (const auto& part : split(v, ',')) {
    auto eq = part.find('=');
    auto n = eq == std::string::npos ? std::nullopt : parse_int(trim(std::string_view(part).substr(eq + 1)));
    if (!n) return make_error("'" + part + "' is not SECONDS nor TYPE=SECONDS");
    if (to_lower(trim(std::string_view(part).substr(0, eq))) == "task") task = *n;
  }
  return task;
}

}  // namespace drover::config
