#include "cli/sshare_output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "cli/display_options.hpp"
#include "cli/display_values.hpp"
#include "cli/format_engine.hpp"
#include "cli/job_options.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using Value = std::function<std::string(const ShareView&)>;

struct ShareField {
  ColumnInfo column;
  Value value;
};

std::string fixed6(double v) { return fmt::format("{:.6f}", v); }

const std::vector<ShareField>& share_fields() {
  static const std::vector<ShareField> fields = {
      {{"Account", "Account", 20, false, CutStyle::kPlus},
       [](const ShareView& s) { return std::string(static_cast<std::size_t>(s.depth), ' ') + s.account; }},
      {{"User", "User", 10, true, CutStyle::kPlus}, [](const ShareView& s) { return s.user; }},
      {{"RawShares", "RawShares", 10, true, CutStyle::kNever},
       [](const ShareView& s) { return s.raw_shares ? std::to_string(*s.raw_shares) : std::string(); }},
      {{"NormShares", "NormShares", 11, true, CutStyle::kNever}, [](const ShareView& s) { return fixed6(s.norm_shares); }},
      {{"RawUsage", "RawUsage", 11, true, CutStyle::kNever}, [](const ShareView& s) { return std::to_string(s.raw_usage); }},
      {{"NormUsage", "NormUsage", 11, true, CutStyle::kNever},
       [](const ShareView& s) { return s.norm_usage ? fixed6(*s.norm_usage) : std::string(); }},
      {{"EffectvUsage", "EffectvUsage", 13, true, CutStyle::kNever},
       [](const ShareView& s) { return fixed6(s.effective_usage); }},
      {{"FairShare", "FairShare", 10, true, CutStyle::kNever},
       [](const ShareView& s) { return s.fairshare ? fixed6(*s.fairshare) : std::string(); }},
      {{"LevelFS", "LevelFS", 10, true, CutStyle::kNever},
       [](const ShareView& s) {
         if (!s.level_fs) return std::string();
         return std::isinf(*s.level_fs) ? std::string("inf") : fixed6(*s.level_fs);
       }},
      {{"GrpTRESMins", "GrpTRESMins", 30, true, CutStyle::kPlus}, [](const ShareView& s) { return s.grp_tres_mins; }},
      {{"GrpTRESRaw", "GrpTRESRaw", 30, true, CutStyle::kPlus}, [](const ShareView& s) { return s.grp_tres_raw; }},
      {{"TRESRunMins", "TRESRunMins", 30, true, CutStyle::kPlus}, [](const ShareView& s) { return s.tres_run_mins; }},
      {{"Cluster", "Cluster", 10, true, CutStyle::kPlus}, [](const ShareView& s) { return s.cluster; }},
      {{"Partition", "Partition", 12, true, CutStyle::kPlus}, [](const ShareView& s) { return s.partition; }},
  };
  return fields;
}

enum ShOpt { kAccounts, kAll, kClusters, kFormat, kHelp, kLong, kPartition, kNoHeader, kParsable, kParsable2,
             kUsage, kUsers, kUsersOnly, kVerbose, kVersion };

const std::vector<OptionSpec>& sshare_specs() {
  static const std::vector<OptionSpec> specs = {
      {kAccounts, "accounts", 'A', ArgKind::kRequired}, {kAll, "all", 'a', ArgKind::kNone},
      {kClusters, "clusters", 'M', ArgKind::kRequired}, {kFormat, "format", 'o', ArgKind::kRequired},
      {kHelp, "help", 0, ArgKind::kNone},               {kLong, "long", 'l', ArgKind::kNone},
      {kPartition, "partition", 'm', ArgKind::kNone},   {kNoHeader, "noheader", 'n', ArgKind::kNone},
      {kParsable, "parsable", 'p', ArgKind::kNone},     {kParsable2, "parsable2", 'P', ArgKind::kNone},
      {kUsage, "usage", 0, ArgKind::kNone},             {kUsers, "users", 'u', ArgKind::kRequired},
      {kUsersOnly, "Users", 'U', ArgKind::kNone},       {kVerbose, "verbose", 'v', ArgKind::kNone},
      {kVersion, "version", 'V', ArgKind::kNone},
      {kNoHeader, "", 'h', ArgKind::kNone},  // not in sshare(1), but Slurm 22.05's sshare takes -h so
  };
  return specs;
}

CliResult<bool> apply_option(SshareOptions& o, const ScannedOption& opt) {
  const std::string v = opt.value.value_or("");
  switch (opt.id) {
    case kAccounts: o.accounts = comma_list(v); break;
    case kAll: o.all = true; break;
    case kClusters: o.clusters = v; break;
    case kFormat: o.format = v; break;
    case kHelp: case kUsage: o.print_help = true; break;
    case kLong: o.format = kSshareLongFormat; break;
    case kPartition: o.partitions = true; break;
    case kNoHeader: o.noheader = true; break;
    case kParsable: o.parsable = true; break;
    case kParsable2: o.parsable2 = true; break;
    case kUsers: o.users = comma_list(v); break;
    case kUsersOnly: o.users_only = true; break;
    case kVersion: o.print_version = true; break;
    default: break;
  }
  return true;
}

bool in(const std::vector<std::string>& l, const std::string& v) {
  return l.empty() || std::find(l.begin(), l.end(), v) != l.end();
}

// Rows to show: user rows by -u (default: the caller unless -a), account
// rows unless -U, and -A restricting both.
std::vector<const ShareView*> select_rows(const SshareOptions& o, const std::vector<ShareView>& rows,
                                          const std::string& caller) {
  std::vector<const ShareView*> out;
  for (const auto& r : rows) {
    if (!in(o.accounts, r.account)) continue;
    if (r.user.empty()) {
      if (!o.users_only) out.push_back(&r);
      continue;
    }
    bool wanted = o.users.empty() ? (o.all || r.user == caller) : in(o.users, r.user);
    if (wanted) out.push_back(&r);
  }
  return out;
}

}  // namespace

CliResult<SshareOptions> parse_sshare_options(const std::vector<std::string>& args,
                                              const std::map<std::string, std::string>&) {
  auto parsed = scan_display_options(args, sshare_specs(), "sshare", SshareOptions{}, apply_option);
  if (parsed && parsed->partitions && parsed->format.find("Partition") == std::string::npos) {
    auto user = parsed->format.find("User");
    if (user != std::string::npos) parsed->format.insert(user + 4, ",Partition");
  }
  return parsed;
}

CommandOutput render_sshare(const SshareOptions& opts, const std::vector<ShareView>& rows, const std::string& caller) {
  if (auto early = version_or_usage(opts.print_version, opts.print_help,
                                    "Usage:  sshare [OPTION]\n  Valid OPTIONs are: -a -A -l -m -M -n -o -p -P -u -U -v -V\n"))
    return *early;
  CommandOutput result;
  std::vector<ColumnInfo> columns;
  for (const auto& f : share_fields()) columns.push_back(f.column);
  auto items = parse_column_list(opts.format, columns);
  if (!items) return CommandOutput{"", fmt::format("sshare: error: {}\n", items.error().message), kExitError};
  std::vector<std::vector<std::string>> cells;
  const auto selected = select_rows(opts, rows, caller);
  // -A's accounts are the tree's tops: indented from there, not from root (Slurm 22.05's `sshare -A
  // research`: "research" flush left, its users one in).
  int top = 0;
  if (!opts.accounts.empty() && !selected.empty()) {
    top = selected.front()->depth;
    for (const ShareView* r : selected) top = std::min(top, r->depth);
  }
  for (const ShareView* r : selected) {
    std::vector<std::string> line;
    // -U lists users without the tree: their account is not indented (Slurm 22.05 on the anchor cluster).
    ShareView flat;
    if (opts.users_only || top > 0) {
      flat = *r;
      flat.depth = opts.users_only ? 0 : r->depth - top;
      r = &flat;
    }
    for (const auto& item : *items) line.push_back(share_fields()[item.field].value(*r));
    cells.push_back(std::move(line));
  }
  ColumnOptions copts;
  copts.mode = opts.parsable2 ? ColumnMode::kParsable2 : opts.parsable ? ColumnMode::kParsable : ColumnMode::kFixed;
  copts.header = !opts.noheader;
  // Slurm 22.05's sshare prints the CLUSTER: line under -n too.
  result.out = cluster_banner(opts.cluster_banner) + render_columns(*items, columns, cells, copts);
  return result;
}

}  // namespace drover::cli
