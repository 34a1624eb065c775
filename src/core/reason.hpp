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
  // Association limits (sacctmgr's on an account or user), as Slurm names them.
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

}  // namespace drover::core
