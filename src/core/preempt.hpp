// Preemption (slurm.conf PreemptType, PreemptMode, PreemptExemptTime; QOS
// Preempt=, PreemptMode=, PreemptExemptTime=; partition PreemptMode= and
// PriorityTier): which running jobs a pending job may preempt, and which of
// them must go for it to start now. Pure: the caller (the controller) ends
// the jobs chosen and the job starts in a later cycle, once they are gone.
#pragma once

#include <optional>
#include <vector>

#include "core/cluster.hpp"
#include "core/job.hpp"
#include "core/scheduler.hpp"

namespace drover::core {

// How a running job of QOS `qos` in partition `partition` would be preempted
// (kOff, kCancel, kRequeue, or a mode not built); never kCluster.
PreemptMode preempt_mode_of(const Cluster& c, int32_t qos, int32_t partition);

// How long a preempted job of QOS `qos` in `partition` gets between its
// SIGTERM and its end: the QOS's GraceTime under preempt/qos, the
// partition's under partition_prio.
Seconds preempt_grace_of(const Cluster& c, int32_t qos, int32_t partition);

// Whether a job of QOS `by_qos` (-1: none) that may run in partitions of
// PriorityTier up to `by_tier` may preempt `r` at `now`: by the policy
// (QOS Preempt= list or a lower tier), r's mode (CANCEL or REQUEUE) and its
// exempt time.
bool may_preempt(const Cluster& c, int32_t by_qos, uint32_t by_tier, const RunningJob& r, Time now);

// Whether such a job may preempt any job at all: its QOS lists a QOS, or a
// partition of a lower tier exists, whose jobs are preempted by CANCEL or
// REQUEUE. Cheap: asked of every waiting job before looking at the running.
bool may_preempt_any(const Cluster& c, int32_t by_qos, uint32_t by_tier);

struct PreemptPlan {
  std::vector<size_t> victims;  // indices into the input's running jobs
  StartDecision start;          // where the job would start once they are gone
};

// The running jobs among `candidates` (indices into in.running, the most
// preemptable first) that must end for `job` to start now, and where it
// would start; nullopt when it could not start now even with all of them
// gone, or could start with none of them gone. `trial` is a Scheduler kept
// for these trials (not the one the cycles run on, whose kept state they
// would upset). The victims come from the shortest head of `candidates`
// whose end lets the job start, only those on the nodes it would take,
// and of those each is kept running, the least preemptable first, when
// the job starts without it: a few trial cycles, logarithmic in the
// candidates.
std::optional<PreemptPlan> plan_preemption(Scheduler& trial, const CycleInput& in, const JobSpec& job,
                                           const std::vector<size_t>& candidates);

}  // namespace drover::core
