#include "config/health_states.hpp"

#include "common/strings.hpp"

namespace drover::config {

Result<HealthStates> parse_health_states(const std::string& text) {
  HealthStates h;
  bool any = false;
  for (const auto& raw : split(text, ',')) {
    const std::string w = to_upper(std::string(trim(raw)));
    if (w.empty()) continue;
    if (w == "ANY") {
      any = true;
    } else if (w == "CYCLE") {
      h.cycle = true;
    } else if (w == "IDLE" || w == "MIXED") {
      h.states.insert(w);
    } else if (w == "ALLOC") {
      h.states.insert("ALLOCATED");
    } else {
      return make_error("unknown state '" + std::string(trim(raw)) +
                        "' (HealthCheckNodeState takes ALLOC, ANY, CYCLE, IDLE and MIXED, comma-separated)");
    }
  }
  h.any = any || h.states.empty();
  if (h.any) h.states.clear();
  return h;
}

}  // namespace drover::config
