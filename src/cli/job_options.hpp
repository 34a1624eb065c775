// The option parser shared by sbatch, srun and salloc.
//
// parse_submission() takes the arguments, the caller's environment and a way
// to read the script, and produces a JobRequest or Slurm's refusal (exact
// stderr text and exit status). Sources, lowest precedence first:
//   1. #SBATCH directives of the batch script (sbatch only),
//   2. input environment variables (SBATCH_* / SLURM_* / SALLOC_*, as listed
//      in the commands' man pages under INPUT ENVIRONMENT VARIABLES),
//   3. the command line.
// A later source replaces what an earlier one set for the same option. The
// memory options --mem/--mem-per-cpu/--mem-per-gpu exclude each other: two
// of them set by the script and/or command line is Slurm's fatal error; one
// set only by the environment gives way to a different one from the script
// or command line (what Slurm 22.05 does).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/arg_scanner.hpp"
#include "cli/cli_error.hpp"
#include "cli/job_request.hpp"
#include "common/duration.hpp"
#include "common/result.hpp"

namespace drover::cli {

struct SubmitInputs {
  SubmitCommand command = SubmitCommand::kSbatch;
  std::vector<std::string> args;               // without the program name
  std::map<std::string, std::string> env;      // the caller's environment
  // Reads a script file named on the command line ("/dev/stdin" included).
  std::function<Result<std::string>(const std::string& path)> read_file;
  // Reads the script from standard input when no file is named.
  std::function<Result<std::string>()> read_stdin;
  UnixTime now = 0;                            // anchors relative times (--begin=now+1hour)
  // slurm.conf's GresTypes (empty: not known here, not checked): a --gres
  // naming another is refused before asking, as Slurm's commands refuse it.
  std::vector<std::string> gres_types;
};

enum class SubmitAction {
  kSubmit,   // `request` is ready to send
  kPrint,    // print `output` to stdout and exit 0 (--help, --usage, --version, --mpi=list)
};

struct ParsedSubmission {
  SubmitAction action = SubmitAction::kSubmit;
  JobRequest request;
  std::string output;                 // for kPrint
  std::vector<std::string> warnings;  // complete stderr lines ("sbatch: warning: ...")
};

CliResult<ParsedSubmission> parse_submission(const SubmitInputs& in);

// What sbatch prints once the controller has accepted the job: "Submitted
// batch job N" (with " on cluster C" after -M), "N" or "N;C" with
// --parsable, nothing with -Q.
std::string submission_reply(const JobRequest& req, int64_t job_id);

// The --test-only answer (sbatch and srun print it on stderr):
// "sbatch: Job 14 to start at 2026-12-12T05:26:55 using 1 processors on nodes cpu01 in partition compute".
std::string test_only_reply(const JobRequest& req, int64_t job_id, UnixTime start, int64_t cpus,
                            const std::string& nodes, const std::string& partition);

// ---- building blocks, exposed for tests and for scontrol/other commands ----

// The options one command accepts, for scan_args. Ids index job_option_name().
std::vector<OptionSpec> job_option_specs(SubmitCommand command);
// Long name of an option id ("partition").
std::string_view job_option_name(int id);

// Applies one option (already scanned) to `req`. `origin` says where it came from.
CliResult<bool> apply_job_option(JobRequest& req, const ScannedOption& opt, const OptionOrigin& origin,
                                 UnixTime now);

// The input environment variables of `command`, mapped to option long names
// (e.g. SBATCH_PARTITION -> partition), in a fixed order.
std::vector<std::pair<std::string, std::string>> job_option_env_vars(SubmitCommand command);

}  // namespace drover::cli
