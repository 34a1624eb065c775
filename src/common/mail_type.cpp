#include "common/mail_type.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "common/strings.hpp"

namespace drover {
namespace {

// Each single event under its name, in the order mail_type_text lists them.
// The order is Slurm 22.05's (scontrol show job on the anchor: --mail-type=ALL shows
// INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT; ARRAY_TASKS comes first, TIME_LIMIT last).
constexpr std::array<std::pair<std::string_view, unsigned>, 11> kEvents{{
    {"ARRAY_TASKS", kMailArrayTasks},
    {"INVALID_DEPEND", kMailInvalidDepend},
    {"BEGIN", kMailBegin},
    {"END", kMailEnd},
    {"FAIL", kMailFail},
    {"REQUEUE", kMailRequeue},
    {"STAGE_OUT", kMailStageOut},
    {"TIME_LIMIT_50", kMailTimeLimit50},
    {"TIME_LIMIT_80", kMailTimeLimit80},
    {"TIME_LIMIT_90", kMailTimeLimit90},
    {"TIME_LIMIT", kMailTimeLimit},
}};

}  // namespace

Result<unsigned> parse_mail_type(std::string_view s) {
  unsigned mask = 0;
  for (const auto& item : split(s, ',')) {
    if (iequals(item, "NONE")) continue;
    if (iequals(item, "ALL")) {
      mask |= kMailBegin | kMailEnd | kMailFail | kMailInvalidDepend | kMailRequeue | kMailStageOut;
      continue;
    }
    auto it = std::find_if(kEvents.begin(), kEvents.end(), [&](const auto& e) { return iequals(e.first, item); });
    if (it == kEvents.end()) return make_error(fmt::format("unknown mail type \"{}\"", item));
    mask |= it->second;
  }
  return mask;
}

std::string mail_type_text(unsigned bits) {
  std::vector<std::string> out;
  for (const auto& [name, bit] : kEvents) {
    if (bits & bit) out.emplace_back(name);
  }
  return join(out, ",");
}

}  // namespace drover
