// INTERIM: a small stand-in for the scheduling core's entry points, used by
// CoreBridge only until src/core's implementation is merged into this
// branch (the lead engineer is writing it on main). Same signatures as
// core::Scheduler::run_cycle, core::check_submit, core::summarize and
// config::build_core_cluster, so that switching is one file.
//
// What it does: builds core::Cluster from the configuration (nodes, gres
// pools with device ids from gres.conf, partitions, QOS); checks a
// submission for what can never run (unknown partition/QOS/feature, a
// per-node shape no node of the partition has) with Slurm's messages; and
// schedules first-fit in (PriorityTier, priority, submit time, job id)
// order, starting every job that fits now (holds, --begin, dependencies,
// singleton, array throttles, partition limits and QOS MaxWall respected).
// What it does not: backfill reservations and planned start times, fair
// share and multifactor priority, QOS group limits, licenses. Those are the
// core's.
#pragma once

#include "common/result.hpp"
#include "config/model.hpp"
#include "core/cluster.hpp"
#include "core/request.hpp"
#include "core/scheduler.hpp"

namespace drover::ctld::interim {

Result<core::Cluster> build_cluster(const config::ClusterConfig& cfg);
core::SubmitVerdict check_submit(const core::Cluster& c, const core::JobSpec& job, const core::SubmitContext& ctx);
Result<core::RequestSummary> summarize(const core::Cluster& c, const core::JobSpec& job, int32_t partition);
core::CycleResult run_cycle(const core::Cluster& c, const core::CycleInput& in);
std::string reason_name(core::Reason r);

}  // namespace drover::ctld::interim
