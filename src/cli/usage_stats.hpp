// A step's use of its nodes as sacct and sstat report it: from what each
// task used (measured by the step daemons), the largest and smallest task
// with where it ran, the average over the tasks and the total, for each of
// Slurm's usage TRES (cpu, fs/disk, mem, pages, vmem as read; fs/disk as
// written).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace drover::cli {

// One task's use, as the step daemon on its node measured it.
struct TaskUsageView {
  std::string node;
  int rank = 0;
  int64_t user_cpu_us = 0, system_cpu_us = 0;
  int64_t max_rss_kb = 0, max_vmsize_kb = 0;
  int64_t pages = 0;
  int64_t disk_read = 0, disk_write = 0;  // bytes
};

// The measures, in the order Slurm's usage TRES strings list them.
enum class UsageMeasure { kCpu, kDiskRead, kRss, kPages, kVmSize, kDiskWrite };
inline constexpr int kUsageMeasures = 6;

struct UsageExtreme {
  int64_t value = 0;  // CPU in microseconds, sizes in KiB, I/O in bytes, pages
  std::string node;
  int task = 0;
};

struct UsageStats {
  int64_t ntasks = 0;
  UsageExtreme max[kUsageMeasures], min[kUsageMeasures];
  double ave[kUsageMeasures] = {};
  int64_t total[kUsageMeasures] = {};
  int64_t user_cpu_us = 0, system_cpu_us = 0;  // over every task

  const UsageExtreme& max_of(UsageMeasure m) const { return max[static_cast<int>(m)]; }
  const UsageExtreme& min_of(UsageMeasure m) const { return min[static_cast<int>(m)]; }
  double ave_of(UsageMeasure m) const { return ave[static_cast<int>(m)]; }
  int64_t total_of(UsageMeasure m) const { return total[static_cast<int>(m)]; }
};

// Over the tasks given (at least one). Ties go to the lowest task.
UsageStats summarize_usage(const std::vector<TaskUsageView>& tasks);

// Slurm's CPU-time forms: "MM:SS.mmm" under an hour, else "HH:MM:SS" or
// "D-HH:MM:SS" (TotalCPU, UserCPU, SystemCPU).
std::string cpu_time_text(double seconds);
// Whole seconds as "HH:MM:SS" or "D-HH:MM:SS" (AveCPU, MinCPU, and cpu= in
// the usage TRES).
std::string cpu_clock_text(int64_t microseconds);

// The usage TRES strings, as sacct's and sstat's TRESUsageIn*/TRESUsageOut*
// print them: "cpu=00:00:04,energy=0,fs/disk=1694420,mem=323564K,pages=6,
// vmem=328136K" (In) and "energy=0,fs/disk=1693" (Out). `which`: "Ave",
// "Max", "MaxNode", "MaxTask", "Min", "MinNode", "MinTask" or "Tot";
// `in`: the In set (else Out).
std::string usage_tres_text(const UsageStats& s, std::string_view which, bool in);

}  // namespace drover::cli
