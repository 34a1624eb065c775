#include <cstdio>

#include "cli/commands.hpp"

namespace drover::cli {

int not_implemented(std::string_view command, std::string_view arrives_with) {
  std::fprintf(stderr, "%.*s: not implemented yet in this version of Drover (%.*s)\n",
               static_cast<int>(command.size()), command.data(),
               static_cast<int>(arrives_with.size()), arrives_with.data());
  return 2;
}

}  // namespace drover::cli
