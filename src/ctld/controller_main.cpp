// `drover controller [--config PATH] [--tcp HOST:PORT] [-L FILE]`: the
// controller daemon in the foreground; SIGTERM or SIGINT stops it cleanly
// (it also survives SIGKILL: the next start recovers from the store).
// SIGHUP rereads slurm.conf (scontrol reconfigure: `systemctl reload`),
// SIGUSR2 reopens the log file (logrotate), as Slurm's slurmctld does.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/daemon_files.hpp"
#include "common/stop_signals.hpp"
#include "common/strings.hpp"
#include "config/model.hpp"
#include "ctld/controller.hpp"
#include "ctld/log.hpp"

namespace drover::ctld {
namespace {

constexpr const char* kUsage =
    "usage: drover controller [--config PATH] [--tcp HOST:PORT] [-L FILE]\n"
    "  --config PATH    slurm.conf to serve (default: $DROVER_CONF, else $SLURM_CONF,\n"
    "                   else /etc/drover/slurm.conf)\n"
    "  --tcp HOST:PORT  listen there instead of SlurmctldHost:SlurmctldPort (port 0: any free port)\n"
    "  -L, --log-file FILE  log there instead of SlurmctldLogFile (without either: stderr)\n"
    "Signals: TERM or INT stop it; HUP rereads slurm.conf; USR2 reopens the log file.\n";

}  // namespace

int controller_main(const std::vector<std::string>& args) {
  ControllerOptions opts;
  std::string conf;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (take_flag_value(args, i, "--config", conf) || take_flag_value(args, i, "-f", conf)) continue;
    if (take_flag_value(args, i, "--tcp", opts.tcp_address)) continue;
    if (take_flag_value(args, i, "--log-file", opts.log_path) || take_flag_value(args, i, "-L", opts.log_path)) continue;
    std::fprintf(stderr, "drover controller: unknown option '%s'\n%s", args[i].c_str(), kUsage);
    return 2;
  }
  opts.conf_path = config::resolve_config_path(conf);
  sigset_t set = block_stop_signals();  // taken by sigwait below
  const StartStderr started;  // SlurmctldLogFile replaces stderr as the controller starts
  auto ctl = Controller::start(opts);
  if (!ctl) {
    started.say("drover controller: " + ctl.error().message + "\n");
    return 1;
  }
  Controller* c = ctl->get();
  const std::string conf_path = c->settings().conf_path;  // read here: the loop thread may replace the settings
  std::thread waiter([set, c, conf_path] {
    const int sig = wait_for_stop(set, [c, &conf_path](int other) {
      if (other == SIGUSR2) {
        if (c->log_file().empty()) return;
        if (auto st = log_to_file(c->log_file()); !st) log_error("SIGUSR2: " + st.error().message);
        else log_line("received SIGUSR2; reopened the log file " + c->log_file());
        return;
      }
      log_line("received SIGHUP; rereading " + conf_path + " (as scontrol reconfigure)");
      c->post([c] { (void)c->reconfigure(); });  // it logs what changed, or why it refused
    });
    log_line(std::string("received ") + strsignal(sig) + "; stopping");
    c->request_stop();
  });
  waiter.detach();
  (*ctl)->wait();
  (*ctl)->stop();
  log_line((*ctl)->failed() ? "stopped after a state store failure" : "stopped");
  return (*ctl)->failed() ? 1 : 0;
}

}  // namespace drover::ctld
