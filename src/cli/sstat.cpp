#include "cli/sstat.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cli/display_options.hpp"
#include "cli/job_values.hpp"
#include "cli/sacct_internal.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

enum SsOpt {
  kAllSteps, kHelpFormat, kPidFormat, kJobs, kNoHeader, kNoConvert, kFormat, kParsable, kParsable2, kHelp, kUsage,
  kVerbose, kVersion,
};

const std::vector<OptionSpec>& sstat_specs() {
  static const std::vector<OptionSpec> specs = {
      {kAllSteps, "allsteps", 'a', ArgKind::kNone},   {kHelpFormat, "helpformat", 'e', ArgKind::kNone},
      {kPidFormat, "pidformat", 'i', ArgKind::kNone}, {kJobs, "jobs", 'j', ArgKind::kRequired},
      {kNoHeader, "noheader", 'n', ArgKind::kNone},   {kNoConvert, "noconvert", 0, ArgKind::kNone},
      {kFormat, "format", 'o', ArgKind::kRequired},   {kFormat, "fields", 0, ArgKind::kRequired},
      {kParsable, "parsable", 'p', ArgKind::kNone},   {kParsable2, "parsable2", 'P', ArgKind::kNone},
      {kHelp, "help", 'h', ArgKind::kNone},           {kUsage, "usage", 0, ArgKind::kNone},
      {kVerbose, "verbose", 'v', ArgKind::kNone},     {kVersion, "version", 'V', ArgKind::kNone},
  };
  return specs;
}

CliError fatal_job(const std::string& id) {
  return CliError{fmt::format("sstat: fatal: Bad job/step specified: {}\n", id), kExitError};
}

// -j JOB[_TASK][.STEP],...: STEP a number, batch or extern.
CliResult<bool> add_jobs(SstatOptions& o, const std::string& v) {
  for (const std::string& id : comma_list(v)) {
    if (id.ends_with(".extern") && parse_job_step_ref(id.substr(0, id.size() - 7))) {
      return cli_error("sstat", fmt::format("{}: Drover runs no extern step", id));
    }
    auto ref = parse_job_step_ref(id);
    if (!ref) return fatal_job(id);
    o.jobs.push_back(*ref);
  }
  return true;
}

CliResult<bool> apply_option(SstatOptions& o, const ScannedOption& opt) {
  const std::string v = opt.value.value_or("");
  switch (opt.id) {
    case kAllSteps: o.all_steps = true; break;
    case kHelpFormat: o.print_fields = true; break;
    case kPidFormat:
      return cli_error("sstat", "-i/--pidformat is not built in Drover; -o JobID,Nodelist,Pids lists the pids");
    case kJobs: return add_jobs(o, v);
    case kNoHeader: o.noheader = true; break;
    case kNoConvert: o.noconvert = true; break;
    case kFormat: o.format = v; break;
    case kParsable: o.parsable = true; break;
    case kParsable2: o.parsable2 = true; break;
    case kHelp: case kUsage: o.print_help = true; break;
    case kVersion: o.print_version = true; break;
    default: break;
  }
  return true;
}

// sstat's columns, in `sstat -e` order; `width` 0 takes sacct's.
struct SstatColumn {
  std::string_view name;
  int width = 0;
};
constexpr SstatColumn kColumns[] = {
    {"AveCPU"}, {"AveCPUFreq"}, {"AveDiskRead", 12}, {"AveDiskWrite", 12}, {"AvePages"}, {"AveRSS"}, {"AveVMSize"},
    {"ConsumedEnergy"}, {"ConsumedEnergyRaw"}, {"JobID"}, {"MaxDiskRead"}, {"MaxDiskReadNode"},
    {"MaxDiskReadTask"}, {"MaxDiskWrite"}, {"MaxDiskWriteNode"}, {"MaxDiskWriteTask"}, {"MaxPages"},
    {"MaxPagesNode"}, {"MaxPagesTask"}, {"MaxRSS"}, {"MaxRSSNode"}, {"MaxRSSTask"}, {"MaxVMSize"},
    {"MaxVMSizeNode"}, {"MaxVMSizeTask"}, {"MinCPU"}, {"MinCPUNode"}, {"MinCPUTask"}, {"Nodelist", 20},
    {"NTasks"}, {"Pids", 20}, {"ReqCPUFreq"}, {"ReqCPUFreqMin"}, {"ReqCPUFreqMax"}, {"ReqCPUFreqGov"},
    {"TRESUsageInAve"}, {"TRESUsageInMax"}, {"TRESUsageInMaxNode"}, {"TRESUsageInMaxTask"}, {"TRESUsageInMin"},
    {"TRESUsageInMinNode"}, {"TRESUsageInMinTask"}, {"TRESUsageInTot"}, {"TRESUsageOutAve"}, {"TRESUsageOutMax"},
    {"TRESUsageOutMaxNode"}, {"TRESUsageOutMaxTask"}, {"TRESUsageOutMin"}, {"TRESUsageOutMinNode"},
    {"TRESUsageOutMinTask"}, {"TRESUsageOutTot"},
};

constexpr const char* kDefaultFormat =
    "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,"
    "MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AveCPUFreq,ReqCPUFreqMin,"
    "ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask,AveDiskRead,"
    "MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,TRESUsageInAve,TRESUsageInMax,"
    "TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,"
    "TRESUsageOutAve,TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutMin,"
    "TRESUsageOutMinNode,TRESUsageOutMinTask,TRESUsageOutTot";

// A column's value: sacct's, but bytes read and written in bytes, as sstat prints them.
using Value = std::function<std::string(const AccountingRecord&, const SstatStep&, const SacctContext&)>;

struct Table {
  std::vector<ColumnInfo> columns;
  std::vector<Value> values;
};

const Table& table() {
  static const Table t = [] {
    Table t;
    auto bytes = [](UsageMeasure m, bool max) -> Value {
      return [m, max](const AccountingRecord& r, const SstatStep&, const SacctContext&) {
        if (!r.usage) return std::string();
        return std::to_string(max ? r.usage->max_of(m).value : std::llround(r.usage->ave_of(m)));
      };
    };
    for (const SstatColumn& c : kColumns) {
      if (c.name == "Nodelist") {
        t.columns.push_back(ColumnInfo{c.name, c.name, c.width, true, CutStyle::kPlus});
        t.values.push_back([](const AccountingRecord&, const SstatStep& s, const SacctContext&) { return s.nodes; });
        continue;
      }
      if (c.name == "Pids") {
        t.columns.push_back(ColumnInfo{c.name, c.name, c.width, true, CutStyle::kPlus});
        t.values.push_back([](const AccountingRecord&, const SstatStep& s, const SacctContext&) {
          std::vector<std::string> p;
          for (int pid : s.pids) p.push_back(std::to_string(pid));
          return join(p, ",");
        });
        continue;
      }
      const auto& fields = sacct_fields();
      auto f = std::find_if(fields.begin(), fields.end(), [&](const SacctField& x) { return x.column.name == c.name; });
      ColumnInfo col = f->column;
      if (c.width > 0) col.width = c.width;
      t.columns.push_back(col);
      if (c.name == "MaxDiskRead" || c.name == "AveDiskRead") {
        t.values.push_back(bytes(UsageMeasure::kDiskRead, c.name == "MaxDiskRead"));
      } else if (c.name == "MaxDiskWrite" || c.name == "AveDiskWrite") {
        t.values.push_back(bytes(UsageMeasure::kDiskWrite, c.name == "MaxDiskWrite"));
      } else {
        auto value = f->value;
        t.values.push_back([value](const AccountingRecord& r, const SstatStep&, const SacctContext& ctx) {
          return value(r, ctx);
        });
      }
    }
    return t;
  }();
  return t;
}

}  // namespace

CliResult<SstatOptions> parse_sstat_options(const std::vector<std::string>& args) {
  auto parsed = scan_display_options(args, sstat_specs(), "sstat", SstatOptions{}, apply_option);
  if (!parsed) return parsed;
  if (parsed->jobs.empty() && !parsed->print_fields && !parsed->print_help && !parsed->print_version) {
    return CliError{"sstat: error: You didn't give me any jobs to stat.\n", kExitError};
  }
  return parsed;
}

CommandOutput render_sstat(const SstatOptions& opts, const std::vector<SstatStep>& steps) {
  static constexpr const char* kUsage =
      "Usage: sstat [options] -j <job(.stepid)>\n"
      "  -a, --allsteps       the batch step too (without it, the srun steps)\n"
      "  -e, --helpformat     the fields -o takes\n"
      "  -j, --jobs=LIST      job[.step],... (step: a number or batch)\n"
      "  -n, --noheader       no header lines\n"
      "      --noconvert      memory in bytes\n"
      "  -o, --format=LIST    fields, each name[%WIDTH]\n"
      "  -p, --parsable       '|' after each field; -P, --parsable2: between them\n"
      "  -V, --version        the version\n";
  if (auto early = version_or_usage(opts.print_version, opts.print_help, kUsage)) return *early;
  const Table& t = table();
  if (opts.print_fields) {
    std::vector<std::string_view> names;
    for (const auto& c : t.columns) names.push_back(c.name);
    return CommandOutput{help_format_text(names), "", 0};
  }
  auto items = parse_column_list(opts.format.empty() ? kDefaultFormat : opts.format, t.columns);
  if (!items) return CommandOutput{"", fmt::format("sstat: error: {}\n", items.error().message), kExitError};
  SacctContext ctx{0, std::nullopt, opts.noconvert};
  std::vector<std::vector<std::string>> rows;
  for (const SstatStep& s : steps) {
    if (s.tasks.empty()) continue;
    AccountingRecord r;
    r.job_id = s.job_id;
    r.step = step_id_text(s.step_id);
    r.ntasks = static_cast<int64_t>(s.tasks.size());
    r.node_list = s.nodes;
    r.usage = summarize_usage(s.tasks);
    r.has_cpu_usage = true;
    std::vector<std::string> row;
    for (const auto& item : *items) row.push_back(t.values[static_cast<std::size_t>(item.field)](r, s, ctx));
    rows.push_back(std::move(row));
  }
  ColumnOptions copts;
  copts.mode = opts.parsable2 ? ColumnMode::kParsable2 : opts.parsable ? ColumnMode::kParsable : ColumnMode::kFixed;
  copts.header = !opts.noheader;
  return CommandOutput{render_columns(*items, t.columns, rows, copts), "", 0};
}

}  // namespace drover::cli
