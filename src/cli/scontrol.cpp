#include "cli/commands.hpp"

namespace drover::cli {
int scontrol_main(const Args&) { return not_implemented("scontrol", "being built"); }
}  // namespace drover::cli
