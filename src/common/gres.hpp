// Generic resources (gres) as written on node lines and job requests:
// "gpu:8", "gpu:h100:8", "gpu:a100:4,gpu:1g.10gb:2", "gpu" (count 1),
// "gpu:h100" (typed, count 1), "gpu:h100:8(S:0-1)" (socket suffix, ignored),
// "bandwidth:lustre:no_consume:4G" (slurm.conf's no_consume flag; counts
// take K/M/G/T/P as 1024 multiples). With two fields the second is a count
// when it reads as one ("gpu:8", "gpu:2K"), else a type ("gpu:1g.10gb").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover {

struct GresSpec {
  std::string name;  // "gpu"
  std::string type;  // "h100"; empty when untyped
  int64_t count = 1;
  bool no_consume = false;  // "name[:type]:no_consume:count" on a node line

  bool operator==(const GresSpec&) const = default;
  // "gpu:h100:8" / "gpu:8" / "bandwidth:lustre:no_consume:4294967296"
  std::string str() const;
  // TRES name: "gres/gpu" or "gres/gpu:h100"
  std::string tres_name() const;
};

// Errors name the bad item ("gpu:x:y:z" has too many fields; count "0x" is not a number).
// A "gres/" prefix on the name is accepted (--gres=gres/gpu:2). "" and
// "(null)" are the empty list.
Result<std::vector<GresSpec>> parse_gres_list(std::string_view s);
std::string format_gres_list(const std::vector<GresSpec>& list);  // "(null)" when empty
// Slurm's tres_per_node/tres_per_task text: "gres:gpu:h100:8,gres:nic:1";
// "" when empty.
std::string tres_per_text(const std::vector<GresSpec>& list);

// A gres name or type (and a TRES name after its category): non-empty, with
// no spaces, control characters, ':', ',', '=', '/', '(' or ')'.
bool is_valid_gres_word(std::string_view s);

}  // namespace drover
