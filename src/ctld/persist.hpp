// The controller's layout in the state store (SQLite, WAL, group commit):
//   jobs   key job id;    payload v1::JobRecord (without display figures);
//          columns state, user_id, array_job_id, end_time, partition
//   nodes  key node name; payload v1::NodeInfo (admin state: drain/down, reason)
//   qos, accounts, users  key name; payloads v1::QosRecord, v1::AccountRecord,
//          v1::UserRecord (sacctmgr; ctld/assoc.hpp)
//   usage  key "account<TAB>user"; payload the decayed usage (CPU-seconds
//          times UsageFactor) as text, written by the passes that charge it
//   meta   next_job_id, accounting_seeded, usage_charged_until, usage_last_decay
// Finished jobs stay in the table (accounting, issue 6); the controller
// keeps them in memory only for MinJobAge.
#pragma once

#include "store/schema.hpp"

namespace drover::ctld {

inline constexpr const char* kJobsTable = "jobs";
inline constexpr const char* kNodesTable = "nodes";
// A requeued job's earlier runs: key "JOBID.RUN" (RUN its restart count then);
// payload v1::AccountingJob as sacct -D shows it; column job_id.
inline constexpr const char* kJobRunsTable = "job_runs";
// Node and cluster events (v1::ClusterEvent; sreport, sacctmgr show event):
// key "NODE<TAB>START" ("" for the cluster's); columns end_time (0 while
// open), node.
inline constexpr const char* kEventsTable = "events";
inline constexpr const char* kNextJobIdMeta = "next_job_id";
inline constexpr const char* kUsageTable = "usage";
inline constexpr const char* kUsageChargedMeta = "usage_charged_until";
inline constexpr const char* kUsageDecayMeta = "usage_last_decay";
// scontrol update PartitionName= changes: a line per partition, NAME<TAB>KEY=VALUE...
inline constexpr const char* kPartitionUpdatesMeta = "partition_updates";
// Advance reservations: a line each, NAME<TAB>START<TAB>END<TAB>NODES<TAB>USERS<TAB>ACCOUNTS<TAB>FLAGS<TAB>PARTITION<TAB>CREATED
// (nodes, users, accounts and flags comma-separated; CREATED its place in
// the order of creation); and the count of those ever created, which names
// the unnamed ones (root_3).
inline constexpr const char* kReservationsMeta = "reservations";
inline constexpr const char* kReservationSeqMeta = "reservation_seq";

store::Schema controller_schema();

}  // namespace drover::ctld
