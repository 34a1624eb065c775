// sprio and sshare: the controller's priority factors of pending jobs and
// its fair-share tree, rendered by src/cli as Slurm 22.05's commands.
#include <cmath>
#include <map>
#include <string>

#include "cli/sprio_output.hpp"
#include "cli/sshare_output.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "common/strings.hpp"
#include "common/tres.hpp"

namespace drover::client {
namespace {

// A weighted factor as Slurm's sprio prints it (printf's %.0f: halves to even, 312.5 is 312).
int64_t whole(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

// PriorityWeightTRES ("CPU=1000,GRES/gpu=5000") by canonical TRES name ("gres/gpu").
std::map<std::string, double> tres_weights(const std::string& text) {
  std::map<std::string, double> out;
  for (const auto& item : split(text, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    if (auto w = parse_double(item.substr(eq + 1)); w && *w > 0) out[canonical_tres_name(item.substr(0, eq))] = *w;
  }
  return out;
}

cli::PriorityView priority_view(const v1::PriorityFactors& f, const std::map<std::string, double>& weights) {
  cli::PriorityView v;
  v.job_id = f.job_id();
  v.partition = f.partition();
  v.user = f.user();
  v.account = f.account();
  v.qos = f.qos();
  v.priority = f.priority();
  // sprio's %y: the priority over its largest value (2^32 - 1), as Slurm 22.05's.
  v.norm_priority = static_cast<double>(f.priority()) / 4294967295.0;
  v.age = whole(f.age());
  v.fairshare = whole(f.fairshare());
  v.jobsize = whole(f.job_size());
  v.partition_factor = whole(f.partition_factor());
  v.qos_factor = whole(f.qos_factor());
  v.nice = f.nice();
  std::map<std::string, double> tres(f.tres().begin(), f.tres().end());
  for (const auto& [k, x] : tres) {
    v.tres.emplace_back(k, whole(x));
    // sprio -n / %t: the factor before its weight (Slurm 22.05: "cpu=0.00,gres/gpu=0.03").
    if (auto w = weights.find(k); w != weights.end()) v.norm_tres.emplace_back(k, x / w->second);
  }
  v.norm_age = f.norm_age();
  v.norm_fairshare = f.norm_fairshare();
  v.norm_jobsize = f.norm_job_size();
  v.norm_partition = f.norm_partition();
  v.norm_qos = f.norm_qos();
  return v;
}

}  // namespace

int sprio_main(const Args& args) {
  Invocation inv = invocation("sprio", args);
  auto opts = cli::parse_sprio_options(inv.args, inv.env);
  if (!opts) {
    write_out(opts.error().text, stderr);
    return opts.error().exit_code;
  }
  if (opts->print_version || opts->print_help) return print_output(cli::render_sprio(*opts, {}, {}));
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (!opts->clusters.empty() && !names_this_cluster("sprio", opts->clusters, *api)) return 1;
  auto rep = api->get_priorities();
  if (!rep) return report_failure(inv, *api, rep.error());
  std::vector<cli::PriorityView> jobs;
  const auto weights = tres_weights(rep->weight_tres());
  for (const auto& f : rep->jobs()) jobs.push_back(priority_view(f, weights));
  cli::PriorityWeights w;
  w.age = rep->weight_age();
  w.fairshare = rep->weight_fairshare();
  w.jobsize = rep->weight_job_size();
  w.partition = rep->weight_partition();
  w.qos = rep->weight_qos();
  w.tres = rep->weight_tres();
  return print_output(cli::render_sprio(*opts, jobs, w));
}

int sshare_main(const Args& args) {
  Invocation inv = invocation("sshare", args);
  auto opts = cli::parse_sshare_options(inv.args, inv.env);
  if (!opts) {
    write_out(opts.error().text, stderr);
    return opts.error().exit_code;
  }
  if (opts->print_version || opts->print_help) return print_output(cli::render_sshare(*opts, {}, caller_name()));
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (!opts->clusters.empty()) {
    if (!names_this_cluster("sshare", opts->clusters, *api)) return 1;
    opts->cluster_banner = api->endpoint().cluster;
  }
  auto rep = api->get_shares();
  if (!rep) return report_failure(inv, *api, rep.error());
  std::vector<cli::ShareView> rows;
  for (const auto& r : rep->rows()) {
    cli::ShareView v;
    v.depth = r.depth();
    v.account = r.account();
    v.user = r.user();
    v.cluster = rep->cluster();
    if (r.has_raw_shares()) v.raw_shares = r.raw_shares();
    v.norm_shares = r.norm_shares();
    v.raw_usage = r.raw_usage();
    if (r.has_norm_usage()) v.norm_usage = r.norm_usage();
    v.effective_usage = r.effective_usage();
    v.tres_run_mins = r.tres_run_mins();
    if (r.has_fairshare()) v.fairshare = r.fairshare();
    if (r.has_level_fs()) {
      v.level_fs = r.level_fs();
    } else if (!r.user().empty()) {
      v.level_fs = INFINITY;
    }
    rows.push_back(std::move(v));
  }
  return print_output(cli::render_sshare(*opts, rows, caller_name()));
}

}  // namespace drover::client
