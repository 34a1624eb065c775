// Entry points of the commands that live in the cli module. Each takes the
// arguments after the command name and returns the process exit status.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace drover::cli {

using Args = std::vector<std::string>;

int config_main(const Args& args);    // drover config check|show|reference
int scontrol_main(const Args& args);  // scontrol

// For a command that is not built yet: says so on stderr, names the issue it
// arrives with, and returns 2.
int not_implemented(std::string_view command, std::string_view arrives_with);

}  // namespace drover::cli
