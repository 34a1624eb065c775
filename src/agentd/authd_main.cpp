// `drover authd [--config PATH]`: the local signer alone (rpc/local_signer.hpp),
// munged's role on a host that runs no agent, such as a login node: plain
// users' commands there get their tokens from it to reach the controller
// over TCP. Runs as root (or SlurmUser), since it reads the cluster key.
#include <pwd.h>

#include <csignal>
#include <cstdio>
#include <cstring>

#include "agentd/daemon.hpp"
#include "common/stop_signals.hpp"
#include "common/strings.hpp"
#include "config/model.hpp"
#include "rpc/cluster_key.hpp"
#include "rpc/local_signer.hpp"

namespace drover::agentd {

int authd_main(const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "usage: drover authd [--config PATH]\n"
      "  Serves this host's local signer at slurm.conf's AuthInfo socket= (default /run/drover/auth.sock):\n"
      "  plain users' commands get tokens from it to reach the controller over TCP. Reads the cluster key\n"
      "  (AuthInfo key=), so it runs as root or SlurmUser. Hosts with an agent need none: the agent serves it.\n";
  std::string conf;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (take_flag_value(args, i, "--config", conf) || take_flag_value(args, i, "-f", conf)) continue;
    std::fprintf(stderr, "drover authd: unknown option '%s'\n%s", args[i].c_str(), kUsage);
    return 2;
  }
  const std::string path = config::resolve_config_path(conf);
  auto cfg = config::load_config(config::LoadOptions{path, "", ""});
  if (!cfg) {
    std::fprintf(stderr, "drover authd: %s\n", cfg.error().message.c_str());
    return 1;
  }
  std::vector<uint32_t> owners;
  if (struct passwd* pw = getpwnam(cfg->slurm_user.c_str())) owners.push_back(pw->pw_uid);
  auto key = rpc::load_cluster_key(cfg->auth_key_path(), owners);
  if (!key) {
    std::fprintf(stderr, "drover authd: %s\n", key.error().message.c_str());
    return 1;
  }
  sigset_t set = block_stop_signals();  // taken by sigwait below
  const std::string key_id = key->id;
  bool elsewhere = false;
  const std::string socket = cfg->auth_socket_path();
  auto signer = rpc::LocalSigner::start(socket, std::move(*key), &elsewhere);
  if (!signer) {
    std::fprintf(stderr, "drover authd: %s\n", signer.error().message.c_str());
    return 1;
  }
  if (elsewhere) {
    std::fprintf(stderr, "drover authd: a local signer already answers at %s (an agent or another authd)\n",
                 socket.c_str());
    return 1;
  }
  std::fprintf(stderr, "drover authd: serving tokens at %s (key %s)\n", socket.c_str(), key_id.c_str());
  const int sig = wait_for_stop(set, {});
  std::fprintf(stderr, "drover authd: received %s; stopping after %llu tokens\n", strsignal(sig),
               static_cast<unsigned long long>((*signer)->tokens_given()));
  return 0;
}

}  // namespace drover::agentd
