// sprio: options and output, as Slurm 22.05's.
//
// Wiring: parse_sprio_options(args, env) -> fetch the pending jobs' priority
// factors and the configured weights -> map to PriorityView/PriorityWeights
// -> render_sprio(options, jobs, weights).
//
// Default columns drop the factors whose weight is zero (as Slurm's sprio);
// -l shows them all. -n prints normalized factors, -w the weights.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"
#include "cli/squeue_output.hpp"  // CommandOutput
#include "cli/views.hpp"

namespace drover::cli {

struct SprioOptions {
  std::optional<std::string> format;  // -o
  bool noheader = false;              // -h
  bool long_format = false;           // -l
  bool normalized = false;            // -n
  bool weights = false;               // -w
  std::vector<int64_t> job_ids;       // -j
  std::vector<std::string> users;     // -u
  std::vector<std::string> partitions;  // -p
  std::string clusters;               // -M: must name this cluster (or all)
  bool print_version = false;
  bool print_help = false;
};

CliResult<SprioOptions> parse_sprio_options(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& env);

CommandOutput render_sprio(const SprioOptions& opts, const std::vector<PriorityView>& jobs,
                           const PriorityWeights& weights);

}  // namespace drover::cli
