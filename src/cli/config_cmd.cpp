#include "cli/commands.hpp"

namespace drover::cli {
int config_main(const Args&) { return not_implemented("drover config", "being built"); }
}  // namespace drover::cli
