// drover-bench: the scheduling core's scenario runner.
//
//   drover-bench --scenario scale-10k [--pending N] [--running N] [--repeat K]
//                [--bf-max-job-test N] [--bf-window-days D] [--seed S]
//                [--index-threshold NODES] [--stamped] [--json]
//
// --stamped gives the running jobs RunningJob::stamp, as the controller
// and the simulator do: cycles after the first keep what they hold.
// Builds the scenario, then runs K full backfill cycles (each plans every
// pending job) on one Scheduler, as the controller would, and reports the
// cycle time (median and minimum), how many pending jobs were planned, and
// the memory per pending job: the core's own (heap growth over the first
// cycle: its per-job cache and the cycle's result, rss_bytes_per_pending;
// without the result, once the caller has dropped it,
// state_bytes_per_pending) and, apart, the job specs the caller holds;
// `demands` is how many distinct demands the core holds resolved (jobs that
// ask the same, array elements first, share one).
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "scenario.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string scenario = "scale-10k";
  int64_t pending = 100000;
  int64_t running = 30000;
  int repeat = 5;
  int64_t bf_max_job_test = -1;
  double bf_window_days = -1;
  uint64_t seed = 1;
  bool json = false;
  bool stamped = false;  // --stamped: running jobs carry RunningJob::stamp (the core keeps their holdings between cycles)
  int64_t index_threshold = -1;  // Scheduler::set_index_threshold (-1: the core's default)
};

// Heap bytes in use (malloc's own count: unlike the resident set, it is not
// blurred by memory freed earlier and reused), large blocks included:
// malloc serves those (the cycle's result vector, a big cache table) with
// mmap, which uordblks alone leaves out.
int64_t heap_bytes() {
  struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

// FNV-1a over a cycle's decisions (what starts where, with which cores and
// devices; each pending job's planned start, nodes and reason): two builds
// of the core that make the same decisions print the same digest.
uint64_t digest(const drover::core::CycleResult& r) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](int64_t v) {
    h ^= static_cast<uint64_t>(v);
    h *= 1099511628211ull;
  };
  for (const auto& s : r.starts) {
    mix(s.job->id);
    mix(s.job->array_task_id);
    for (const auto& t : s.alloc.nodes) {
      mix(t.node);
      mix(t.mem_mb);
      for (int32_t c : t.cores) mix(c);
      for (const auto& g : t.gres) {
        mix(g.pool);
        mix(g.count);
        for (int32_t d : g.devices) mix(d);
      }
    }
  }
  for (const auto& p : r.pending) {
    mix(p.job->id);
    mix(p.start);
    mix(static_cast<int64_t>(p.reason));
    mix(p.reserved);
    for (auto n : p.nodes) mix(n);
  }
  return h;
}

int usage(const char* msg) {
  std::fprintf(stderr,
               "drover-bench: %s\nusage: drover-bench --scenario scale-10k [--pending N] [--running N] [--repeat K]\n"
               "                    [--bf-max-job-test N] [--bf-window-days D] [--seed S]\n"
               "                    [--index-threshold NODES] [--stamped] [--json]\n",
               msg);
  return 2;
}

bool parse(int argc, char** argv, Options& o, std::string& err) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        err = a + " needs a value";
        return nullptr;
      }
      return argv[++i];
    };
    const char* v = nullptr;
    if (a == "--json") {
      o.json = true;
    } else if (a == "--stamped") {
      o.stamped = true;
    } else if (a == "--scenario") {
      if (!(v = value())) return false;
      o.scenario = v;
    } else if (a == "--pending" || a == "--running" || a == "--repeat" || a == "--bf-max-job-test" || a == "--seed" ||
               a == "--index-threshold") {
      if (!(v = value())) return false;
      char* end = nullptr;
      long long n = std::strtoll(v, &end, 10);
      if (*end || n < 0) {
        err = a + ": expected a whole number, got \"" + v + "\"";
        return false;
      }
      if (a == "--pending") o.pending = n;
      if (a == "--running") o.running = n;
      if (a == "--repeat") o.repeat = static_cast<int>(std::max(1LL, n));
      if (a == "--bf-max-job-test") o.bf_max_job_test = n;
      if (a == "--seed") o.seed = static_cast<uint64_t>(n);
      if (a == "--index-threshold") o.index_threshold = n;
    } else if (a == "--bf-window-days") {
      if (!(v = value())) return false;
      o.bf_window_days = std::atof(v);
    } else {
      err = "unknown option " + a;
      return false;
    }
  }
  if (o.scenario != "scale-10k") {
    err = "unknown scenario \"" + o.scenario + "\" (scenarios: scale-10k)";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string err;
  if (!parse(argc, argv, o, err)) return usage(err.c_str());
  auto cluster = drover::bench::scale10k_cluster(DROVER_SOURCE_DIR);
  if (!cluster) return usage(cluster.error().message.c_str());
  drover::bench::Scenario s;
  s.name = o.scenario;
  s.cluster = std::move(cluster).value();

  auto t0 = Clock::now();
  drover::bench::add_running_scale10k(s, o.running, o.seed);
  // Scheduler settings apply to the measured cycles, not to placing the running jobs.
  if (o.bf_max_job_test >= 0) s.cluster.sched.bf_max_job_test = o.bf_max_job_test;
  if (o.bf_window_days > 0) s.cluster.sched.bf_window = static_cast<int64_t>(o.bf_window_days * 86400);
  int64_t rss_before = heap_bytes();
  drover::bench::add_pending_scale10k(s, o.pending, o.seed);
  int64_t rss_specs = heap_bytes();
  double gen_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!o.json) {
    std::fprintf(stderr, "scenario %s: %zu nodes, %zu running, %zu pending (built in %.1f s)\n", s.name.c_str(),
                 s.cluster.nodes.size(), s.running.size(), s.pending.size(), gen_s);
  }

  if (o.stamped) {
    for (size_t i = 0; i < s.running.size(); ++i) s.running[i].stamp = i + 1;
  }
  drover::core::Scheduler sched(s.cluster);
  if (o.index_threshold >= 0) sched.set_index_threshold(static_cast<size_t>(o.index_threshold));
  drover::core::CycleInput in;
  in.now = s.now;
  in.running = s.running;
  in.pending = s.pending;
  in.fairshare = &s.fairshare;
  std::vector<double> ms, cpu_ms;
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  };
  drover::core::CycleStats stats;
  uint64_t decisions = 0;
  int64_t rss_after = 0;
  for (int k = 0; k < o.repeat; ++k) {
    auto a = Clock::now();
    double c0 = cpu_now();
    drover::core::CycleResult r = sched.run_cycle(in, drover::core::CycleOptions{drover::core::PassKind::kFull});
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    cpu_ms.push_back(cpu_now() - c0);
    stats = r.stats;
    decisions = digest(r);
    if (k == 0) rss_after = heap_bytes();
    if (!o.json) {
      std::fprintf(stderr,
                   "  cycle %d: %.1f ms (%.1f ms CPU), %lld started, %lld reserved, %lld planned, %lld beyond window; "
                   "%lld index visits, %lld moments checked, %lld profile steps\n",
                   k + 1, ms.back(), cpu_ms.back(), static_cast<long long>(r.stats.started), static_cast<long long>(r.stats.reserved),
                   static_cast<long long>(r.stats.planned), static_cast<long long>(r.stats.beyond_window),
                   static_cast<long long>(r.stats.index_visits), static_cast<long long>(r.stats.rise_checks),
                   static_cast<long long>(r.stats.profile_steps));
    }
  }
  // What the core keeps between cycles (its per-job cache and kept state),
  // without the last cycle's result, which the caller owns and drops.
  const int64_t rss_state = heap_bytes();
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2];
  std::vector<double> cpu_sorted = cpu_ms;
  std::sort(cpu_sorted.begin(), cpu_sorted.end());
  // The core's own memory per pending job (its per-job cache and the cycle's
  // result, as heap bytes in use), apart from the job specs the caller holds.
  double n = s.pending.empty() ? 1.0 : static_cast<double>(s.pending.size());
  double rss_per = static_cast<double>(rss_after - rss_specs) / n;
  double spec_per = static_cast<double>(rss_specs - rss_before) / n;
  double state_per = static_cast<double>(rss_state - rss_specs) / n;
  std::printf(
      "{\"scenario\": \"%s\", \"nodes\": %zu, \"running\": %zu, \"pending\": %zu, \"cycles\": %d, "
      "\"cycle_ms_median\": %.1f, \"cycle_ms_min\": %.1f, \"cycle_ms_first\": %.1f, \"cycle_cpu_ms_median\": %.1f, "
      "\"planned\": %lld, "
      "\"started\": %lld, \"reserved\": %lld, \"beyond_window\": %lld, \"tested\": %lld, "
      "\"bf_max_job_test\": %lld, \"bf_window_s\": %lld, \"rss_bytes_per_pending\": %.0f, \"state_bytes_per_pending\": %.0f, "
      "\"spec_bytes_per_pending\": %.0f, \"demands\": %lld, \"decisions\": \"%016llx\"}\n",
      s.name.c_str(), s.cluster.nodes.size(), s.running.size(), s.pending.size(), o.repeat, median, sorted.front(),
      ms.front(), cpu_sorted[cpu_sorted.size() / 2], static_cast<long long>(stats.planned), static_cast<long long>(stats.started),
      static_cast<long long>(stats.reserved), static_cast<long long>(stats.beyond_window),
      static_cast<long long>(stats.tested), static_cast<long long>(s.cluster.sched.bf_max_job_test),
      static_cast<long long>(s.cluster.sched.bf_window), rss_per, state_per, spec_per,
      static_cast<long long>(stats.demands), static_cast<unsigned long long>(decisions));
  return 0;
}
