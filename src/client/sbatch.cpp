// sbatch: parse (src/cli), submit, print Slurm's answer.
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

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
  auto reply = api->submit(descriptor_from_request(req, who), req.test_only);
  if (!reply) {
    if (reply.error().unreachable) {
      std::fprintf(stderr, "sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n");
      std::fprintf(stderr, "sbatch: error: the controller at %s (from %s) did not answer: %s; is it running? (`drover up` starts a local cluster)\n",
                   api->endpoint().describe().c_str(), api->endpoint().conf_path.c_str(), reply.error().message.c_str());
      return 1;
    }
    print_error_lines("sbatch", reply.error().message);
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
  return 0;
}

}  // namespace drover::client
