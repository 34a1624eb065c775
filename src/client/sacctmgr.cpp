// sacctmgr: show/list, add, modify and delete of qos, accounts and users
// (associations), over the controller's accounting records. Output uses
// src/cli's column engine (format=Name%20, -n, -P, -p) with Slurm 22.05's
// headers and widths. Changes are described, then committed at once with
// -i, else after Slurm's question ("Would you like to commit changes?"),
// answered on stdin (a pipe included: `echo y | sacctmgr ...`, as Slurm).
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <iostream>

#include "cli/arg_scanner.hpp"
#include "cli/format_engine.hpp"
#include "client/commands.hpp"
#include "client/session.hpp"
#include "common/duration.hpp"
#include "common/gres.hpp"
#include "common/hostlist.hpp"
#include "common/net.hpp"
#include "common/strings.hpp"
#include "common/tres.hpp"
#include "common/user_db.hpp"
#include "config/parse.hpp"

namespace drover::client {
namespace {

struct Options {
  bool immediate = false, noheader = false, parsable = false, parsable2 = false, assoc = false, quiet = false;
  bool help = false, version = false;
  bool tree = false;      // `tree`: accounts indented under their parents, Account left-aligned (20 wide)
  bool with_sub = false;  // `withsubaccounts`: Account= takes the accounts under those named too
};

struct Command {
  std::string verb, entity;  // add|modify|delete|show ; qos|account|user|assoc|cluster
  std::vector<std::string> names;
  std::map<std::string, std::string> where, set;
  std::vector<std::pair<std::string, std::string>> where_in_order;  // as given, for the refusal of one unknown
  std::string format;
};

enum Opt { kImmediate, kNoHeader, kParsable, kParsable2, kAssoc, kQuiet, kHelp, kVersion, kReadonly, kVerbose };

const std::vector<cli::OptionSpec>& specs() {
  static const std::vector<cli::OptionSpec> s = {
      {kImmediate, "immediate", 'i', cli::ArgKind::kNone}, {kNoHeader, "noheader", 'n', cli::ArgKind::kNone},
      {kParsable, "parsable", 'p', cli::ArgKind::kNone},   {kParsable2, "parsable2", 'P', cli::ArgKind::kNone},
      {kAssoc, "associations", 's', cli::ArgKind::kNone},  {kQuiet, "quiet", 'Q', cli::ArgKind::kNone},
      {kHelp, "help", 'h', cli::ArgKind::kNone},           {kVersion, "version", 'V', cli::ArgKind::kNone},
      {kReadonly, "readonly", 'r', cli::ArgKind::kNone},   {kVerbose, "verbose", 'v', cli::ArgKind::kNone},
  };
  return s;
}

std::string verb_of(const std::string& w) {
  std::string v = to_lower(w);
  // Slurm's sacctmgr also takes the start of a verb (`sacctmgr mod user ...` in public scripts).
  auto is = [&](std::string_view full) { return v.size() >= 3 && full.substr(0, v.size()) == v; };
  if (v == "add" || is("create")) return "add";
  if (is("modify") || is("update")) return "modify";
  if (is("delete") || is("remove")) return "delete";
  if (is("show") || is("list")) return "show";
  return "";
}

// Slurm's shorter spellings of a key (`Descr=scientists Org=various`, `acct=physics`), as its sacctmgr
// takes them; other keys as written.
std::string slurm_key(const std::string& key) {
  static const std::pair<const char*, const char*> kAliases[] = {
      {"descr", "Description"}, {"desc", "Description"}, {"org", "Organization"}, {"acct", "Account"},
      {"accts", "Accounts"}};
  for (const auto& [alias, full] : kAliases) {
    if (iequals(key, alias)) return full;
  }
  return key;
}

std::string entity_of(const std::string& w) {
  std::string e = to_lower(w);
  if (e == "qos") return "qos";
  if (e == "account" || e == "accounts") return "account";
  if (e == "user" || e == "users") return "user";
  if (e == "assoc" || e == "association" || e == "associations") return "assoc";
  if (e == "cluster" || e == "clusters") return "cluster";
  if (e == "tres") return "tres";
  if (e == "runawayjobs" || e == "runaway" || e == "runawayjob") return "runaway";
  if (e == "problem" || e == "problems") return "problem";
  if (e == "event" || e == "events") return "event";
  return "";
}

// Slurm's other entities, which Drover's sacctmgr does not have (said so,
// rather than called invalid).
bool slurm_only_entity(const std::string& w) {
  static const char* const kNames[] = {"configuration", "config",       "stats",       "statistics",  "wckey",
                                       "wckeys",        "resource",     "resources",   "federation",  "federations",
                                       "reservation",   "reservations", "transaction", "transactions", "txn",
                                       "coordinator",   "coordinators", "instance",    "instances"};
  for (const char* n : kNames) {
    if (iequals(w, n)) return true;
  }
  return false;
}

// Marks a parse error that is printed as it is, in Slurm's words.
const std::string kSlurmWords = "\x01";

// An error on stderr: as Slurm's sacctmgr says it when marked kSlurmWords, else with Drover's prefix.
void say_error(const std::string& m) {
  const bool slurms = m.rfind(kSlurmWords, 0) == 0;
  write_out((slurms ? m.substr(kSlurmWords.size()) : "sacctmgr: error: " + m) + "\n", stderr);
}

Result<Command> parse_command(const std::vector<std::string>& words, Options& o) {
  Command c;
  if (words.empty()) return make_error("no command given (add, modify, delete, show or list)");
  c.verb = verb_of(words[0]);
  if (c.verb.empty()) return make_error(kSlurmWords + "invalid keyword: " + words[0]);
  if (words.size() >= 2 && entity_of(words[1]).empty() && slurm_only_entity(words[1])) {
    return make_error("`" + words[0] + " " + words[1] + "` is not implemented yet in this version of Drover (its "
                      "sacctmgr has qos, account, user, association, cluster, event, tres, problem and runawayjobs)");
  }
  if (words.size() < 2 || (c.entity = entity_of(words[1])).empty()) {
    // Slurm 22.05's words for each verb (anchor cluster).
    static const std::map<std::string, std::string> kMust = {
        {"show", "\"Account\", \"Association\", \"Cluster\", \"Configuration\",\n\"Event\", \"Federation\", "
                 "\"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n\"RunAwayJobs\", \"Stats\", "
                 "\"Transaction\", \"TRES\", \"User\", or \"WCKey\""},
        {"add", "\"Account\", \"Cluster\", \"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\""},
        {"delete", "\"Account\", \"Cluster\", \"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\""},
        {"modify", "\"Account\", \"Cluster\", \"Federation\", \"Job\", \"QOS\", \"Resource\" or \"User\""}};
    return make_error(kSlurmWords + "No valid entity in " + (c.verb == "show" ? "list" : c.verb) +
                      " command\nInput line must include " + kMust.at(c.verb));
  }
  bool after_set = false;
  for (std::size_t i = 2; i < words.size(); ++i) {
    const std::string& w = words[i];
    std::string lw = to_lower(w);
    if (lw == "where") continue;
    if (lw == "set") {
      after_set = true;
      continue;
    }
    if (lw == "withassoc" || lw == "withassocs") {
      o.assoc = true;
      continue;
    }
    if (lw == "tree") {
      o.tree = true;
      continue;
    }
    if (lw.rfind("withsub", 0) == 0) {
      o.with_sub = true;
      continue;
    }
    // WithDeleted (`withd`, as public lines write it), WithCoordinators, WithRawQOS: nothing to add here.
    if (lw.rfind("withd", 0) == 0 || lw.rfind("withcoord", 0) == 0 || lw == "withrawqos") continue;
    auto eq = w.find('=');
    if (eq == std::string::npos) {
      for (const auto& n : split(w, ',')) c.names.push_back(n);
      continue;
    }
    std::string key = slurm_key(w.substr(0, eq)), value = w.substr(eq + 1);
    if (!value.empty() && value.front() == '"' && value.back() == '"' && value.size() >= 2) {
      value = value.substr(1, value.size() - 2);
    }
    std::string lk = to_lower(key);
    if (lk == "format") {
      c.format = value;
    } else if (!after_set && (lk == "name" || lk == "names" || (lk == "user" && c.entity == "user") ||
                              (lk == "account" && c.entity == "account"))) {
      for (const auto& n : split(value, ',')) c.names.push_back(n);
    } else if (lk == "cluster" || lk == "clusters") {
      // one cluster
    } else if (c.verb == "add" || after_set) {
      // A TRES key given twice adds up, as Slurm's did (MaxTRESPerUser=mem=512G MaxTRESPerUser=cpu=100).
      auto same = std::find_if(c.set.begin(), c.set.end(), [&](const auto& kv) { return iequals(kv.first, key); });
      if (same != c.set.end() && to_lower(key).find("tres") != std::string::npos && !value.empty()) {
        same->second += "," + value;
      } else {
        c.set[key] = value;
      }
    } else {
      c.where[key] = value;
      c.where_in_order.emplace_back(w.substr(0, eq), value);
    }
  }
  return c;
}

// ---- show ----

struct Row {
  std::map<std::string, std::string> v;  // field name (lower case) -> text
  int depth = 0;                          // an association's place in the account tree (root's is 0)
};

struct Field {
  std::string name, header;
  int width;
  bool right = true;
  const char* row = nullptr;  // the row value it shows, when another field's (an alias): lower case
};

Result<std::string> render(const std::vector<Field>& fields, const std::string& format, const std::vector<Row>& rows,
                           const Options& o) {
  std::vector<cli::ColumnInfo> cols;
  for (const auto& f : fields) {
    cols.push_back(cli::ColumnInfo{f.name, f.header, f.width, f.right, cli::CutStyle::kPlus});
  }
  for (const auto& entry : split(format, ',')) {
    const std::string name = entry.substr(0, entry.find('%'));
    auto known = [&](const Field& f) { return !name.empty() && istarts_with(f.name, name); };
    if (!entry.empty() && std::none_of(fields.begin(), fields.end(), known)) {
      // Slurm 22.05's sacctmgr's words, the name in lower case ("format=Bogus": 'bogus').
      return make_error(kSlurmWords + "Unknown field '" + to_lower(name) + "'");
    }
  }
  auto items = cli::parse_column_list(format, cols);
  if (!items) return items.error();
  std::vector<std::vector<std::string>> table;
  for (const auto& r : rows) {
    std::vector<std::string> line;
    for (const auto& it : *items) {
      const Field& field = fields[it.field];
      auto f = r.v.find(field.row ? std::string(field.row) : to_lower(field.name));
      line.push_back(f == r.v.end() ? "" : f->second);
    }
    table.push_back(std::move(line));
  }
  cli::ColumnOptions co;
  co.mode = o.parsable2 ? cli::ColumnMode::kParsable2 : o.parsable ? cli::ColumnMode::kParsable : cli::ColumnMode::kFixed;
  co.header = !o.noheader;
  return cli::render_columns(*items, cols, table, co);
}

std::string joined(const google::protobuf::RepeatedPtrField<std::string>& l) {
  return join(std::vector<std::string>(l.begin(), l.end()), ",");
}

const std::vector<Field>& qos_fields() {
  static const std::vector<Field> f = {
      {"Name", "Name", 10},           {"Description", "Descr", 11},     {"Priority", "Priority", 10},
      {"GraceTime", "GraceTime", 10}, {"Preempt", "Preempt", 10},       {"PreemptExemptTime", "PreemptExemptTime", 19},
      {"PreemptMode", "PreemptMode", 11}, {"Flags", "Flags", 40},       {"UsageThres", "UsageThres", 10},
      {"UsageFactor", "UsageFactor", 11}, {"GrpTRES", "GrpTRES", 13},   {"GrpTRESMins", "GrpTRESMins", 13},
      {"GrpTRESRunMins", "GrpTRESRunMins", 13}, {"GrpJobs", "GrpJobs", 7}, {"GrpSubmit", "GrpSubmit", 9},
      {"GrpWall", "GrpWall", 11},     {"MaxTRES", "MaxTRES", 13},       {"MaxTRESPerNode", "MaxTRESPerNode", 14},
      {"MaxTRESMins", "MaxTRESMins", 13}, {"MaxWall", "MaxWall", 11},   {"MaxTRESPU", "MaxTRESPU", 13},
      {"MaxJobsPU", "MaxJobsPU", 9},  {"MaxSubmitPU", "MaxSubmitPU", 11}, {"MaxTRESPA", "MaxTRESPA", 13},
      {"MaxJobsPA", "MaxJobsPA", 9},  {"MaxSubmitPA", "MaxSubmitPA", 11}, {"MinTRES", "MinTRES", 13},
      {"ID", "ID", 6},
      // The long names Slurm's sacctmgr also takes in format= (public scripts write them).
      {"MaxTRESPerUser", "MaxTRESPU", 13, true, "maxtrespu"},
      {"MaxJobsPerUser", "MaxJobsPU", 9, true, "maxjobspu"},
      {"MaxSubmitJobsPerUser", "MaxSubmitPU", 11, true, "maxsubmitpu"},
      {"MaxTRESPerJob", "MaxTRES", 13, true, "maxtres"},
      {"MaxWallDurationPerJob", "MaxWall", 11, true, "maxwall"},
      {"MaxTRESPerAccount", "MaxTRESPA", 13, true, "maxtrespa"},
      {"MaxJobsPerAccount", "MaxJobsPA", 9, true, "maxjobspa"},
      {"MaxSubmitJobsPerAccount", "MaxSubmitPA", 11, true, "maxsubmitpa"},
  };
  return f;
}
constexpr const char* kQosDefault =
    "Name,Priority,GraceTime,Preempt,PreemptExemptTime,PreemptMode,Flags,UsageThres,UsageFactor,GrpTRES,"
    "GrpTRESMins,GrpTRESRunMins,GrpJobs,GrpSubmit,GrpWall,MaxTRES,MaxTRESPerNode,MaxTRESMins,MaxWall,MaxTRESPU,"
    "MaxJobsPU,MaxSubmitPU,MaxTRESPA,MaxJobsPA,MaxSubmitPA,MinTRES";

std::vector<Row> qos_rows(const v1::GetAssociationsReply& a, const Command& c) {
  std::vector<Row> rows;
  for (const auto& q : a.qos()) {
    if (!c.names.empty() && std::find(c.names.begin(), c.names.end(), q.name()) == c.names.end()) continue;
    auto cfg = config::parse_qos_settings(q.name(), {q.settings().begin(), q.settings().end()});
    if (!cfg) continue;
    auto count = [](int64_t v) { return v < 0 ? std::string() : std::to_string(v); };
    Row r;
    r.v = {{"name", q.name()},
           {"description", cfg->description.empty() ? q.name() : cfg->description},
           {"priority", std::to_string(cfg->priority)},
           {"gracetime", format_duration_hms(cfg->grace_time)},
           {"preemptmode", "cluster"},
           {"flags", join(cfg->flags, ",")},
           {"usagefactor", fmt::format("{:.6f}", cfg->usage_factor)},
           {"grptres", format_tres(cfg->grp_tres)},
           {"grpjobs", count(cfg->grp_jobs)},
           {"grpsubmit", count(cfg->grp_submit_jobs)},
           {"maxtres", format_tres(cfg->max_tres_per_job)},
           {"maxtrespernode", format_tres(cfg->max_tres_per_node)},
           {"maxwall", cfg->max_wall == kInfinite ? "" : format_duration_hms(cfg->max_wall)},
           {"maxtrespu", format_tres(cfg->max_tres_per_user)},
           {"maxjobspu", count(cfg->max_jobs_per_user)},
           {"maxsubmitpu", count(cfg->max_submit_jobs_per_user)},
           {"id", std::to_string(q.id())}};
    // Options shown as given (those Drover keeps without acting on too).
    static const std::pair<const char*, const char*> kKept[] = {
        {"Preempt", "preempt"},         {"PreemptMode", "preemptmode"},
        {"PreemptExemptTime", "preemptexempttime"},
        {"GrpTRESMins", "grptresmins"}, {"GrpTRESRunMins", "grptresrunmins"}, {"GrpWall", "grpwall"},
        {"MaxTRESMins", "maxtresmins"}, {"MaxTRESMinsPerJob", "maxtresmins"}, {"MaxTRESPerAccount", "maxtrespa"},
        {"MaxJobsPerAccount", "maxjobspa"}, {"MaxSubmitJobsPerAccount", "maxsubmitpa"}, {"MinTRESPerJob", "mintres"}};
    for (const auto& [key, column] : kKept) {
      auto it = q.settings().find(key);
      if (it != q.settings().end()) r.v[column] = it->second;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

const std::vector<Field>& assoc_fields() {
  static const std::vector<Field> f = {
      {"Cluster", "Cluster", 10},     {"Account", "Account", 10},       {"User", "User", 10},
      {"Partition", "Partition", 10}, {"Share", "Share", 9},            {"Fairshare", "Share", 9},
      {"Priority", "Priority", 10},   {"GrpJobs", "GrpJobs", 7},        {"GrpTRES", "GrpTRES", 13},
      {"GrpSubmit", "GrpSubmit", 9},  {"GrpWall", "GrpWall", 11},       {"GrpTRESMins", "GrpTRESMins", 13},
      {"MaxJobs", "MaxJobs", 7},      {"MaxTRES", "MaxTRES", 13},       {"MaxTRESPerNode", "MaxTRESPerNode", 14},
      {"MaxSubmit", "MaxSubmit", 9},  {"MaxWall", "MaxWall", 11},       {"MaxTRESMins", "MaxTRESMins", 13},
      {"QOS", "QOS", 20},             {"DefaultQOS", "Def QOS", 9},     {"GrpTRESRunMins", "GrpTRESRunMins", 13},
      {"ParentName", "Par Name", 10}, {"DefaultAccount", "Def Acct", 10}, {"AdminLevel", "Admin", 9},
      {"Description", "Descr", 20},   {"Organization", "Org", 20},      {"MaxNodes", "MaxNodes", 8},
      {"MaxCPUs", "MaxCPUs", 8},      {"MaxCPUMins", "MaxCPUMins", 11},
      {"MaxSubmitJobs", "MaxSubmit", 9, true, "maxsubmit"}, {"MaxWallDurationPerJob", "MaxWall", 11, true, "maxwall"},
      // clusters'
      {"ControlHost", "ControlHost", 15}, {"ControlPort", "ControlPort", 12}, {"RPC", "RPC", 5},
      {"Classification", "Class", 9},     {"Flags", "Flags", 20},             {"NodeCount", "NodeCount", 9},
      {"NodeNames", "NodeNames", 20},     {"PluginIDSelect", "PluginIDSelect", 14}, {"TRES", "TRES", 30},
  };
  return f;
}
constexpr const char* kAssocDefault =
    "Cluster,Account,User,Partition,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,GrpTRESMins,MaxJobs,MaxTRES,"
    "MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins";
constexpr const char* kUserDefault = "User,DefaultAccount,AdminLevel";
constexpr const char* kUserAssocDefault =
    "User,DefaultAccount,AdminLevel,Cluster,Account,Partition,Share,Priority,MaxJobs,MaxNodes,MaxCPUs,MaxSubmit,"
    "MaxWall,MaxCPUMins,QOS,DefaultQOS";
constexpr const char* kAccountDefault = "Account,Description,Organization";
constexpr const char* kAccountAssocDefault =
    "Account,Description,Organization,Cluster,ParentName,User,Share,Priority,GrpJobs,GrpTRES,GrpSubmit,GrpWall,"
    "GrpTRESMins,MaxJobs,MaxTRES,MaxTRESPerNode,MaxSubmit,MaxWall,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins";

// An association's limits in sacctmgr's columns: its own Grp* ones, and
// each Max* one it has or inherits from the accounts above (`inherited`,
// which the walk down the tree passes on), as Slurm shows them.
void put_limits(Row& r, const google::protobuf::Map<std::string, std::string>& limits,
                std::map<std::string, std::string>& inherited) {
  static const std::pair<const char*, const char*> kColumns[] = {
      {"GrpTRES", "grptres"}, {"GrpJobs", "grpjobs"}, {"GrpSubmitJobs", "grpsubmit"}, {"MaxJobs", "maxjobs"},
      {"MaxSubmitJobs", "maxsubmit"}, {"MaxTRES", "maxtres"}, {"MaxWall", "maxwall"}};
  for (const auto& [key, column] : kColumns) {
    auto it = limits.find(key);
    const bool per_user = std::string_view(key).rfind("Max", 0) == 0;
    if (it != limits.end()) {
      r.v[column] = it->second;
      if (per_user) inherited[key] = it->second;
    } else {
      auto up = inherited.find(key);
      r.v[column] = per_user && up != inherited.end() ? up->second : "";
    }
  }
  // MaxCPUs and MaxNodes: those TRES of MaxTRES (Slurm's older columns).
  const TresMap max_tres = parse_tres(r.v["maxtres"]).value_or(TresMap{});
  for (const auto& [tres, column] : {std::pair{"cpu", "maxcpus"}, std::pair{"node", "maxnodes"}}) {
    auto it = max_tres.find(tres);
    r.v[column] = it == max_tres.end() ? "" : std::to_string(it->second);
  }
}

// An admin level as Slurm's sacctmgr shows it: Administrator, Operator or None (`set adminlevel=admin`).
std::string admin_level_text(const std::string& level) {
  if (level.empty() || iequals(level, "none")) return "None";
  if (iequals(level, "admin") || iequals(level, "administrator")) return "Administrator";
  if (iequals(level, "operator")) return "Operator";
  return level;
}

// Every association in Slurm's tree order: an account, its users, then its child accounts.
std::vector<Row> assoc_rows(const v1::GetAssociationsReply& a) {
  std::map<std::string, const v1::AccountRecord*> acc;
  std::map<std::string, std::vector<std::string>> kids;
  for (const auto& r : a.accounts()) {
    acc[r.name()] = &r;
    if (!r.parent().empty() && r.name() != "root") kids[r.parent()].push_back(r.name());
  }
  std::vector<Row> rows;
  std::function<void(const std::string&, std::map<std::string, std::string>, int)> walk =
      [&](const std::string& name, std::map<std::string, std::string> inherited, int depth) {
    const v1::AccountRecord& r = *acc.at(name);
    Row ar;
    ar.v = {{"cluster", a.cluster()},       {"account", name},           {"share", std::to_string(r.shares())},
            {"fairshare", std::to_string(r.shares())},
            {"qos", joined(r.qos())},       {"defaultqos", r.default_qos()}, {"parentname", r.parent()},
            {"description", r.description()}, {"organization", r.organization()}};
    put_limits(ar, r.limits(), inherited);
    ar.depth = depth;
    rows.push_back(ar);
    for (const auto& u : a.users()) {
      for (const auto& ua : u.assocs()) {
        if (ua.account() != name) continue;
        Row ur = ar;
        ur.v["user"] = u.name();
        ur.v["share"] = ur.v["fairshare"] = std::to_string(ua.shares());
        ur.v["qos"] = joined(ua.qos());
        ur.v["defaultqos"] = ua.default_qos();
        ur.v["parentname"] = "";
        ur.v["defaultaccount"] = u.default_account();
        ur.v["adminlevel"] = admin_level_text(u.admin_level());
        auto mine = inherited;
        put_limits(ur, ua.limits(), mine);
        ur.depth = depth + 1;
        rows.push_back(ur);
      }
    }
    for (const auto& k : kids[name]) walk(k, inherited, depth + 1);
  };
  if (acc.count("root")) walk("root", {}, 0);
  return rows;
}

const std::vector<Field>& tres_fields() {
  static const std::vector<Field> f = {{"Type", "Type", 8}, {"Name", "Name", 15}, {"ID", "ID", 6}};
  return f;
}

// `show problem`, the two of Slurm's checks that Drover's associations can
// fail (each account and user has its association by construction): an
// account with neither users nor sub-accounts, and a user this host does not
// know. Accounts first, then users, each by name, as Slurm 22.05 listed them.
std::vector<Row> problem_rows(const v1::GetAssociationsReply& a) {
  std::set<std::string> parents, with_users, users;
  for (const auto& r : a.accounts()) parents.insert(r.parent());
  for (const auto& u : a.users()) {
    users.insert(u.name());
    for (const auto& ua : u.assocs()) with_users.insert(ua.account());
  }
  std::set<std::string> empty;
  for (const auto& r : a.accounts()) {
    if (!parents.count(r.name()) && !with_users.count(r.name())) empty.insert(r.name());
  }
  std::vector<Row> rows;
  for (const auto& name : empty) {
    rows.push_back(Row{{{"cluster", a.cluster()}, {"account", name}, {"user", ""},
                        {"problem", "Account has no users"}}});
  }
  for (const auto& name : users) {
    if (!user_by_name(name)) {
      rows.push_back(Row{{{"cluster", ""}, {"account", ""}, {"user", name}, {"problem", "User does not have a uid"}}});
    }
  }
  return rows;
}

// The trackable resources: Slurm's eight fixed ones (their ids 1-8), then a
// gres/NAME for each generic resource the nodes have and a gres/NAME:TYPE
// for each of its types, in the order slurm.conf's nodes first name them,
// numbered from 1001 as Slurm's database numbers those it adds.
ApiResult<std::vector<Row>> tres_rows(ControllerApi& api) {
  auto nodes = api.get_nodes({}, true);
  if (!nodes) return nodes.error();
  std::vector<Row> rows;
  auto add = [&](const std::string& type, const std::string& name, int64_t id) {
    Row r;
    r.v = {{"type", type}, {"name", name}, {"id", std::to_string(id)}};
    rows.push_back(std::move(r));
  };
  int64_t id = 1;
  for (const std::string& t : plain_tres_names()) {
    const auto slash = t.find('/');  // fs/disk: type fs, name disk
    add(t.substr(0, slash), slash == std::string::npos ? "" : t.substr(slash + 1), id++);
  }
  std::vector<std::string> gres;
  for (const auto& n : nodes->nodes()) {
    for (const auto& g : n.gres()) {
      auto list = parse_gres_list(g);
      if (!list) continue;
      for (const auto& spec : *list) {
        for (const std::string& name : {spec.name, spec.type.empty() ? "" : spec.name + ":" + spec.type}) {
          if (!name.empty() && std::find(gres.begin(), gres.end(), name) == gres.end()) gres.push_back(name);
        }
      }
    }
  }
  id = 1001;
  for (const auto& g : gres) add("gres", g, id++);
  return rows;
}

bool matches(const Row& r, const Command& c, const char* name_field) {
  auto get = [&](const char* f) {
    auto it = r.v.find(f);
    return it == r.v.end() ? std::string() : it->second;
  };
  if (!c.names.empty() && std::find(c.names.begin(), c.names.end(), get(name_field)) == c.names.end()) return false;
  for (const auto& [k, v] : c.where) {
    std::string lk = to_lower(k);
    if (lk == "accounts") lk = "account";
    if (lk == "users") lk = "user";
    auto list = split(v, ',');
    if (std::find(list.begin(), list.end(), get(lk.c_str())) == list.end()) return false;
  }
  return true;
}

// `show event`: the controller's node and cluster events (ctld/events.cpp)
// that overlap the window: by default from the previous day's midnight to
// now; with States= (or CondFlags=Open), those still open.
const std::vector<Field>& event_fields() {
  static const std::vector<Field> f = {
      {"Cluster", "Cluster", 10},        {"ClusterNodes", "Cluster Nodes", 20},
      {"Duration", "Duration", 13},      {"End", "TimeEnd", 19},
      {"Event", "Event", 7},             {"NodeName", "NodeName", 15, false},
      {"Reason", "Reason", 30},          {"Start", "TimeStart", 19},
      {"State", "State", 6},             {"TRES", "TRES", 20},
      {"User", "User", 10},
  };
  return f;
}

Result<std::vector<Row>> event_rows(const Command& c, std::string& format, ControllerApi& api, const Invocation& inv,
                                    int& failed) {
  const int64_t now = std::time(nullptr);
  int64_t start = local_midnight(now, 1), end = now;
  bool open_only = false, start_given = false;
  std::string kind;  // "", "node" or "cluster"
  std::set<std::string> nodes, states, reasons, users;
  for (const auto& n : c.names) {
    if (iequals(n, "all_time")) {
      start = 0;
      start_given = true;
    } else if (!iequals(n, "all_clusters")) {
      return make_error("Unknown condition: " + n);
    }
  }
  for (const auto& [k, v] : c.where) {
    const std::string lk = to_lower(k);
    // A time it cannot read is said, and the default kept (Slurm 22.05's sacctmgr).
    auto time_of = [&](int64_t& into) {
      auto t = parse_timestamp(v, now, TimeBias::kPast);
      if (!t) {
        write_out("Invalid time specification (pos=0): " + v + "\n", stderr);
        return false;
      }
      into = *t;
      return true;
    };
    if (lk == "start" || lk == "starttime") {
      start_given = time_of(start);
    } else if (lk == "end" || lk == "endtime") {
      time_of(end);
    } else if (lk == "event" || lk == "events") {
      kind = to_lower(v);
      if (kind != "node" && kind != "cluster") return make_error("Invalid event type " + v + " (Cluster or Node)");
    } else if (lk == "nodes" || lk == "node" || lk == "nodename") {
      auto hosts = hostlist_expand(v);
      if (!hosts) return hosts.error();
      nodes.insert(hosts->begin(), hosts->end());
      kind = "node";
    } else if (lk == "states" || lk == "state") {
      for (const auto& st : split(v, ',')) states.insert(to_upper(st));
      kind = "node";
    } else if (lk == "reason" || lk == "reasons") {
      for (const auto& r : split(v, ',')) reasons.insert(r);
    } else if (lk == "user" || lk == "users") {
      for (const auto& u : split(v, ',')) users.insert(u);
      kind = "node";
    } else if (lk == "condflags") {
      open_only = iequals(v, "open");
      if (!open_only) return make_error("Invalid CondFlags " + v + " (Open)");
    } else {
      return make_error("Unknown condition: " + k + "=" + v);
    }
  }
  if (!states.empty() && !start_given) open_only = true;
  v1::GetJobHistoryRequest req;
  req.set_with_events(true);
  req.set_only_events(true);
  req.set_ended_after(open_only ? now : start);
  auto reply = api.get_job_history(req);
  if (!reply) {
    failed = report_failure(inv, api, reply.error());
    if (reply.error().denied()) write_out(" Error with request: " + reply.error().message + "\n", stderr);
    return std::vector<Row>{};
  }
  // The cluster's events first, then by node and time, as Slurm lists them.
  std::vector<v1::ClusterEvent> sorted(reply->events().begin(), reply->events().end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const v1::ClusterEvent& a, const v1::ClusterEvent& b) {
    return a.node() != b.node() ? a.node() < b.node() : a.start_time() < b.start_time();
  });
  std::vector<Row> rows;
  for (const auto& e : sorted) {
    if (!e.reservation().empty()) continue;  // sreport's reservation report reads those
    const bool cluster = e.node().empty();
    if ((kind == "node" && cluster) || (kind == "cluster" && !cluster)) continue;
    if (open_only && e.end_time() != 0) continue;
    if (e.start_time() > end || (e.end_time() != 0 && e.end_time() < start)) continue;
    if (!nodes.empty() && !nodes.count(e.node())) continue;
    const std::string bare_state = e.state().substr(0, e.state().find('*'));  // DOWN* is DOWN too
    if (!states.empty() && !states.count(e.state()) && !states.count(bare_state)) continue;
    if (!reasons.empty() && !reasons.count(e.reason())) continue;
    std::string user;
    if (e.has_reason_uid()) {
      auto u = user_by_uid(e.reason_uid());
      user = (u ? u->name : std::to_string(e.reason_uid())) + "(" + std::to_string(e.reason_uid()) + ")";
    }
    if (!users.empty() && (!e.has_reason_uid() || !users.count(user.substr(0, user.find('('))))) continue;
    Row r;
    r.v["cluster"] = api.endpoint().cluster;
    r.v["clusternodes"] = e.nodes();
    r.v["duration"] = format_duration_hms((e.end_time() ? e.end_time() : reply->now()) - e.start_time());
    r.v["end"] = e.end_time() ? format_timestamp(e.end_time()) : "Unknown";
    r.v["event"] = cluster ? "Cluster" : "Node";
    r.v["nodename"] = e.node();
    r.v["reason"] = e.reason();
    r.v["start"] = format_timestamp(e.start_time());
    r.v["state"] = e.state();
    // Slurm's spelling: name=count pairs in text order, memory in MiB with its unit.
    std::vector<std::string> parts;
    for (const auto& [k, n] : e.tres()) parts.push_back(k + "=" + std::to_string(n) + (k == "mem" ? "M" : ""));
    std::sort(parts.begin(), parts.end());
    r.v["tres"] = join(parts, ",");
    r.v["user"] = user;
    rows.push_back(std::move(r));
  }
  if (format.empty()) {
    format = kind == "cluster" ? "Cluster,TRES,Start,End,ClusterNodes"
                               : "Cluster,NodeName,Start,End,State,Reason,User";
  }
  return rows;
}

// The conditions Slurm's sacctmgr takes after `where` in a show of QOS, accounts,
// users or associations (its man page's specifications, lower case).
bool known_condition(const std::string& key) {
  static const std::set<std::string> kKeys = {
      // associations, and the accounts and users they belong to
      "account", "accounts", "acct", "accts", "user", "users", "partition", "partitions", "id", "ids", "parent",
      "parentid", "parentname", "onlydefaults", "defaultaccount", "defaultwckey", "adminlevel", "wckey", "wckeys",
      "description", "descriptions", "organization", "organizations", "name", "names", "rawusage", "qos", "qoslevel",
      "defaultqos", "fairshare", "share", "priority", "grpjobs", "grpjobsaccrue", "grpsubmit", "grpsubmitjobs",
      "grptres", "grptresmins", "grptresrunmins", "grpwall", "maxjobs", "maxjobsaccrue", "maxsubmit", "maxsubmitjobs",
      "maxtres", "maxtresperjob", "maxtresmins", "maxtresminsperjob", "maxtrespernode", "maxwall",
      "maxwalldurationperjob",
      // QOS
      "flags", "gracetime", "preempt", "preemptmode", "preemptexempttime", "usagefactor", "usagethreshold",
      "limitfactor", "maxtrespu", "maxtresperuser", "maxjobspu", "maxjobsperuser", "maxsubmitpu",
      "maxsubmitjobsperuser", "maxtrespa", "maxtresperaccount", "maxjobspa", "maxjobsperaccount", "maxsubmitpa",
      "maxsubmitjobsperaccount", "mintres", "mintresperjob"};
  return kKeys.count(to_lower(key)) != 0;
}

// A condition it does not take, as Slurm 22.05's sacctmgr said it on the
// anchor cluster: that one and every condition after it, each with the
// entity's hint (QOS's names a placeholder Slurm left in), exit 1.
bool refuse_unknown_conditions(const Command& c) {
  const std::vector<std::pair<std::string, std::string>>& given = c.where_in_order;
  auto first = std::find_if(given.begin(), given.end(), [](const auto& kv) { return !known_condition(kv.first); });
  if (first == given.end()) return false;
  std::string hint;
  if (c.entity == "qos") hint = " Use keyword 'set' to modify SLURM_PRINT_VALUE\n";
  if (c.entity == "user" || c.entity == "account") hint = " Use keyword 'set' to modify value\n";
  for (auto it = first; it != given.end(); ++it) {
    write_out(" Unknown condition: " + it->first + "=" + it->second + "\n" + hint, stderr);
  }
  return true;
}

int show(const Command& c, const Options& o, ControllerApi& api, const Invocation& inv) {
  if (c.entity == "event") {
    std::string format = c.format;
    int failed = 0;
    auto rows = event_rows(c, format, api, inv, failed);
    if (failed) return failed;
    if (!rows) {
      write_out(" " + rows.error().message + "\n", stderr);
      return 1;
    }
    auto text = render(event_fields(), format, *rows, o);
    if (!text) {
      say_error(text.error().message);
      return 1;
    }
    write_out(*text, stdout);
    return 0;
  }
  if (c.entity != "cluster" && c.entity != "tres" && refuse_unknown_conditions(c)) return 1;
  // What it lists decides what PrivateData leaves a plain user (the controller filters).
  auto view = c.entity == "account" ? v1::GetAssociationsRequest::ACCOUNTS
              : c.entity == "user"  ? v1::GetAssociationsRequest::USERS
              : c.entity == "assoc" ? v1::GetAssociationsRequest::ASSOCIATIONS
                                    : v1::GetAssociationsRequest::OTHER;
  auto a = api.get_associations(view);
  if (!a) {
    const int rc = report_failure(inv, api, a.error());
    if (a.error().denied()) write_out(" Problem with query.\n", stderr);
    return rc;
  }
  std::vector<Row> rows;
  std::string format = c.format;
  const std::vector<Field>* fields = &assoc_fields();
  if (c.entity == "qos") {
    fields = &qos_fields();
    rows = qos_rows(*a, c);
    if (format.empty()) format = kQosDefault;
  } else if (c.entity == "tres") {
    auto t = tres_rows(api);
    if (!t) return report_failure(inv, api, t.error());
    rows = std::move(*t);
    fields = &tres_fields();
    if (format.empty()) format = "Type,Name,ID";
  } else if (c.entity == "problem") {
    static const std::vector<Field> problem_fields = {
        {"Cluster", "Cluster", 10}, {"Account", "Account", 10}, {"User", "User", 10}, {"Problem", "Problem", 40}};
    fields = &problem_fields;
    rows = problem_rows(*a);
    if (format.empty()) format = "Cluster,Account,User,Problem";
  } else if (c.entity == "cluster") {
    // The cluster's line: where its controller listens and its root
    // association's share, limits and QOS, as Slurm's `list clusters`.
    std::vector<Row> tree = assoc_rows(*a);
    Row r = tree.empty() ? Row{} : tree.front();
    const std::string& target = api.endpoint().target;
    const auto colon = target.rfind(':');
    r.v["cluster"] = a->cluster();
    // Slurm shows the address its controller registered from (127.0.0.1 for SlurmctldHost=localhost).
    const std::string host = target.substr(0, colon);
    const std::string ip = ipv4_address(host);
    r.v["controlhost"] = ip.empty() ? host : ip;
    r.v["controlport"] = colon == std::string::npos ? "" : target.substr(colon + 1);
    r.v["rpc"] = "9728";  // Slurm 22.05's protocol number, as the version Drover's commands give
    rows.push_back(r);
    if (format.empty()) {
      format = "Cluster,ControlHost,ControlPort,RPC,Share,GrpJobs,GrpTRES,GrpSubmit,MaxJobs,MaxTRES,MaxSubmit,MaxWall,"
               "QOS,DefaultQOS";
    }
  } else {
    auto all = assoc_rows(*a);
    Command filter = c;
    if (o.with_sub) {
      // Account=X withsubaccounts: X and every account below it.
      for (auto& [k, v] : filter.where) {
        if (!iequals(k, "account") && !iequals(k, "accounts")) continue;
        const std::vector<std::string> named = split(v, ',');
        std::set<std::string> under(named.begin(), named.end());
        for (bool grew = true; grew;) {
          grew = false;
          for (const auto& acct : a->accounts()) {
            if (under.count(acct.parent()) && under.insert(acct.name()).second) grew = true;
          }
        }
        v = join(std::vector<std::string>(under.begin(), under.end()), ",");
      }
    }
    for (const auto& r : all) {
      bool user_row = r.v.count("user") != 0;
      if (c.entity == "user" && !user_row) continue;
      if (c.entity == "account" && !o.assoc && user_row) continue;
      if (matches(r, filter, c.entity == "user" ? "user" : "account")) rows.push_back(r);
    }
    if (o.tree && c.entity == "assoc") {
      // Slurm's tree: each account one space in from its parent, its users one more, Account left-aligned.
      static const std::vector<Field> tree_fields = [] {
        std::vector<Field> f = assoc_fields();
        for (auto& one : f) {
          if (one.name == "Account") one.width = 20, one.right = false;
        }
        return f;
      }();
      fields = &tree_fields;
      int top = INT32_MAX;  // the tree starts at the highest account shown (root, or `where account=X`)
      for (const auto& r : rows) top = std::min(top, r.depth);
      for (auto& r : rows) r.v["account"] = std::string(static_cast<size_t>(r.depth - top), ' ') + r.v["account"];
    }
    // Users and accounts are listed by name, each name's associations by
    // the other name (Slurm 22.05; `show assoc` keeps the tree's order).
    auto value = [](const Row& r, const char* k) {
      auto it = r.v.find(k);
      return it == r.v.end() ? std::string() : it->second;
    };
    if (c.entity == "user" || c.entity == "account") {
      const char* first = c.entity == "user" ? "user" : "account";
      const char* second = c.entity == "user" ? "account" : "user";
      std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
        return std::pair(value(a, first), value(a, second)) < std::pair(value(b, first), value(b, second));
      });
    }
    if (c.entity == "user" && !o.assoc) {  // one row per user, with the user's own fields only
      std::vector<Row> once;
      std::set<std::string> seen;
      for (const auto& r : rows) {
        if (!seen.insert(r.v.at("user")).second) continue;
        Row user;
        for (const char* k : {"user", "defaultaccount", "adminlevel"}) user.v[k] = r.v.at(k);
        once.push_back(std::move(user));
      }
      rows = once;
    }
    if (format.empty()) {
      format = c.entity == "user"      ? (o.assoc ? kUserAssocDefault : kUserDefault)
               : c.entity == "account" ? (o.assoc ? kAccountAssocDefault : kAccountDefault)
                                       : kAssocDefault;
    }
  }
  auto text = render(*fields, format, rows, o);
  if (!text) {
    say_error(text.error().message);
    return 1;
  }
  write_out(*text, stdout);
  return 0;
}

// ---- changes ----

// Slurm's question; the answer is read from stdin (a terminal or a pipe) for up to 30 s.
bool confirm() {
  std::fputs("Would you like to commit changes? (You have 30 seconds to decide)\n(N/y): ", stdout);
  std::fflush(stdout);
  pollfd p{0, POLLIN, 0};
  if (poll(&p, 1, 30000) <= 0) {
    std::fputs("\n", stdout);
    return false;
  }
  std::string answer;
  std::getline(std::cin, answer);
  if (!isatty(0)) std::fputs((answer + "\n").c_str(), stdout);
  return !answer.empty() && (answer[0] == 'y' || answer[0] == 'Y');
}

// One controller serves one cluster, slurm.conf's ClusterName, which its
// accounting database has from the start: a setup script's `sacctmgr add
// cluster NAME` (the first step with Slurm's database) changes nothing.
int add_cluster(const Command& c, const ControllerApi& api) {
  const std::string& mine = api.endpoint().cluster;
  if (c.names.size() == 1 && c.names[0] == mine) {
    write_out(" Cluster " + mine + " is this controller's ClusterName; nothing to add\n", stdout);
    return 0;
  }
  write_out("sacctmgr: error: Drover's controller serves one cluster, " + mine +
                " (ClusterName in slurm.conf); it cannot add " + join(c.names, ",") + "\n",
            stderr);
  return 1;
}

// A change the caller may not make, in the words of Slurm 22.05's sacctmgr
// for each (alice on the anchor cluster), then Drover's line saying why:
// an add lists what it would have added; a user's association change is
// "Nothing modified"; the rest "Your user doesn't have privilege ...". Exit 1.
int say_denied(const Command& c, const v1::ModifyAssociationsReply& rep) {
  if (c.verb == "add") {
    const char* what = c.entity == "qos" ? "QOS" : c.entity == "account" ? "accounts" : "users";
    write_out(fmt::format(" Problem adding {}: Access/permission denied\n", what), stderr);
    for (const auto& l : rep.lines()) write_out(l + "\n", stdout);
  } else if (c.verb == "modify" && c.entity == "user") {
    write_out("sacctmgr: accounting_storage/slurmdbd: acct_storage_p_modify_assocs: Request didn't affect anything or "
              "your user doesn't have privilege to perform this action\n",
              stderr);
    write_out(" Nothing modified\n", stdout);
  } else {
    write_out("sacctmgr: error: Your user doesn't have privilege to perform this action\n"
              " Error with request: Access/permission denied\n",
              stderr);
  }
  write_out("sacctmgr: error: drover: " + rep.denied() + "\n", stderr);
  return 1;
}

int change(const Command& c, const Options& o, ControllerApi& api, const Invocation& inv) {
  if (c.entity == "cluster" && c.verb == "add") return add_cluster(c, api);
  if (c.entity != "qos" && c.entity != "account" && c.entity != "user") {
    write_out("sacctmgr: error: " + c.verb + " " + c.entity + " is not built in Drover (qos, account, user)\n", stderr);
    return 1;
  }
  v1::ModifyAssociationsRequest req;
  req.set_verb(c.verb);
  req.set_entity(c.entity);
  for (const auto& n : c.names) req.add_names(n);
  for (const auto& [k, v] : c.where) (*req.mutable_where())[k] = v;
  for (const auto& [k, v] : c.set) (*req.mutable_set())[k] = v;
  if (c.verb == "modify" && c.set.empty()) {
    write_out("sacctmgr: error: nothing to change: give `set Key=Value`\n", stderr);
    return 1;
  }
  // First a dry run, which anyone may ask for: what the change is, and whether the caller may make it.
  req.set_dry_run(true);
  auto rep = api.modify_associations(req);
  if (!rep) {
    // Lines in Slurm's own form (they start with a blank) go out as they are, as Slurm's sacctmgr prints them.
    const ApiError& e = rep.error();
    if (!e.unreachable && !e.message.empty() && e.message[0] == ' ') return write_out(e.message + "\n", stderr), 1;
    return report_failure(inv, api, e);
  }
  if (!rep->denied().empty()) return say_denied(c, *rep);
  for (const auto& l : rep->lines()) write_out(l + "\n", stdout);
  if (rep->unchanged()) return 1;  // " Nothing new added." and the like: nothing to commit
  if (!o.immediate && !confirm()) {
    write_out(" Changes Discarded\n", stdout);
    return 0;
  }
  req.set_dry_run(false);
  auto done = api.modify_associations(req);
  if (!done) return report_failure(inv, api, done.error());
  return 0;
}

}  // namespace

int sacctmgr_main(const Args& args) {
  Invocation inv = invocation("sacctmgr", args);
  // Options may come anywhere (`sacctmgr show qos -P`), as getopt permutes
  // Slurm's; the command's own words never begin with '-'.
  std::vector<std::string> opt_words, words;
  for (const auto& a : inv.args) (a.size() > 1 && a[0] == '-' ? opt_words : words).push_back(a);
  auto scan = cli::scan_args(opt_words, specs(), cli::OperandMode::kPermute, "sacctmgr");
  if (!scan) {
    write_out(cli::getopt_error_text(scan.error(), "sacctmgr"), stderr);
    return 1;
  }
  Options o;
  for (const auto& opt : scan->options) {
    switch (opt.id) {
      case kImmediate: o.immediate = true; break;
      case kNoHeader: o.noheader = true; break;
      case kParsable: o.parsable = true; break;
      case kParsable2: o.parsable2 = true; break;
      case kAssoc: o.assoc = true; break;
      case kQuiet: o.quiet = true; break;
      case kHelp: o.help = true; break;
      case kVersion: o.version = true; break;
      default: break;
    }
  }
  if (o.version) {
    write_out("slurm 22.05.8\n", stdout);
    return 0;
  }
  if (o.help || words.empty()) {
    write_out("Usage: sacctmgr [-i] [-n] [-P|-p] [-s] (add|modify|delete|show|list) (qos|account|user|association) "
              "[names] [where ...] [set Key=Value ...] [format=...]\n",
              o.help ? stdout : stderr);
    return o.help ? 0 : 1;
  }
  auto c = parse_command(words, o);
  if (!c) {
    say_error(c.error().message);
    return 1;
  }
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (c->entity == "runaway") {
    // Slurm's runaway jobs are database records of jobs its controller no
    // longer knows. Drover's accounting records are the controller's own
    // store, recovered with it, so there are none to list or fix.
    if (c->verb != "show") {
      write_out("sacctmgr: error: runaway jobs can only be listed (show runawayjobs)\n", stderr);
      return 1;
    }
    write_out("Runaway Jobs: No runaway jobs found on cluster " + api->endpoint().cluster + "\n", stdout);
    return 0;
  }
  return c->verb == "show" ? show(*c, o, *api, inv) : change(*c, o, *api, inv);
}

}  // namespace drover::client
