// drover: one executable for the daemons, the tools and the Slurm-named
// commands. Called as `sbatch`, `squeue`, ... (links in build/bin) it behaves
// as that command; called as `drover` it takes a subcommand.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "agentd/daemon.hpp"
#include "cli/commands.hpp"
#include "client/commands.hpp"
#include "client/grpc_transport.hpp"
#include "ctld/controller.hpp"
#include "sim/command.hpp"

namespace {

using drover::cli::Args;
using Handler = int (*)(const Args&);

struct Command {
  const char* name;
  Handler run;
  const char* summary;
};

int sim_main(const Args& args) { return drover::sim::sim_main(args); }

// Slurm-compatible names: reachable as argv[0] (links) and as `drover NAME`.
const Command kSlurmCommands[] = {
    {"sbatch", drover::client::sbatch_main, "submit a batch script"},
    {"squeue", drover::client::squeue_main, "show the job queue"},
    {"sinfo", drover::client::sinfo_main, "show partitions and nodes"},
    {"scontrol", drover::client::scontrol_main, "show and change cluster state"},
    {"scancel", drover::client::scancel_main, "cancel or signal jobs"},
    {"sacct", drover::client::sacct_main, "job accounting"},
    {"srun", drover::client::srun_main, "run a parallel job step"},
    {"salloc", drover::client::salloc_main, "obtain an allocation"},
    {"sacctmgr", drover::client::sacctmgr_main, "manage accounts, users and QOS"},
    {"sprio", drover::client::sprio_main, "show priority factors of pending jobs"},
    {"sdiag", drover::client::sdiag_main, "scheduler statistics"},
    {"sshare", drover::client::sshare_main, "fair-share usage"},
    {"sreport", drover::client::sreport_main, "usage reports: cluster, accounts, users, job sizes, reservations"},
    {"sstat", drover::client::sstat_main, "what running job steps use now: memory, CPU time, I/O"},
    {"sbcast", drover::client::sbcast_main, "copy a file to every node of a running job"},
};

// Drover's own subcommands.
const Command kDroverCommands[] = {
    {"config", drover::cli::config_main, "check, show or document a configuration"},
    {"sim", sim_main, "replay a workload against a configuration"},
    {"controller", drover::ctld::controller_main, "run the controller daemon"},
    {"agent", drover::agentd::agentd_main, "run the node agent"},
    {"authd", drover::agentd::authd_main, "give this host's users tokens for the controller (login nodes)"},
    {"up", drover::client::up_main, "start a local cluster on this machine"},
    {"down", drover::client::down_main, "stop the local cluster"},
};

const Command* find(const Command* begin, const Command* end, std::string_view name) {
  for (const Command* c = begin; c != end; ++c) {
    if (name == c->name) return c;
  }
  return nullptr;
}

const Command* find_any(std::string_view name) {
  if (auto* c = find(std::begin(kSlurmCommands), std::end(kSlurmCommands), name)) return c;
  return find(std::begin(kDroverCommands), std::end(kDroverCommands), name);
}

void usage(FILE* out) {
  std::fprintf(out, "usage: drover <command> [options]\n\nDrover's commands:\n");
  for (const auto& c : kDroverCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  std::fprintf(out, "\nSlurm-compatible commands (also installed as links named after them):\n");
  for (const auto& c : kSlurmCommands) std::fprintf(out, "  %-12s %s\n", c.name, c.summary);
  std::fprintf(out, "\n  drover --version   print the version\n");
}

std::string_view base_name(const char* path) {
  std::string_view p(path);
  auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

}  // namespace

int main(int argc, char** argv) {
  drover::client::enable_grpc_transport();  // commands reach a controller on another host over gRPC
  std::string_view self = argc > 0 ? base_name(argv[0]) : "drover";
  if (auto* c = find(std::begin(kSlurmCommands), std::end(kSlurmCommands), self)) {
    return c->run(Args(argv + 1, argv + argc));
  }
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string_view sub = argv[1];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    usage(stdout);
    return 0;
  }
  if (sub == "--version" || sub == "-V" || sub == "version") {
    std::printf("drover %s\n", DROVER_VERSION);
    return 0;
  }
  if (auto* c = find_any(sub)) return c->run(Args(argv + 2, argv + argc));
  std::fprintf(stderr, "drover: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return 2;
}
