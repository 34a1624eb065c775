// sbatch: parse (src/cli), submit, print Slurm's answer.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include "cli/job_options.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "client/submit_map.hpp"

namespace drover::client {
namespace {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("Unable to open file " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<std::string> read_stdin() {
  std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  return text;
}

// -W/--wait (sbatch(1)): returns once the job, every element of an array,
// has ended: the highest exit code among them, 1 for one ended by a signal.
// Asks every 0.1 s at first, then less often (at most every 2 s); a
// controller that restarts meanwhile is waited for.
int wait_for_job(const Invocation& inv, ControllerApi& api, int64_t job_id) {
  int delay_ms = 100;
  for (;;) {
    auto r = api.get_jobs({job_id}, false, true);
    if (!r && r.error().unreachable) return report_failure(inv, api, r.error());
    if (r) {
      if (r->jobs_size() == 0) {
        std::fprintf(stderr, "sbatch: error: job %lld is no longer known to the controller (forgotten after "
                             "MinJobAge): its exit code is in sacct\n", static_cast<long long>(job_id));
        return 1;
      }
      bool ended = true;
      int rc = 0;
      for (const auto& j : r->jobs()) {
        bool over = j.state() >= v1::COMPLETED && j.state() != v1::SUSPENDED && !j.completing();
        ended = ended && over;
        rc = std::max(rc, j.exit_signal() != 0 ? 1 : j.exit_code());
      }
      if (ended) return rc;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    delay_ms = std::min(delay_ms * 2, 2000);
  }
}

}  // namespace

int sbatch_main(const Args& args) {
  Invocation inv = invocation("sbatch", args);
  SubmitterContext who = current_submitter();
  cli::SubmitInputs in;
  in.command = cli::SubmitCommand::kSbatch;
  in.args = inv.args;
  in.env = inv.env;
  in.read_file = read_file;
  in.read_stdin = read_stdin;
  in.now = static_cast<UnixTime>(std::time(nullptr));
  in.gres_types = configured_gres_types(inv);
  auto parsed = cli::parse_submission(in);
  if (!parsed) {
    write_out(parsed.error().text, stderr);
    return parsed.error().exit_code;
  }
  if (parsed->action == cli::SubmitAction::kPrint) {
    write_out(parsed->output, stdout);
    return 0;
  }
  for (const auto& w : parsed->warnings) write_out(w + (w.empty() || w.back() != '\n' ? "\n" : ""), stderr);
  cli::JobRequest& req = parsed->request;
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (req.clusters) {
    if (!names_this_cluster("sbatch", *req.clusters, *api)) return 1;
    req.clusters = api->endpoint().cluster;  // the reply names it, as Slurm's names the cluster it chose
  }
  if (!add_propagated_rlimits("sbatch", req, inv.config_flag, who)) return 1;
  v1::JobDescriptor desc = descriptor_from_request(req, who);
  if (int rc = apply_run_as(req, "sbatch", desc)) return rc;
  auto reply = api->submit(desc, req.test_only);
  if (!reply) {
    if (reply.error().unreachable) {
      std::fprintf(stderr, "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n");
      std::fprintf(stderr, "sbatch: error: the controller at %s (from %s) did not answer: %s; is it running? (`drover up` starts a local cluster)\n",
                   api->endpoint().describe().c_str(), api->endpoint().conf_path.c_str(), reply.error().message.c_str());
      return 1;
    }
    if (req.test_only) {
      print_test_only_refusal("sbatch", reply.error().message);
    } else {
      print_error_lines("sbatch", reply.error().message);
    }
    return 1;
  }
  if (req.test_only) {
    for (const auto& w : reply->warnings()) std::fprintf(stderr, "sbatch: %s\n", w.c_str());
    write_out(cli::test_only_reply(req, reply->job_id(), reply->planned_start(), reply->planned_cpus(),
                                   reply->planned_nodes(), reply->planned_partition()),
              stderr);
    return 0;
  }
  write_out(cli::submission_reply(req, reply->job_id()), stdout);
  if (req.wait) {
    std::fflush(stdout);  // the job id is seen while sbatch waits
    return wait_for_job(inv, *api, reply->job_id());
  }
  return 0;
}

}  // namespace drover::client
