// sstat: asks the controller what each named job's running steps use now
// (the controller asks their nodes), rendered by src/cli/sstat as Slurm
// 22.05's sstat prints it.
#include <cstdio>
#include <set>

#include "cli/job_values.hpp"
#include "cli/sstat.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "client/views_map.hpp"
#include "common/hostlist.hpp"

namespace drover::client {

int sstat_main(const Args& args) {
  Invocation inv = invocation("sstat", args);
  auto opts = cli::parse_sstat_options(inv.args);
  if (!opts) {
    write_out(opts.error().text, stderr);
    return opts.error().exit_code;
  }
  if (opts->print_version || opts->print_help || opts->print_fields) return print_output(cli::render_sstat(*opts, {}));
  auto api = connect_or_report(inv);
  if (!api) return 1;
  std::vector<cli::SstatStep> steps;
  std::string errors;
  for (const cli::JobStepRef& j : opts->jobs) {
    auto reply = api->get_step_usage(j.job, j.array_task, j.step, opts->all_steps);
    if (!reply) {
      if (reply.error().unreachable) return report_failure(inv, *api, reply.error());
      // Slurm's sstat says so and goes on with the next job (exit 0).
      errors += "sstat: error: " + reply.error().message + "\n";
      continue;
    }
    for (const auto& s : reply->steps()) {
      for (const auto& e : s.errors()) {
        errors += "sstat: error: StepId=" + std::to_string(s.job_id()) + "." + cli::step_id_text(s.step_id()) + " on " +
                  e + "\n";
      }
      cli::SstatStep st;
      st.job_id = s.job_id();
      st.step_id = s.step_id();
      st.tasks = task_usage_views(s.usage());
      std::set<std::string> nodes;
      for (const auto& t : st.tasks) nodes.insert(t.node);
      st.nodes = hostlist_compress({nodes.begin(), nodes.end()});
      st.pids.assign(s.pids().begin(), s.pids().end());
      steps.push_back(std::move(st));
    }
  }
  // Slurm 22.05's sstat prints its header before it asks for the jobs, so a
  // job it cannot find is said after the table's head (anchor cluster).
  cli::CommandOutput out = cli::render_sstat(*opts, steps);
  const int rc = print_output(out);
  std::fflush(stdout);
  write_out(errors, stderr);
  return rc;
}

}  // namespace drover::client
