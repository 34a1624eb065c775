#include "cli/usage_stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "common/duration.hpp"

namespace drover::cli {
namespace {

int64_t measure(const TaskUsageView& t, int m) {
  switch (static_cast<UsageMeasure>(m)) {
    case UsageMeasure::kCpu: return t.user_cpu_us + t.system_cpu_us;
    case UsageMeasure::kDiskRead: return t.disk_read;
    case UsageMeasure::kRss: return t.max_rss_kb;
    case UsageMeasure::kPages: return t.pages;
    case UsageMeasure::kVmSize: return t.max_vmsize_kb;
    case UsageMeasure::kDiskWrite: return t.disk_write;
  }
  return 0;
}

// A measure's value as the usage TRES strings write it.
std::string tres_value(int m, double v) {
  auto whole = static_cast<int64_t>(std::llround(v));
  switch (static_cast<UsageMeasure>(m)) {
    case UsageMeasure::kCpu: return cpu_clock_text(whole);
    case UsageMeasure::kRss:
    case UsageMeasure::kVmSize: return fmt::format("{}K", whole);
    default: return std::to_string(whole);
  }
}

}  // namespace

UsageStats summarize_usage(const std::vector<TaskUsageView>& tasks) {
  UsageStats s;
  s.ntasks = static_cast<int64_t>(tasks.size());
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const TaskUsageView& t = tasks[i];
    s.user_cpu_us += t.user_cpu_us;
    s.system_cpu_us += t.system_cpu_us;
    for (int m = 0; m < kUsageMeasures; ++m) {
      const int64_t v = measure(t, m);
      s.total[m] += v;
      UsageExtreme here{v, t.node, t.rank};
      auto before = [&](const UsageExtreme& e) { return v == e.value && t.rank < e.task; };
      if (i == 0 || v > s.max[m].value || before(s.max[m])) s.max[m] = here;
      if (i == 0 || v < s.min[m].value || before(s.min[m])) s.min[m] = here;
    }
  }
  for (int m = 0; m < kUsageMeasures; ++m) {
    s.ave[m] = tasks.empty() ? 0.0 : static_cast<double>(s.total[m]) / static_cast<double>(tasks.size());
  }
  return s;
}

std::string cpu_time_text(double seconds) {
  auto whole = static_cast<int64_t>(seconds);
  auto msec = static_cast<int64_t>(std::llround((seconds - static_cast<double>(whole)) * 1000.0));
  if (msec == 1000) {
    ++whole;
    msec = 0;
  }
  int64_t d = whole / 86400, h = whole / 3600 % 24, m = whole / 60 % 60, s = whole % 60;
  if (d > 0) return fmt::format("{}-{:02}:{:02}:{:02}", d, h, m, s);
  if (h > 0) return fmt::format("{:02}:{:02}:{:02}", h, m, s);
  return fmt::format("{:02}:{:02}.{:03}", m, s, msec);
}

std::string cpu_clock_text(int64_t microseconds) {
  return format_duration_hms(std::max<int64_t>(microseconds, 0) / 1000000);
}

std::string usage_tres_text(const UsageStats& s, std::string_view which, bool in) {
  // In: cpu, energy, fs/disk (read), mem, pages, vmem; Out: energy, fs/disk (written).
  struct Entry {
    const char* name;
    int measure;  // -1: energy, which is not measured (0)
  };
  static const Entry kIn[] = {{"cpu", 0}, {"energy", -1}, {"fs/disk", 1}, {"mem", 2}, {"pages", 3}, {"vmem", 4}};
  static const Entry kOut[] = {{"energy", -1}, {"fs/disk", 5}};
  const bool node = which.ends_with("Node"), task = which.ends_with("Task");
  const bool is_max = which.starts_with("Max"), is_min = which.starts_with("Min");
  std::string out;
  auto add = [&](const char* name, const std::string& v) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}={}", name, v);
  };
  for (const Entry& e : in ? std::span<const Entry>(kIn) : std::span<const Entry>(kOut)) {
    if (e.measure < 0) {
      if (task) continue;  // Slurm's task lists leave energy out
      add(e.name, node ? (s.max[0].node) : "0");
      continue;
    }
    const UsageExtreme& x = is_max ? s.max[e.measure] : s.min[e.measure];
    if (node) {
      add(e.name, x.node);
    } else if (task) {
      add(e.name, std::to_string(x.task));
    } else if (is_max || is_min) {
      add(e.name, tres_value(e.measure, static_cast<double>(x.value)));
    } else if (which == "Ave") {
      add(e.name, tres_value(e.measure, s.ave[e.measure]));
    } else {
      add(e.name, tres_value(e.measure, static_cast<double>(s.total[e.measure])));
    }
  }
  return out;
}

}  // namespace drover::cli
