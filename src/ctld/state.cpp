#include "ctld/state.hpp"

#include <algorithm>
#include <set>

namespace drover::ctld {

ControllerState::ControllerState(config::ClusterConfig cfg, std::unique_ptr<CoreBridge> bridge, Settings settings)
    : cfg_(std::move(cfg)), bridge_(std::move(bridge)), settings_(std::move(settings)) {
  nodes_.resize(bridge_->cluster().nodes.size());
}

Job* ControllerState::find_job(int64_t id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

void ControllerState::index_array(const Job& j) {
  if (j.rec.array_job_id() == 0) return;
  auto& ids = arrays_[j.rec.array_job_id()];
  auto pos = std::lower_bound(ids.begin(), ids.end(), j.rec.job_id());
  if (pos == ids.end() || *pos != j.rec.job_id()) ids.insert(pos, j.rec.job_id());
}

std::vector<Job*> ControllerState::resolve_target(const v1::JobTarget& t) {
  std::vector<Job*> out;
  auto arr = arrays_.find(t.job_id());
  if (arr != arrays_.end()) {
    for (int64_t id : arr->second) {
      Job* j = find_job(id);
      if (!j) continue;
      bool wanted = t.array_tasks().empty() ||
                    std::find(t.array_tasks().begin(), t.array_tasks().end(), j->rec.array_task_id()) !=
                        t.array_tasks().end();
      if (wanted) out.push_back(j);
    }
    return out;
  }
  if (!t.array_tasks().empty()) return out;  // "123_4" where 123 is not an array
  if (Job* j = find_job(t.job_id())) out.push_back(j);
  return out;
}

std::vector<int64_t> ControllerState::missing_tasks(const v1::JobTarget& t, const std::vector<Job*>& found) const {
  std::vector<int64_t> out;
  if (t.array_tasks().empty() || !arrays_.count(t.job_id())) return out;
  std::set<int64_t> have;
  for (const Job* j : found) have.insert(j->rec.array_task_id());
  for (int64_t task : t.array_tasks()) {
    if (!have.count(task)) out.push_back(task);
  }
  return out;
}

// The job a dependency names: any job or array by its id; JOB_TASK, only a
// task of that array (Slurm 22.05 on the anchor cluster ran a job whose
// `afterok:A_1` named a job A that is no array at once, as it does for an
// unknown id).
bool ControllerState::dependency_target_known(const v1::DepItem& item) const {
  if (item.type() == v1::DEP_SINGLETON) return true;
  if (item.array_task() < 0) return jobs_.count(item.job_id()) > 0 || arrays_.count(item.job_id()) > 0;
  auto array = arrays_.find(item.job_id());
  if (array == arrays_.end()) return false;
  return std::any_of(array->second.begin(), array->second.end(), [&](core::JobId id) {
    auto j = jobs_.find(id);
    return j != jobs_.end() && j->second.rec.array_task_id() == item.array_task();
  });
}

void ControllerState::drop_unknown_dependencies(v1::Dependency& d) const {
  auto* items = d.mutable_items();
  for (int i = items->size() - 1; i >= 0; --i) {
    if (!dependency_target_known(items->Get(i))) items->DeleteSubrange(i, 1);
  }
}

Status ControllerState::check_dependencies(const v1::Dependency& d) const {
  for (const auto& item : d.items()) {
    if (!dependency_target_known(item)) {
      return make_error("Batch job submission failed: Job dependency problem\n"
                        "dependency on job " + std::to_string(item.job_id()) +
                        (item.array_task() >= 0 ? "_" + std::to_string(item.array_task()) : std::string()) +
                        ", which the controller does not know (never submitted, or finished more than MinJobAge=" +
                        std::to_string(settings_.min_job_age_s) + " s ago)");
    }
  }
  return {};
}

}  // namespace drover::ctld
