// sbatch/srun "filename pattern" expansion for --output/--error/--input:
//   %%  a percent sign            %A  array master job id     %a  array index
//   %J  jobid.stepid ("128.0"; "128" for the batch step)     %j  job id
//   %N  the machine's short host name (as Slurm: not the NodeName of an emulated node)
//   %n  node index in the job    %s  step id                 %t  task rank
//   %u  user name                %x  job name
// A number after % zero-pads numeric fields ("%4j" -> "0128"); it is ignored
// for names (%N %u %x). A pattern containing a backslash is not expanded: the
// backslashes are removed and the rest is taken literally. A relative result
// is relative to the job's working directory. An unknown "%c" is kept as written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace drover::agent {

struct PatternValues {
  uint64_t job_id = 0;
  std::string step;               // "batch", "0", ...
  uint64_t array_job_id = 0;      // %A (the job id itself when not an array)
  std::string array_task;         // %a ("4294967294" when not an array, as Slurm prints it)
  std::string node_name;          // %N: the short host name
  int node_index = 0;             // %n
  int task_rank = 0;              // %t
  std::string user;               // %u
  std::string job_name;           // %x
};

std::string expand_io_pattern(std::string_view pattern, const PatternValues& v);

// Whether the pattern yields a different file per task (%t); %N and %n give
// one file per node, which all tasks of one node share.
bool pattern_is_per_task(std::string_view pattern);

// Default batch output name: "slurm-%A_%a.out" for array elements, else "slurm-%j.out".
std::string default_batch_output(bool is_array);

}  // namespace drover::agent
