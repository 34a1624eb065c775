// Typed values of job-submission options (sbatch/srun/salloc) and their
// parsers: job arrays, dependencies, --signal, --export, --mail-type,
// --exclusive, node-count ranges, GPU counts. Each parser checks the whole
// value and its error says what part was wrong; the option layer adds
// Slurm's wording ("sbatch: error: Invalid --signal specification").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/dependency.hpp"
#include "common/duration.hpp"
#include "common/mail_type.hpp"
#include "common/result.hpp"

namespace drover::cli {

// ---- --array: "0-15%4", "1,3,5-7", "0-9:2", "7" ----------------------------
struct ArrayRange {
  int64_t first = 0;
  int64_t last = 0;   // inclusive
  int64_t step = 1;   // ":N" suffix of a range
  bool operator==(const ArrayRange&) const = default;
};

struct ArraySpec {
  std::vector<ArrayRange> ranges;  // in the order written
  int64_t max_running = 0;         // "%N" throttle; 0 = no limit
  // Task ids, ascending, without duplicates.
  std::vector<int64_t> task_ids() const;
  bool operator==(const ArraySpec&) const = default;
};

// Task ids must be >= 0; a range needs first <= last and step >= 1.
// `max_task_id` (MaxArraySize - 1 in Slurm terms) bounds every id when > 0.
Result<ArraySpec> parse_array_spec(std::string_view s, int64_t max_task_id = 0);
// Canonical text: ranges joined by ",", "%N" appended ("0-15%4").
std::string format_array_spec(const ArraySpec& a);
// Array task ids in Slurm's display form ("2-9", "1,3,5-7"; strided sets
// element-wise, as squeue prints them: "0,2,4"): compress_ranges
// (common/strings.hpp).

// ---- --dependency: the syntax lives in common/dependency.hpp -----------------
using drover::DependencyClause;
using drover::DependencySpec;
using drover::DependencyTarget;
using drover::DependencyType;
using drover::dependency_type_name;
using drover::format_dependency;
using drover::parse_dependency;

// ---- --signal=[{R|B}:]<sig>[@<secs>] -------------------------------------
struct SignalSpec {
  int signal = 0;             // signal number (Linux numbering)
  Seconds lead_time = 60;     // sent this long before the time limit; 0..65535
  bool batch_shell_only = false;  // "B:"
  bool reservation_overlap = false;  // "R:"
  bool operator==(const SignalSpec&) const = default;
};
Result<SignalSpec> parse_signal_spec(std::string_view s);
// Signal by name ("USR1", "SIGUSR1", any case) or number ("10"); 0 if unknown.
int signal_number(std::string_view name);
std::string signal_name(int signo);  // "USR1"; the number as text if unnamed

// ---- --export ---------------------------------------------------------------
struct ExportSpec {
  // ALL (the default) passes the caller's whole environment; NONE only SLURM_*;
  // otherwise only the named variables (plus SLURM_*), unless `all` is also set.
  bool all = true;
  bool none = false;
  std::vector<std::string> names;                            // "EDITOR": value from the caller
  std::vector<std::pair<std::string, std::string>> assigned;  // "ARG1=test"
  bool operator==(const ExportSpec&) const = default;
};
// "ALL", "NONE", "ALL,EDITOR=/bin/emacs", "EDITOR,ARG1=test". A value may
// contain commas when quoted as Slurm allows ("A='x,y'"); NONE cannot be combined.
Result<ExportSpec> parse_export_spec(std::string_view s);

// ---- --mail-type: parse_mail_type and the MailEvent bits are in common/mail_type.hpp ----

// ---- --exclusive[=user|mcs] / --oversubscribe ------------------------------
enum class Sharing { kDefault, kExclusive, kExclusiveUser, kExclusiveMcs, kOversubscribe };
Result<Sharing> parse_exclusive(std::optional<std::string_view> value);

// ---- -N/--nodes: "4", "2-8" ------------------------------------------------
struct NodeRange {
  int64_t min = 0;
  int64_t max = 0;  // 0 = same as min / unbounded when min is 0
  bool operator==(const NodeRange&) const = default;
};
Result<NodeRange> parse_node_range(std::string_view s);

// ---- --gpus / --gpus-per-node / --gpus-per-task: "[type:]N" ---------------
struct GpuCount {
  std::string type;  // "a100"; empty when untyped
  int64_t count = 0;
  bool operator==(const GpuCount&) const = default;
};
Result<GpuCount> parse_gpu_count(std::string_view s);

// Positive (or non-negative when allow_zero) decimal integer, whole string.
std::optional<int64_t> parse_count(std::string_view s, bool allow_zero = false);

// ---- job steps: "JOB[_TASK][.STEP]" (squeue -s, sstat -j) ------------------
inline constexpr int64_t kBatchStep = -2;  // "N.batch"
inline constexpr int64_t kPendingStep = -4;  // "N.TDB": a step its srun waits to create
struct JobStepRef {
  int64_t job = 0;
  std::optional<int64_t> array_task;  // "_TASK"
  std::optional<int64_t> step;        // ".STEP": a number, or kBatchStep
};
// nullopt when any part is not a number (STEP may be "batch").
std::optional<JobStepRef> parse_job_step_ref(std::string_view text);
// A step id as the commands print it after "JOB.": "0", "batch".
std::string step_id_text(int64_t step);

}  // namespace drover::cli
