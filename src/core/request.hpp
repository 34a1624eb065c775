// A job request resolved against one partition: the partition's and the
// cluster's defaults applied (time limit, memory per CPU, QOS), the shape
// worked out (nodes, tasks, CPUs and memory per node, GPUs per node), and
// the checks made at submit: a job that can never run on this cluster is
// refused with Slurm's message plus a line of Drover's saying which
// requirement no node meets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"
#include "common/tres.hpp"
#include "core/cluster.hpp"
#include "core/demand.hpp"
#include "core/job.hpp"
#include "core/reason.hpp"

namespace drover::core {

// Per-job figures for displays (squeue, scontrol show job, sacct ReqTRES).
struct RequestSummary {
  int32_t partition = -1;
  int32_t qos = -1;
  Seconds time_limit = kInfinite;
  int32_t min_nodes = 1, max_nodes = 0;   // max 0 = as min
  int32_t ntasks = 1;
  int32_t cpus_per_task = 1;
  int64_t min_cpus = 1;                   // NumCPUs while pending
  int64_t mem_per_node_mb = 0;            // one of these two is set
  int64_t mem_per_cpu_mb = 0;
  TresMap tres;                           // ReqTRES: cpu, mem, node, billing, gres/gpu[:type] (as asked: --exclusive's whole nodes are not in it)
  std::string tres_per_node;              // "gres:gpu:8"; "" = none
};

// The shape resolved for `partition`; errors are the submit refusals below.
Result<RequestSummary> summarize(const Cluster& c, const JobSpec& job, int32_t partition);

// What the submit check needs from the controller's state.
struct SubmitContext {
  // Jobs the user already has (pending + running) per QOS, and per QOS in
  // total, for MaxSubmitJobsPerUser / GrpSubmitJobs.
  std::map<std::string, int64_t> user_jobs_per_qos;
  std::map<std::string, int64_t> jobs_per_qos;
  // Jobs (pending + running) per (account, user), for an association's
  // MaxSubmitJobs and GrpSubmitJobs; filled only when associations have limits.
  std::map<std::pair<std::string, std::string>, int64_t> jobs_per_assoc;
  // When non-empty, the accounts this user may use (associations); the
  // first is the default. Empty: accounts are not enforced.
  std::vector<std::string> user_accounts;
  bool enforce_accounts = false;
  int64_t new_jobs = 1;  // an array counts its elements
  // Set when the user's association does not allow the job's QOS (the controller knows the
  // associations): refused after the partition and account are found good, as Slurm orders it.
  std::optional<Refusal> assoc_qos_refusal;
};

struct SubmitVerdict {
  bool accepted = true;
  // Slurm's lines, in order: zero or more details ("CPU count per node can
  // not be satisfied") and the final error ("Requested node configuration is
  // not available"), which sbatch prints as "Batch job submission failed: ...".
  std::vector<std::string> details;
  std::string error;
  std::string drover_line;   // which requirement no node meets, in Drover's words
  std::string account;       // resolved account ("" when none)
  std::string qos;           // resolved QOS name
  int32_t partition = -1;    // first partition that can run it
  // A job accepted but that will wait on a limit it can never pass while
  // the configuration stays (PartitionTimeLimit with EnforcePartLimits=NO):
  // Slurm accepts these; the reason shows at once.
  Reason pending_reason = Reason::kNone;
  // Refused because no node of the partition(s) can ever hold the job: Slurm's --test-only says only
  // its final line then ("allocation failure: Requested node configuration is not available").
  bool capacity_refusal = false;
};

SubmitVerdict check_submit(const Cluster& c, const JobSpec& job, const SubmitContext& ctx);

}  // namespace drover::core
