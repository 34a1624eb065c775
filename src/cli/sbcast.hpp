// sbcast SOURCE DEST: a file copied to every node of a running job, as
// Slurm 22.05's sbcast takes it: its options and SBCAST_* variables, the job
// from -j or SLURM_JOB_ID, a relative DEST under the directory it runs in,
// and its words and exit statuses for the usual mistakes (src/client/sbcast
// sends the blocks).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"

namespace drover::cli {

struct SbcastOptions {
  std::string source;
  std::string dest;                    // as given; made absolute by the caller
  std::string job_text;                // -j or SLURM_JOB_ID, as written ("" = none)
  int64_t job = 0;
  std::optional<int64_t> step;         // -j N.S (kBatchStep for N.batch)
  bool force = false;                  // -f: replace an existing DEST
  bool preserve = false;               // -p: the source's access and modification times too
  int64_t block_size = 8 << 20;        // -s; the file's size when smaller
  int verbose = 0;
  bool print_help = false, print_version = false;
};

inline constexpr int64_t kSbcastMaxBlock = 8 << 20;

// Parses the command line over the SBCAST_* variables `env` gives (the
// command line wins). The job must be named (-j or SLURM_JOB_ID) unless
// only help or the version is asked for.
using EnvLookup = std::function<const char*(const char*)>;
CliResult<SbcastOptions> parse_sbcast_options(const std::vector<std::string>& args, const EnvLookup& env);

std::string sbcast_usage();

}  // namespace drover::cli
