// Workload traces for the simulator: what each job asks the scheduler for
// (a core::JobSpec, exactly what sbatch would hand the controller) plus what
// only a replay knows: how long the job really runs and how it ends. Readers
// for SWF, Drover's own CSV / JSON-lines format and `sacct --parsable2`
// history all produce this one shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/duration.hpp"
#include "common/result.hpp"
#include "core/job.hpp"

namespace drover::sim {

struct TraceJob {
  core::JobSpec spec;        // spec.id is unique within the trace; submit_time in trace seconds
  std::string label;         // the job id as the trace writes it ("17", "96_0"): jobs.csv's id
  Seconds run_time = 0;      // how long it runs when given the chance; killed at its limit if longer
  bool fails = false;        // ends FAILED (exit != 0): afterok dependents never start
  core::JobId preceding = 0; // SWF field 17: submitted only think_time after that job ended
  Seconds think_time = 0;
  std::string where;         // "file:line" of the record, for messages
};

struct Trace {
  std::vector<TraceJob> jobs;     // in file order
  std::string format;             // "swf", "csv", "jsonl", "sacct"
  std::vector<std::string> notes; // assumptions made and records skipped, in words
  int64_t skipped = 0;            // records not replayed (steps, jobs that never ran, bad sizes)
  int64_t max_nodes = -1;         // SWF header MaxNodes (-1: not given)
  int64_t max_procs = -1;         // SWF header MaxProcs
};

// How SWF processors become a request (SWF has no notion of nodes or memory
// per node). kTasks: P processors are P one-CPU tasks, placed wherever they
// fit. kWholeNodes: ceil(P / cpus_per_node) whole nodes (--exclusive).
enum class SwfProcs { kTasks, kWholeNodes };

struct SwfOptions {
  SwfProcs procs = SwfProcs::kTasks;
  int32_t cpus_per_node = 0;      // kWholeNodes: CPUs one node counts for
  bool use_memory = true;         // field 10 (KB per processor) becomes --mem-per-cpu
  bool feedback = true;           // fields 17/18: submit after the preceding job ends + think time
  std::vector<std::pair<int64_t, std::string>> partitions;  // field 16 number -> partition name
  std::vector<std::pair<int64_t, std::string>> queues;      // field 15 number -> QOS name
};

// What to do with a job's time limit when the trace gives none (SWF -1, an
// empty native field, sacct "Partition_Limit").
enum class MissingLimit { kRunTime, kPartitionDefault };

struct TraceOptions {
  std::string format;             // "" = guess from the name and the first lines
  int64_t first = 0;              // --jobs FIRST:COUNT: 0-based position among the jobs read
  int64_t count = -1;             // -1: to the end
  MissingLimit missing_limit = MissingLimit::kRunTime;
  double limit_scale = 1.0;       // --limit-scale: every known limit times this
  Seconds limit_shift = 0;        // --limit-shift: then plus this (seconds, may be negative)
  bool run_to_limit = false;      // --run-to-limit: every job runs exactly its limit
  SwfOptions swf;
};

// Reads, slices and applies the limit options. Errors name file:line and the field.
Result<Trace> load_trace(const std::string& path, const TraceOptions& opts);

// The readers, on text already in memory (`name` is used in messages).
// Each returns jobs with their limits as written (-1 where none was given:
// load_trace resolves those).
Result<Trace> read_swf(const std::string& text, const std::string& name, const SwfOptions& opts);
Result<Trace> read_native_csv(const std::string& text, const std::string& name);
Result<Trace> read_native_jsonl(const std::string& text, const std::string& name);
Result<Trace> read_sacct(const std::string& text, const std::string& name);

// Drover's native format, written (drover sim gen): CSV with a fixed header
// (the columns docs/sim.md lists, empty where not asked), or JSON lines with
// only the keys that are set. Both read back to the same jobs.
std::string write_native_csv(const std::vector<TraceJob>& jobs);
std::string write_native_jsonl(const std::vector<TraceJob>& jobs);

// "swf", "csv", "jsonl" or "sacct" from the file name and its first line.
std::string guess_format(const std::string& path, const std::string& text);

// Applies TraceOptions' slice and limit rules to a trace read with limits as written.
Status apply_trace_options(Trace& trace, const TraceOptions& opts);

}  // namespace drover::sim
