// The one place the controller calls the scheduling core. Everything the
// controller asks the core goes through this class: the cluster built from
// the configuration, the submit check (Slurm's refusal messages), the
// resolved shape of a job for displays, and the scheduling cycle.
//
// The core keeps caches between cycles keyed by the JobSpec's address, id
// and revision: the controller keeps each JobSpec at a stable address and
// bumps its revision whenever it changes it (ctld/job_model.hpp).
#pragma once

#include <memory>

#include "common/result.hpp"
#include "config/model.hpp"
#include "core/cluster.hpp"
#include "core/request.hpp"
#include "core/scheduler.hpp"

namespace drover::ctld {

class CoreBridge {
 public:
  static Result<std::unique_ptr<CoreBridge>> create(const config::ClusterConfig& cfg);
  ~CoreBridge();

  const core::Cluster& cluster() const { return cluster_; }
  core::SubmitVerdict check_submit(const core::JobSpec& job, const core::SubmitContext& ctx) const;
  Result<core::RequestSummary> summarize(const core::JobSpec& job, int32_t partition) const;
  core::CycleResult run_cycle(const core::CycleInput& in, core::PassKind pass);
  core::Explanation explain(const core::CycleInput& in, const core::JobSpec& job);
  // A Scheduler apart from the cycles' for what-if cycles (preemption
  // trials), so that they do not upset the state the cycles keep.
  core::Scheduler& trial_scheduler();
  // How many nodes the job would start on were the cluster idle (0: it
  // would not start at once even then). Slurm 22.05 shows this count as a
  // pending job's node count when it exceeds the -N asked for: `-n 200` on
  // 64-CPU nodes showed NODES 4 in squeue and NumNodes=4 in scontrol.
  int32_t nodes_when_idle(const core::JobSpec& job);
  // The reason word squeue shows ("Resources", "JobHeldUser").
  static std::string reason_name(core::Reason r);
  // Which implementation answers ("interim first-fit" or "core").
  static const char* implementation();

  // Lookups that do not depend on the core's implementation.
  int32_t find_partition(std::string_view name) const;
  int32_t find_qos(std::string_view name) const;
  core::NodeIndex find_node(std::string_view name) const;
  int32_t default_partition() const;
  // Replaces the QOS (sacctmgr); the scheduler starts afresh on the new cluster.
  void set_qos(std::vector<core::QosSpec> qos);
  // Replaces the association limits (sacctmgr; empty when not enforced).
  void set_assocs(std::vector<core::AssocLimitSpec> assocs);

 private:
  explicit CoreBridge(core::Cluster cluster);
  core::Cluster cluster_;
  struct SchedulerHolder;
  std::unique_ptr<SchedulerHolder> scheduler_;
  std::unique_ptr<SchedulerHolder> trial_;
  std::unique_ptr<SchedulerHolder> idle_;
  // nodes_when_idle's copy of the job: at one address, a new revision each
  // time (the core caches a demand by address, id and revision).
  core::JobSpec probe_;
  uint64_t probes_ = 0;
};

}  // namespace drover::ctld
