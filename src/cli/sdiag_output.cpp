#include "cli/sdiag_output.hpp"

#include <fmt/format.h>

#include <ctime>

#include "cli/arg_scanner.hpp"

namespace drover::cli {
namespace {

enum SdOpt { kAll, kHelp, kReset, kSortId, kSortName, kSortTime, kUsage, kVersion, kCluster };

const std::vector<OptionSpec>& sdiag_specs() {
  static const std::vector<OptionSpec> specs = {
      {kAll, "all", 'a', ArgKind::kNone},           {kHelp, "help", 'h', ArgKind::kNone},
      {kReset, "reset", 'r', ArgKind::kNone},       {kSortId, "sort-by-id", 'i', ArgKind::kNone},
      {kSortName, "sort-by-name", 't', ArgKind::kNone}, {kSortTime, "sort-by-time", 'T', ArgKind::kNone},
      {kUsage, "usage", 0, ArgKind::kNone},         {kVersion, "version", 'V', ArgKind::kNone},
      {kCluster, "cluster", 'M', ArgKind::kRequired}, {kCluster, "clusters", 0, ArgKind::kRequired},
  };
  return specs;
}

// "Sun Nov 29 21:52:14 2026 (1795989134)", local time.
std::string when(UnixTime t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&tt, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", &tm);
  return fmt::format("{} ({})", buf, t);
}

int64_t mean(int64_t sum, int64_t n) { return n > 0 ? sum / n : 0; }

void main_section(const DiagView& d, std::string& o) {
  const PassView& p = d.main;
  o += "Main schedule statistics (microseconds):\n";
  o += fmt::format("\tLast cycle:   {}\n\tMax cycle:    {}\n\tTotal cycles: {}\n", p.last_us, p.max_us, p.cycles);
  if (p.cycles > 0) {
    o += fmt::format("\tMean cycle:   {}\n\tMean depth cycle:  {}\n", mean(p.total_us, p.cycles),
                     mean(p.total_depth, p.cycles));
  }
  if (d.now - d.since > 60) o += fmt::format("\tCycles per minute: {}\n", p.cycles / ((d.now - d.since) / 60));
  o += fmt::format("\tLast queue length: {}\n", p.last_queue);
}

void backfill_section(const DiagView& d, std::string& o) {
  const PassView& p = d.backfill;
  o += "Backfilling stats\n";
  o += fmt::format("\tTotal backfilled jobs (since last slurm start): {}\n", p.backfilled);
  o += fmt::format("\tTotal backfilled jobs (since last stats cycle start): {}\n", p.backfilled);
  o += "\tTotal backfilled heterogeneous job components: 0\n";
  o += fmt::format("\tTotal cycles: {}\n", p.cycles);
  o += fmt::format("\tLast cycle when: {}\n", when(p.last_when));
  o += fmt::format("\tLast cycle: {}\n\tMax cycle:  {}\n", p.last_us, p.max_us);
  if (p.cycles > 0) o += fmt::format("\tMean cycle: {}\n", mean(p.total_us, p.cycles));
  o += fmt::format("\tLast depth cycle: {}\n\tLast depth cycle (try sched): {}\n", p.last_depth, p.last_depth);
  if (p.cycles > 0) {
    o += fmt::format("\tDepth Mean: {}\n\tDepth Mean (try depth): {}\n", mean(p.total_depth, p.cycles),
                     mean(p.total_depth, p.cycles));
  }
  o += fmt::format("\tLast queue length: {}\n", p.last_queue);
  if (p.cycles > 0) o += fmt::format("\tQueue length mean: {}\n", mean(p.total_queue, p.cycles));
  // Drover plans every pending job: its "table" is the whole queue.
  o += fmt::format("\tLast table size: {}\n", p.last_queue);
  if (p.cycles > 0) o += fmt::format("\tMean table size: {}\n", mean(p.total_queue, p.cycles));
}

void drover_pass(const char* name, const PassView& p, std::string& o) {
  o += fmt::format("\t{}: cycles {}, last {} us, max {} us, mean {} us; last cycle tested {} of {} pending, "
                   "planned {}, reserved {}; started {} ({} backfilled) since start\n",
                   name, p.cycles, p.last_us, p.max_us, mean(p.total_us, p.cycles), p.last_depth, p.last_queue,
                   p.last_planned, p.last_reserved, p.started, p.backfilled);
}

void drover_section(const DiagView& d, std::string& o) {
  o += "Drover scheduler statistics\n";
  drover_pass("Quick pass (main)", d.main, o);
  drover_pass("Full pass (backfill)", d.backfill, o);
  o += fmt::format("\tState store: {} commits, {} batches, {} batches per commit, mean commit {} us\n",
                   d.store_commits, d.store_batches,
                   d.store_commits > 0 ? fmt::format("{:.2f}", static_cast<double>(d.store_batches) /
                                                                  static_cast<double>(d.store_commits))
                                       : std::string("0"),
                   mean(d.store_commit_us, d.store_commits));
  o += fmt::format("\tJobs in memory: {}; nodes responding: {} of {}; controller RSS: {} kB\n", d.jobs_in_memory,
                   d.nodes_responding, d.nodes_total, d.rss_kb);
}

}  // namespace

CliResult<SdiagOptions> parse_sdiag_options(const std::vector<std::string>& args) {
  auto scan = scan_args(args, sdiag_specs(), OperandMode::kPermute, "sdiag");
  if (!scan) return CliError{getopt_error_text(scan.error(), "sdiag"), kExitError};
  SdiagOptions o;
  for (const auto& opt : scan->options) {
    if (opt.id == kHelp || opt.id == kUsage) o.print_help = true;
    if (opt.id == kVersion) o.print_version = true;
    if (opt.id == kReset) o.reset = true;
    if (opt.id == kCluster) o.clusters = opt.value.value_or("");
  }
  if (!scan->operands.empty()) return cli_error("sdiag", fmt::format("unrecognized argument \"{}\"", scan->operands[0]));
  return o;
}

CommandOutput render_sdiag(const DiagView& d) {
  std::string o;
  o += "*******************************************************\n";
  o += fmt::format("sdiag output at {}\n", when(d.now));
  o += fmt::format("Data since      {}\n", when(d.since));
  o += "*******************************************************\n";
  o += fmt::format("Server thread count:  {}\n", d.server_threads);
  o += "Agent queue size:     0\nAgent count:          0\nAgent thread count:   0\nDBD Agent queue size: 0\n\n";
  o += fmt::format("Jobs submitted: {}\nJobs started:   {}\nJobs completed: {}\nJobs canceled:  {}\nJobs failed:    {}\n\n",
                   d.jobs_submitted, d.jobs_started, d.jobs_completed, d.jobs_canceled, d.jobs_failed);
  o += fmt::format("Job states ts:  {}\nJobs pending:   {}\nJobs running:   {}\n\n", when(d.now), d.jobs_pending,
                   d.jobs_running);
  main_section(d, o);
  o += "\n";
  backfill_section(d, o);
  o += fmt::format("\nLatency for 1000 calls to gettimeofday(): {} microseconds\n\n", d.gettimeofday_latency_us);
  // Drover does not count RPCs per message type or user yet: the headers, no rows.
  o += "Remote Procedure Call statistics by message type\n\nRemote Procedure Call statistics by user\n\n";
  o += "Pending RPC statistics\n\tNo pending RPCs\n\n";
  drover_section(d, o);
  return CommandOutput{o, "", 0};
}

}  // namespace drover::cli
