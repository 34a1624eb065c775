// JobRequest: everything sbatch, srun or salloc was asked for, after the
// command line, the environment (SBATCH_*/SLURM_*/SALLOC_*) and the script's
// #SBATCH directives have been merged (command line > environment > script).
// Plain data with no defaults filled in from the cluster: an unset field
// (std::nullopt / empty) means "the user did not ask", and the controller
// applies partition and cluster defaults. Units are in the names (seconds,
// MB); memory sizes are MiB as Slurm's "MB".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/job_values.hpp"
#include "common/duration.hpp"
#include "common/gres.hpp"

namespace drover::cli {

enum class SubmitCommand { kSbatch, kSrun, kSalloc };
const char* submit_command_name(SubmitCommand c);  // "sbatch", "srun", "salloc"

enum class OpenMode { kDefault, kAppend, kTruncate };

// Where an option's effective value came from (for messages that say where).
struct OptionOrigin {
  enum class Layer { kScript, kEnvironment, kCommandLine } layer = Layer::kCommandLine;
  std::string where;  // "job.sh:3", "SBATCH_PARTITION", or "" for the command line
};

struct JobRequest {
  SubmitCommand command = SubmitCommand::kSbatch;

  // ---- what runs -------------------------------------------------------------
  std::string script;               // sbatch: the batch script text (also for --wrap)
  std::string script_path;          // sbatch: as given ("job.sh", "/dev/stdin"); "" when read from stdin
  std::vector<std::string> argv;    // sbatch: script arguments; srun/salloc: the command and its arguments
  std::optional<std::string> wrap;  // sbatch --wrap command line

  // ---- identity and accounting ------------------------------------------------
  std::optional<std::string> job_name;     // -J; see default_job_name()
  std::optional<std::string> partition;    // -p; may be a comma list
  std::optional<std::string> account;      // -A
  std::optional<std::string> qos;          // -q
  std::optional<std::string> reservation;  // --reservation
  std::optional<std::string> wckey;        // --wckey
  std::optional<std::string> comment;      // --comment
  std::optional<std::string> clusters;     // -M/--clusters (accepted; Drover serves one cluster)

  // ---- time ----------------------------------------------------------------------
  std::optional<Seconds> time_limit;  // -t; kInfinite for UNLIMITED
  std::optional<Seconds> time_min;    // --time-min
  std::optional<UnixTime> begin;      // -b/--begin, absolute
  std::optional<UnixTime> deadline;   // --deadline, absolute
  std::optional<Seconds> delay_boot;  // --delay-boot

  // ---- shape -----------------------------------------------------------------------
  std::optional<NodeRange> nodes;             // -N min[-max]
  std::optional<int64_t> ntasks;              // -n
  std::optional<int64_t> cpus_per_task;       // -c
  std::optional<int64_t> ntasks_per_node;     // --ntasks-per-node
  std::optional<int64_t> ntasks_per_socket;   // --ntasks-per-socket
  std::optional<int64_t> ntasks_per_core;     // --ntasks-per-core
  std::optional<int64_t> ntasks_per_gpu;      // --ntasks-per-gpu
  std::optional<int64_t> min_cpus_per_node;   // --mincpus
  std::optional<int64_t> sockets_per_node;    // --sockets-per-node or -B S
  std::optional<int64_t> cores_per_socket;    // --cores-per-socket or -B S:C
  std::optional<int64_t> threads_per_core;    // --threads-per-core or -B S:C:T
  bool extra_node_info = false;               // -B given (it implies a task count, see parse_submission)
  bool overcommit = false;                    // -O
  bool contiguous = false;                    // --contiguous
  bool spread_job = false;                    // --spread-job
  bool use_min_nodes = false;                 // --use-min-nodes
  std::optional<std::string> distribution;    // -m, checked for Slurm's syntax
  std::optional<std::string> hint;            // --hint

  // ---- memory (mutually exclusive; 0 = all the node's memory) ---------------
  std::optional<int64_t> mem_per_node_mb;  // --mem
  std::optional<int64_t> mem_per_cpu_mb;   // --mem-per-cpu
  std::optional<int64_t> mem_per_gpu_mb;   // --mem-per-gpu
  std::optional<int64_t> tmp_disk_mb;      // --tmp

  // ---- generic resources ----------------------------------------------------------
  std::vector<GresSpec> gres;                // --gres, per node ("gpu:h100:8")
  std::optional<std::string> gres_flags;     // --gres-flags
  std::optional<GpuCount> gpus;              // -G/--gpus, per job
  std::optional<GpuCount> gpus_per_node;     // --gpus-per-node
  std::optional<GpuCount> gpus_per_socket;   // --gpus-per-socket
  std::optional<GpuCount> gpus_per_task;     // --gpus-per-task
  std::optional<int64_t> cpus_per_gpu;       // --cpus-per-gpu
  std::optional<std::string> licenses;       // -L

  // ---- placement --------------------------------------------------------------------
  std::optional<std::string> constraint;  // -C feature expression ("h100", "a|b", "[x*2&y]")
  std::optional<std::string> prefer;      // --prefer
  std::optional<std::string> nodelist;    // -w hostlist expression
  std::optional<std::string> exclude;     // -x hostlist expression
  Sharing sharing = Sharing::kDefault;    // --exclusive[=user|mcs] / -s/--oversubscribe

  // ---- scheduling ---------------------------------------------------------------------
  std::optional<DependencySpec> dependency;  // -d
  std::optional<bool> kill_on_invalid_dep;   // --kill-on-invalid-dep=yes|no
  bool hold = false;                         // -H
  std::optional<int64_t> priority;           // --priority (kPriorityTop for TOP)
  std::optional<int64_t> nice;               // --nice[=adj]; --nice alone is 100
  std::optional<ArraySpec> array;            // -a
  std::optional<bool> requeue;               // --requeue (true) / --no-requeue (false)
  std::optional<SignalSpec> signal;          // --signal
  bool immediate = false;                    // srun/salloc -I
  std::optional<Seconds> immediate_timeout;  // -I<secs>

  // ---- files and environment ------------------------------------------------------------
  std::optional<std::string> chdir;          // -D
  std::optional<std::string> stdout_path;    // -o (pattern with %j %A %a %x %u %N %n %t %%)
  std::optional<std::string> stderr_path;    // -e
  std::optional<std::string> stdin_path;     // -i
  OpenMode open_mode = OpenMode::kDefault;   // --open-mode
  ExportSpec export_env;                     // --export (default ALL)
  std::optional<std::string> export_file;    // --export-file
  std::optional<std::string> get_user_env;   // --get-user-env[=...]; "" when given bare
  unsigned mail_types = kMailNone;           // --mail-type bit set (MailEvent)
  std::optional<std::string> mail_user;      // --mail-user

  // ---- command behaviour -------------------------------------------------------------------
  bool parsable = false;    // sbatch --parsable
  bool test_only = false;   // sbatch/srun --test-only
  bool quiet = false;       // -Q
  int verbose = 0;          // -v count
  bool wait = false;        // sbatch -W/--wait
  std::optional<bool> wait_all_nodes;  // --wait-all-nodes=0|1
  bool ignore_pbs = false;  // sbatch --ignore-pbs

  // ---- srun / salloc ------------------------------------------------------------------------
  bool label = false;                      // srun -l
  bool unbuffered = false;                 // srun -u
  bool quit_on_interrupt = false;          // srun --quit-on-interrupt: the first Ctrl-C ends the step
  std::optional<std::string> run_as_uid;   // --uid USER|UID (root only): submit as that user
  std::optional<std::string> run_as_gid;   // --gid GROUP|GID (root only); default: the caller's group
  bool disable_status = false;             // srun -X: Ctrl-C is sent to the tasks, no status report
  std::optional<int64_t> task_wait_s;      // srun -W N: end the step N s after its first task ended (0: never)
  std::optional<bool> kill_on_bad_exit;    // srun -K[=0|1]
  // salloc -K/--kill-command[=signal]: signal the command when the allocation is
  // revoked; 0 = the default (SIGHUP when stdin is a terminal, else SIGTERM)
  std::optional<int> kill_command_signal;
  bool no_kill = false;                    // -k/--no-kill (--no-kill=off clears it)
  std::optional<std::string> cpu_bind;     // srun --cpu-bind / --cpu_bind
  std::optional<std::string> gpu_bind;     // --gpu-bind, checked (common/task_layout.hpp)
  std::optional<std::string> mpi;          // srun --mpi
  std::optional<std::string> propagate;    // --propagate[=LIST] ("" for the bare option: ALL), checked
  std::optional<std::string> task_prolog;  // srun --task-prolog
  std::optional<std::string> task_epilog;  // srun --task-epilog
  std::optional<std::string> srun_prolog;  // srun --prolog (over slurm.conf's SrunProlog; "none": no prolog)
  std::optional<std::string> srun_epilog;  // srun --epilog (over SrunEpilog)
  bool external_launcher = false;          // srun --external-launcher
  std::optional<int64_t> jobid;            // srun --jobid: run inside this allocation
  bool overlap = false;                    // srun --overlap
  bool exact = false;                      // srun --exact
  bool pty = false;                        // srun --pty
  bool multi_prog = false;                 // srun --multi-prog
  bool no_shell = false;                   // salloc --no-shell
  // salloc --bell / --no-bell: ring the terminal's bell at the grant always /
  // never; unset, only after a wait of more than ten seconds (salloc(1))
  std::optional<bool> bell;

  // ---- accepted for compatibility, not interpreted ------------------------------------------
  // Options Drover parses (so scripts keep working) but does not act on, by
  // long name, with the value as given ("" for flags). The command warns once.
  std::map<std::string, std::string> uninterpreted;

  // Where each option that is set came from, by long name ("partition").
  std::map<std::string, OptionOrigin> origins;
};

inline constexpr int64_t kPriorityTop = INT64_MAX;  // --priority=TOP

// Slurm's default job name: the script's base name, "wrap" for --wrap,
// "sbatch" for a script read from stdin, the command's base name for
// srun/salloc ("bash" when salloc runs no command).
std::string default_job_name(const JobRequest& r);

}  // namespace drover::cli
