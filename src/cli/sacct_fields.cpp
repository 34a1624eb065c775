// sacct's fields: names (as --helpformat lists them), headers, default
// widths and justification as Slurm 22.05 prints them, and values.
// Fields Drover does not measure (energy, disk I/O, page faults, per-task
// usage extremes) print blank, as Slurm prints them for jobs without data.
#include <fmt/format.h>

#include <cmath>

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

// Slurm's CPU-time form: "D-HH:MM:SS", "HH:MM:SS", or "MM:SS.mmm" under an hour.
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

std::string opt_kb(const std::optional<int64_t>& kb, const SacctContext& c) {
  return kb ? sacct_size_text(static_cast<double>(*kb), 'K', c) : "";
}

ColumnInfo C(std::string_view name, int width, bool right, CutStyle cut, std::string_view header = {}) {
  return ColumnInfo{name, header.empty() ? name : header, width, right, cut};
}

using Value = std::function<std::string(const R&, const SacctContext&)>;

std::string blank(const R&, const SacctContext&) { return ""; }

// A job's requested CPU frequency is not recorded (Unknown); Slurm's batch
// step shows 0.
std::string req_cpu_freq(const R& r, const SacctContext&) { return r.step == "batch" ? "0" : "Unknown"; }

}  // namespace

std::string sacct_size_text(double value, char base_unit, const SacctContext& c) {
  static constexpr std::string_view kUnits = "KMGTP";
  std::size_t u = kUnits.find(base_unit);
  if (c.units) {
    std::size_t want = kUnits.find(*c.units);
    while (u < want) value /= 1024, ++u;
    while (u > want) value *= 1024, --u;
    return fmt::format("{:.2f}{}", value, kUnits[u]);
  }
  if (!c.noconvert) {
    while (u + 1 < kUnits.size() && value >= 1024 && std::fmod(value, 1024) == 0) value /= 1024, ++u;
  }
  return fmt::format("{}{}", static_cast<int64_t>(value), kUnits[u]);
}

const std::vector<SacctField>& sacct_fields() {
  auto num = [](int64_t v) { return std::to_string(v); };
  static const std::vector<SacctField> fields = {
      {C("Account", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.account; }},
      {C("AdminComment", 15, true, kPlus), blank},
      {C("AllocCPUS", 10, true, kNever), [num](const R& r, const SacctContext&) { return num(r.alloc_cpus); }},
      {C("AllocGRES", 12, true, kPlus), [](const R& r, const SacctContext&) { return alloc_gres(r); }},
      {C("AllocNodes", 10, true, kNever), [num](const R& r, const SacctContext&) {
         return num(r.state == JobState::kPending ? 0 : r.nnodes);
       }},
      {C("AllocTRES", 10, true, kPlus), [](const R& r, const SacctContext&) { return format_tres_sacct(r.alloc_tres); }},
      {C("AssocID", 7, true, kNever), blank},
      {C("AveCPU", 10, true, kNever), blank},
      {C("AveCPUFreq", 10, true, kNever), blank},
      {C("AveDiskRead", 14, true, kNever), blank},
      {C("AveDiskWrite", 14, true, kNever), blank},
      {C("AvePages", 10, true, kNever), blank},
      {C("AveRSS", 10, true, kNever), [](const R& r, const SacctContext& c) { return opt_kb(r.ave_rss_kb, c); }},
      {C("AveVMSize", 10, true, kNever), blank},
      {C("BlockID", 16, true, kPlus), blank},
      {C("Cluster", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.cluster; }},
      {C("Comment", 14, true, kPlus), [](const R& r, const SacctContext&) { return r.comment; }},
      {C("Constraints", 19, true, kPlus), [](const R& r, const SacctContext&) { return r.constraints; }},
      {C("ConsumedEnergy", 14, true, kNever), blank},
      {C("ConsumedEnergyRaw", 17, true, kNever), blank},
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
      {C("ExitCode", 8, true, kNever), [](const R& r, const SacctContext&) { return exit_text(r.exit_code, r.exit_signal); }},
      {C("Flags", 19, true, kPlus), [](const R& r, const SacctContext&) { return r.step.empty() ? r.flags : ""; }},
      {C("GID", 6, true, kNever), [num](const R& r, const SacctContext&) { return num(r.gid); }},
      {C("Group", 9, true, kPlus), [](const R& r, const SacctContext&) { return r.group; }},
      {C("JobID", 12, false, kPlus), [](const R& r, const SacctContext&) { return sacct_job_id(r); }},
      {C("JobIDRaw", 12, false, kPlus), [](const R& r, const SacctContext&) {
         return r.step.empty() ? std::to_string(r.job_id) : fmt::format("{}.{}", r.job_id, r.step);
       }},
      {C("JobName", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.job_name; }},
      {C("Layout", 9, true, kPlus), blank},
      {C("MaxDiskRead", 12, true, kNever), blank},
      {C("MaxDiskReadNode", 15, true, kPlus), blank},
      {C("MaxDiskReadTask", 15, true, kNever), blank},
      {C("MaxDiskWrite", 12, true, kNever), blank},
      {C("MaxDiskWriteNode", 16, true, kPlus), blank},
      {C("MaxDiskWriteTask", 16, true, kNever), blank},
      {C("MaxPages", 8, true, kNever), blank},
      {C("MaxPagesNode", 12, true, kPlus), blank},
      {C("MaxPagesTask", 14, true, kNever), blank},
      {C("MaxRSS", 10, true, kNever), [](const R& r, const SacctContext& c) { return opt_kb(r.max_rss_kb, c); }},
      {C("MaxRSSNode", 10, true, kPlus), blank},
      {C("MaxRSSTask", 10, true, kNever), blank},
      {C("MaxVMSize", 10, true, kNever), [](const R& r, const SacctContext& c) { return opt_kb(r.max_vmsize_kb, c); }},
      {C("MaxVMSizeNode", 14, true, kPlus), blank},
      {C("MaxVMSizeTask", 14, true, kNever), blank},
      {C("McsLabel", 12, true, kPlus), blank},
      {C("MinCPU", 10, true, kNever), blank},
      {C("MinCPUNode", 10, true, kPlus), blank},
      {C("MinCPUTask", 10, true, kNever), blank},
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
      {C("QOSRAW", 6, true, kNever), blank},
      {C("Reason", 22, true, kPlus), [](const R& r, const SacctContext&) { return r.reason; }},
      {C("ReqCPUFreq", 10, true, kPlus), req_cpu_freq},
      {C("ReqCPUFreqGov", 13, true, kPlus), req_cpu_freq},
      {C("ReqCPUFreqMax", 13, true, kPlus), req_cpu_freq},
      {C("ReqCPUFreqMin", 13, true, kPlus), req_cpu_freq},
      {C("ReqCPUS", 8, true, kNever), [num](const R& r, const SacctContext&) { return num(r.req_cpus); }},
      {C("ReqMem", 10, true, kNever), [](const R& r, const SacctContext& c) {
         if (!r.step.empty()) return std::string();  // requested by the job, not by its steps
         SacctContext own = c;
         own.units.reset();  // as Slurm's: --units leaves ReqMem as it was asked
         return sacct_size_text(static_cast<double>(r.req_mem_mb), 'M', own);
       }},
      {C("ReqNodes", 8, true, kNever), [num](const R& r, const SacctContext&) { return num(r.nnodes); }},
      {C("ReqTRES", 10, true, kPlus), [](const R& r, const SacctContext&) {
         return r.step.empty() ? format_tres_sacct(r.req_tres) : std::string();
       }},
      {C("Reservation", 20, true, kPlus), [](const R& r, const SacctContext&) { return r.reservation; }},
      {C("ReservationId", 8, true, kNever), blank},
      {C("Reserved", 10, true, kNever), blank},
      {C("ResvCPU", 10, true, kNever), blank},
      {C("ResvCPURAW", 10, true, kNever), blank},
      {C("Start", 19, true, kPlain), [](const R& r, const SacctContext&) { return time_or(r.start, "Unknown"); }},
      {C("State", 10, true, kPlus), [](const R& r, const SacctContext&) { return sacct_state(r); }},
      {C("Submit", 19, true, kPlain), [](const R& r, const SacctContext&) { return time_or(r.submit, "Unknown"); }},
      {C("SubmitLine", 20, true, kPlus), blank},
      {C("Suspended", 10, true, kNever), [](const R& r, const SacctContext&) { return format_duration_hms(r.suspended); }},
      {C("SystemComment", 15, true, kPlus), blank},
      {C("SystemCPU", 10, true, kNever), [](const R& r, const SacctContext&) {
         return r.has_cpu_usage ? cpu_time_text(r.system_cpu_sec) : std::string();
       }},
      {C("Timelimit", 10, true, kNever), [](const R& r, const SacctContext&) {
         return r.time_limit == kNotSet ? std::string() : limit_text_hms(r.time_limit);
       }},
      {C("TimelimitRaw", 10, true, kNever), [num](const R& r, const SacctContext&) {
         if (r.time_limit == kNotSet) return std::string();
         return r.time_limit == kInfinite ? std::string("UNLIMITED") : num(r.time_limit / 60);
       }},
      {C("TotalCPU", 10, true, kNever), [](const R& r, const SacctContext&) {
         return r.has_cpu_usage ? cpu_time_text(r.total_cpu_sec) : std::string("00:00:00");
       }},
      {C("TRESUsageInAve", 14, true, kPlus), blank},
      {C("TRESUsageInMax", 14, true, kPlus), blank},
      {C("TRESUsageInMaxNode", 18, true, kPlus), blank},
      {C("TRESUsageInMaxTask", 18, true, kPlus), blank},
      {C("TRESUsageInMin", 14, true, kPlus), blank},
      {C("TRESUsageInMinNode", 18, true, kPlus), blank},
      {C("TRESUsageInMinTask", 18, true, kPlus), blank},
      {C("TRESUsageInTot", 14, true, kPlus), blank},
      {C("TRESUsageOutAve", 15, true, kPlus), blank},
      {C("TRESUsageOutMax", 15, true, kPlus), blank},
      {C("TRESUsageOutMaxNode", 19, true, kPlus), blank},
      {C("TRESUsageOutMaxTask", 19, true, kPlus), blank},
      {C("TRESUsageOutMin", 15, true, kPlus), blank},
      {C("TRESUsageOutMinNode", 19, true, kPlus), blank},
      {C("TRESUsageOutMinTask", 19, true, kPlus), blank},
      {C("TRESUsageOutTot", 15, true, kPlus), blank},
      {C("UID", 6, true, kNever), [num](const R& r, const SacctContext&) { return num(r.uid); }},
      {C("User", 9, true, kPlus), [](const R& r, const SacctContext&) { return r.user; }},
      {C("UserCPU", 10, true, kNever), [](const R& r, const SacctContext&) {
         return r.has_cpu_usage ? cpu_time_text(r.user_cpu_sec) : std::string();
       }},
      {C("WCKey", 10, true, kPlus), [](const R& r, const SacctContext&) { return r.wckey; }},
      {C("WCKeyID", 10, true, kNever), blank},
      {C("WorkDir", 20, true, kPlus), [](const R& r, const SacctContext&) { return r.work_dir; }},
  };
  return fields;
}

}  // namespace drover::cli
