#include "cli/sreport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <functional>
#include <set>

#include "cli/arg_scanner.hpp"
#include "cli/format_engine.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

constexpr int64_t kHour = 3600;

enum Opt { kAll, kCluster, kNoHeader, kParsable, kParsable2, kQuiet, kTime, kTres, kVerbose, kVersion, kHelp, kLocal };

const std::vector<OptionSpec>& specs() {
  static const std::vector<OptionSpec> s = {
      {kAll, "all_clusters", 'a', ArgKind::kNone},    {kCluster, "cluster", 'M', ArgKind::kRequired},
      {kCluster, "clusters", 0, ArgKind::kRequired},  {kNoHeader, "noheader", 'n', ArgKind::kNone},
      {kParsable, "parsable", 'p', ArgKind::kNone},   {kParsable2, "parsable2", 'P', ArgKind::kNone},
      {kQuiet, "quiet", 'Q', ArgKind::kNone},         {kTime, "", 't', ArgKind::kRequired},
      {kTres, "tres", 'T', ArgKind::kRequired},       {kVerbose, "verbose", 'v', ArgKind::kNone},
      {kVersion, "version", 'V', ArgKind::kNone},     {kHelp, "help", 'h', ArgKind::kNone},
      {kHelp, "usage", 0, ArgKind::kNone},            {kLocal, "local", 0, ArgKind::kNone},
      {kLocal, "federation", 0, ArgKind::kNone},
  };
  return s;
}

// `word` names `name` if it is at least `min` characters of it (any case), as
// sreport's keywords are matched.
bool names(std::string_view word, std::string_view name, std::size_t min = 2) {
  return word.size() >= std::min(min, name.size()) && word.size() <= name.size() &&
         iequals(word, name.substr(0, word.size()));
}

std::optional<ReportUnit> unit_named(std::string_view w) {
  static const std::pair<const char*, ReportUnit> kUnits[] = {
      {"seconds", ReportUnit::kSeconds}, {"minutes", ReportUnit::kMinutes}, {"hours", ReportUnit::kHours},
      {"percent", ReportUnit::kPercent}, {"secper", ReportUnit::kSecPer},   {"minper", ReportUnit::kMinPer},
      {"hourper", ReportUnit::kHourPer}};
  for (const auto& [n, u] : kUnits) {
    if (iequals(w, n)) return u;
  }
  for (const auto& [n, u] : kUnits) {
    if (!w.empty() && names(w, n, 1)) return u;
  }
  return std::nullopt;
}

struct ReportName {
  const char* type;
  const char* name;
  bool built;
};

const ReportName kReports[] = {
    {"cluster", "AccountUtilizationByUser", true}, {"cluster", "UserUtilizationByAccount", true},
    {"cluster", "UserUtilizationByWckey", false},  {"cluster", "Utilization", true},
    {"cluster", "WCKeyUtilizationByUser", false},  {"job", "SizesByAccount", true},
    {"job", "SizesByAccountAndWckey", false},      {"job", "SizesByWckey", false},
    {"user", "TopUsage", true},  {"reservation", "Utilization", true},
};

std::string valid_reports(std::string_view type) {
  std::vector<std::string> n;
  for (const auto& r : kReports) {
    if (type == r.type) n.push_back(fmt::format("\"{}\"", r.name));
  }
  std::string out;
  for (std::size_t i = 0; i < n.size(); ++i) {
    out += n[i];
    if (i + 2 < n.size()) out += ", ";
    else if (i + 2 == n.size()) out += n.size() > 2 ? ", and " : " and ";
  }
  return out;
}

// To the nearest whole hour (half an hour rounds up), in local time.
UnixTime nearest_hour(UnixTime t) {
  std::time_t tt = t;
  std::tm tm{};
  localtime_r(&tt, &tm);
  const int into = tm.tm_min * 60 + tm.tm_sec;
  return t - into + (into >= 1800 ? kHour : 0);
}

UnixTime floor_hour(UnixTime t) {
  std::time_t tt = t;
  std::tm tm{};
  localtime_r(&tt, &tm);
  return t - (tm.tm_min * 60 + tm.tm_sec);
}

}  // namespace

bool ReportEvent::flag(std::string_view f) const { return list_has(flags, f); }

CliResult<SreportOptions> parse_sreport_options(const std::vector<std::string>& args,
                                                const std::map<std::string, std::string>& env) {
  SreportOptions o;
  // SREPORT_CLUSTER and SREPORT_TRES as -M and -T; the command line wins.
  if (auto it = env.find("SREPORT_CLUSTER"); it != env.end() && !it->second.empty()) {
    o.clusters = comma_list(to_lower(it->second));
  }
  auto set_tres = [&](const std::string& v) {
    o.tres = comma_list(v);
    for (auto& t : o.tres) t = iequals(t, "all") ? "ALL" : to_lower(t);
    if (o.tres.empty()) o.tres = {"cpu"};
    o.tres_given = true;
  };
  if (auto it = env.find("SREPORT_TRES"); it != env.end() && !it->second.empty()) set_tres(it->second);
  // Options may follow the report and its conditions (`sreport cluster utilization start=... -t hours`),
  // as Slurm's sreport takes them.
  auto scan = scan_args(args, specs(), OperandMode::kPermute, "sreport");
  if (!scan) return CliError{getopt_error_text(scan.error(), "sreport"), kExitError};
  for (const auto& opt : scan->options) {
    const std::string v = opt.value.value_or("");
    switch (opt.id) {
      case kAll: o.clusters = {"all"}; break;
      case kCluster: o.clusters = comma_list(to_lower(v)); break;
      case kNoHeader: o.noheader = true; break;
      case kParsable: o.parsable = true; break;
      case kParsable2: o.parsable2 = true; break;
      case kQuiet: o.quiet = true; break;
      case kTime:
        if (auto u = unit_named(v)) {
          o.unit = *u;
        } else {
          o.warnings += "unknown time format " + v + "\n";
        }
        break;
      case kTres: set_tres(v); break;
      case kVersion: o.print_version = true; break;
      case kHelp: o.print_help = true; break;
      default: break;  // -v, --local, --federation: nothing to change
    }
  }
  if (o.print_version || o.print_help) return o;
  const auto& w = scan->operands;
  if (w.empty()) {
    return CliError{"sreport: error: no report given (e.g. `sreport cluster utilization`); sreport's interactive mode "
                    "is not implemented yet in this version of Drover\n",
                    kExitError};
  }
  if (names(w[0], "version", 4)) {
    o.print_version = true;
    return o;
  }
  for (const char* type : {"cluster", "job", "user", "reservation"}) {
    if (names(w[0], type)) o.type = type;
  }
  if (o.type.empty()) return CliError{"invalid keyword: " + w[0] + "\n", kExitError};
  const std::string report = w.size() > 1 ? w[1] : "";
  const ReportName* found = nullptr;
  for (const auto& r : kReports) {
    if (o.type == r.type && !report.empty() && (iequals(report, r.name) || names(report, r.name))) {
      if (!found || iequals(report, r.name)) found = &r;
    }
  }
  if (!found) {
    return CliError{
        fmt::format("Not valid report {}\nValid {} reports are, {}\n", report, o.type, valid_reports(o.type)),
        kExitError};
  }
  if (!found->built) {
    return CliError{fmt::format("sreport: error: {} {} is not implemented yet in this version of Drover (it keeps no "
                                "WCKeys)\n",
                                o.type, found->name),
                    kExitError};
  }
  o.name = found->name;
  const bool utilization = o.name == "Utilization";  // cluster's or reservation's
  const bool sizes = o.name == "SizesByAccount";
  for (std::size_t i = 2; i < w.size(); ++i) {
    const std::string& word = w[i];
    auto eq = word.find('=');
    std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    bool known = true;
    if (eq == std::string::npos) {
      if (names(key, "tree", 4) && o.name == "AccountUtilizationByUser") o.tree = true;
      else if (names(key, "group", 5) && o.name == "TopUsage") o.group = true;
      else if (names(key, "printjobcount", 5) && sizes) o.print_job_count = true;
      else if (names(key, "all_clusters", 5)) o.clusters = {"all"};
      else known = false;
    } else if (names(key, "start", 3)) {
      o.start = value;
    } else if (names(key, "end", 1)) {
      o.end = value;
    } else if (names(key, "format", 3)) {
      o.format = value;
    } else if (names(key, "clusters", 3)) {
      o.clusters = comma_list(to_lower(value));
    } else if (o.type == "reservation" && names(key, "names", 4)) {
      o.names = comma_list(value);
    } else if (!utilization && (names(key, "accounts", 3) || iequals(key, "acct"))) {
      o.accounts = comma_list(value);
    } else if (!utilization && !sizes && names(key, "users", 1)) {
      o.users = comma_list(value);
    } else if (o.name == "TopUsage" && names(key, "topcount", 4)) {
      auto n = parse_int(value);
      if (!n || *n <= 0) {
        o.warnings += "Invalid TopCount value: " + value + "\n";
        o.exit_code = 1;
      } else {
        o.top_count = *n;
      }
    } else if (sizes && names(key, "grouping", 5)) {
      std::vector<int64_t> g;
      for (const auto& part : comma_list(value)) {
        auto n = parse_int(part);
        if (!n || *n <= 0 || (!g.empty() && *n <= g.back())) {
          g.clear();
          break;
        }
        g.push_back(*n);
      }
      if (g.empty()) {
        o.warnings += "Invalid grouping: " + value + " (ascending CPU counts, as 50,250,500,1000)\n";
        o.exit_code = 1;
      } else {
        o.grouping = g;
      }
    } else {
      known = false;
    }
    if (!known) {
      o.warnings += " Unknown condition: " + word + "\nUse keyword set to modify value\n";
      o.exit_code = 1;
    }
  }
  return o;
}

ReportWindow sreport_window(SreportOptions& opts, UnixTime now) {
  ReportWindow w;
  w.start = local_midnight(now, 1);
  w.end = local_midnight(now);
  auto read = [&](const std::optional<std::string>& text, UnixTime& into) {
    if (!text) return;
    auto t = parse_timestamp(*text, now, TimeBias::kPast);
    if (!t) {
      opts.warnings += "Invalid time specification (pos=0): " + *text + "\n";
      return;
    }
    into = nearest_hour(*t);
  };
  read(opts.start, w.start);
  read(opts.end, w.end);
  w.end = std::min(w.end, floor_hour(now));
  if (w.end <= w.start) w.end = w.start + kHour;
  return w;
}

namespace {

// Seconds of [a, b) in each hour of the window, times `amount`, added to `into`.
void spread(std::vector<int64_t>& into, const ReportWindow& w, UnixTime a, UnixTime b, int64_t amount) {
  a = std::max(a, w.start);
  b = std::min(b, w.end);
  if (a >= b || amount == 0) return;
  for (int64_t h = (a - w.start) / kHour; h < static_cast<int64_t>(into.size()); ++h) {
    const UnixTime hs = w.start + h * kHour, he = hs + kHour;
    if (hs >= b) break;
    into[h] += (std::min(b, he) - std::max(a, hs)) * amount;
  }
}

// The seconds job `j` ran within [from, to) (0 if it never started); a job
// still running runs until `now`.
int64_t seconds_ran(const ReportJob& j, UnixTime from, UnixTime to, UnixTime now) {
  if (j.start <= 0) return 0;
  return std::max<int64_t>(0, std::min(j.end ? j.end : now, to) - std::max(j.start, from));
}

int64_t tres_of(const std::map<std::string, int64_t>& m, const std::string& t) {
  auto it = m.find(t);
  return it == m.end() ? 0 : it->second;
}

// The cluster's registered TRES `t` (its ClusterEvents): the seconds times
// the count in each hour of the window, and the latest count in the window.
struct Capacity {
  std::vector<int64_t> per_hour;
  int64_t count = 0;
};

Capacity capacity(const ReportWindow& w, const ReportData& d, const std::string& t) {
  Capacity c;
  c.per_hour.assign(static_cast<std::size_t>((w.end - w.start) / kHour), 0);
  for (const auto& e : d.events) {
    if (!e.cluster()) continue;
    const UnixTime end = e.end ? e.end : d.now;
    spread(c.per_hour, w, e.start, end, tres_of(e.tres, t));
    if (e.start < w.end && end > w.start) c.count = tres_of(e.tres, t);
  }
  return c;
}

struct Totals {
  int64_t alloc = 0, down = 0, pdown = 0, idle = 0, planned = 0, over = 0, reported = 0, count = 0;
};

// The cluster's figures for one TRES over the window (per hour, then summed).
Totals cluster_totals(const ReportWindow& w, const ReportData& d, const std::string& t) {
  const std::size_t hours = static_cast<std::size_t>((w.end - w.start) / kHour);
  const Capacity c = capacity(w, d, t);
  const std::vector<int64_t>& cap = c.per_hour;
  std::vector<int64_t> alloc(hours), down(hours), pdown(hours), pending(hours);
  Totals out;
  out.count = c.count;
  std::set<std::string> bundled;  // reservations whose jobs count with them
  for (const auto& e : d.events) {
    const UnixTime end = e.end ? e.end : d.now;
    if (e.cluster()) continue;
    if (!e.reservation.empty()) {
      if (e.flag("IGNORE_JOBS")) continue;
      bundled.insert(e.reservation);
      spread(e.flag("MAINT") ? pdown : alloc, w, e.start, end, tres_of(e.tres, t));
    } else {
      spread(down, w, e.start, end, tres_of(e.tres, t));
    }
  }
  for (const auto& j : d.jobs) {
    if (j.start > 0 && !bundled.count(j.reservation)) {
      spread(alloc, w, j.start, j.end ? j.end : d.now, tres_of(j.alloc_tres, t));
    }
    if (t == "cpu" && j.eligible > 0) {
      const UnixTime waited_until = j.start > 0 ? j.start : j.end ? j.end : d.now;
      spread(pending, w, j.eligible, waited_until, j.req_cpus);
    }
  }
  for (std::size_t h = 0; h < hours; ++h) {
    const int64_t a = std::min(alloc[h], cap[h]);
    const int64_t pd = std::min(pdown[h], cap[h] - a);
    const int64_t dn = std::min(down[h], cap[h] - a - pd);
    const int64_t p = std::min(pending[h], cap[h] - a - pd - dn);
    out.alloc += a;
    out.pdown += pd;
    out.down += dn;
    out.planned += p;
    out.over += pending[h] - p;
    out.idle += cap[h] - a - pd - dn - p;
    out.reported += cap[h];
  }
  return out;
}

bool cluster_was_up(const ReportWindow& w, const ReportData& d) {
  for (const auto& e : d.events) {
    if (e.cluster() && e.start < w.end && (e.end == 0 || e.end > w.start)) return true;
  }
  return false;
}

// Every TRES the cluster has, in Slurm's order (sreport -T ALL).
std::vector<std::string> all_tres(const ReportData& d) {
  std::vector<std::string> out{"cpu", "mem", "energy", "billing", "fs/disk", "vmem", "pages"};
  std::set<std::string> gres;
  for (const auto& e : d.events) {
    for (const auto& [k, v] : e.tres) {
      if (k.rfind("gres/", 0) == 0 || k.rfind("license/", 0) == 0) gres.insert(k);
    }
  }
  out.insert(out.end(), gres.begin(), gres.end());
  return out;
}

// "12.47%": `part` of `whole` (0.00% of nothing).
std::string percent(int64_t part, int64_t whole) {
  return fmt::format("{:.2f}%", whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
}

struct Units {
  ReportUnit unit;
  bool per() const {
    return unit == ReportUnit::kSecPer || unit == ReportUnit::kMinPer || unit == ReportUnit::kHourPer;
  }
  std::string value(int64_t secs, int64_t total) const {
    const std::string pct = percent(secs, total);
    if (unit == ReportUnit::kPercent) return pct;
    int64_t v = secs;
    if (unit == ReportUnit::kMinutes || unit == ReportUnit::kMinPer) v = std::llround(static_cast<double>(secs) / 60.0);
    if (unit == ReportUnit::kHours || unit == ReportUnit::kHourPer) {
      v = std::llround(static_cast<double>(secs) / 3600.0);
    }
    return per() ? fmt::format("{}({})", v, pct) : std::to_string(v);
  }
  std::string word() const {
    switch (unit) {
      case ReportUnit::kSeconds: return "Seconds";
      case ReportUnit::kHours: return "Hours";
      case ReportUnit::kPercent: return "Percentage of Total";
      case ReportUnit::kSecPer: return "Seconds/Percentage of Total";
      case ReportUnit::kMinPer: return "Minutes/Percentage of Total";
      case ReportUnit::kHourPer: return "Hours/Percentage of Total";
      default: return "Minutes";
    }
  }
};

struct Column {
  std::string name, header;
  int width;
  bool right = true;
  bool number = false;  // widened to fit its values in a fixed table
};

std::string banner(const std::string& title, const std::string& units) {
  const std::string dashes(80, '-');
  return dashes + "\n" + title + "\n" + units + "\n" + dashes + "\n";
}

// Renders `rows` (cells by column name) in the columns `format` names (or
// `defaults`), as sreport: fixed columns right-justified, each followed by a
// space, or '|'-separated with -p/-P.
CliResult<std::string> table(const SreportOptions& o, const std::vector<Column>& all, const std::string& defaults,
                             const std::vector<std::map<std::string, std::string>>& rows) {
  std::vector<ColumnInfo> infos;
  for (const auto& c : all) infos.push_back(ColumnInfo{c.name, c.header, c.width, c.right, CutStyle::kNever});
  auto items = parse_column_list(o.format.empty() ? defaults : o.format, infos);
  if (!items) {
    std::string bad = items.error().message;
    auto q = bad.find('"');
    if (q != std::string::npos) bad = bad.substr(q + 1, bad.rfind('"') - q - 1);
    return CliError{" Unknown field '" + to_lower(bad) + "'\n", kExitError};
  }
  std::vector<std::vector<std::string>> cells;
  for (const auto& r : rows) {
    std::vector<std::string> line;
    for (const auto& it : *items) {
      auto f = r.find(all[static_cast<std::size_t>(it.field)].name);
      line.push_back(f == r.end() ? "" : f->second);
    }
    cells.push_back(std::move(line));
  }
  const bool fixed = !o.parsable && !o.parsable2;
  if (fixed) {
    // A number longer than its column widens it (one space more than the number).
    for (std::size_t i = 0; i < items->size(); ++i) {
      if (!all[static_cast<std::size_t>((*items)[i].field)].number) continue;
      std::size_t longest = 0;
      for (const auto& line : cells) longest = std::max(longest, line[i].size());
      if (static_cast<int>(longest) >= (*items)[i].width) (*items)[i].width = static_cast<int>(longest) + 1;
    }
  }
  ColumnOptions co;
  co.mode = o.parsable2 ? ColumnMode::kParsable2 : o.parsable ? ColumnMode::kParsable : ColumnMode::kFixed;
  co.header = !o.noheader;
  return render_columns(*items, infos, cells, co);
}

std::string time_range(const ReportWindow& w) {
  return format_timestamp(w.start) + " - " + format_timestamp(w.end - 1);
}

// ---- the reports ----

CliResult<std::string> utilization(const SreportOptions& o, const ReportWindow& w, const ReportData& d,
                                   const std::vector<std::string>& tres, const Units& u) {
  const int width = u.per() ? 17 : 8;
  const std::vector<Column> cols = {
      {"Cluster", "Cluster", 9},          {"Allocated", "Allocated", width, true, true},
      {"Down", "Down", width, true, true}, {"PlannedDown", "PLND Down", width, true, true},
      {"Idle", "Idle", width, true, true}, {"Planned", "Planned", width, true, true},
      {"Reserved", "Planned", width, true, true}, {"Reported", "Reported", width, true, true},
      {"OverCommitted", "Over Comm", width, true, true}, {"TresCount", "TRES Count", 10, true, true},
      {"TresName", "TRES Name", 14},      {"Unused", "Idle", width, true, true},
  };
  std::vector<std::map<std::string, std::string>> rows;
  if (cluster_was_up(w, d)) {
    for (const auto& t : tres) {
      const Totals s = cluster_totals(w, d, t);
      const int64_t possible = s.count * (w.end - w.start);
      std::map<std::string, std::string> r;
      r["Cluster"] = d.cluster;
      r["TresName"] = t;
      r["TresCount"] = std::to_string(s.count);
      r["Allocated"] = u.value(s.alloc, s.reported);
      r["Down"] = u.value(s.down, s.reported);
      r["PlannedDown"] = u.value(s.pdown, s.reported);
      r["Idle"] = r["Unused"] = u.value(s.idle, s.reported);
      r["Planned"] = r["Reserved"] = u.value(s.planned, s.reported);
      r["OverCommitted"] = u.value(s.over, s.reported);
      r["Reported"] = u.value(s.reported, possible);
      rows.push_back(std::move(r));
    }
  }
  const std::string defaults = o.tres_given ? "Cluster,TresName,Allocated,Down,PlannedDown,Idle,Planned,Reported"
                                            : "Cluster,Allocated,Down,PlannedDown,Idle,Planned,Reported";
  return table(o, cols, defaults, rows);
}

// Allocated TRES-seconds in the window per (account, user).
using Usage = std::map<std::pair<std::string, std::string>, std::map<std::string, int64_t>>;

Usage association_usage(const ReportWindow& w, const ReportData& d, const std::vector<std::string>& tres) {
  Usage u;
  for (const auto& j : d.jobs) {
    const int64_t ran = seconds_ran(j, w.start, w.end, d.now);
    if (ran == 0) continue;
    auto& m = u[{j.account, j.user}];
    for (const auto& t : tres) m[t] += ran * tres_of(j.alloc_tres, t);
  }
  return u;
}

// Per TRES: the cluster's TRES-seconds reported in the window, and its count
// (the latest registration in the window).
struct ClusterTres {
  std::map<std::string, int64_t> reported, count;
};

ClusterTres reported_by_tres(const ReportWindow& w, const ReportData& d, const std::vector<std::string>& tres) {
  ClusterTres out;
  for (const auto& t : tres) {
    const Capacity c = capacity(w, d, t);
    out.count[t] = c.count;
    for (int64_t secs : c.per_hour) out.reported[t] += secs;
  }
  return out;
}

// Each account's parent in the tree; with `lost`, also root for an account
// the jobs name that the tree no longer has (its use counts under root).
std::map<std::string, std::string> account_parents(const ReportData& d, bool lost) {
  std::map<std::string, std::string> parent;
  for (const auto& a : d.accounts) parent[a.name] = a.parent;
  if (lost) {
    for (const auto& j : d.jobs) {
      if (j.account != "root") parent.emplace(j.account, "root");
    }
  }
  return parent;
}

// The first of `listed` met walking up the tree from `acct` (itself first).
std::optional<std::string> listed_ancestor(std::string acct, const std::vector<std::string>& listed,
                                           const std::map<std::string, std::string>& parent) {
  for (int guard = 0; !acct.empty() && guard < 64; ++guard) {
    if (std::find(listed.begin(), listed.end(), acct) != listed.end()) return acct;
    auto it = parent.find(acct);
    acct = it == parent.end() ? "" : it->second;
  }
  return std::nullopt;
}

bool any_use(const std::map<std::string, int64_t>& m) {
  return std::any_of(m.begin(), m.end(), [](const auto& kv) { return kv.second > 0; });
}

std::vector<Column> usage_columns(bool tree) {
  return {{"Cluster", "Cluster", 9},
          {"Accounts", "Account", tree ? 20 : 15, !tree},
          {"Login", "Login", 9},
          {"Proper", "Proper Name", 15},
          {"TresCount", "TRES Count", 10, true, true},
          {"TresName", "TRES Name", 14},
          {"Used", "Used", 8, true, true},
          {"Energy", "Energy", 8, true, true}};
}

std::string usage_defaults(const SreportOptions& o, bool account_first) {
  std::string head = account_first ? "Cluster,Accounts,Login,Proper" : "Cluster,Login,Proper,Accounts";
  return head + (o.tres_given ? ",TresName,Used" : ",Used,Energy");
}

// One line per TRES for an association (or an account's subtree).
void usage_lines(std::vector<std::map<std::string, std::string>>& rows, const std::map<std::string, std::string>& base,
                 const std::map<std::string, int64_t>& used, const std::vector<std::string>& tres,
                 const ClusterTres& cluster, const Units& u) {
  const auto& reported = cluster.reported;
  for (const auto& t : tres) {
    auto r = base;
    r["TresName"] = t;
    r["TresCount"] = std::to_string(tres_of(cluster.count, t));
    r["Used"] = u.value(tres_of(used, t), tres_of(reported, t));
    r["Energy"] = u.value(0, tres_of(reported, "energy"));
    rows.push_back(std::move(r));
  }
}

std::string full_name(const ReportData& d, const std::string& user) {
  auto it = d.full_names.find(user);
  return it == d.full_names.end() ? "" : it->second;
}

CliResult<std::string> account_by_user(const SreportOptions& o, const ReportWindow& w, const ReportData& d,
                                       const std::vector<std::string>& tres, const Units& u) {
  const Usage usage = association_usage(w, d, tres);
  const ClusterTres cluster = reported_by_tres(w, d, tres);
  std::map<std::string, std::vector<std::string>> children, users;
  for (const auto& [acct, up] : account_parents(d, true)) {
    if (!up.empty()) children[up].push_back(acct);
  }
  for (const auto& a : d.accounts) users[a.name] = a.users;
  for (const auto& [key, m] : usage) {
    auto& us = users[key.first];
    if (std::find(us.begin(), us.end(), key.second) == us.end()) us.push_back(key.second);
  }
  std::function<std::map<std::string, int64_t>(const std::string&)> subtree = [&](const std::string& acct) {
    std::map<std::string, int64_t> sum;
    for (const auto& [key, m] : usage) {
      if (key.first != acct) continue;
      for (const auto& [t, v] : m) sum[t] += v;
    }
    for (const auto& c : children[acct]) {
      for (const auto& [t, v] : subtree(c)) sum[t] += v;
    }
    return sum;
  };
  std::vector<std::map<std::string, std::string>> rows;
  const std::set<std::string> only_users(o.users.begin(), o.users.end());
  std::function<void(const std::string&, int)> walk = [&](const std::string& acct, int depth) {
    const auto total = subtree(acct);
    if (!any_use(total)) return;
    if (only_users.empty()) {
      std::map<std::string, std::string> base{{"Cluster", d.cluster},
                                              {"Accounts", (o.tree ? std::string(depth, ' ') : "") + acct}};
      usage_lines(rows, base, total, tres, cluster, u);
    }
    auto us = users[acct];
    std::sort(us.begin(), us.end());
    for (const auto& user : us) {
      if (!only_users.empty() && !only_users.count(user)) continue;
      auto it = usage.find({acct, user});
      if (it == usage.end() || !any_use(it->second)) continue;
      std::map<std::string, std::string> base{{"Cluster", d.cluster},
                                              {"Accounts", (o.tree ? std::string(depth + 1, ' ') : "") + acct},
                                              {"Login", user},
                                              {"Proper", full_name(d, user)}};
      usage_lines(rows, base, it->second, tres, cluster, u);
    }
    auto kids = children[acct];
    std::sort(kids.begin(), kids.end());
    for (const auto& k : kids) walk(k, depth + 1);
  };
  if (cluster_was_up(w, d) || !usage.empty()) {
    for (const auto& top : o.accounts.empty() ? std::vector<std::string>{"root"} : o.accounts) walk(top, 0);
  }
  return table(o, usage_columns(o.tree), usage_defaults(o, true), rows);
}

// UserUtilizationByAccount and TopUsage: (user, account) lines by usage, most first.
CliResult<std::string> user_by_account(const SreportOptions& o, const ReportWindow& w, const ReportData& d,
                                       const std::vector<std::string>& tres, const Units& u, bool top) {
  const Usage usage = association_usage(w, d, tres);
  const ClusterTres cluster = reported_by_tres(w, d, tres);
  const std::set<std::string> only_users(o.users.begin(), o.users.end());
  // The accounts= filter names accounts with their sub-accounts.
  const auto parent = account_parents(d, false);
  auto under = [&](const std::string& acct) {
    return o.accounts.empty() || listed_ancestor(acct, o.accounts, parent).has_value();
  };
  struct Line {
    std::string user, accounts;
    std::map<std::string, int64_t> used;
  };
  std::vector<Line> lines;
  std::map<std::string, std::size_t> by_user;
  for (const auto& [key, m] : usage) {
    const auto& [acct, user] = key;
    if (!any_use(m) || !under(acct) || (!only_users.empty() && !only_users.count(user))) continue;
    if (top && o.group) {
      auto [it, fresh] = by_user.emplace(user, lines.size());
      if (fresh) lines.push_back(Line{user, acct, {}});
      else lines[it->second].accounts += "," + acct;
      for (const auto& [t, v] : m) lines[it->second].used[t] += v;
    } else {
      lines.push_back(Line{user, acct, m});
    }
  }
  const std::string& first = tres.front();
  std::stable_sort(lines.begin(), lines.end(), [&](const Line& a, const Line& b) {
    return tres_of(a.used, first) > tres_of(b.used, first);
  });
  if (top && static_cast<int64_t>(lines.size()) > o.top_count) lines.resize(static_cast<std::size_t>(o.top_count));
  std::vector<std::map<std::string, std::string>> rows;
  for (const auto& l : lines) {
    std::map<std::string, std::string> base{
        {"Cluster", d.cluster}, {"Accounts", l.accounts}, {"Login", l.user}, {"Proper", full_name(d, l.user)}};
    usage_lines(rows, base, l.used, tres, cluster, u);
  }
  return table(o, usage_columns(false), usage_defaults(o, false), rows);
}

// Each reservation that lasted into the window, whole (not cut to the
// window, as Slurm's): its TRES-seconds, what its jobs used of them, the rest.
CliResult<std::string> reservation_utilization(const SreportOptions& o, const ReportWindow& w, const ReportData& d,
                                               const std::vector<std::string>& tres, const Units& u) {
  const int width = 20;
  const std::vector<Column> cols = {
      {"Cluster", "Cluster", 9},
      {"Name", "Name", 9},
      {"Start", "Start", 19},
      {"End", "End", 19},
      {"TresName", "TRES Name", 14},
      {"Allocated", "Allocated", width, true, true},
      {"Idle", "Idle", width, true, true},
      {"Nodes", "Nodes", 15},
      {"Flags", "Flags", 10},
      {"TresCount", "TRES count", 10, true, true},
      {"TotalTime", "TotalTime", 13},
      {"TresTime", "TRES Time", 10, true, true},
      {"Associations", "Associations", 15},
      {"ReservationId", "Id", 7, true, true},
  };
  const std::set<std::string> names(o.names.begin(), o.names.end());
  std::vector<std::map<std::string, std::string>> rows;
  for (const auto& e : d.events) {
    if (e.reservation.empty() || e.start >= w.end || e.end <= w.start) continue;
    if (!names.empty() && !names.count(e.reservation)) continue;
    const int64_t length = std::max<int64_t>(0, e.end - e.start);
    for (const auto& t : tres) {
      int64_t used = 0;
      for (const auto& j : d.jobs) {
        if (j.reservation == e.reservation) used += seconds_ran(j, e.start, e.end, d.now) * tres_of(j.alloc_tres, t);
      }
      const int64_t total = length * tres_of(e.tres, t);
      used = std::min(used, total);
      rows.push_back({{"Cluster", d.cluster},
                      {"Name", e.reservation},
                      {"Start", format_timestamp(e.start)},
                      {"End", format_timestamp(e.end)},
                      {"TresName", t},
                      {"Allocated", u.value(used, total)},
                      {"Idle", u.value(total - used, total)},
                      {"Nodes", e.nodes},
                      {"Flags", e.flags},
                      {"TresCount", std::to_string(tres_of(e.tres, t))},
                      {"TotalTime", format_duration_hms(length)},
                      {"TresTime", u.value(total, total)},
                      {"Associations", ""},
                      {"ReservationId", std::to_string(e.reservation_id)}});
    }
  }
  return table(o, cols, "Cluster,Name,Start,End,TresName,Allocated,Idle", rows);
}

std::string size_label(const std::vector<int64_t>& g, std::size_t i, const std::string& unit) {
  if (i == 0) return fmt::format("0-{} {}", g[0] - 1, unit);
  if (i == g.size()) return fmt::format(">= {} {}", g.back(), unit);
  return fmt::format("{}-{} {}", g[i - 1], g[i] - 1, unit);
}

// Each job's allocated TRES-seconds in the window (or, with printjobcount,
// the job itself), by the size of its allocation of the first -T TRES.
CliResult<std::string> sizes_by_account(const SreportOptions& o, const ReportWindow& w, const ReportData& d,
                                        const Units& u) {
  const auto parent = account_parents(d, true);
  const std::vector<std::string> tops = o.accounts.empty() ? std::vector<std::string>{"root"} : o.accounts;
  const std::string tres = o.tres.front() == "ALL" ? "cpu" : o.tres.front();
  const std::size_t bins = o.grouping.size() + 1;
  std::map<std::string, std::vector<int64_t>> used;
  for (const auto& t : tops) used[t].assign(bins, 0);
  int64_t all = 0;
  for (const auto& j : d.jobs) {
    const int64_t ran = seconds_ran(j, w.start, w.end, d.now);
    if (ran == 0) continue;
    const int64_t size = tres_of(j.alloc_tres, tres);
    const int64_t amount = o.print_job_count ? 1 : ran * size;
    if (!o.print_job_count && amount == 0) continue;
    all += amount;
    auto top = listed_ancestor(j.account, tops, parent);
    if (!top) continue;
    std::size_t bin = 0;
    while (bin < o.grouping.size() && size >= o.grouping[bin]) ++bin;
    used[*top][bin] += amount;
  }
  const int width = u.per() && !o.print_job_count ? 20 : 13;
  std::vector<Column> cols = {{"Cluster", "Cluster", 9}, {"Account", "Account", 9}};
  std::string defaults = "Cluster,Account";
  for (std::size_t i = 0; i < bins; ++i) {
    cols.push_back(Column{"bin" + std::to_string(i), size_label(o.grouping, i, tres == "cpu" ? "CPUs" : "TRES"), width,
                          true, true});
    defaults += ",bin" + std::to_string(i);
  }
  cols.push_back(Column{"Percent", "% of cluster", 12});
  defaults += ",Percent";
  std::vector<std::map<std::string, std::string>> rows;
  // No row for a window the cluster was not registered in and no job ran in (as the other reports).
  const bool any = all > 0 || cluster_was_up(w, d);
  for (const auto& t : any ? tops : std::vector<std::string>{}) {
    std::map<std::string, std::string> r{{"Cluster", d.cluster}, {"Account", t}};
    int64_t total = 0;
    for (std::size_t i = 0; i < bins; ++i) {
      total += used[t][i];
      r["bin" + std::to_string(i)] = o.print_job_count ? std::to_string(used[t][i]) : u.value(used[t][i], all);
    }
    r["Percent"] = percent(total, all);
    rows.push_back(std::move(r));
  }
  // format= is not offered for this report: its columns follow grouping=.
  SreportOptions plain = o;
  plain.format.clear();
  return table(plain, cols, defaults, rows);
}

}  // namespace

CommandOutput render_sreport(const SreportOptions& o, const ReportWindow& w, const ReportData& d) {
  if (auto early = version_or_usage(o.print_version, o.print_help,
                                    "Usage: sreport [OPTIONS] cluster|job|user|reservation REPORT [start=TIME] "
                                    "[end=TIME] ...\n")) {
    return *early;
  }
  CommandOutput out;
  out.err = o.warnings;
  out.exit_code = o.exit_code;
  const Units u{o.unit};
  std::vector<std::string> tres;
  for (const auto& t : o.tres) {
    if (t == "ALL") {
      for (const auto& a : all_tres(d)) tres.push_back(a);
    } else {
      tres.push_back(t);
    }
  }
  const bool cpu_only = tres.size() == 1 && tres[0] == "cpu";
  const std::string usage_line =
      "Usage reported in " + (o.unit == ReportUnit::kPercent ? u.word() : (cpu_only ? "CPU " : "TRES ") + u.word());
  const std::string secs = fmt::format(" ({} secs)", w.end - w.start);
  std::string head;
  CliResult<std::string> body = std::string();
  if (o.type == "reservation") {
    head = banner("Reservation Utilization " + time_range(w),
                  "Usage reported in " + (o.unit == ReportUnit::kPercent ? u.word() : "TRES " + u.word()));
    body = reservation_utilization(o, w, d, tres, u);
  } else if (o.name == "Utilization") {
    head = banner("Cluster Utilization " + time_range(w), usage_line);
    body = utilization(o, w, d, tres, u);
  } else if (o.name == "AccountUtilizationByUser") {
    head = banner("Cluster/Account/User Utilization " + time_range(w) + secs, usage_line);
    body = account_by_user(o, w, d, tres, u);
  } else if (o.name == "UserUtilizationByAccount") {
    head = banner("Cluster/User/Account Utilization " + time_range(w) + secs, usage_line);
    body = user_by_account(o, w, d, tres, u, false);
  } else if (o.name == "TopUsage") {
    head = banner(fmt::format("Top {} Users ", o.top_count) + time_range(w) + secs, usage_line);
    body = user_by_account(o, w, d, tres, u, true);
  } else if (o.name == "SizesByAccount") {
    head = banner("Job Sizes " + time_range(w) + secs,
                  o.print_job_count ? "Units are in number of jobs ran" : "Time reported in " + u.word());
    body = sizes_by_account(o, w, d, u);
  }
  if (!body) {
    out.err += body.error().text;
    out.exit_code = body.error().exit_code;
    return out;
  }
  out.out = (o.noheader ? "" : head) + *body;
  return out;
}

}  // namespace drover::cli
