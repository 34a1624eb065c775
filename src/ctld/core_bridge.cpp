#include "ctld/core_bridge.hpp"

#include "config/core_cluster.hpp"
#include "core/reason.hpp"

namespace drover::ctld {

// The core's Scheduler keeps caches derived from the cluster between cycles.
struct CoreBridge::SchedulerHolder {
  explicit SchedulerHolder(const core::Cluster& c) : scheduler(c) {}
  core::Scheduler scheduler;
};

CoreBridge::CoreBridge(core::Cluster cluster) : cluster_(std::move(cluster)) {
  scheduler_ = std::make_unique<SchedulerHolder>(cluster_);
}

CoreBridge::~CoreBridge() = default;

Result<std::unique_ptr<CoreBridge>> CoreBridge::create(const config::ClusterConfig& cfg) {
  auto cluster = config::build_core_cluster(cfg);
  if (!cluster) return cluster.error();
  return std::unique_ptr<CoreBridge>(new CoreBridge(std::move(*cluster)));
}

std::string CoreBridge::reason_name(core::Reason r) { return std::string(core::reason_name(r)); }

const char* CoreBridge::implementation() { return "drover core"; }

core::SubmitVerdict CoreBridge::check_submit(const core::JobSpec& job, const core::SubmitContext& ctx) const {
  return core::check_submit(cluster_, job, ctx);
}

Result<core::RequestSummary> CoreBridge::summarize(const core::JobSpec& job, int32_t partition) const {
  return core::summarize(cluster_, job, partition);
}

core::CycleResult CoreBridge::run_cycle(const core::CycleInput& in, core::PassKind pass) {
  core::CycleOptions opts;
  opts.pass = pass;
  return scheduler_->scheduler.run_cycle(in, opts);
}

core::Explanation CoreBridge::explain(const core::CycleInput& in, const core::JobSpec& job) {
  return scheduler_->scheduler.explain(in, job);
}

core::Scheduler& CoreBridge::trial_scheduler() {
  if (!trial_) trial_ = std::make_unique<SchedulerHolder>(cluster_);
  return trial_->scheduler;
}

int32_t CoreBridge::nodes_when_idle(const core::JobSpec& job) {
  if (!idle_) idle_ = std::make_unique<SchedulerHolder>(cluster_);
  probe_ = job;
  probe_.revision = (uint64_t{1} << 62) + ++probes_;
  probe_.hold = core::Hold::kNone;
  probe_.begin_time = 0;
  probe_.dependency = {};
  const core::JobSpec* pending[] = {&probe_};
  core::CycleInput in;
  in.now = std::max<core::Time>(job.submit_time, 1);
  in.pending = pending;
  core::CycleOptions opts;
  opts.pass = core::PassKind::kQuick;
  opts.estimate_unreserved = false;
  const core::CycleResult r = idle_->scheduler.run_cycle(in, opts);
  return r.starts.empty() ? 0 : static_cast<int32_t>(r.starts.front().alloc.nodes.size());
}

void CoreBridge::set_qos(std::vector<core::QosSpec> qos) {
  cluster_.qos = std::move(qos);
  scheduler_ = std::make_unique<SchedulerHolder>(cluster_);
  trial_.reset();
  idle_.reset();
}

void CoreBridge::set_assocs(std::vector<core::AssocLimitSpec> assocs) {
  if (assocs.empty() && cluster_.assocs.empty()) return;
  cluster_.set_assocs(std::move(assocs));
  scheduler_ = std::make_unique<SchedulerHolder>(cluster_);
  trial_.reset();
  idle_.reset();
}

int32_t CoreBridge::find_partition(std::string_view name) const { return cluster_.find_partition(name); }
int32_t CoreBridge::find_qos(std::string_view name) const { return cluster_.find_qos(name); }
core::NodeIndex CoreBridge::find_node(std::string_view name) const { return cluster_.find_node(name); }
int32_t CoreBridge::default_partition() const { return cluster_.default_partition(); }

}  // namespace drover::ctld
