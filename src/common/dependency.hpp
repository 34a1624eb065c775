// Slurm's --dependency syntax: "afterok:1:2,afterany:3", "afterok:1?singleton",
// "after:5+10" (ten minutes after job 5 starts; the other types take a
// "+minutes" and show it, but do not wait for it, as Slurm's), "aftercorr:7_3", "singleton",
// a bare "123" (= afterany:123). One parser for the commands, the
// controller and the simulator's traces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/duration.hpp"
#include "common/result.hpp"

namespace drover {

enum class DependencyType { kAfter, kAfterAny, kAfterBurstBuffer, kAfterCorr, kAfterNotOk, kAfterOk, kSingleton };

struct DependencyTarget {
  int64_t job_id = 0;
  std::optional<int64_t> array_task;  // "afterok:123_4"
  Seconds delay = 0;                  // "after:123+10": minutes after start, in seconds (kept, unused, for others)
  bool operator==(const DependencyTarget&) const = default;
};

struct DependencyClause {
  DependencyType type = DependencyType::kAfterAny;
  std::vector<DependencyTarget> targets;  // empty only for singleton
  bool operator==(const DependencyClause&) const = default;
};

struct DependencySpec {
  std::vector<DependencyClause> clauses;
  bool any_of = false;  // clauses joined by '?' (any satisfies) instead of ',' (all must)
  bool operator==(const DependencySpec&) const = default;
};

// "afterok:1:2,afterany:3", "afterok:1?singleton", "after:5+10", "singleton",
// a bare "123" (= afterany:123). ',' and '?' may not be mixed. A job named twice
// with one type counts once, as first named.
Result<DependencySpec> parse_dependency(std::string_view s);
std::string dependency_type_name(DependencyType t);  // "afterok"
std::string format_dependency(const DependencySpec& d);  // canonical "afterok:1:2,singleton"

}  // namespace drover
