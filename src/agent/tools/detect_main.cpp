// drover-detect: hardware detection alone, linked with static libstdc++ and
// libgcc so that it runs on a GPU machine that has none of Drover's libraries.
#include <string>
#include <vector>

#include "agent/hw/detect_cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return drover::agent::hw::detect_main(args, "drover-detect");
}
