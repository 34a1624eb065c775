// sshare: options and output, as Slurm 22.05's (fair-tree columns).
//
// Wiring: parse_sshare_options(args, env) -> fetch the association tree with
// shares and usage -> map to ShareView rows (parents before children) ->
// render_sshare(options, rows, caller).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"
#include "cli/squeue_output.hpp"  // CommandOutput
#include "cli/views.hpp"

namespace drover::cli {

inline constexpr const char* kSshareDefaultFormat =
    "Account,User,RawShares,NormShares,RawUsage,EffectvUsage,FairShare";
inline constexpr const char* kSshareLongFormat =
    "Account,User,RawShares,NormShares,RawUsage,NormUsage,EffectvUsage,FairShare,LevelFS,GrpTRESMins,TRESRunMins";

struct SshareOptions {
  std::string format = kSshareDefaultFormat;  // -o, -l
  bool noheader = false;                      // -n
  bool parsable = false;                      // -p
  bool parsable2 = false;                     // -P
  bool all = false;                           // -a: every user
  bool users_only = false;                    // -U: user rows only
  bool partitions = false;                    // -m: add the Partition column
  std::vector<std::string> accounts;          // -A
  std::vector<std::string> users;             // -u
  std::string clusters;                       // -M: must name this cluster (or all)
  std::string cluster_banner;                 // -M given: the cluster's name, for the CLUSTER: line
  bool print_version = false;
  bool print_help = false;
};

CliResult<SshareOptions> parse_sshare_options(const std::vector<std::string>& args,
                                              const std::map<std::string, std::string>& env);

// Without -a/-u, only `caller`'s user rows and the accounts above them.
CommandOutput render_sshare(const SshareOptions& opts, const std::vector<ShareView>& rows, const std::string& caller);

}  // namespace drover::cli
