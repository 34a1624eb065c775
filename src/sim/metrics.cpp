#include "sim/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace drover::sim {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

double jain_index(const std::vector<double>& x) {
  double sum = 0, sq = 0;
  for (double v : x) {
    sum += v;
    sq += v * v;
  }
  if (x.empty() || sq == 0) return 1;
  return sum * sum / (static_cast<double>(x.size()) * sq);
}

namespace {

WaitStats wait_stats(std::vector<double> waits) {
  WaitStats w;
  w.jobs = static_cast<int64_t>(waits.size());
  if (waits.empty()) return w;
  std::sort(waits.begin(), waits.end());
  double sum = 0;
  for (double v : waits) sum += v;
  w.mean = sum / static_cast<double>(waits.size());
  w.p50 = quantile(waits, 0.50);
  w.p95 = quantile(waits, 0.95);
  w.p99 = quantile(waits, 0.99);
  w.max = waits.back();
  return w;
}

double bounded_slowdown(const JobRecord& j) {
  double run = static_cast<double>(j.end - j.start);
  double wait = static_cast<double>(j.start - j.submit);
  return std::max((wait + run) / std::max(run, kSlowdownBound), 1.0);
}

struct Capacity {
  double cpu = 0, gpu = 0, mem = 0;
};

TresUse use_over(const std::vector<core::NodeIndex>& nodes, const core::Cluster& c, const SimResult& r,
                 double span) {
  Capacity cap, used;
  for (core::NodeIndex n : nodes) {
    cap.cpu += c.nodes[n].cpus;
    cap.gpu += c.nodes[n].gpus();
    cap.mem += static_cast<double>(c.nodes[n].mem_mb);
    used.cpu += r.nodes[n].cpu_s;
    used.gpu += r.nodes[n].gpu_s;
    used.mem += r.nodes[n].mem_mb_s;
  }
  auto frac = [&](double u, double capacity) { return capacity > 0 && span > 0 ? u / (capacity * span) : 0.0; };
  return TresUse{frac(used.cpu, cap.cpu), frac(used.gpu, cap.gpu), frac(used.mem, cap.mem)};
}

void count_outcomes(const SimResult& r, Summary& s) {
  int64_t immediate = 0, backfilled = 0, reserved = 0;
  for (const auto& j : r.jobs) {
    s.rejected += j.state == JobState::kRejected;
    s.never_ran += j.state == JobState::kNeverRan;
    s.timeouts += j.state == JobState::kTimeout;
    s.failed += j.state == JobState::kFailed;
    if (!j.started()) continue;
    ++s.jobs;
    immediate += j.how == StartHow::kImmediate;
    backfilled += j.how == StartHow::kBackfilled;
    reserved += j.how == StartHow::kReserved;
  }
  double n = s.jobs > 0 ? static_cast<double>(s.jobs) : 1.0;
  s.immediate_fraction = static_cast<double>(immediate) / n;
  s.backfilled_fraction = static_cast<double>(backfilled) / n;
  s.reserved_fraction = static_cast<double>(reserved) / n;
}

void waits_and_fairness(const core::Cluster& c, const Trace& t, const SimResult& r, Summary& s) {
  std::vector<double> waits;
  std::map<std::string, std::vector<double>> by_qos;
  std::map<std::string, std::pair<double, int64_t>> slowdown_by_user;
  double slowdown_sum = 0;
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const JobRecord& j = r.jobs[i];
    if (!j.started()) continue;
    double wait = static_cast<double>(j.start - j.submit);
    waits.push_back(wait);
    by_qos[j.qos >= 0 ? c.qos[j.qos].name : "(none)"].push_back(wait);
    double sd = bounded_slowdown(j);
    slowdown_sum += sd;
    auto& u = slowdown_by_user[t.jobs[i].spec.user];
    u.first += sd;
    ++u.second;
  }
  s.wait = wait_stats(waits);
  s.mean_bounded_slowdown = waits.empty() ? 0 : slowdown_sum / static_cast<double>(waits.size());
  for (auto& [qos, w] : by_qos) s.wait_by_qos[qos] = wait_stats(std::move(w));
  std::vector<double> per_user;
  for (const auto& [user, u] : slowdown_by_user) per_user.push_back(u.first / static_cast<double>(u.second));
  s.jain_fairness_by_user = jain_index(per_user);
}

}  // namespace

Summary summarize(const core::Cluster& c, const Trace& t, const SimResult& r) {
  Summary s;
  s.trace_jobs = static_cast<int64_t>(r.jobs.size());
  s.stats = r.stats;
  s.makespan_s = static_cast<double>(r.last_end - r.first_submit);
  count_outcomes(r, s);
  waits_and_fairness(c, t, r, s);
  std::vector<core::NodeIndex> all(c.nodes.size());
  for (std::size_t n = 0; n < all.size(); ++n) all[n] = static_cast<core::NodeIndex>(n);
  s.utilization = use_over(all, c, r, s.makespan_s);
  for (const auto& p : c.partitions) s.utilization_by_partition[p.name] = use_over(p.nodes, c, r, s.makespan_s);
  for (const auto& n : r.nodes) s.stranded_gpu_hours += n.stranded_gpu_s / 3600.0;
  return s;
}

std::vector<MetricRow> headline_rows(const Summary& s) {
  return {
      {"jobs", static_cast<double>(s.jobs)},
      {"rejected", static_cast<double>(s.rejected)},
      {"never_ran", static_cast<double>(s.never_ran)},
      {"timeouts", static_cast<double>(s.timeouts)},
      {"makespan_s", s.makespan_s},
      {"mean_wait_s", s.wait.mean},
      {"p50_wait_s", s.wait.p50},
      {"p95_wait_s", s.wait.p95},
      {"p99_wait_s", s.wait.p99},
      {"max_wait_s", s.wait.max},
      {"mean_bounded_slowdown", s.mean_bounded_slowdown},
  };
}

std::vector<MetricRow> metric_rows(const Summary& s) {
  std::vector<MetricRow> rows = headline_rows(s);
  rows.push_back({"utilization.cpu", s.utilization.cpu});
  rows.push_back({"utilization.gpu", s.utilization.gpu});
  rows.push_back({"utilization.mem", s.utilization.mem});
  for (const auto& [p, u] : s.utilization_by_partition) {
    rows.push_back({"utilization." + p + ".cpu", u.cpu});
    rows.push_back({"utilization." + p + ".gpu", u.gpu});
    rows.push_back({"utilization." + p + ".mem", u.mem});
  }
  rows.push_back({"immediate_fraction", s.immediate_fraction});
  rows.push_back({"backfilled_fraction", s.backfilled_fraction});
  rows.push_back({"reserved_fraction", s.reserved_fraction});
  rows.push_back({"stranded_gpu_hours", s.stranded_gpu_hours});
  rows.push_back({"jain_fairness_by_user", s.jain_fairness_by_user});
  for (const auto& [q, w] : s.wait_by_qos) {
    rows.push_back({"wait_by_qos." + q + ".jobs", static_cast<double>(w.jobs)});
    rows.push_back({"wait_by_qos." + q + ".mean_s", w.mean});
    rows.push_back({"wait_by_qos." + q + ".p95_s", w.p95});
  }
  return rows;
}

namespace {

// Adds `amount` over [from, to) (hours) into equal buckets of width `w`, as an average level.
void add_interval(std::vector<double>& buckets, double w, double from, double to, double amount) {
  if (to <= from || w <= 0) return;
  const auto n = static_cast<int64_t>(buckets.size());
  auto first = std::clamp<int64_t>(static_cast<int64_t>(from / w), 0, n - 1);
  auto last = std::clamp<int64_t>(static_cast<int64_t>(to / w), 0, n - 1);
  for (int64_t b = first; b <= last; ++b) {
    double lo = std::max(from, static_cast<double>(b) * w);
    double hi = std::min(to, static_cast<double>(b + 1) * w);
    if (hi > lo) buckets[b] += amount * (hi - lo) / w;
  }
}

}  // namespace

std::vector<Series> utilization_series(const core::Cluster& c, const SimResult& r, Resource res, int buckets) {
  const double span_h = static_cast<double>(r.last_end - r.first_submit) / 3600.0;
  const double w = span_h > 0 ? span_h / buckets : 1.0;
  const std::size_t np = c.partitions.size();
  std::vector<double> capacity(np + 1, 0);
  for (std::size_t p = 0; p < np; ++p) {
    for (core::NodeIndex n : c.partitions[p].nodes)
      capacity[p] += res == Resource::kCpu ? c.nodes[n].cpus : c.nodes[n].gpus();
  }
  for (const auto& n : c.nodes) capacity[np] += res == Resource::kCpu ? n.cpus : n.gpus();
  std::vector<std::vector<double>> level(np + 1, std::vector<double>(static_cast<std::size_t>(buckets), 0.0));
  auto hours = [&](core::Time t) { return static_cast<double>(t - r.first_submit) / 3600.0; };
  for (const auto& sh : r.shares) {
    const JobRecord& j = r.jobs[sh.job];
    add_interval(level[sh.partition], w, hours(j.start), hours(j.end), res == Resource::kCpu ? sh.cpus : sh.gpus);
  }
  for (std::size_t i = 0; i < r.jobs.size(); ++i) {
    const JobRecord& j = r.jobs[i];
    if (j.started()) add_interval(level[np], w, hours(j.start), hours(j.end), res == Resource::kCpu ? j.cpus : static_cast<double>(j.gpus));
  }
  std::vector<Series> out;
  for (std::size_t k = 0; k <= np; ++k) {
    std::size_t p = (k + np) % (np + 1);  // "all" first, then partitions in config order
    if (capacity[p] <= 0) continue;
    if (p < np && c.partitions[p].nodes.size() == c.nodes.size()) continue;  // the same line as "all"
    Series s{p == np ? "all" : c.partitions[p].name, {}};
    for (int b = 0; b < buckets; ++b) s.points.emplace_back((b + 0.5) * w, level[p][b] / capacity[p]);
    out.push_back(std::move(s));
  }
  return out;
}

Series wait_cdf(const SimResult& r, const std::string& name, int points) {
  std::vector<double> waits;
  for (const auto& j : r.jobs)
    if (j.started()) waits.push_back(static_cast<double>(j.start - j.submit));
  std::sort(waits.begin(), waits.end());
  Series s{name, {}};
  const auto n = static_cast<double>(waits.size());
  for (int k = 0; k <= points && !waits.empty(); ++k) {
    double q = static_cast<double>(k) / points;
    auto i = std::min(waits.size() - 1, static_cast<std::size_t>(q * (n - 1)));
    s.points.emplace_back(waits[i], static_cast<double>(i + 1) / n);
  }
  return s;
}

}  // namespace drover::sim
