// sacct: the controller's job history (memory, then the store) mapped into
// src/cli's AccountingRecord rows and rendered as Slurm 22.05's sacct.
#include <ctime>
#include <map>

#include "cli/sacct_output.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "client/views_map.hpp"
#include "common/strings.hpp"

namespace drover::client {

int sacct_main(const Args& args) {
  Invocation inv = invocation("sacct", args);
  auto opts = cli::parse_sacct_options(inv.args, inv.env);
  if (!opts) {
    write_out(opts.error().text, stderr);
    return opts.error().exit_code;
  }
  if (opts->print_version || opts->print_help || opts->print_fields) {
    return print_output(cli::render_sacct(*opts, {}, caller_name(), 0));
  }
  auto api = connect_or_report(inv);
  if (!api) return 1;
  // -M naming only other clusters: none of their records is here, and Slurm
  // 22.05's sacct lists none, without an error.
  if (!opts->clusters.empty() && !lists_this_cluster(opts->clusters, *api)) {
    return print_output(cli::render_sacct(*opts, {}, caller_name(), std::time(nullptr)));
  }
  v1::GetJobHistoryRequest req;
  for (const auto& j : opts->job_ids) {  // checked by parse_sacct_options
    if (auto id = parse_int(j.substr(0, j.find_first_of("_.")))) req.add_job_ids(*id);
  }
  req.set_ended_after(cli::sacct_window_start(*opts, std::time(nullptr)));
  req.set_with_script(opts->batch_script);
  req.set_with_environment(opts->env_vars);
  req.set_duplicates(opts->duplicates);
  auto reply = api->get_job_history(req);
  if (!reply) return report_failure(inv, *api, reply.error());
  auto records = accounting_records(*reply);
  // QOSRAW: the QOS's id, from the accounting store (as sacctmgr shows it).
  if (to_lower(opts->format).find("qosraw") != std::string::npos) {
    if (auto assoc = api->get_associations()) {
      std::map<std::string, int64_t> ids;
      for (const auto& q : assoc->qos()) ids[q.name()] = q.id();
      for (auto& r : records) {
        if (auto it = ids.find(r.qos); it != ids.end()) r.qos_id = it->second;
      }
    }
  }
  return print_output(cli::render_sacct(*opts, std::move(records), caller_name(), reply->now()));
}

}  // namespace drover::client
