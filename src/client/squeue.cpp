// squeue and sinfo: fetch, map into views, render with src/cli.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "cli/job_values.hpp"
#include "cli/json_output.hpp"
#include "cli/sinfo_output.hpp"
#include "cli/squeue_output.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "client/views_map.hpp"
#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "common/user_db.hpp"

namespace drover::client {
namespace {

// squeue -s: the running steps, each with its job's view (partition, user).
int squeue_steps(const Invocation& inv, ControllerApi& api, const cli::SqueueOptions& opts,
                 const std::vector<int64_t>& ids) {
  auto jobs = api.get_jobs(ids, false);
  if (!jobs) return report_failure(inv, api, jobs.error());
  std::vector<int64_t> job_ids;  // an array's id names its elements, whose own ids key their steps
  if (!ids.empty()) {
    for (const auto& j : jobs->jobs()) job_ids.push_back(j.job_id());
    if (job_ids.empty()) return print_output(cli::render_squeue_steps(opts, {}, jobs->now()));
  }
  auto steps = api.get_steps(job_ids);
  if (!steps) return report_failure(inv, api, steps.error());
  std::map<int64_t, cli::JobView> by_id;
  for (auto& v : job_views(*jobs, false)) by_id.emplace(v.job_id, std::move(v));
  std::vector<cli::StepView> views;
  for (const auto& s : steps->steps()) {
    auto j = by_id.find(s.job_id());
    if (j == by_id.end()) continue;  // ended between the two answers
    if (s.step_id() == cli::kPendingStep) continue;  // waiting to be created: scontrol show step lists it
    cli::StepView v;
    v.job = j->second;
    v.step_id = s.step_id();
    v.name = s.name();
    std::vector<std::string> nodes;
    for (const auto& n : s.nodes()) nodes.push_back(n.node());
    v.nodes = hostlist_compress(nodes);
    v.ntasks = s.ntasks();
    v.cpus = s.cpus();
    v.time_limit = s.time_limit_s() > 0 ? s.time_limit_s() : kInfinite;
    if (!s.state().empty()) v.state = s.state();
    v.start_time = s.start_time() > 0 ? s.start_time() : kNoTime;
    v.tres_per_node = s.tres_per_node();
    v.tres_per_task = s.tres_per_task();
    v.tres_bind = s.tres_bind();
    views.push_back(std::move(v));
  }
  return print_output(cli::render_squeue_steps(opts, views, steps->now()));
}

// -i/--iterate N (squeue, sinfo): list again every N seconds until
// interrupted, a blank line after each listing (as Slurm's); a listing the
// controller did not answer is said, and the next turn asks again.
int iterate(int every_s, const std::function<int()>& once) {
  for (;;) {
    int rc = once();
    if (every_s <= 0) return rc;
    std::fputs("\n", stdout);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(every_s));
  }
}

}  // namespace

int squeue_main(const Args& args) {
  Invocation inv = invocation("squeue", args);
  auto opts = cli::parse_squeue_options(inv.args, inv.env);
  if (!opts) {
    write_out(opts.error().text, stderr);
    return opts.error().exit_code;
  }
  if (auto early = cli::version_or_usage(opts->print_version, opts->print_help, "Usage: squeue [OPTIONS]\n")) {
    return print_output(*early);
  }
  if (opts->me) opts->users.push_back(caller_name());  // --me: -u with the invoking user
  // Slurm 22.05's squeue says so of a user this host does not know (and a
  // blank line), then lists the others' jobs.
  for (const auto& u : opts->users) {
    if (!user_by_name(u) && !parse_int(u)) std::fprintf(stderr, "squeue: error: Invalid user: %s\n\n", u.c_str());
  }
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (!opts->clusters.empty()) {
    if (!names_this_cluster("squeue", opts->clusters, *api)) return 1;
    opts->cluster_banner = api->endpoint().cluster;
  }
  // -w names nodes the cluster has: Slurm 22.05's squeue refuses another name, the first one.
  // Under PrivateData=nodes a plain user cannot ask: the names go unchecked.
  if (!opts->nodelist.empty()) {
    auto nodes = api->get_nodes({});
    if (!nodes && !nodes.error().denied()) return report_failure(inv, *api, nodes.error());
    for (const auto& name : opts->nodelist) {
      if (!nodes) break;
      bool known = std::any_of(nodes->nodes().begin(), nodes->nodes().end(),
                               [&](const v1::NodeInfo& n) { return n.name() == name; });
      if (!known) {
        std::fprintf(stderr, "squeue: error: Invalid node name %s\n", name.c_str());
        return 1;
      }
    }
  }
  // Ask only for what can be shown: the named jobs (-j), and finished jobs
  // only when -t asks for them. The renderer selects the rest.
  std::vector<int64_t> ids;
  for (const auto& j : opts->job_ids) {
    if (auto n = parse_int(j.substr(0, j.find('_')))) ids.push_back(*n);
  }
  // -s1008.0 names its jobs too.
  for (const auto& st : opts->step_ids) {
    if (auto n = parse_int(st.substr(0, st.find_first_of("_.")))) ids.push_back(*n);
  }
  return iterate(opts->iterate_s, [&] {
    if (opts->json) {  // every job the controller holds, as Slurm 22.05's --json (filters ignored)
      auto all = api->get_jobs({}, true, true, false);
      if (!all) return report_failure(inv, *api, all.error());
      auto nodes = api->get_nodes({});
      std::vector<cli::NodeView> nv;
      if (nodes) {
        for (const auto& n : nodes->nodes()) nv.push_back(node_view(n));
      } else if (!nodes.error().denied()) {  // denied (PrivateData=nodes): none listed
        return report_failure(inv, *api, nodes.error());
      }
      return print_output(cli::CommandOutput{cli::render_squeue_json(job_views(*all, false), nv), "", 0});
    }
    if (opts->steps) return squeue_steps(inv, *api, *opts, ids);
    bool finished = opts->all_states;
    for (auto st : opts->states) finished = finished || cli::job_state_is_final(st);
    auto reply = api->get_jobs(ids, false, finished);
    if (!reply) return report_failure(inv, *api, reply.error());
    if (opts->job_ids.size() == 1 && opts->step_ids.empty() && reply->jobs().empty()) {
      // One job named and none known by that id (not even ended): Slurm's
      // squeue asks for that job alone, and fails as it does.
      auto any = finished ? reply : api->get_jobs(ids, false, true);
      if (!any) return report_failure(inv, *api, any.error());
      if (any->jobs().empty()) {
        std::fputs(cli::squeue_banners(*opts, any->now()).c_str(), stdout);
        std::fputs("slurm_load_jobs error: Invalid job id specified\n", stderr);
        return 1;
      }
    }
    return print_output(cli::render_squeue(*opts, job_views(*reply, opts->expand_arrays), reply->now()));
  });
}

int sinfo_main(const Args& args) {
  Invocation inv = invocation("sinfo", args);
  auto opts = cli::parse_sinfo_options(inv.args, inv.env);
  if (!opts) {
    write_out(opts.error().text, stderr);
    return opts.error().exit_code;
  }
  if (auto early = cli::version_or_usage(opts->print_version, opts->print_help, "Usage: sinfo [OPTIONS]\n")) {
    return print_output(*early);
  }
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (!opts->clusters.empty()) {
    if (!names_this_cluster("sinfo", opts->clusters, *api)) return 1;
    opts->cluster_banner = api->endpoint().cluster;
  }
  return iterate(opts->iterate_s, [&] {
    // -T lists reservations alone (so also where PrivateData hides the rest).
    if (opts->reservations && !opts->json) {
      auto resvs = api->get_reservations();
      if (!resvs) return report_failure(inv, *api, resvs.error());
      std::vector<cli::ReservationView> rv;
      for (const auto& r : resvs->reservations()) rv.push_back(reservation_view(r));
      return print_output(cli::render_sinfo(*opts, {}, {}, resvs->now(), rv));
    }
    auto parts = api->get_partitions();
    if (!parts) return report_load_failure(inv, *api, parts.error(), "slurm_load_partitions");
    auto nodes = api->get_nodes({});
    if (!nodes) return report_load_failure(inv, *api, nodes.error(), "slurm_load_node");
    std::vector<cli::PartitionView> pv;
    for (const auto& p : parts->partitions()) pv.push_back(partition_view(p));
    std::vector<cli::NodeView> nv;
    for (const auto& n : nodes->nodes()) nv.push_back(node_view(n));
    if (opts->json) return print_output(cli::CommandOutput{cli::render_sinfo_json(nv), "", 0});
    return print_output(cli::render_sinfo(*opts, pv, nv, nodes->now(), {}));
  });
}

}  // namespace drover::client
