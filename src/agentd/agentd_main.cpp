// `drover agent --node NAME [...]`: the node agent daemon. Every other form
// (--detect, --stepd) is the agent runtime's own (agent::agent_main).
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "agent/agent_main.hpp"
#include "agentd/daemon.hpp"
#include "common/daemon_files.hpp"
#include "common/stop_signals.hpp"
#include "common/strings.hpp"

namespace drover::agentd {
namespace {

constexpr const char* kUsage =
    "usage: drover agent --node NAME [--config PATH] [--fake-gpus=TYPE:N[,TYPE:N]|config] [--fake-gpu-dir DIR]\n"
    "                    [--spool DIR] [--listen HOST:PORT] [--controller HOST:PORT] [--key PATH]\n"
    "  --node NAME        this agent's NodeName in slurm.conf\n"
    "  --config PATH      slurm.conf (default: $DROVER_CONF, else $SLURM_CONF,\n"
    "                     else /etc/drover/slurm.conf)\n"
    "  --fake-gpus SPEC   emulate GPUs instead of detecting them; 'config' emulates what slurm.conf declares\n"
    "  --spool DIR        spool directory (default: SlurmdSpoolDir/NAME)\n"
    "  --listen HOST:PORT where to serve (default: NodeAddr:Port)\n"
    "  --controller H:P   the controller (default: SlurmctldHost:SlurmctldPort)\n"
    "  --key PATH         cluster key (default: AuthInfo key= in slurm.conf, else /etc/drover/drover.key)\n"
    "  -L, --log-file FILE  log there instead of SlurmdLogFile (without either: stderr)\n"
    "Signals: TERM or INT stop it (its jobs keep running); USR2 reopens the log file; HUP is logged (restart\n"
    "the agent to reread slurm.conf).\n"
    "Also: drover agent --detect [...] (print the detected hardware), drover agent --stepd DIR (internal).\n";

bool is_daemon_call(const std::vector<std::string>& args) {
  bool node = false;
  for (const auto& a : args) {
    if (a == "--detect" || a == "--stepd") return false;
    if (a == "--node" || a.rfind("--node=", 0) == 0) node = true;
  }
  return node;
}

}  // namespace

int agentd_main(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!is_daemon_call(args)) {
    for (const auto& a : args) {
      if (a == "--detect" || a == "--stepd") return agent::agent_main(args);
    }
    std::fprintf(stderr, "drover agent: --node NAME is required (the NodeName this agent serves)\n%s", kUsage);
    return 2;
  }
  AgentOptions o;
  std::string conf;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (take_flag_value(args, i, "--node", o.node) || take_flag_value(args, i, "--config", conf) ||
        take_flag_value(args, i, "-f", conf) || take_flag_value(args, i, "--fake-gpus", o.fake_gpus) ||
        take_flag_value(args, i, "--fake-gpu-dir", o.fake_gpu_dir) ||
        take_flag_value(args, i, "--spool", o.spool_dir) || take_flag_value(args, i, "--listen", o.listen) ||
        take_flag_value(args, i, "--controller", o.controller) || take_flag_value(args, i, "--key", o.key_path) ||
        take_flag_value(args, i, "--log-file", o.log_path) || take_flag_value(args, i, "-L", o.log_path)) {
      continue;
    }
    std::fprintf(stderr, "drover agent: unknown option '%s'\n%s", args[i].c_str(), kUsage);
    return 2;
  }
  o.conf_path = config::resolve_config_path(conf);
  sigset_t set = block_stop_signals();  // taken by sigwait below
  const StartStderr started;  // SlurmdLogFile replaces stderr as the agent starts
  auto d = AgentDaemon::start(o);
  if (!d) {
    started.say("drover agent " + o.node + ": " + d.error().message + "\n");
    return 1;
  }
  std::atomic<bool> stop{false};
  AgentDaemon* a = d->get();
  std::thread waiter([set, a, &stop] {
    const int sig = wait_for_stop(set, [a](int other) {
      if (other == SIGUSR2) {
        if (a->log_file().empty()) return;
        if (auto st = log_to_file(a->log_file()); !st) a->log("SIGUSR2: " + st.error().message);
        else a->log("received SIGUSR2; reopened the log file " + a->log_file());
        return;
      }
      // Slurm's slurmd rereads slurm.conf; this agent reads it once, at its start.
      a->log("received SIGHUP: the agent does not reread slurm.conf while it runs; restart it to apply a change "
             "(its running jobs keep running)");
    });
    a->log(std::string("received ") + strsignal(sig) + "; stopping (running jobs keep running)");
    stop = true;
  });
  waiter.detach();
  (*d)->run(stop);
  return 0;
}

}  // namespace drover::agentd
