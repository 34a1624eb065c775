// drover-stepd: the step daemon as its own small executable (the same code
// `drover agent --stepd` runs); the agent's tests start this one.
#include <string>
#include <vector>

#include "agent/stepd.hpp"

int main(int argc, char** argv) {
  return drover::agent::stepd_main(std::vector<std::string>(argv + 1, argv + argc));
}
