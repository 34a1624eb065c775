// sacct: options, record selection and output, as Slurm 22.05's. Pending and
// running jobs are listed too (submitit and snakemake poll them), a pending
// array's remaining tasks as one "N_[2-4%25]" record.
//
// Wiring: parse_sacct_options(args, env) -> fetch accounting records (jobs
// and their steps, in job id order, each job followed by its steps) -> map to
// AccountingRecord -> render_sacct(options, records, caller, now).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"
#include "cli/squeue_output.hpp"  // CommandOutput
#include "cli/views.hpp"

namespace drover::cli {

inline constexpr const char* kSacctDefaultFormat = "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
inline constexpr const char* kSacctBriefFormat = "JobID,State,ExitCode";
inline constexpr const char* kSacctLongFormat =
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,"
    "MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,"
    "AllocCPUS,Elapsed,State,ExitCode,AveCPUFreq,ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,"
    "MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,"
    "AveDiskWrite,ReqTRES,AllocTRES,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,"
    "TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,TRESUsageOutMaxNode,"
    "TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot";

struct SacctOptions {
  std::string format = kSacctDefaultFormat;  // -o / SACCT_FORMAT, -b, -l
  bool noheader = false;                     // -n
  bool json = false;                         // --json: Slurm's JSON document of the selected jobs
  bool batch_script = false;                 // -B: the named jobs' batch scripts
  bool env_vars = false;                     // --env-vars: their environments
  bool parsable = false;                     // -p: trailing delimiter
  bool parsable2 = false;                    // -P
  std::string delimiter = "|";               // --delimiter
  bool allocations = false;                  // -X: jobs only, no steps
  bool duplicates = false;                   // -D: a requeued job's earlier runs too
  bool all_users = false;                    // -a
  std::vector<std::string> users;            // -u
  std::vector<std::string> accounts;         // -A
  std::vector<std::string> partitions;       // -r
  std::vector<std::string> qos;              // -q
  std::vector<std::string> names;            // --name
  std::vector<std::string> job_ids;          // -j: "123", "123_4", "123.batch"
  std::vector<JobState> states;              // -s
  std::vector<std::string> groups;           // -g: group names or gids
  std::vector<std::string> wckeys;           // -W
  std::vector<std::string> reasons;          // -R: pending reasons
  std::vector<std::string> flags;            // -F: SchedSubmit, SchedMain, SchedBackfill, StartRecieved
  std::vector<std::string> constraints;      // -C: features the job asked for, every one
  std::vector<std::string> nodes;            // -N: jobs that ran on one of these nodes (expanded)
  std::optional<std::pair<int64_t, int64_t>> ncpus, nnodes;  // -I, -i: min-max (max INT64_MAX when open)
  std::optional<Seconds> timelimit_min, timelimit_max;        // -k, -K
  std::optional<std::string> start_time;     // -S (parsed at render time against `now`)
  std::optional<std::string> end_time;       // -E
  std::optional<char> units;                 // --units K|M|G|T|P
  bool noconvert = false;                    // --noconvert
  bool print_fields = false;                 // -e / --helpformat
  bool format_given = false;                 // -o on the command line (not SACCT_FORMAT)
  bool long_given = false;                   // -l
  bool print_version = false;
  bool print_help = false;
  std::string clusters;                      // -M / --clusters: must name this cluster (or all)
};

CliResult<SacctOptions> parse_sacct_options(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& env);

// `caller` is the invoking user's name: without -a or -u only their records
// are listed (root sees everyone's, as in Slurm).
CommandOutput render_sacct(const SacctOptions& opts, const std::vector<AccountingRecord>& records,
                           const std::string& caller, UnixTime now);

// The earliest end a finished job may have to be listed: -S, else midnight
// today (local time) unless -j names jobs (then 0). An unreadable -S gives 0
// (render_sacct reports it).
UnixTime sacct_window_start(const SacctOptions& opts, UnixTime now);

// sacct's JobID text: "96_0", "96_0.batch", "20956421_[2-4%25]", "93".
std::string sacct_job_id(const AccountingRecord& r);
// State text: "COMPLETED", "CANCELLED by 0".
std::string sacct_state(const AccountingRecord& r);

}  // namespace drover::cli
