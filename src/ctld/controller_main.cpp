// `drover controller [--config PATH] [--tcp HOST:PORT]`: the controller
// daemon in the foreground; SIGTERM or SIGINT stops it cleanly (it also
// survives SIGKILL: the next start recovers from the store).
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/stop_signals.hpp"
#include "common/strings.hpp"
#include "config/model.hpp"
#include "ctld/controller.hpp"
#include "ctld/log.hpp"

namespace drover::ctld {
namespace {

constexpr const char* kUsage =
    "usage: drover controller [--config PATH] [--tcp HOST:PORT]\n"
    "  --config PATH    slurm.conf to serve (default: $DROVER_CONF, else $SLURM_CONF,\n"
    "                   else /etc/drover/slurm.conf)\n"
    "  --tcp HOST:PORT  listen there instead of SlurmctldHost:SlurmctldPort (port 0: any free port)\n";

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
    std::fprintf(stderr, "drover controller: unknown option '%s'\n%s", args[i].c_str(), kUsage);
    return 2;
  }
  opts.conf_path = config::resolve_config_path(conf);
  sigset_t set = block_stop_signals();  // taken by sigwait below
  auto ctl = Controller::start(opts);
  if (!ctl) {
    std::fprintf(stderr, "drover controller: %s\n", ctl.error().message.c_str());
    return 1;
  }
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&set, &sig);
    log_line(std::string("received ") + strsignal(sig) + "; stopping");
    (*ctl)->request_stop();
  });
  waiter.detach();
  (*ctl)->wait();
  (*ctl)->stop();
  log_line((*ctl)->failed() ? "stopped after a state store failure" : "stopped");
  return (*ctl)->failed() ? 1 : 0;
}

}  // namespace drover::ctld
