#include "sim/job_history.hpp"

#include <algorithm>

namespace drover::sim {

SimHistory::SimHistory(const Trace& trace, const std::vector<JobRecord>& records) : records_(records) {
  for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
    const auto& s = trace.jobs[i].spec;
    const auto idx = static_cast<int32_t>(i);
    by_id_.emplace(s.id, idx);
    if (s.array_job_id > 0) {
      arrays_[s.array_job_id].push_back(idx);
      elements_.emplace(std::make_pair(s.array_job_id, int64_t{s.array_task_id}), idx);
    }
  }
}

int32_t SimHistory::index_of(core::JobId id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? -1 : it->second;
}

core::JobOutcome SimHistory::one(int32_t index) const {
  const JobRecord& r = records_[index];
  core::JobOutcome o;
  o.start = r.start;
  switch (r.state) {
    case JobState::kPending: o.progress = core::JobProgress::kPending; break;
    case JobState::kRunning: o.progress = core::JobProgress::kRunning; break;
    case JobState::kCompleted: o.progress = core::JobProgress::kCompletedOk; break;
    case JobState::kFailed:
    case JobState::kTimeout: o.progress = core::JobProgress::kFailed; break;
    case JobState::kRejected:
    case JobState::kNeverRan: o.progress = core::JobProgress::kCancelled; break;
  }
  return o;
}

namespace {

// Running when any element runs (from the earliest start), pending while any
// waits and none runs; once all ended, failed if any failed, else cancelled
// if any was cancelled, else completed.
core::JobOutcome array_outcome(const std::vector<core::JobOutcome>& parts) {
  core::JobOutcome out;
  bool pending = false, failed = false, cancelled = false, running = false;
  out.start = -1;
  for (const auto& p : parts) {
    running |= p.progress == core::JobProgress::kRunning;
    pending |= p.progress == core::JobProgress::kPending;
    failed |= p.progress == core::JobProgress::kFailed;
    cancelled |= p.progress == core::JobProgress::kCancelled;
    if (p.start >= 0 && (out.start < 0 || p.start < out.start)) out.start = p.start;
  }
  if (running) {
    out.progress = core::JobProgress::kRunning;
  } else if (pending) {
    out.progress = core::JobProgress::kPending;
  } else {
    out.progress = failed ? core::JobProgress::kFailed
                          : (cancelled ? core::JobProgress::kCancelled : core::JobProgress::kCompletedOk);
  }
  if (out.start < 0) out.start = 0;
  return out;
}

}  // namespace

core::JobOutcome SimHistory::array(const std::vector<int32_t>& elements) const {
  std::vector<core::JobOutcome> parts;
  parts.reserve(elements.size());
  for (int32_t e : elements) parts.push_back(one(e));
  return array_outcome(parts);
}

core::JobOutcome SimHistory::outcome(core::JobId job, int64_t array_task) const {
  if (array_task >= 0) {
    auto it = elements_.find({job, array_task});
    if (it != elements_.end()) return one(it->second);
    return {};
  }
  if (auto a = arrays_.find(job); a != arrays_.end()) return array(a->second);
  if (auto it = by_id_.find(job); it != by_id_.end()) return one(it->second);
  return {};
}

}  // namespace drover::sim
