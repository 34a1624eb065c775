// drover-cli: the everyday Slurm commands (sbatch, squeue, sinfo, scancel,
// scontrol) as a small executable that starts in about a millisecond: it
// carries no gRPC and talks to the controller over the local fast path
// (proto/drover/v1/wire.proto). build/bin/sbatch etc. link to it. For a
// controller on another host, or any other command, it runs the full
// `drover` binary beside it with the same arguments.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "client/api.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"

namespace {

using drover::client::Args;

struct Command {
  const char* name;
  int (*run)(const Args&);
};

const Command kCommands[] = {
    {"sbatch", drover::client::sbatch_main},   {"squeue", drover::client::squeue_main},
    {"sinfo", drover::client::sinfo_main},     {"scancel", drover::client::scancel_main},
    {"scontrol", drover::client::scontrol_main}, {"srun", drover::client::srun_main},
    {"salloc", drover::client::salloc_main},
    {"scontrol", drover::client::scontrol_main}, {"sacct", drover::client::sacct_main},
    {"sdiag", drover::client::sdiag_main}, {"sacctmgr", drover::client::sacctmgr_main},
    {"sprio", drover::client::sprio_main},     {"sshare", drover::client::sshare_main},
    {"sreport", drover::client::sreport_main},
    {"sstat", drover::client::sstat_main},     {"sbcast", drover::client::sbcast_main},
};

std::string dir_of_self() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

// The full binary, as `drover NAME ARGS...`.
[[noreturn]] void run_full(std::string_view name, int argc, char** argv, int first) {
  std::string drover = dir_of_self() + "/drover";
  std::vector<char*> args{const_cast<char*>(drover.c_str()), const_cast<char*>(name.data())};
  for (int i = first; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(drover.c_str(), args.data());
  std::perror(drover.c_str());
  _exit(127);
}

// A controller that is not on this host needs gRPC: the full binary has it.
bool needs_full(const Args& args) {
  auto inv = drover::client::invocation("", args);
  auto ep = drover::client::find_controller(inv.config_flag);
  return ep && !ep->local();
}

std::string_view base_name(const char* path) {
  std::string_view p(path);
  auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

}  // namespace

int main(int argc, char** argv) {
  std::string_view self = argc > 0 ? base_name(argv[0]) : "drover-cli";
  int first = 1;
  if (self == "drover-cli" && argc > 1) {
    self = argv[1];
    first = 2;
  }
  Args args(argv + first, argv + argc);
  for (const auto& c : kCommands) {
    if (self != c.name) continue;
    if (needs_full(args)) run_full(self, argc, argv, first);
    return c.run(args);
  }
  run_full(self, argc, argv, first);
}
