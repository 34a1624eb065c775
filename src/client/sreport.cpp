// sreport: the controller's job history (jobs that had not ended by the
// window's start, each requeued run too, only what usage needs) and its events,
// with the account tree, rendered by src/cli/sreport as Slurm 22.05's reports.
#include <ctime>

#include "cli/sreport.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "common/strings.hpp"
#include "common/user_db.hpp"

namespace drover::client {

int sreport_main(const Args& args) {
  Invocation inv = invocation("sreport", args);
  auto opts = cli::parse_sreport_options(inv.args, inv.env);
  if (!opts) {
    write_out(opts.error().text, stderr);
    return opts.error().exit_code;
  }
  if (opts->print_version || opts->print_help) return print_output(cli::render_sreport(*opts, {}, {}));
  auto api = connect_or_report(inv);
  if (!api) return 1;
  const std::string clusters = join(opts->clusters, ",");
  // -M naming only other clusters: Drover keeps no records of theirs.
  const bool ours = clusters.empty() || lists_this_cluster(clusters, *api);
  const cli::ReportWindow window = cli::sreport_window(*opts, std::time(nullptr));
  cli::ReportData data;
  data.cluster = api->endpoint().cluster;
  if (ours) {
    v1::GetJobHistoryRequest req;
    req.set_ended_after(window.start);
    req.set_duplicates(true);  // a requeued job's earlier runs used their nodes too
    req.set_usage_only(true);
    req.set_with_events(true);
    auto reply = api->get_job_history(req);
    if (!reply) return report_failure(inv, *api, reply.error());
    data.now = reply->now();
    for (const auto& a : reply->jobs()) {
      const v1::JobRecord& r = a.job();
      cli::ReportJob j;
      j.account = r.account();
      j.user = r.user();
      j.eligible = r.eligible_time();
      j.start = r.start_time();
      j.end = r.end_time();
      j.req_cpus = a.req_cpus();
      j.reservation = r.desc().reservation();
      j.alloc_tres.insert(a.alloc_tres().begin(), a.alloc_tres().end());
      data.jobs.push_back(std::move(j));
    }
    for (const auto& e : reply->events()) {
      cli::ReportEvent ev;
      ev.node = e.node();
      ev.reservation = e.reservation();
      ev.reservation_id = e.reservation_id();
      ev.flags = e.flags();
      ev.nodes = e.nodes();
      ev.start = e.start_time();
      ev.end = e.end_time();
      ev.tres.insert(e.tres().begin(), e.tres().end());
      data.events.push_back(std::move(ev));
    }
    auto assoc = api->get_associations();
    if (!assoc) return report_failure(inv, *api, assoc.error());
    std::map<std::string, std::vector<std::string>> users_of;
    for (const auto& u : assoc->users()) {
      for (const auto& as : u.assocs()) users_of[as.account()].push_back(u.name());
    }
    for (const auto& a : assoc->accounts()) data.accounts.push_back({a.name(), a.parent(), users_of[a.name()]});
    std::set<std::string> names;
    for (const auto& j : data.jobs) names.insert(j.user);
    for (const auto& u : assoc->users()) names.insert(u.name());
    for (const auto& n : names) {
      if (auto e = user_by_name(n)) data.full_names[n] = e->full_name;
    }
  }
  return print_output(cli::render_sreport(*opts, window, data));
}

}  // namespace drover::client
