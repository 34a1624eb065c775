// sdiag: the controller's statistics (DiagReply) in Slurm's text plus Drover's section.
#include <sys/time.h>

#include <chrono>

#include "cli/display_options.hpp"
#include "cli/sdiag_output.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"

namespace drover::client {
namespace {

cli::PassView pass_view(const v1::PassStats& p) {
  cli::PassView v;
  v.cycles = p.cycles();
  v.last_us = p.last_us();
  v.max_us = p.max_us();
  v.total_us = p.total_us();
  v.last_depth = p.last_depth();
  v.total_depth = p.total_depth();
  v.last_queue = p.last_queue();
  v.total_queue = p.total_queue();
  v.last_when = p.last_when();
  v.started = p.started();
  v.backfilled = p.backfilled();
  v.last_planned = p.last_planned();
  v.last_reserved = p.last_reserved();
  return v;
}

// What 1000 calls to gettimeofday() take here, as sdiag reports it.
int64_t gettimeofday_latency_us() {
  auto t0 = std::chrono::steady_clock::now();
  timeval tv{};
  for (int i = 0; i < 1000; ++i) gettimeofday(&tv, nullptr);
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int sdiag_main(const Args& args) {
  Invocation inv = invocation("sdiag", args);
  auto opts = cli::parse_sdiag_options(inv.args);
  if (!opts) {
    write_out(opts.error().text, stderr);
    return opts.error().exit_code;
  }
  if (auto early = cli::version_or_usage(opts->print_version, opts->print_help, "Usage: sdiag [OPTIONS]\n")) {
    return print_output(*early);
  }
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (!opts->clusters.empty() && !names_this_cluster("sdiag", opts->clusters, *api)) return 1;
  auto d = api->diag(opts->reset);
  if (!d && opts->reset && !d.error().unreachable) {
    // Slurm 22.05's words and status (-1) for a user who may not reset them.
    write_out("slurm_reset_statistics: " + d.error().message + "\n", stderr);
    return 255;
  }
  if (!d) return report_failure(inv, *api, d.error());
  if (opts->reset) {
    write_out("Reset scheduling statistics\n", stdout);
    return 0;
  }
  cli::DiagView v;
  v.now = d->now();
  v.since = d->since();
  v.server_threads = d->server_threads();
  v.jobs_submitted = d->jobs_submitted();
  v.jobs_started = d->jobs_started();
  v.jobs_completed = d->jobs_completed();
  v.jobs_canceled = d->jobs_canceled();
  v.jobs_failed = d->jobs_failed();
  v.jobs_pending = d->jobs_pending();
  v.jobs_running = d->jobs_running();
  v.main = pass_view(d->main());
  v.backfill = pass_view(d->backfill());
  v.gettimeofday_latency_us = gettimeofday_latency_us();
  v.store_commits = d->store_commits();
  v.store_batches = d->store_batches();
  v.store_commit_us = d->store_commit_us();
  v.jobs_in_memory = d->jobs_in_memory();
  v.nodes_responding = d->nodes_responding();
  v.nodes_total = d->nodes_total();
  v.rss_kb = d->rss_kb();
  return print_output(cli::render_sdiag(v));
}

}  // namespace drover::client
