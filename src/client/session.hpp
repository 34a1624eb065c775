// What every client command does first: take Drover's `--config PATH`,
// find the controller and connect, with Slurm's words when it cannot.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/api.hpp"

namespace drover::cli {
struct CommandOutput;
}

namespace drover::client {

struct Invocation {
  std::string program;
  std::string config_flag;          // --config PATH, when given first
  std::vector<std::string> args;    // the rest
  std::map<std::string, std::string> env;
};

Invocation invocation(const std::string& program, const std::vector<std::string>& args);

// Connects, or prints why not (Slurm's line, then Drover's) and returns nullptr.
std::unique_ptr<ControllerApi> connect_or_report(const Invocation& inv);

// slurm.conf's GresTypes for sbatch/srun/salloc to check --gres against
// (empty when unset or unreadable: then not checked here).
std::vector<std::string> configured_gres_types(const Invocation& inv);

// -M/--clusters of sbatch, srun and salloc: whether `clusters` (a comma
// list; "all" names every cluster) names the cluster `api` reaches. Each
// other name gets Slurm's "No cluster 'X' known by database." line; with
// none of this cluster, Slurm's refusal and Drover's reason follow.
bool names_this_cluster(const std::string& program, const std::string& clusters, const ControllerApi& api);
// The same question, answered quietly (sacct reads the accounting records of
// the clusters named, and has none of another cluster to show).
bool lists_this_cluster(const std::string& clusters, const ControllerApi& api);

// Prints "<program>: error: <line>" for each line of `message`.
void print_error_lines(const std::string& program, const std::string& message);
// A --test-only submission the controller refused, as Slurm's sbatch and srun word it: the
// "Batch job submission failed: X" line reads "allocation failure: X" (no "<program>: error: "),
// the other lines are error lines.
void print_test_only_refusal(const std::string& program, const std::string& message);
// For a failed call: Slurm's unreachable text, or the controller's message as error lines.
int report_failure(const Invocation& inv, const ControllerApi& api, const ApiError& e);
// A list PrivateData keeps from a plain user, in Slurm's words: "<what>:
// Access/permission denied" (`what` as the command names the load:
// "slurm_load_node" in sinfo, "slurm_load_node error" in scontrol); any
// other failure as report_failure.
int report_load_failure(const Invocation& inv, const ControllerApi& api, const ApiError& e, const char* what);

void write_out(const std::string& text, FILE* f);

// Writes a rendered command's stdout and stderr; returns its exit status.
int print_output(const cli::CommandOutput& out);

// The invoking user's name (the uid's number when it has no passwd entry).
std::string caller_name();

}  // namespace drover::client
