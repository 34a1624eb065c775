#include "sim/gen.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "common/strings.hpp"

namespace drover::sim {

const char* job_class_name(JobClass c) {
  switch (c) {
    case JobClass::kTraining: return "training";
    case JobClass::kPreprocess: return "preprocess";
    case JobClass::kInference: return "inference";
    case JobClass::kHighmem: return "highmem";
  }
  return "training";
}

namespace {

// splitmix64: tiny, fast, and the same sequence on every platform (the
// standard library's distributions are not specified bit for bit).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int64_t between(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(uniform() * static_cast<double>(hi - lo + 1)); }
  double exponential(double mean) { return -mean * std::log(1.0 - uniform()); }
  double normal() {  // Box-Muller
    double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  double lognormal(double median, double sigma) { return median * std::exp(sigma * normal()); }
  template <class W>
  std::size_t pick(const W& weights, std::size_t n) {
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) total += weights[i];
    double x = uniform() * total;
    for (std::size_t i = 0; i < n; ++i) {
      if (x < weights[i]) return i;
      x -= weights[i];
    }
    return n - 1;
  }

 private:
  uint64_t state_;
};

constexpr int64_t kGiB = 1024;

bool partition_has_gpus(const core::Cluster& c, const core::PartitionSpec& p) {
  for (core::NodeIndex n : p.nodes)
    if (c.nodes[n].gpus() > 0) return true;
  return false;
}

// The partition's smallest node (what every job sent there must fit).
ClassTarget target_of(const core::Cluster& c, int32_t p) {
  ClassTarget t;
  const auto& part = c.partitions[p];
  t.partition = part.name;
  bool first = true;
  std::set<std::string> features;
  for (core::NodeIndex n : part.nodes) {
    const auto& node = c.nodes[n];
    t.node_cpus = first ? node.cpus : std::min(t.node_cpus, node.cpus);
    t.node_mem_mb = first ? node.mem_mb : std::min(t.node_mem_mb, node.mem_mb);
    t.node_gpus = first ? node.gpus() : std::min(t.node_gpus, node.gpus());
    first = false;
    for (const auto& f : node.features)
      if (f == "h100" || f == "a100" || f == "v100" || f == "l40s" || f == "a10") features.insert(f);
  }
  t.gpu_features.assign(features.begin(), features.end());
  return t;
}

std::string qos_if(const core::Cluster& c, const char* name, const std::string& fallback) {
  return c.find_qos(name) >= 0 ? std::string(name) : fallback;
}

// Ranks partitions for a class: higher is better; -1 = unsuitable.
double suitability(const core::Cluster& c, int32_t p, JobClass k) {
  const auto& part = c.partitions[p];
  if (part.nodes.empty() || part.state != core::PartitionState::kUp) return -1;
  const bool gpus = partition_has_gpus(c, part);
  const double max_time = part.max_time == kInfinite ? 1e12 : static_cast<double>(part.max_time);
  ClassTarget t = target_of(c, p);
  switch (k) {
    case JobClass::kTraining: return gpus ? max_time + static_cast<double>(part.nodes.size()) : -1;
    case JobClass::kInference: return gpus ? 1e13 - max_time : -1;
    case JobClass::kPreprocess: return gpus ? -1 : (part.is_default ? 1e9 : 0) + static_cast<double>(part.nodes.size());
    case JobClass::kHighmem: return gpus ? -1 : static_cast<double>(t.node_mem_mb);
  }
  return -1;
}

}  // namespace

GenTargets seed_targets() {
  GenTargets g;
  g.of[0] = ClassTarget{"training", "training", 128, 1000000, 8, {}};
  g.of[1] = ClassTarget{"compute", "normal", 64, 256000, 0, {}};
  g.of[2] = ClassTarget{"interactive", "debug", 128, 1000000, 8, {"a100", "h100"}};
  g.of[3] = ClassTarget{"highmem", "normal", 64, 4000000, 0, {}};
  return g;
}

Result<GenTargets> targets_for(const core::Cluster& c, const GenOptions& opts) {
  GenTargets g;
  const std::string normal = qos_if(c, "normal", "");
  const char* qos_names[kJobClasses] = {"training", "normal", "debug", "normal"};
  for (int k = 0; k < kJobClasses; ++k) {
    int32_t best = -1;
    double best_score = -1;
    for (int32_t p = 0; p < static_cast<int32_t>(c.partitions.size()); ++p) {
      double s = suitability(c, p, static_cast<JobClass>(k));
      if (s > best_score) best = p, best_score = s;
    }
    if (best < 0 && opts.mix[k] <= 0) continue;
    if (best < 0) {
      const char* name = job_class_name(static_cast<JobClass>(k));
      return make_error(fmt::format("the cluster has no partition for {} jobs ({}); give it weight 0: --mix {}=0,...",
                                    name, k == 0 || k == 2 ? "none has GPU nodes" : "none has CPU-only nodes", name));
    }
    g.of[k] = target_of(c, best);
    g.of[k].qos = qos_if(c, qos_names[k], normal);
  }
  return g;
}

Status parse_mix(std::string_view s, GenOptions& opts) {
  double mix[kJobClasses] = {0, 0, 0, 0};
  for (const auto& item : split(s, ',')) {
    auto eq = item.find('=');
    double w = -1;
    int k = -1;
    if (eq != std::string::npos) {
      w = parse_double(item.substr(eq + 1)).value_or(-1);
      for (int i = 0; i < kJobClasses; ++i)
        if (iequals(item.substr(0, eq), job_class_name(static_cast<JobClass>(i)))) k = i;
    }
    if (k < 0 || w < 0) {
      return make_error(fmt::format("--mix: \"{}\" is not CLASS=WEIGHT (classes: training, preprocess, inference, highmem)", item));
    }
    mix[k] = w;
  }
  if (mix[0] + mix[1] + mix[2] + mix[3] <= 0) return make_error("--mix: every weight is 0");
  std::copy(std::begin(mix), std::end(mix), opts.mix);
  return {};
}

Status parse_train_nodes(std::string_view s, GenOptions& opts) {
  std::vector<std::pair<int32_t, double>> out;
  for (const auto& item : split(s, ',')) {
    auto colon = item.find(':');
    auto n = parse_int(item.substr(0, colon));
    auto w = colon == std::string::npos ? std::optional<double>(1.0) : parse_double(item.substr(colon + 1));
    if (!n || *n < 1 || *n > 100000 || !w || *w < 0) {
      return make_error(fmt::format("--train-nodes: \"{}\" is not NODES[:WEIGHT]", item));
    }
    out.emplace_back(static_cast<int32_t>(*n), *w);
  }
  if (out.empty()) return make_error("--train-nodes: give at least one NODES[:WEIGHT]");
  opts.train_nodes = std::move(out);
  return {};
}

namespace {

struct Maker {
  const GenOptions& o;
  const GenTargets& g;
  Rng rng;
  std::vector<TraceJob> jobs;
  core::JobId next_id = 1;

  Seconds run_for(double median_s, double sigma, Seconds limit, double over_limit) {
    double r = rng.lognormal(median_s, sigma) * o.runtime_scale;
    auto run = static_cast<Seconds>(std::max(1.0, std::round(r)));
    if (rng.uniform() >= over_limit) run = std::min(run, limit);
    return run;
  }

  TraceJob base(JobClass k, int64_t submit, int32_t user) {
    TraceJob j;
    const ClassTarget& t = g.of[static_cast<int>(k)];
    j.spec.id = next_id++;
    j.spec.name = job_class_name(k);
    j.spec.user = fmt::format("user{:02}", user);
    j.spec.account = fmt::format("acct{}", user % std::max(1, o.accounts) + 1);
    j.spec.partitions = {t.partition};
    j.spec.qos = t.qos;
    j.spec.submit_time = submit;
    return j;
  }

  void training(int64_t submit, int32_t user) {
    const ClassTarget& t = g.of[0];
    TraceJob j = base(JobClass::kTraining, submit, user);
    std::vector<double> w;
    for (const auto& [n, weight] : o.train_nodes) w.push_back(weight);
    j.spec.min_nodes = o.train_nodes[rng.pick(w, w.size())].first;
    j.spec.ntasks_per_node = std::max(1, t.node_gpus);
    j.spec.gres = {GresSpec{"gpu", "", std::max(1, t.node_gpus), false}};
    j.spec.exclusive = true;
    j.spec.time_limit = 48 * 3600;
    if (!t.gpu_features.empty() && rng.uniform() < 0.5) {
      j.spec.constraint = t.gpu_features[rng.between(0, static_cast<int64_t>(t.gpu_features.size()) - 1)];
    }
    j.run_time = run_for(3 * 3600.0, 1.0, j.spec.time_limit, 0.05);
    jobs.push_back(std::move(j));
  }

  void preprocess(int64_t submit, int32_t user, int64_t room) {
    const ClassTarget& t = g.of[1];
    auto n = std::min<int64_t>(room, rng.between(o.array_min, o.array_max));
    core::JobId array_id = next_id;
    Seconds median = static_cast<Seconds>(rng.lognormal(1800, 1.0));
    for (int64_t i = 0; i < n; ++i) {
      TraceJob j = base(JobClass::kPreprocess, submit, user);
      j.spec.cpus_per_task = std::min(16, t.node_cpus);
      j.spec.mem_per_node_mb = std::min<int64_t>(64 * kGiB, t.node_mem_mb / 2);
      j.spec.time_limit = 12 * 3600;
      if (n > 1) {
        j.spec.array_job_id = array_id;
        j.spec.array_task_id = static_cast<int32_t>(i);
      }
      j.run_time = run_for(static_cast<double>(median), 0.3, j.spec.time_limit, 0.01);
      jobs.push_back(std::move(j));
    }
  }

  void inference(int64_t submit, int32_t user) {
    const ClassTarget& t = g.of[2];
    TraceJob j = base(JobClass::kInference, submit, user);
    j.spec.gres = {GresSpec{"gpu", "", 1, false}};
    j.spec.cpus_per_task = std::min(16, t.node_cpus);
    j.spec.mem_per_node_mb = std::min<int64_t>(64 * kGiB, t.node_mem_mb / 8);
    j.spec.time_limit = 4 * 3600;
    if (!t.gpu_features.empty() && rng.uniform() < 0.3) {
      j.spec.constraint = t.gpu_features[rng.between(0, static_cast<int64_t>(t.gpu_features.size()) - 1)];
    }
    j.run_time = run_for(900, 1.2, j.spec.time_limit, 0.02);
    jobs.push_back(std::move(j));
  }

  void highmem(int64_t submit, int32_t user) {
    const ClassTarget& t = g.of[3];
    TraceJob j = base(JobClass::kHighmem, submit, user);
    j.spec.cpus_per_task = std::min(32, t.node_cpus);
    const double share[] = {0.25, 0.5, 0.75};
    j.spec.mem_per_node_mb = static_cast<int64_t>(static_cast<double>(t.node_mem_mb) * share[rng.between(0, 2)]) / kGiB * kGiB;
    j.spec.time_limit = 2 * 86400;
    j.run_time = run_for(1.5 * 3600.0, 1.0, j.spec.time_limit, 0.03);
    jobs.push_back(std::move(j));
  }

  // Users by a Zipf-like popularity (user k with weight 1/k).
  int32_t user() {
    std::vector<double> w(static_cast<std::size_t>(std::max(1, o.users)));
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = 1.0 / static_cast<double>(k + 1);
    return static_cast<int32_t>(rng.pick(w, w.size())) + 1;
  }
};

}  // namespace

std::vector<TraceJob> generate(const GenOptions& o, const GenTargets& g) {
  Maker m{o, g, Rng(o.seed), {}, 1};
  m.jobs.reserve(static_cast<std::size_t>(std::max<int64_t>(0, o.jobs)));
  double t = 0;
  const double mean_gap = 3600.0 / std::max(1e-9, o.rate_per_hour);
  while (static_cast<int64_t>(m.jobs.size()) < o.jobs) {
    t += m.rng.exponential(mean_gap);
    auto submit = static_cast<int64_t>(t);
    auto k = static_cast<JobClass>(m.rng.pick(o.mix, kJobClasses));
    int32_t u = m.user();
    switch (k) {
      case JobClass::kTraining: m.training(submit, u); break;
      case JobClass::kPreprocess: m.preprocess(submit, u, o.jobs - static_cast<int64_t>(m.jobs.size())); break;
      case JobClass::kInference: m.inference(submit, u); break;
      case JobClass::kHighmem: m.highmem(submit, u); break;
    }
  }
  for (auto& j : m.jobs) {
    j.label = std::to_string(j.spec.id);
    j.where = fmt::format("generated job {}", j.spec.id);
  }
  return std::move(m.jobs);
}

}  // namespace drover::sim
