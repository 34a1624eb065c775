// Why a job is pending, with Slurm's exact reason words (squeue %r, scontrol
// Reason=), so tools and people see what they see on Slurm.
#pragma once

#include <cstdint>
#include <string_view>

namespace drover::core {

enum class Reason : uint8_t {
  kNone,
  kPriority,
  kResources,
  kDependency,
  kDependencyNeverSatisfied,
  kBeginTime,
  kJobHeldUser,
  kJobHeldAdmin,
  kPartitionTimeLimit,
  kPartitionNodeLimit,
  kPartitionDown,
  kPartitionInactive,
  kReqNodeNotAvail,
  kBadConstraints,
  kJobArrayTaskLimit,
  kLicenses,
  kQosGrpCpuLimit,
  kQosGrpMemLimit,
  kQosGrpNodeLimit,
  kQosGrpGres,
  kQosGrpLicense,
  kQosGrpJobsLimit,
  kQosMaxWallDurationPerJobLimit,
  kQosMaxCpuPerJobLimit,
  kQosMaxMemoryPerJob,
  kQosMaxNodePerJobLimit,
  kQosMaxGresPerJob,
  kQosMaxCpuPerNode,
  kQosMaxMemoryPerNode,
  kQosMaxGresPerNode,
  kQosMaxCpuPerUserLimit,
  kQosMaxMemoryPerUser,
  kQosMaxNodePerUserLimit,
  kQosMaxGresPerUser,
  kQosMaxJobsPerUserLimit,
  kQosNotAllowed,
  kAccountNotAllowed,
  kInvalidQos,
  kInvalidAccount,
  // Association limits (sacctmgr's on an account or user), as Slurm names
  // them; kept together, first to last (is_association_limit).
  kAssocGrpCpuLimit,
  kAssocGrpMemLimit,
  kAssocGrpNodeLimit,
  kAssocGrpGres,
  kAssocGrpJobsLimit,
  kAssocMaxJobsLimit,
  kAssocMaxWallDurationPerJobLimit,
  kAssocMaxCpuPerJobLimit,
  kAssocMaxMemPerJob,
  kAssocMaxNodePerJobLimit,
  kAssocMaxGresPerJob,
};

// "Resources", "QOSGrpGRES", "PartitionTimeLimit", ...
std::string_view reason_name(Reason r);

// One of an association's limits (Assoc*), not the QOS's or the partition's.
inline bool is_association_limit(Reason r) {
  return r >= Reason::kAssocGrpCpuLimit && r <= Reason::kAssocMaxGresPerJob;
}

}  // namespace drover::core
