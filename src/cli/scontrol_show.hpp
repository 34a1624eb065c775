// `scontrol show job|node|partition|config` renderers, as Slurm 22.05 prints
// them: multi-line "Key=Value" blocks (three-space indented continuation
// lines, a blank line after each record) or, with -o, one line per record.
// `show config` prints "Key = value" lines.
#pragma once

#include <string>
#include <vector>

#include "cli/views.hpp"

namespace drover::cli {

// One record each, including the record's terminating newline(s).
// `details` (scontrol -d): DerivedExitCode, and for a job that holds or held
// resources, JOB_GRES and one "Nodes= CPU_IDs= Mem= GRES=" line per run of
// nodes alike (from job.node_detail).
std::string render_job_detail(const JobView& job, UnixTime now, bool one_line, bool details = false);
std::string render_node_detail(const NodeView& node, bool one_line);
std::string render_partition_detail(const PartitionView& part, bool one_line);
std::string render_reservation_detail(const ReservationView& resv, bool one_line);

// `scontrol show step`: one running step of a running job.
struct StepDetailView {
  std::string id;            // "123.0", "123.batch", "117_4.0"
  uint32_t uid = 0;
  UnixTime start_time = kNoTime;
  Seconds time_limit = kInfinite;
  std::string state;         // RUNNING
  std::string partition;
  std::string nodes;         // host list
  int64_t num_nodes = 0;
  int64_t cpus = 0;
  int64_t tasks = 0;
  std::string name;
  std::string tres;          // "cpu=2,node=1"; empty: (null)
  bool batch = false;        // the batch step: no Dist, no srun, shown with no CPUs nor TRES
  std::string distribution;  // Dist= ("Block", "BCyclic"); empty: Block
  std::string srun_host;
  int64_t srun_pid = 0;
};
std::string render_step_detail(const StepDetailView& step, bool one_line);

// `scontrol show config`: the keys in the order to print, each value
// already in Slurm's words ("300 sec", "(null)", "No"); see config_seconds().
struct ConfigEntry {
  std::string key;
  std::string value;
};

struct ConfigView {
  UnixTime as_of = kNoTime;                 // "Configuration data as of ..."
  std::vector<ConfigEntry> entries;
  std::vector<std::string> trailer;         // lines after the blank line, e.g. "Slurmctld(primary) at vm is UP"
};

std::string render_config(const ConfigView& config);

// Value helpers in scontrol's words.
std::string config_seconds(int64_t secs);  // "300 sec"
std::string config_yes_no(bool v);         // "Yes" / "No"
std::string config_text(const std::string& v);  // v, or "(null)" when empty

}  // namespace drover::cli
