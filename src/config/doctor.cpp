#include "config/doctor.hpp"

namespace drover::config {

// Placeholder until the doctor's checks land: no findings.
Diagnostics check_config(const ClusterConfig&) { return {}; }

}  // namespace drover::config
