// squeue: options, job selection, ordering and output, as Slurm 22.05's.
//
// Wiring: parse_squeue_options(args, env) -> fetch every job record from the
// controller -> map each to a JobView -> render_squeue(options, jobs, now).
// Selection (-t -u -p -j -n -A -q -w) is done here so the controller may
// return all records.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"
#include "cli/format_engine.hpp"
#include "cli/views.hpp"

namespace drover::cli {

struct SqueueOptions {
  std::optional<std::string> format;       // -o / SQUEUE_FORMAT
  std::optional<std::string> format_long;  // -O / SQUEUE_FORMAT2
  std::optional<std::string> sort;         // -S / SQUEUE_SORT
  bool noheader = false;                   // -h
  bool json = false;                         // --json: Slurm's JSON document (filters and formats ignored)
  bool long_format = false;                // -l
  int iterate_s = 0;                       // -i N: print again every N seconds (0: once)
  bool start = false;                      // --start
  bool expand_arrays = false;              // -r
  bool all = false;                        // -a (hidden partitions: Drover hides none)
  bool all_states = false;                 // -t all
  std::vector<JobState> states;            // -t; empty = not finished
  std::vector<std::string> users;          // -u names or uids
  bool me = false;                         // --me: the invoking user's jobs (the client adds the name to users)
  std::vector<std::string> licenses;       // -L: jobs using any of these licenses
  std::vector<std::string> partitions;     // -p
  std::vector<std::string> accounts;       // -A
  std::vector<std::string> qos;            // -q
  std::vector<std::string> names;          // -n/--name
  std::vector<std::string> job_ids;        // -j: "123" or "123_4"
  bool jobs_flag = false;                  // -j given (with its list or not: alone it lists all)
  std::vector<std::string> reservations;   // -R
  std::vector<std::string> nodelist;       // -w (expanded host names)
  bool only_job_state = false;             // --only-job-state (accepted; same data)
  bool print_version = false;              // -V
  bool print_help = false;                 // --help / --usage
  std::string clusters;                    // -M: must name this cluster (or all)
  std::string cluster_banner;              // -M given: the cluster's name, for the CLUSTER: line
  bool steps = false;                      // -s/--steps: list job steps instead of jobs
  std::vector<std::string> step_ids;       // -s1008.0,1009.batch: only these ("JOB[_TASK].STEP")
};

// One running step for squeue -s, with its job (partition, user, array ids).
struct StepView {
  JobView job;
  int64_t step_id = 0;  // -2: the batch step ("N.batch")
  std::string name;
  std::string nodes;    // host list
  int64_t ntasks = 0;
  int64_t cpus = 0;
  Seconds time_limit = kInfinite;  // srun -t, else UNLIMITED
  std::string state = "RUNNING";
  UnixTime start_time = kNoTime;
  std::string tres_per_node;  // "gres:gpu:2"; "" none
  std::string tres_per_task;
  std::string tres_bind;      // "gpu:per_task:1"
};

CliResult<SqueueOptions> parse_squeue_options(const std::vector<std::string>& args,
                                              const std::map<std::string, std::string>& env);

// The default -o formats.
inline constexpr const char* kSqueueDefaultFormat = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R";
inline constexpr const char* kSqueueLongFormat = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R";
inline constexpr const char* kSqueueStepFormat = "%.15i %.8j %.9P %.8u %.9M %N";
inline constexpr const char* kSqueueStartFormat = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R";

// Selects, orders and prints. `now` is used for TIME/TIME_LEFT and the -l banner.
CommandOutput render_squeue(const SqueueOptions& opts, const std::vector<JobView>& jobs, UnixTime now);
// What heads a listing before its column header, unless -h: the time line of
// -l and -i, then the CLUSTER: line of -M. Slurm prints them also when the
// one job named is unknown.
std::string squeue_banners(const SqueueOptions& opts, UnixTime now);

// squeue -s: the steps selected by -j, -u, -p, -w and the -s list, by
// partition and then step id (the batch step after the numbered ones), in
// the step format (-o/-O with the step fields %i %j %P %u %U %M %N %A %S).
CommandOutput render_squeue_steps(const SqueueOptions& opts, const std::vector<StepView>& steps, UnixTime now);
// "123.0", "117_4.batch".
std::string squeue_step_id(const StepView& s);

// squeue's job id text for a record: "123", "117_4", "117_[2-9%2]".
std::string squeue_job_id(const JobView& j);
// Array index text (%K): "4", "2-9%2", "N/A".
std::string squeue_array_task(const JobView& j);
// Seconds the job has run (TIME column) at `now`.
Seconds job_run_time(const JobView& j, UnixTime now);

}  // namespace drover::cli
