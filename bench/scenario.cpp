#include "scenario.hpp"

#include <algorithm>
#include <random>

#include "config/core_cluster.hpp"
#include "config/model.hpp"

namespace drover::bench {

namespace {

constexpr core::Time kNow = 1'800'000'000;  // a fixed instant: runs are reproducible
constexpr int kUsers = 200;

const Seconds kLimits[] = {3600, 2 * 3600, 4 * 3600, 8 * 3600, 12 * 3600, 24 * 3600, 48 * 3600};

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  double real() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  template <class T, size_t N>
  T pick(const T (&v)[N]) {
    return v[static_cast<size_t>(uniform(0, N - 1))];
  }
  // 2..32, most jobs small (log-uniform).
  int32_t nodes_2_32() { return static_cast<int32_t>(std::clamp<double>(std::exp2(1 + real() * 4), 2, 32)); }

 private:
  std::mt19937_64 rng_;
};

std::string user_name(int u) { return "u" + std::to_string(1000 + u).substr(1); }
std::string account_of(int u) { return "acct" + std::to_string(100 + u / 10).substr(1); }

core::JobSpec& new_job(Scenario& s, Gen& g, core::JobId id) {
  core::JobSpec& j = s.specs.emplace_back();
  j.id = id;
  int u = static_cast<int>(g.uniform(0, kUsers - 1));
  j.user = user_name(u);
  j.uid = static_cast<uint32_t>(10000 + u);
  j.account = account_of(u);
  j.name = "job";
  j.submit_time = kNow - g.uniform(0, 86400);
  j.time_limit = g.pick(kLimits);
  return j;
}

void cpu_job(core::JobSpec& j, Gen& g, int32_t cores_lo, int32_t cores_hi) {
  j.partitions = {"compute"};
  j.cpus_per_task = static_cast<int32_t>(g.uniform(cores_lo, cores_hi));
  j.mem_per_cpu_mb = 1024 * g.uniform(2, 4);
}

void gpu_job(core::JobSpec& j, Gen& g) {
  static const int32_t kGpus[] = {1, 1, 1, 2, 2, 4, 4, 8};
  static const char* kTypes[] = {"", "", "h100", "a100"};
  int32_t gpus = g.pick(kGpus);
  j.partitions = {"training"};
  j.gres = {GresSpec{"gpu", g.pick(kTypes), gpus}};
  j.cpus_per_task = gpus * static_cast<int32_t>(g.uniform(4, 16));
  j.mem_per_node_mb = 1024 * 64 * gpus;
}

void multinode_job(core::JobSpec& j, Gen& g) {
  static const char* kModels[] = {"", "h100", "a100"};
  j.partitions = {"training"};
  j.qos = "training";
  j.min_nodes = g.nodes_2_32();
  j.ntasks_per_node = 8;
  j.gres = {GresSpec{"gpu", "", 8}};
  j.exclusive = true;
  j.constraint = g.pick(kModels);
  j.time_limit = std::max<Seconds>(j.time_limit, 4 * 3600);
}

void highmem_job(core::JobSpec& j, Gen& g) {
  j.partitions = {"highmem"};
  j.cpus_per_task = static_cast<int32_t>(g.uniform(4, 32));
  j.mem_per_node_mb = 1024 * g.uniform(512, 3500);
}

// The running set: bigger CPU jobs than the queue, so the cluster is full.
void make_running_specs(Scenario& s, Gen& g, int64_t count, std::vector<const core::JobSpec*>& out) {
  core::JobId id = 1;
  for (int64_t i = 0; i < count; ++i) {
    core::JobSpec& j = new_job(s, g, id++);
    double r = g.real();
    if (r < 0.01) {
      multinode_job(j, g);
    } else if (r < 0.11) {
      gpu_job(j, g);
    } else if (r < 0.955) {
      cpu_job(j, g, 16, 40);
    } else {
      highmem_job(j, g);
    }
    out.push_back(&j);
  }
}

void make_pending(Scenario& s, Gen& g, int64_t count, core::JobId first_id) {
  core::JobId id = first_id;
  while (static_cast<int64_t>(s.pending.size()) < count) {
    core::JobSpec& j = new_job(s, g, id++);
    double r = g.real();
    if (r < 0.60) {
      cpu_job(j, g, 1, 16);
      if (g.real() < 0.05) {
        j.partitions = {"interactive"};
        j.qos = "debug";
        j.time_limit = 3600;
      }
      // A fifth of the CPU work comes as arrays: identical elements.
      if (g.real() < 0.2) {
        int64_t n = std::min<int64_t>(g.uniform(10, 100), count - static_cast<int64_t>(s.pending.size()) - 1);
        j.array_job_id = j.id;
        j.array_task_id = 0;
        s.pending.push_back(&j);
        for (int64_t t = 1; t <= n; ++t) {
          core::JobSpec& e = s.specs.emplace_back(j);
          e.id = id++;
          e.array_task_id = static_cast<int32_t>(t);
          s.pending.push_back(&e);
        }
        continue;
      }
    } else if (r < 0.85) {
      gpu_job(j, g);
    } else if (r < 0.95) {
      multinode_job(j, g);
    } else {
      highmem_job(j, g);
    }
    s.pending.push_back(&j);
  }
}

core::FairShareFactors fairshare(Gen& g) {
  std::vector<core::Association> assocs;
  for (int a = 0; a < kUsers / 10; ++a) assocs.push_back({account_of(a * 10), "", "", 1, 0});
  for (int u = 0; u < kUsers; ++u) {
    assocs.push_back({account_of(u), user_name(u), "", 1, static_cast<double>(g.uniform(0, 1'000'000))});
  }
  return core::FairShareFactors::compute(assocs);
}

}  // namespace

Result<core::Cluster> scale10k_cluster(const std::string& source_dir) {
  std::string dir = source_dir + "/examples/scale-10k";
  auto cfg = config::load_config({dir + "/slurm.conf", {}, {}});
  if (!cfg) return cfg.error();
  if (cfg->diags.has_errors()) return make_error("examples/scale-10k has configuration errors");
  return config::build_core_cluster(*cfg);
}

void add_running_scale10k(Scenario& s, int64_t running, uint64_t seed) {
  Gen g(seed);
  s.now = kNow;
  s.fairshare = fairshare(g);
  // Place the running set with the core itself, on the empty cluster.
  std::vector<const core::JobSpec*> to_run;
  make_running_specs(s, g, running, to_run);
  {
    core::Scheduler sched(s.cluster);
    core::CycleInput in;
    in.now = kNow;
    in.pending = to_run;
    core::CycleResult r = sched.run_cycle(in, core::CycleOptions{core::PassKind::kFull});
    for (core::StartDecision& d : r.starts) {
      core::RunningJob rj;
      rj.spec = d.job;
      rj.partition = d.partition;
      rj.qos = d.qos;
      Seconds limit = d.time_limit >= kInfinite ? 7 * 86400 : d.time_limit;
      rj.start = kNow - g.uniform(0, limit - 60);
      rj.end = rj.start + limit;
      rj.alloc = std::move(d.alloc);
      s.running.push_back(std::move(rj));
    }
  }
}

void add_pending_scale10k(Scenario& s, int64_t pending, uint64_t seed) {
  Gen g(seed * 7919 + 1);
  core::JobId first = s.specs.empty() ? 1 : s.specs.back().id + 1;
  make_pending(s, g, pending, first);
}

}  // namespace drover::bench
