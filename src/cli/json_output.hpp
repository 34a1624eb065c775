// `squeue --json`, `sinfo --json` and `sacct --json`: the documents Slurm
// 22.05's commands print (its OpenAPI v0.0.38 shapes: "meta", "errors", then
// "jobs" or "nodes"), with the same keys in the same order, filled from the
// views. Keys for what Drover does not have (burst buffers, federation,
// heterogeneous jobs, CPU frequency, energy) carry the value Slurm gives when
// that feature is unused ("", 0, null or []).
//
// As in Slurm 22.05, `squeue --json` and `sinfo --json` ignore the filtering
// and formatting options (every job the controller holds, every node);
// `sacct --json` keeps sacct's selection (-j, -u, -S/-E, -s, ...) and nests
// each job's steps in it.
#pragma once

#include <string>
#include <vector>

#include "cli/views.hpp"

namespace drover::cli {

// `nodes` gives each allocated node's socket layout (job_resources); a node
// missing from it counts as one socket.
std::string render_squeue_json(const std::vector<JobView>& jobs, const std::vector<NodeView>& nodes);
std::string render_sinfo_json(const std::vector<NodeView>& nodes);
// `records`: jobs, each followed by its steps (as render_sacct takes them),
// already selected.
std::string render_sacct_json(const std::vector<AccountingRecord>& records, UnixTime now);

// The error `--yaml` gets: Drover prints JSON only.
std::string yaml_not_built(const std::string& command);

}  // namespace drover::cli
