// The controller's replies mapped into the views the renderers in src/cli
// print byte for byte as Slurm does.
#pragma once

#include <vector>

#include "cli/views.hpp"
#include "drover/v1/accounting.pb.h"
#include "drover/v1/cluster.pb.h"
#include "drover/v1/jobs.pb.h"

namespace drover::client {

// One view per job, except that the still-pending elements of an array are
// one view (squeue's "117_[2-9%2]"); `expand_arrays` keeps them apart (-r).
std::vector<cli::JobView> job_views(const v1::GetJobsReply& reply, bool expand_arrays);
cli::JobView job_view(const v1::JobRecord& r);
cli::JobState cli_job_state(v1::JobState state, bool completing);
// sacct's rows: each job followed by its steps; the still-pending elements
// of an array as one record (JobID "N_[2-4%25]").
std::vector<cli::AccountingRecord> accounting_records(const v1::GetJobHistoryReply& reply);
// What each task of a step used (sacct, sstat).
std::vector<cli::TaskUsageView> task_usage_views(const google::protobuf::RepeatedPtrField<v1::TaskUsage>& usage);
cli::NodeView node_view(const v1::NodeInfo& n);
cli::PartitionView partition_view(const v1::PartitionInfo& p);
cli::ReservationView reservation_view(const v1::ReservationInfo& r);

// sbatch's output file name for a job: the -o pattern (default slurm-%j.out,
// slurm-%A_%a.out for arrays) with %j %J %A %a %x %u %% expanded, relative
// to the working directory.
std::string output_path(const v1::JobRecord& r, const std::string& pattern);

}  // namespace drover::client
