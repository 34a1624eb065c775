// How a step's tasks are laid out over its nodes and its GPUs, as Slurm
// 22.05 lays them out (checked on the anchor cluster): which ranks each node
// runs (srun -m block|cyclic|plane=N), and which of a node's GPUs each task
// is given (--gpu-bind, and the binding --gpus-per-task and --ntasks-per-gpu
// imply). Shared by srun (checking the options), the controller (placing the
// ranks) and the step daemons (each task's CUDA_VISIBLE_DEVICES, PMIx maps).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover {

// --- ranks over nodes -------------------------------------------------------

// The ranks each node runs, given how many tasks each runs and -m's first
// level: "block" (or "" / "*": consecutive ranks node after node), "cyclic"
// (one rank to each node in turn, skipping full ones), "plane=N" (N
// consecutive ranks to each node in turn). Anything after ':' or ',' (the
// socket and core levels, Pack/NoPack) does not move ranks between nodes.
std::vector<std::vector<int>> ranks_by_node(const std::vector<int>& tasks_per_node, std::string_view distribution);

// The size of -m plane=N as typed ("plane=4", "plane=4,Pack": "4"); empty
// when the distribution is not plane=N. Slurm 22.05 shows it apart, as
// SLURM_DISTRIBUTION=plane and SLURM_DIST_PLANESIZE=N.
std::string_view plane_size(std::string_view distribution);

// SLURM_DISTRIBUTION of a step run inside an allocation when -m was not
// given: "block" when some node runs several tasks, else "cyclic".
std::string default_distribution(const std::vector<int>& tasks_per_node);

// A step's distribution as Slurm 22.05's scontrol show step names it (Dist=),
// from -m as typed (empty: the default above): one level by its name
// ("Cyclic", "Plane", "Arbitrary"), more by the node level's initial and the
// others' names ("block:cyclic" BCyclic, "cyclic:block:cyclic" CBlockCyclic,
// "block:fcyclic" BFCyclic; '*' at the node level is block, below it
// cyclic), then ",Pack" or ",NoPack" as given.
std::string distribution_display(std::string_view typed, const std::vector<int>& tasks_per_node);

// SLURM_TASKS_PER_NODE of a job: its tasks on each node, or, when it asked
// for no task count (neither -n nor --ntasks-per-node), as many tasks as its
// CPUs there hold at `cpus_per_task` each (Slurm 22.05: `--mincpus=8` shows 8).
std::vector<int> job_tasks_per_node(const std::vector<int>& cpus, const std::vector<int>& tasks, bool ntasks_given,
                                    int cpus_per_task);

// --- GPUs over tasks --------------------------------------------------------

struct GpuBind {
  enum class Kind { kNone, kClosest, kPerTask, kSingle, kMapGpu, kMaskGpu };
  Kind kind = Kind::kClosest;
  bool verbose = false;
  int count = 1;                    // per_task:N, single:N
  std::vector<unsigned long> ids;   // map_gpu (GPU ids) or mask_gpu (bit masks), '*' repetitions expanded
};

// --gpu-bind's text, as srun(1) takes it: [verbose,]closest | none |
// per_task:N | single:N | map_gpu:LIST | mask_gpu:LIST, a LIST being ids (or
// masks) in decimal or 0x hex, each optionally "*count". The error is Slurm's
// words ("Invalid --gpu-bind argument: gpu:foo").
Result<GpuBind> parse_gpu_bind(std::string_view text);

// The effective --gpu-bind of a step: the one given, else per_task:N for
// --gpus-per-task=N, else single:N for --ntasks-per-gpu=N, else "" (no
// binding: every task sees every GPU of the step on its node).
std::string effective_gpu_bind(const std::string& given, int gpus_per_task, int ntasks_per_gpu);

// Which of the step's GPUs on a node task `local_id` gets under `bind`: their
// positions in `step_gpu_ids` (the GPUs' ids in the order the node lists
// them: global ids, or ids counted from 0 within the step when its devices
// are confined, the ids map_gpu and mask_gpu name). When the binding names
// none of the step's GPUs the task gets the first one and `complaint` (when
// given) says so in Slurm's words. kNone gives no position: the task's
// environment names no GPU at all.
std::vector<std::size_t> gpus_for_task(const GpuBind& bind, std::string_view bind_text,
                                       const std::vector<int>& step_gpu_ids, int local_id, std::string* complaint);

}  // namespace drover
