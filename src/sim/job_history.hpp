// The simulator's answer to the core's dependency questions
// (core::JobHistory), read from the driver's per-job records.
#pragma once

#include <map>
#include <unordered_map>
#include <vector>

#include "core/scheduler.hpp"
#include "sim/driver.hpp"
#include "sim/trace.hpp"

namespace drover::sim {

class SimHistory : public core::JobHistory {
 public:
  // `records` is indexed like `trace.jobs` and outlives this object.
  SimHistory(const Trace& trace, const std::vector<JobRecord>& records);

  // A job of the trace: its outcome so far (kPending before it is submitted:
  // the trace says it will be). A job not in the trace: kUnknown (satisfied,
  // as Slurm treats a dependency on a purged job). For an array
  // (array_task < 0 on an array's id): the elements together.
  core::JobOutcome outcome(core::JobId job, int64_t array_task) const override;

  // Trace index of a job id, -1 when absent.
  int32_t index_of(core::JobId id) const;

 private:
  core::JobOutcome one(int32_t index) const;
  core::JobOutcome array(const std::vector<int32_t>& elements) const;

  const std::vector<JobRecord>& records_;
  std::unordered_map<core::JobId, int32_t> by_id_;
  std::unordered_map<core::JobId, std::vector<int32_t>> arrays_;          // array job id -> elements
  std::map<std::pair<core::JobId, int64_t>, int32_t> elements_;           // (array job id, task) -> element
};

}  // namespace drover::sim
