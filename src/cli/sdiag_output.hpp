// sdiag: Slurm 22.05's statistics text (the Prometheus Slurm exporter reads
// its labels: "Server thread count:", "Last cycle:", "Mean cycle:",
// "Cycles per minute:", "Depth Mean:", "Total backfilled jobs ..."), then a
// section with Drover's own scheduler and store figures.
//
// Drover's two passes map onto Slurm's two schedulers: the quick event pass
// (the head of the queue, as Slurm's main scheduler) is "Main schedule
// statistics", the full planning pass "Backfilling stats". Figures Drover
// does not keep (agent queues, per-RPC statistics) print as Slurm prints
// an idle controller's: 0, or no rows.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"
#include "common/duration.hpp"

namespace drover::cli {

struct PassView {
  int64_t cycles = 0, last_us = 0, max_us = 0, total_us = 0;
  int64_t last_depth = 0, total_depth = 0, last_queue = 0, total_queue = 0;
  UnixTime last_when = 0;
  int64_t started = 0, backfilled = 0, last_planned = 0, last_reserved = 0;
};

struct DiagView {
  UnixTime now = 0, since = 0;
  int64_t server_threads = 0;
  int64_t jobs_submitted = 0, jobs_started = 0, jobs_completed = 0, jobs_canceled = 0, jobs_failed = 0;
  int64_t jobs_pending = 0, jobs_running = 0;
  PassView main, backfill;
  int64_t gettimeofday_latency_us = 0;  // measured by the command, as sdiag does
  int64_t store_commits = 0, store_batches = 0, store_commit_us = 0;
  int64_t jobs_in_memory = 0, nodes_responding = 0, nodes_total = 0, rss_kb = 0;
};

struct SdiagOptions {
  bool print_version = false;
  bool print_help = false;
  bool reset = false;  // -r: zero the controller's counters (operators and admins)
  std::string clusters;  // -M/--cluster: must name this cluster
};

CliResult<SdiagOptions> parse_sdiag_options(const std::vector<std::string>& args);
CommandOutput render_sdiag(const DiagView& d);

}  // namespace drover::cli
