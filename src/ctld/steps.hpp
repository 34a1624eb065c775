// Job steps in the controller (issue 6). A step is one v1::StepInfo
// (proto/drover/v1/steps.proto): "N.batch" (step_id -2) for an sbatch job's
// script, created when the job starts and ended with it; "N.0", "N.1", ... for
// each srun inside the allocation, created by CreateStep, launched on its
// nodes through the agents and ended when every node has reported its tasks'
// end (exit code: the worst task's).
//
// Durable form: the store's `steps` table (docs/cluster.md, "Steps"): key
// "N.batch" / "N.S", payload the StepInfo, and plain columns for readers
// such as sacct that do not want to decode the payload:
//   job_id INTEGER (indexed), step_id INTEGER (-2 batch), name TEXT,
//   nodes TEXT (hostlist), ntasks INTEGER, cpus INTEGER, tres TEXT,
//   start_time INTEGER, end_time INTEGER (0 running), state TEXT
//   (RUNNING COMPLETED FAILED CANCELLED TIMEOUT OUT_OF_MEMORY NODE_FAIL),
//   exit_code INTEGER, exit_signal INTEGER.
// Every change of a step goes through ControllerState::put_step, in the same
// batch as the change that caused it.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/tres.hpp"
#include "core/cluster.hpp"
#include "drover/v1/steps.pb.h"

namespace drover::ctld {

// How long after the controller decided a step's end a node's report of it
// still running is left to the Terminate on its way (which carries what the
// step daemon says), rather than answered with a quiet "end it".
inline constexpr int64_t kTerminateInFlightS = 5;

inline constexpr const char* kStepsTable = "steps";
inline constexpr int64_t kBatchStepId = -2;
// A step an srun waits to create (resources busy): Slurm's "N.TDB".
inline constexpr int64_t kPendingStepId = -4;

// The steps of one job the controller remembers (as long as the job).
struct JobSteps {
  int64_t next_id = 0;                         // the next srun step's id
  std::map<int64_t, v1::StepInfo> steps;     // by step id
};

// "123.batch", "123.0": the store key and Slurm's name of a step.
std::string step_name(int64_t job_id, int64_t step_id);
bool step_final(const v1::StepInfo& s);
// What a step holds: cpu, mem (the job's memory on its nodes, which the
// steps share), node, gres/gpu and gres/gpu:TYPE by the types of the GPUs
// it holds on each node of `c` (scontrol show step's TRES=, sacct's
// AllocTRES).
TresMap step_tres(const v1::StepInfo& s, const core::Cluster& c);

// Every node of the step has reported its part ended.
bool all_nodes_ended(const v1::StepInfo& s);
// A node's report of its part's end: its state, exit, reason, tasks' ends and usage.
void record_node_end(v1::StepNode& n, const v1::StepReport& r);

// The worst end over the step's nodes (Slurm's rule for a step: the highest
// exit code; any signal; the state of the most severe node end).
void settle_step(v1::StepInfo& s, int64_t now);
// The step's exit code and signal: the worst of its nodes' (a code above a signal).
void set_worst_exit(v1::StepInfo& s);

}  // namespace drover::ctld
