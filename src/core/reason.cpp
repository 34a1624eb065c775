#include "core/reason.hpp"

namespace drover::core {

std::string_view reason_name(Reason r) {
  switch (r) {
    case Reason::kNone: return "None";
    case Reason::kPriority: return "Priority";
    case Reason::kResources: return "Resources";
    case Reason::kDependency: return "Dependency";
    case Reason::kDependencyNeverSatisfied: return "DependencyNeverSatisfied";
    case Reason::kBeginTime: return "BeginTime";
    case Reason::kJobHeldUser: return "JobHeldUser";
    case Reason::kJobHeldAdmin: return "JobHeldAdmin";
    case Reason::kPartitionTimeLimit: return "PartitionTimeLimit";
    case Reason::kPartitionNodeLimit: return "PartitionNodeLimit";
    case Reason::kPartitionDown: return "PartitionDown";
    case Reason::kPartitionInactive: return "PartitionInactive";
    case Reason::kReqNodeNotAvail: return "ReqNodeNotAvail";
    case Reason::kBadConstraints: return "BadConstraints";
    case Reason::kJobArrayTaskLimit: return "JobArrayTaskLimit";
    case Reason::kLicenses: return "Licenses";
    case Reason::kQosGrpCpuLimit: return "QOSGrpCpuLimit";
    case Reason::kQosGrpMemLimit: return "QOSGrpMemLimit";
    case Reason::kQosGrpNodeLimit: return "QOSGrpNodeLimit";
    case Reason::kQosGrpGres: return "QOSGrpGRES";
    case Reason::kQosGrpLicense: return "QOSGrpLicense";
    case Reason::kQosGrpJobsLimit: return "QOSGrpJobsLimit";
    case Reason::kQosMaxWallDurationPerJobLimit: return "QOSMaxWallDurationPerJobLimit";
    case Reason::kQosMaxCpuPerJobLimit: return "QOSMaxCpuPerJobLimit";
    case Reason::kQosMaxMemoryPerJob: return "QOSMaxMemoryPerJob";
    case Reason::kQosMaxNodePerJobLimit: return "QOSMaxNodePerJobLimit";
    case Reason::kQosMaxGresPerJob: return "QOSMaxGRESPerJob";
    case Reason::kQosMaxCpuPerNode: return "QOSMaxCpuPerNode";
    case Reason::kQosMaxMemoryPerNode: return "QOSMaxMemoryPerNode";
    case Reason::kQosMaxGresPerNode: return "QOSMaxGRESPerNode";
    case Reason::kQosMaxCpuPerUserLimit: return "QOSMaxCpuPerUserLimit";
    case Reason::kQosMaxMemoryPerUser: return "QOSMaxMemoryPerUser";
    case Reason::kQosMaxNodePerUserLimit: return "QOSMaxNodePerUserLimit";
    case Reason::kQosMaxGresPerUser: return "QOSMaxGRESPerUser";
    case Reason::kQosMaxJobsPerUserLimit: return "QOSMaxJobsPerUserLimit";
    case Reason::kQosNotAllowed: return "QOSNotAllowed";
    case Reason::kAccountNotAllowed: return "AccountNotAllowed";
    case Reason::kInvalidQos: return "InvalidQOS";
    case Reason::kInvalidAccount: return "InvalidAccount";
    case Reason::kAssocGrpCpuLimit: return "AssocGrpCpuLimit";
    case Reason::kAssocGrpMemLimit: return "AssocGrpMemLimit";
    case Reason::kAssocGrpNodeLimit: return "AssocGrpNodeLimit";
    case Reason::kAssocGrpGres: return "AssocGrpGRES";
    case Reason::kAssocGrpJobsLimit: return "AssocGrpJobsLimit";
    case Reason::kAssocMaxJobsLimit: return "AssocMaxJobsLimit";
    case Reason::kAssocMaxWallDurationPerJobLimit: return "AssocMaxWallDurationPerJobLimit";
    case Reason::kAssocMaxCpuPerJobLimit: return "AssocMaxCpuPerJobLimit";
    case Reason::kAssocMaxMemPerJob: return "AssocMaxMemPerJob";
    case Reason::kAssocMaxNodePerJobLimit: return "AssocMaxNodePerJobLimit";
    case Reason::kAssocMaxGresPerJob: return "AssocMaxGRESPerJob";
  }
  return "None";
}

}  // namespace drover::core
