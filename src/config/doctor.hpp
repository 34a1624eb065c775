// The config doctor: checks a loaded configuration for the mistakes the
// seed's pitfall table and checklist describe (gres counts that disagree,
// backfill off, no priority, GPU nodes in the default CPU partition, QOS
// limits that can never bind, keys in the wrong place, ...). Each finding is a
// Diagnostic with severity, file:line, both locations where two places
// disagree, and a fix.
#pragma once

#include "common/diagnostic.hpp"
#include "config/model.hpp"

namespace drover::config {

// Findings beyond the parser's own diagnostics (which stay in cfg.diags).
// Deterministic: same config, same findings in the same order.
Diagnostics check_config(const ClusterConfig& cfg);

// The findings of check_config that Slurm's slurmctld refuses to start
// with, so the controller refuses them too (at start and at reconfigure):
// a partition naming nodes that no NodeName line defines, a node defined
// twice, an unknown log level or DebugFlag.
Diagnostics fatal_findings(const ClusterConfig& cfg);

// What the controller refuses to start or reconfigure with: the errors the
// reading found (cfg.diags), then fatal_findings. Empty: it may run.
Diagnostics start_errors(const ClusterConfig& cfg);

}  // namespace drover::config
