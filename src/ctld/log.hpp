// Daemon log lines: "2026-12-01T10:00:00.123 drover-controller: message" on
// stderr (drover up points stderr at DIR/logs/controller.log).
#pragma once

#include <string>

namespace drover::ctld {

void log_line(const std::string& message);

}  // namespace drover::ctld
