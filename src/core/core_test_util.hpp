// Builders for the core's tests: clusters, jobs and running jobs in a few
// readable lines.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "core/scheduler.hpp"

namespace drover::core::testing {

// One node: "cpus/sockets", memory, gpus "h100:8" (empty: none), features.
inline NodeSpec node(const std::string& name, int32_t cpus, int64_t mem_mb, const std::string& gpu_type = "",
                     int32_t gpus = 0, std::vector<std::string> features = {}, uint32_t weight = 1,
                     int32_t sockets = 2) {
  NodeSpec n;
  n.name = name;
  n.sockets = sockets;
  n.cores_per_socket = cpus / sockets;
  n.threads_per_core = 1;
  n.cpus = cpus;
  n.mem_mb = mem_mb;
  n.weight = weight;
  n.features = std::move(features);
  if (gpus > 0) {
    GresPool p;
    p.name = "gpu";
    p.type = gpu_type;
    p.count = gpus;
    for (int32_t i = 0; i < gpus; ++i) {
      p.device_ids.push_back(i);
      int32_t s = i * sockets / gpus;
      std::vector<int32_t> cores;
      for (int32_t c = s * n.cores_per_socket; c < (s + 1) * n.cores_per_socket; ++c) cores.push_back(c);
      p.close_cores.push_back(cores);
    }
    n.gres.push_back(p);
  }
  return n;
}

class ClusterBuilder {
 public:
  ClusterBuilder& add(NodeSpec n) {
    c_.nodes.push_back(std::move(n));
    return *this;
  }
  // Partition over nodes by name.
  ClusterBuilder& partition(const std::string& name, const std::vector<std::string>& nodes, bool is_default = false,
                            Seconds max_time = kInfinite) {
    PartitionSpec p;
    p.name = name;
    p.is_default = is_default;
    p.max_time = max_time;
    pending_parts_.push_back({p, nodes});
    return *this;
  }
  ClusterBuilder& qos(QosSpec q) {
    c_.qos.push_back(std::move(q));
    return *this;
  }
  Cluster& raw() { return c_; }
  Cluster build() {
    c_.finalize();
    for (auto& [p, names] : pending_parts_) {
      for (const std::string& n : names) p.nodes.push_back(c_.find_node(n));
      c_.partitions.push_back(p);
    }
    pending_parts_.clear();
    c_.finalize();
    return c_;
  }

 private:
  Cluster c_;
  std::vector<std::pair<PartitionSpec, std::vector<std::string>>> pending_parts_;
};

// Jobs with stable addresses (the core keeps pointers between calls).
class Jobs {
 public:
  JobSpec& add(JobId id) {
    JobSpec& j = jobs_.emplace_back();
    j.id = id;
    j.user = "alice";
    j.name = "job" + std::to_string(id);
    j.submit_time = id;
    j.mem_per_cpu_mb = 1024;
    j.time_limit = 3600;
    return j;
  }
  std::vector<const JobSpec*> pending() const {
    std::vector<const JobSpec*> out;
    for (const JobSpec& j : jobs_) out.push_back(&j);
    return out;
  }

 private:
  std::deque<JobSpec> jobs_;
};

// One cycle over every job of `jobs`, with these running jobs, at `now`.
inline CycleResult cycle(Scheduler& s, const Jobs& jobs, std::vector<RunningJob> run = {}, Time now = 1000,
                  PassKind pass = PassKind::kFull) {
  std::vector<const JobSpec*> pending = jobs.pending();
  CycleInput in;
  in.now = now;
  in.running = run;
  in.pending = pending;
  return s.run_cycle(in, CycleOptions{pass});
}

// A running job holding whole cores, memory and GPUs on the named nodes.
inline RunningJob running(const Cluster& c, const JobSpec* spec, const std::vector<std::string>& nodes, int32_t cores,
                          int64_t mem_mb, int32_t gpus, Time start, Time end) {
  RunningJob r;
  r.spec = spec;
  r.start = start;
  r.end = end;
  for (const std::string& name : nodes) {
    NodeTake t;
    t.node = c.find_node(name);
    for (int32_t i = 0; i < cores; ++i) t.cores.push_back(i);
    t.cpus = cores;
    t.mem_mb = mem_mb;
    if (gpus > 0) {
      GresTake g;
      g.pool = 0;
      g.count = gpus;
      for (int32_t i = 0; i < gpus; ++i) g.devices.push_back(i);
      t.gres.push_back(g);
    }
    r.alloc.nodes.push_back(t);
  }
  return r;
}

inline const StartDecision* started(const CycleResult& r, JobId id) {
  for (const StartDecision& s : r.starts) {
    if (s.job->id == id) return &s;
  }
  return nullptr;
}

inline const PendingPlan* waiting(const CycleResult& r, JobId id) {
  for (const PendingPlan& p : r.pending) {
    if (p.job->id == id) return &p;
  }
  return nullptr;
}

inline std::vector<std::string> node_names(const Cluster& c, const Allocation& a) {
  std::vector<std::string> out;
  for (const NodeTake& t : a.nodes) out.push_back(c.nodes[t.node].name);
  return out;
}

}  // namespace drover::core::testing
