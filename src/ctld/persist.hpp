// The controller's layout in the state store (SQLite, WAL, group commit):
//   jobs   key job id;    payload v1::JobRecord (without display figures);
//          columns state, user_id, array_job_id, end_time, partition
//   nodes  key node name; payload v1::NodeInfo (admin state: drain/down, reason)
//   qos, accounts, users  key name; payloads v1::QosRecord, v1::AccountRecord,
//          v1::UserRecord (sacctmgr; ctld/assoc.hpp)
//   meta   next_job_id, accounting_seeded
// Finished jobs stay in the table (accounting, issue 6); the controller
// keeps them in memory only for MinJobAge.
#pragma once

#include "store/schema.hpp"

namespace drover::ctld {

inline constexpr const char* kJobsTable = "jobs";
inline constexpr const char* kNodesTable = "nodes";
inline constexpr const char* kNextJobIdMeta = "next_job_id";

store::Schema controller_schema();

}  // namespace drover::ctld
