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

// scontrol's options, GNU style anywhere among its words, read once for both
// the commands that need no controller (here) and those that do (client).
struct ScontrolOptions {
  Args words;                 // the keyword and its arguments
  bool help = false, version = false, one_line = false, quiet = false;
  int details = 0;            // -d once, -dd (or -d -d) twice
  std::string clusters;       // -M/--clusters: must name this cluster (or all)
};
// Fills `out`. A wrong option is said in getopt's words on stderr and its
// exit status returned; 0 otherwise. The options that make no difference on
// one cluster without a federation (-a, -v, -F, --hide, --local, --sibling,
// --federation, -u UID) are accepted and dropped.
int parse_scontrol_options(const Args& args, ScontrolOptions& out);

// For a command that is not built yet: says so on stderr, names the issue it
// arrives with, and returns 2.
int not_implemented(std::string_view command, std::string_view arrives_with);

}  // namespace drover::cli
