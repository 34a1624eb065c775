// sstat: what the running steps of a job use now (memory, CPU time, I/O),
// as Slurm 22.05's sstat prints it: its options, default columns and widths,
// its words for the usual mistakes. The numbers come from each node's step
// daemon, read at the moment of asking (src/client/sstat.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"
#include "cli/job_values.hpp"
#include "cli/usage_stats.hpp"

namespace drover::cli {

struct SstatOptions {
  // -j: jobs (or arrays' elements), or their steps; without a step, the
  // job's running srun steps (with -a, its batch step too).
  std::vector<JobStepRef> jobs;
  bool all_steps = false;           // -a: the batch step too
  std::string format;               // -o/--format/--fields; "" = the default columns
  bool noheader = false, noconvert = false, parsable = false, parsable2 = false;
  bool print_fields = false, print_help = false, print_version = false;
};

CliResult<SstatOptions> parse_sstat_options(const std::vector<std::string>& args);

// One running step as its nodes answered.
struct SstatStep {
  int64_t job_id = 0;
  int64_t step_id = 0;              // kBatchStep: batch
  std::string nodes;                // host list of the nodes that answered
  std::vector<TaskUsageView> tasks;
  std::vector<int> pids;
};

// The table (stdout); the rows of steps without any task answered are left out.
CommandOutput render_sstat(const SstatOptions& opts, const std::vector<SstatStep>& steps);

}  // namespace drover::cli
