// A reference scheduler for the simulator's fidelity and differential tests:
// textbook FCFS and EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001)
// on a machine of identical units (processors or whole nodes), written
// plainly and independently of src/core. Test-only: nothing in the library
// includes it.
//
// FCFS: at every event, start queued jobs in submit order while the first
// one fits; stop at the first that does not.
// EASY: the same, then the first job that does not fit gets a reservation
// at the shadow time (the earliest time enough units are free, assuming
// running jobs end at their limits); a later job may start now if it fits
// and either ends by the shadow time or uses only the units the reserved
// job leaves spare at the shadow time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

namespace drover::sim::testing {

struct RefJob {
  int64_t id = 0;
  int64_t submit = 0;
  int64_t run = 0;    // actual run time
  int64_t limit = 0;  // time limit; the job is killed at it
  int64_t size = 1;   // units it needs
};

enum class RefPolicy { kFcfs, kEasy };

class ReferenceScheduler {
 public:
  ReferenceScheduler(const std::vector<RefJob>& jobs, int64_t capacity, RefPolicy policy)
      : jobs_(jobs), capacity_(capacity), free_(capacity), policy_(policy), start_(jobs.size(), -1) {}

  // Start time of every job (by position); -1 for a job larger than the machine.
  std::vector<int64_t> run() {
    std::vector<std::size_t> order(jobs_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return jobs_[a].submit != jobs_[b].submit ? jobs_[a].submit < jobs_[b].submit : jobs_[a].id < jobs_[b].id;
    });
    std::size_t next = 0;
    while (next < order.size() || !queue_.empty()) {
      int64_t t = next < order.size() ? jobs_[order[next]].submit : INT64_MAX;
      for (const auto& r : running_) t = std::min(t, r.end);
      end_jobs_until(t);
      for (; next < order.size() && jobs_[order[next]].submit <= t; ++next) {
        if (jobs_[order[next]].size <= capacity_) queue_.push_back(order[next]);
      }
      schedule(t);
    }
    return start_;
  }

 private:
  struct Running {
    std::size_t job;
    int64_t end;       // when it really ends
    int64_t end_plan;  // start + limit: what the scheduler assumes
  };

  void end_jobs_until(int64_t t) {
    for (auto it = running_.begin(); it != running_.end();) {
      if (it->end <= t) {
        free_ += jobs_[it->job].size;
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void start(std::size_t j, int64_t t) {
    start_[j] = t;
    free_ -= jobs_[j].size;
    running_.push_back({j, t + std::min(jobs_[j].run, jobs_[j].limit), t + jobs_[j].limit});
  }

  void schedule(int64_t t) {
    while (!queue_.empty() && jobs_[queue_.front()].size <= free_) {
      start(queue_.front(), t);
      queue_.erase(queue_.begin());
    }
    if (queue_.empty() || policy_ == RefPolicy::kFcfs) return;
    // The head's reservation: shadow time and the units spare then.
    std::vector<Running> by_end = running_;
    std::sort(by_end.begin(), by_end.end(), [](const Running& a, const Running& b) { return a.end_plan < b.end_plan; });
    const int64_t need = jobs_[queue_.front()].size;
    int64_t avail = free_, shadow = t;
    for (const auto& r : by_end) {
      if (avail >= need && r.end_plan > shadow) break;  // every job ending at the shadow time counts
      avail += jobs_[r.job].size;
      shadow = r.end_plan;
    }
    int64_t extra = avail - need;
    for (auto it = queue_.begin() + 1; it != queue_.end();) {
      const RefJob& j = jobs_[*it];
      const bool ends_in_time = t + j.limit <= shadow;
      if (j.size <= free_ && (ends_in_time || j.size <= extra)) {
        if (!ends_in_time) extra -= j.size;
        start(*it, t);
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
  }

  const std::vector<RefJob>& jobs_;
  int64_t capacity_;
  int64_t free_;
  RefPolicy policy_;
  std::vector<int64_t> start_;
  std::vector<std::size_t> queue_;  // waiting, in submit order
  std::vector<Running> running_;
};

}  // namespace drover::sim::testing
