// squeue and sinfo: fetch, map into views, render with src/cli.
#include "cli/sinfo_output.hpp"
#include "cli/squeue_output.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "client/views_map.hpp"
#include "common/strings.hpp"

namespace drover::client {
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
  auto api = connect_or_report(inv);
  if (!api) return 1;
  // Ask only for what can be shown: the named jobs (-j), and finished jobs
  // only when -t asks for them. The renderer selects the rest.
  std::vector<int64_t> ids;
  for (const auto& j : opts->job_ids) {
    if (auto n = parse_int(j.substr(0, j.find('_')))) ids.push_back(*n);
  }
  bool finished = opts->all_states;
  for (auto st : opts->states) finished = finished || cli::job_state_is_final(st);
  auto reply = api->get_jobs(ids, false, finished);
  if (!reply) return report_failure(inv, *api, reply.error());
  return print_output(cli::render_squeue(*opts, job_views(*reply, opts->expand_arrays), reply->now()));
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
  auto parts = api->get_partitions();
  if (!parts) return report_failure(inv, *api, parts.error());
  auto nodes = api->get_nodes({});
  if (!nodes) return report_failure(inv, *api, nodes.error());
  std::vector<cli::PartitionView> pv;
  for (const auto& p : parts->partitions()) pv.push_back(partition_view(p));
  std::vector<cli::NodeView> nv;
  for (const auto& n : nodes->nodes()) nv.push_back(node_view(n));
  return print_output(cli::render_sinfo(*opts, pv, nv, nodes->now()));
}

}  // namespace drover::client
