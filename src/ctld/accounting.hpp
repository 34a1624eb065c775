// What sacct reads: a job's accounting view (requested and allocated TRES,
// nodes, times, state) and its step rows, for jobs in memory and for those
// read back from the store after MinJobAge. Finished jobs are never loaded
// into the scheduler's state for this: a history query decodes them from the
// store's jobs table (end_time column) on its own.
#pragma once

#include <cstdint>
#include <vector>

#include "ctld/core_bridge.hpp"
#include "drover/v1/accounting.pb.h"
#include "drover/v1/jobs.pb.h"
#include "drover/v1/steps.pb.h"

namespace drover::ctld {

// cpu, mem (MiB), node, billing and gres/NAME[:TYPE] of an allocation
// (billing: its CPUs).
std::map<std::string, int64_t> allocation_tres(const v1::JobAllocation& a);
// The same for a job's allocation, billed by its partition's
// TRESBillingWeights; and that billing as a fractional figure (what
// fair-share usage charges per second).
std::map<std::string, int64_t> job_alloc_tres(const CoreBridge& bridge, const v1::JobRecord& rec);
double job_billing_units(const CoreBridge& bridge, const v1::JobRecord& rec);

// The job's step rows, in Slurm's order (batch, extern, 0, 1, ...). The one
// place step rows come from: the batch step of a batch job that started,
// derived from the job record (its script is the step: same start, end and
// exit; the batch host's share of the allocation), then the job's srun
// steps (`steps`: from the controller's memory or the store's steps table,
// any order; its batch entry is not used).
std::vector<v1::AccountingStep> step_rows(const v1::JobRecord& rec, const std::vector<v1::StepInfo>& steps = {});

// The accounting view of one job (`rec` without script and environment), at `now`.
v1::AccountingJob accounting_job(const CoreBridge& bridge, const v1::JobRecord& rec,
                                 const std::vector<v1::StepInfo>& steps, int64_t now);

}  // namespace drover::ctld
