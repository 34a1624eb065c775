// sacct's fields: names (as --helpformat lists them), headers, default
// widths and justification as Slurm 22.05 prints them, and values.
// The usage fields (MaxRSS, AveCPU, TRESUsageIn*, ...) come from what each
// task of a step used; energy is not measured (0). Fields Drover does not
// record print blank, as Slurm prints them for jobs without data.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "cli/display_values.hpp"
#include "cli/sacct_internal.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using R = AccountingRecord;
constexpr CutStyle kPlus = CutStyle::kPlus, kPlain = CutStyle::kPlain, kNever = CutStyle::kNever;

Seconds elapsed(const R& r, UnixTime now) {
  if (r.start == kNoTime || r.state == JobState::kPending) return 0;
  UnixTime until = r.end != kNoTime ? r.end : now;
  return until > r.start ? until - r.start - r.suspended : 0;
}

std::string exit_text(int code, int sig) { return fmt::format("{}:{}", code, sig); }

// gres/gpu=2 in AllocTRES -> "gpu:2" (typed entries are left out, as Slurm's AllocGRES).
std::string alloc_gres(const R& r) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : r.alloc_tres) {
    if (name.rfind("gres/", 0) != 0 || name.find(':') != std::string::npos) continue;
    parts.push_back(fmt::format("{}:{}", name.substr(5), count));
  }
  return join(parts, ",");
}

// The unit of the memory in AllocTRES/ReqTRES: --units's, or with
// --noconvert megabytes as stored ("mem=8192M", Slurm 22.05 on the anchor cluster).
std::optional<char> tres_mem_unit(const SacctContext& c) {
  if (c.units) return c.units;
  if (c.noconvert) return 'M';
  return std::nullopt;
}

// Memory a step's tasks used: "323564K" (a larger unit when exact), bytes
// with --noconvert, as Slurm's sacct prints MaxRSS.
std::string kb_text(double kb, const SacctContext& c) {
  if (c.noconvert && !c.units) return std::to_string(std::llround(kb * 1024));
  return sacct_size_text(std::round(kb), 'K', c);
}

// Bytes a step's tasks read or wrote, in megabytes as Slurm's sacct prints
// them: "1.62M", "0.00M" under one, "0" for none.
std::string disk_text(double bytes, const SacctContext& c) {
  const double mb = bytes / (1024.0 * 1024.0);
  if (bytes <= 0) return "0";
  if (c.units) return sacct_size_text(mb, 'M', c);
  if (mb > 1 && std::fmod(mb, 1.0) == 0) return sacct_size_text(mb, 'M', c);
  return fmt::format("{:.2f}M", mb);
}

using M = UsageMeasure;

// A usage field of a step: blank for a job and for a step not measured.
using UsageValue = std::function<std::string(const UsageStats&, const SacctContext&)>;
std::function<std::string(const AccountingRecord&, const SacctContext&)> usage(UsageValue f) {
  return [f = std::move(f)](const AccountingRecord& r, const SacctContext& c) {
    return r.usage ? f(*r.usage, c) : std::string();
  };
}
UsageValue max_kb(M m) {
  return [m](const UsageStats& s, const SacctContext& c) {
    return kb_text(static_cast<double>(s.max_of(m).value), c);
  };
}
UsageValue ave_kb(M m) {
  return [m](const UsageStats& s, const SacctContext& c) { return kb_text(s.ave_of(m), c); };
}
UsageValue max_disk(M m) {
  return [m](const UsageStats& s, const SacctContext& c) {
    return disk_text(static_cast<double>(s.max_of(m).value), c);
  };
}
UsageValue ave_disk(M m) {
  return [m](const UsageStats& s, const SacctContext& c) { return disk_text(s.ave_of(m), c); };
}
UsageValue max_node(M m) {
  return [m](const UsageStats& s, const SacctContext&) { return s.max_of(m).node; };
}
UsageValue max_task(M m) {
  return [m](const UsageStats& s, const SacctContext&) { return std::to_string(s.max_of(m).task); };
}
UsageValue tres(std::string which, bool in) {
  return [which, in](const UsageStats& s, const SacctContext&) { return usage_tres_text(s, which, in); };
}

ColumnInfo C(std::string_view name, int width, bool right, CutStyle cut, std::string_view header = {}) {
  return ColumnInfo{name, header.empty() ? name : header, width, right, cut};
}

using Value = std::function<std::string(const R&, const SacctContext&)>;

std::string blank(const R&, const SacctContext&) { return ""; }

// The user, group (names and ids) and working directory are the job's: Slurm 22.05's sacct leaves
// them blank on its steps' lines (anchor cluster).
std::string job_only(const R& r, const std::string& v) { return r.step.empty() ? v : std::string(); }

// How long the job waited once eligible: until it started, or until now while it waits (Slurm 22.05's
// Reserved, on the job's line only); unset where Slurm leaves it blank.
std::optional<int64_t> reserved_s(const R& r, const SacctContext& c) {
  if (!r.step.empty()) return std::nullopt;
  // Not eligible yet (held, or waiting for --begin): none yet, as Slurm 22.05 showed it.
  if (r.state == JobState::kPending) return r.eligible > 0 ? std::max<int64_t>(0, c.now - r.eligible) : 0;
  if (r.eligible <= 0 || r.start <= 0) return std::nullopt;
  return std::max<int64_t>(0, r.start - r.eligible);
}

std::string reserved(const R& r, const SacctContext& c) {
  auto s = reserved_s(r, c);
  return s ? format_duration_hms(*s) : std::string();
}

// The CPU time that wait held back: Reserved times the job's CPUs (Slurm 22.05's ResvCPU: a job of
// 2 CPUs that waited 1 s shows 00:00:02).
std::optional<int64_t> reserved_cpu_s(const R& r, const SacctContext& c) {
  auto s = reserved_s(r, c);
  if (!s) return std::nullopt;
  return *s * (r.state == JobState::kPending || r.alloc_cpus <= 0 ? r.req_cpus : r.alloc_cpus);
}

// A job's requested CPU frequency is not recorded (Unknown); Slurm's batch
// step shows 0.
std::string req_cpu_freq(const R& r, const SacctContext&) { return r.step == "batch" ? "0" : "Unknown"; }

}  // namespace

std::string sacct_size_text(double value, char base_unit, const SacctContext& c) {
  static constexpr std::string_view kUnits = "KMGTP";
  std::size_t u = kUnits.find(base_unit);
  if (c.units) return size_in_unit(value, base_unit, *c.units);
  if (!c.noconvert) {
    while (u + 1 < kUnits.size() && value >= 1024 && std::fmod(value, 1024) == 0) value /= 1024, ++u;
  }
  return fmt::format("{}{}", static_cast<int64_t>(value), kUnits[u]);
}

const std::vector<SacctField>& sacct_fields() {
  auto num = [](int64_t v) { return std::to_string(v); };
  // Energy and CPU frequency are not measured: 0 where usage was, for a
  // step still running and for a job still pending (Slurm's without an
  // energy plugin, on the anchor).
  auto energy = [](const R& r, const SacctContext&) {
    const bool step_running = !r.step.empty() && r.state == JobState::kRunning;
    const bool job_pending = r.step.empty() && r.state == JobState::kPending;
    return r.usage || r.has_step_usage || step_running || job_pending ? std::string("0") : std::string();
  };
  static const std::vector<SacctField> fields = {
      {C("Account", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.account; }},
      {C("AdminComment", 15, true, kPlus), blank},
      {C("AllocCPUS", 10, true, kNever), [num](const R& r, const SacctContext&) { return num(r.alloc_cpus); }},
      {C("AllocGRES", 12, true, kPlus), [](const R& r, const SacctContext&) { return alloc_gres(r); }},
      {C("AllocNodes", 10, true, kNever), [num](const R& r, const SacctContext&) {
         return num(r.state == JobState::kPending ? 0 : r.nnodes);
       }},
      {C("AllocTRES", 10, true, kPlus),
       [](const R& r, const SacctContext& c) { return format_tres_sacct(r.alloc_tres, tres_mem_unit(c)); }},
      {C("AssocID", 7, true, kNever), blank},
      {C("AveCPU", 10, true, kNever), usage([](const UsageStats& s, const SacctContext&) {
         return cpu_clock_text(std::llround(s.ave_of(M::kCpu)));
       })},
      {C("AveCPUFreq", 10, true, kNever), [](const R& r, const SacctContext&) {
         return r.usage || (!r.step.empty() && r.state == JobState::kRunning) ? std::string("0") : std::string();
       }},
      {C("AveDiskRead", 14, true, kNever), usage(ave_disk(M::kDiskRead))},
      {C("AveDiskWrite", 14, true, kNever), usage(ave_disk(M::kDiskWrite))},
      {C("AvePages", 10, true, kNever), usage([](const UsageStats& s, const SacctContext&) {
         return std::to_string(std::llround(s.ave_of(M::kPages)));
       })},
      {C("AveRSS", 10, true, kNever), usage(ave_kb(M::kRss))},
      {C("AveVMSize", 10, true, kNever), usage(ave_kb(M::kVmSize))},
      {C("BlockID", 16, true, kPlus), blank},
      {C("Cluster", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.cluster; }},
      {C("Comment", 14, true, kPlus), [](const R& r, const SacctContext&) { return r.comment; }},
      {C("Constraints", 19, true, kPlus), [](const R& r, const SacctContext&) { return r.constraints; }},
      {C("ConsumedEnergy", 14, true, kNever), energy},
      {C("ConsumedEnergyRaw", 17, true, kNever), energy},
      {C("Container", 19, true, kPlus), blank},
      {C("CPUTime", 10, true, kNever), [](const R& r, const SacctContext& c) {
         return format_duration_hms(elapsed(r, c.now) * r.alloc_cpus);
       }},
      {C("CPUTimeRAW", 10, true, kNever), [num](const R& r, const SacctContext& c) {
         return num(elapsed(r, c.now) * r.alloc_cpus);
       }},
      {C("DBIndex", 10, false, kNever), blank},
      {C("DerivedExitCode", 15, true, kNever), [](const R& r, const SacctContext&) {
         if (!r.step.empty()) return std::string();  // a job's, not a step's
         return exit_text(r.derived_exit_code, r.derived_exit_signal);
       }},
      {C("Elapsed", 10, true, kNever), [](const R& r, const SacctContext& c) { return format_duration_hms(elapsed(r, c.now)); }},
      {C("ElapsedRaw", 10, true, kNever), [num](const R& r, const SacctContext& c) { return num(elapsed(r, c.now)); }},
      {C("Eligible", 19, true, kPlain), [](const R& r, const SacctContext&) { return time_or(r.eligible, "Unknown"); }},
      {C("End", 19, true, kPlain), [](const R& r, const SacctContext&) { return time_or(r.end, "Unknown"); }},
      // Slurm 22.05's sacct shows an exit status of 128 or more less 128 (a
      // script's `exit 137` is 9:0, `exit 200` 72:0 on the anchor cluster);
      // DerivedExitCode, scontrol and squeue show it whole.
      {C("ExitCode", 8, true, kNever), [](const R& r, const SacctContext&) {
         return exit_text(r.exit_code >= 128 ? r.exit_code - 128 : r.exit_code, r.exit_signal);
       }},
      {C("Flags", 19, true, kPlus), [](const R& r, const SacctContext&) { return r.step.empty() ? r.flags : ""; }},
      {C("GID", 6, true, kNever), [num](const R& r, const SacctContext&) { return job_only(r, num(r.gid)); }},
      {C("Group", 9, true, kPlus), [](const R& r, const SacctContext&) { return job_only(r, r.group); }},
      {C("JobID", 12, false, kPlus), [](const R& r, const SacctContext&) { return sacct_job_id(r); }},
      {C("JobIDRaw", 12, false, kPlus), [](const R& r, const SacctContext&) {
         return r.step.empty() ? std::to_string(r.job_id) : fmt::format("{}.{}", r.job_id, r.step);
       }},
      {C("JobName", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.job_name; }},
      {C("Layout", 9, true, kPlus), [](const R& r, const SacctContext&) { return r.layout; }},
      {C("MaxDiskRead", 12, true, kNever), usage(max_disk(M::kDiskRead))},
      {C("MaxDiskReadNode", 15, true, kPlus), usage(max_node(M::kDiskRead))},
      {C("MaxDiskReadTask", 15, true, kNever), usage(max_task(M::kDiskRead))},
      {C("MaxDiskWrite", 12, true, kNever), usage(max_disk(M::kDiskWrite))},
      {C("MaxDiskWriteNode", 16, true, kPlus), usage(max_node(M::kDiskWrite))},
      {C("MaxDiskWriteTask", 16, true, kNever), usage(max_task(M::kDiskWrite))},
      {C("MaxPages", 8, true, kNever), usage([](const UsageStats& s, const SacctContext&) {
         return std::to_string(s.max_of(M::kPages).value);
       })},
      {C("MaxPagesNode", 12, true, kPlus), usage(max_node(M::kPages))},
      {C("MaxPagesTask", 14, true, kNever), usage(max_task(M::kPages))},
      {C("MaxRSS", 10, true, kNever), usage(max_kb(M::kRss))},
      {C("MaxRSSNode", 10, true, kPlus), usage(max_node(M::kRss))},
      {C("MaxRSSTask", 10, true, kNever), usage(max_task(M::kRss))},
      {C("MaxVMSize", 10, true, kNever), usage(max_kb(M::kVmSize))},
      {C("MaxVMSizeNode", 14, true, kPlus), usage(max_node(M::kVmSize))},
      {C("MaxVMSizeTask", 14, true, kNever), usage(max_task(M::kVmSize))},
      {C("McsLabel", 12, true, kPlus), blank},
      {C("MinCPU", 10, true, kNever), usage([](const UsageStats& s, const SacctContext&) {
         return cpu_clock_text(s.min_of(M::kCpu).value);
       })},
      {C("MinCPUNode", 10, true, kPlus), usage([](const UsageStats& s, const SacctContext&) { return s.min_of(M::kCpu).node; })},
      {C("MinCPUTask", 10, true, kNever), usage([](const UsageStats& s, const SacctContext&) {
         return std::to_string(s.min_of(M::kCpu).task);
       })},
      {C("NCPUS", 10, true, kNever), [num](const R& r, const SacctContext&) { return num(r.alloc_cpus); }},
      {C("NNodes", 8, true, kNever), [num](const R& r, const SacctContext&) { return num(r.nnodes); }},
      {C("NodeList", 15, true, kPlus), [](const R& r, const SacctContext&) { return or_text(r.node_list, "None assigned"); }},
      {C("NTasks", 8, true, kNever), [num](const R& r, const SacctContext&) {
         return r.ntasks > 0 ? num(r.ntasks) : std::string();
       }},
      {C("Partition", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.partition; }},
      {C("Priority", 10, true, kNever), [num](const R& r, const SacctContext&) {
         return r.step.empty() ? num(r.priority) : std::string();
       }},
      {C("QOS", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.qos; }},
      {C("QOSRAW", 6, true, kNever), [num](const R& r, const SacctContext&) {
         return r.step.empty() && r.qos_id > 0 ? num(r.qos_id) : std::string();  // steps: blank, as Slurm's
       }},
      {C("Reason", 22, true, kPlus), [](const R& r, const SacctContext&) { return r.reason; }},
      {C("ReqCPUFreq", 10, true, kPlus), req_cpu_freq},
      {C("ReqCPUFreqGov", 13, true, kPlus), req_cpu_freq},
      {C("ReqCPUFreqMax", 13, true, kPlus), req_cpu_freq},
      {C("ReqCPUFreqMin", 13, true, kPlus), req_cpu_freq},
      {C("ReqCPUS", 8, true, kNever), [num](const R& r, const SacctContext&) { return num(r.req_cpus); }},
      {C("ReqMem", 10, true, kNever), [](const R& r, const SacctContext& c) {
         if (!r.step.empty()) return std::string();  // requested by the job, not by its steps
         // --units=M shows 16G as 16384M, =K as 16777216K (Slurm 22.05 on the anchor cluster).
         if (c.units) return mb_in_unit(r.req_mem_mb, *c.units);
         return sacct_size_text(static_cast<double>(r.req_mem_mb), 'M', c);
       }},
      {C("ReqNodes", 8, true, kNever), [num](const R& r, const SacctContext&) { return num(r.nnodes); }},
      {C("ReqTRES", 10, true, kPlus), [](const R& r, const SacctContext& c) {
         return r.step.empty() ? format_tres_sacct(r.req_tres, tres_mem_unit(c)) : std::string();
       }},
      {C("Reservation", 20, true, kPlus), [](const R& r, const SacctContext&) { return r.reservation; }},
      {C("ReservationId", 8, true, kNever), blank},
      {C("Reserved", 10, true, kNever), reserved},
      {C("ResvCPU", 10, true, kNever), [](const R& r, const SacctContext& c) {
         auto s = reserved_cpu_s(r, c);
         return s ? format_duration_hms(*s) : std::string();
       }},
      {C("ResvCPURAW", 10, true, kNever), [](const R& r, const SacctContext& c) {
         auto s = reserved_cpu_s(r, c);
         return s ? std::to_string(*s) : std::string();
       }},
      {C("Start", 19, true, kPlain),
       [](const R& r, const SacctContext&) { return r.start_none ? std::string("None") : time_or(r.start, "Unknown"); }},
      {C("State", 10, true, kPlus), [](const R& r, const SacctContext&) { return sacct_state(r); }},
      {C("Submit", 19, true, kPlain), [](const R& r, const SacctContext&) { return time_or(r.submit, "Unknown"); }},
      {C("SubmitLine", 20, true, kPlus), [](const R& r, const SacctContext&) { return r.submit_line; }},
      {C("Suspended", 10, true, kNever), [](const R& r, const SacctContext&) { return format_duration_hms(r.suspended); }},
      {C("SystemComment", 15, true, kPlus), blank},
      {C("SystemCPU", 10, true, kNever), [](const R& r, const SacctContext&) {
         return r.has_cpu_usage ? cpu_time_text(r.system_cpu_sec) : std::string("00:00:00");
       }},
      // Cut with '+' as Slurm 22.05's sacct cut them ("10-00:00:+", "Partition+").
      {C("Timelimit", 10, true, kPlus), [](const R& r, const SacctContext&) {
         if (r.partition_time_limit) return std::string("Partition_Limit");
         return r.time_limit == kNotSet ? std::string() : limit_text_hms(r.time_limit);
       }},
      {C("TimelimitRaw", 10, true, kPlus), [num](const R& r, const SacctContext&) {
         if (r.partition_time_limit) return std::string("Partition_Limit");
         if (r.time_limit == kNotSet) return std::string();
         return r.time_limit == kInfinite ? std::string("UNLIMITED") : num(r.time_limit / 60);
       }},
      {C("TotalCPU", 10, true, kNever), [](const R& r, const SacctContext&) {
         return r.has_cpu_usage ? cpu_time_text(r.total_cpu_sec) : std::string("00:00:00");
       }},
      {C("TRESUsageInAve", 14, true, kPlus), usage(tres("Ave", true))},
      {C("TRESUsageInMax", 14, true, kPlus), usage(tres("Max", true))},
      {C("TRESUsageInMaxNode", 18, true, kPlus), usage(tres("MaxNode", true))},
      {C("TRESUsageInMaxTask", 18, true, kPlus), usage(tres("MaxTask", true))},
      {C("TRESUsageInMin", 14, true, kPlus), usage(tres("Min", true))},
      {C("TRESUsageInMinNode", 18, true, kPlus), usage(tres("MinNode", true))},
      {C("TRESUsageInMinTask", 18, true, kPlus), usage(tres("MinTask", true))},
      {C("TRESUsageInTot", 14, true, kPlus), usage(tres("Tot", true))},
      {C("TRESUsageOutAve", 15, true, kPlus), usage(tres("Ave", false))},
      {C("TRESUsageOutMax", 15, true, kPlus), usage(tres("Max", false))},
      {C("TRESUsageOutMaxNode", 19, true, kPlus), usage(tres("MaxNode", false))},
      {C("TRESUsageOutMaxTask", 19, true, kPlus), usage(tres("MaxTask", false))},
      {C("TRESUsageOutMin", 15, true, kPlus), usage(tres("Min", false))},
      {C("TRESUsageOutMinNode", 19, true, kPlus), usage(tres("MinNode", false))},
      {C("TRESUsageOutMinTask", 19, true, kPlus), usage(tres("MinTask", false))},
      {C("TRESUsageOutTot", 15, true, kPlus), usage(tres("Tot", false))},
      {C("UID", 6, true, kNever), [num](const R& r, const SacctContext&) { return job_only(r, num(r.uid)); }},
      {C("User", 9, true, kPlus), [](const R& r, const SacctContext&) { return job_only(r, r.user); }},
      {C("UserCPU", 10, true, kNever), [](const R& r, const SacctContext&) {
         return r.has_cpu_usage ? cpu_time_text(r.user_cpu_sec) : std::string("00:00:00");
       }},
      {C("WCKey", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.wckey; }},
      // No WCKeys are kept: a job's id is 0, as Slurm 22.05's without TrackWCKey (steps blank).
      {C("WCKeyID", 10, true, kNever), [](const R& r, const SacctContext&) { return job_only(r, "0"); }},
      {C("WorkDir", 20, true, kPlus), [](const R& r, const SacctContext&) { return job_only(r, r.work_dir); }},
  };
  return fields;
}

}  // namespace drover::cli
