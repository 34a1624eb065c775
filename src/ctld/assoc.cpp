#include "ctld/assoc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "common/duration.hpp"
#include "common/strings.hpp"
#include "common/tres.hpp"
#include "config/core_cluster.hpp"
#include "config/parse.hpp"
#include "config/tables.hpp"

namespace drover::ctld {
namespace {

std::map<std::string, std::string> qos_settings(const config::QosConfig& q) {
  std::map<std::string, std::string> s;
  auto count = [&](const char* k, int64_t v) {
    if (v != config::kUnlimited) s[k] = std::to_string(v);
  };
  auto tres = [&](const char* k, const TresMap& t) {
    if (!t.empty()) s[k] = format_tres(t);
  };
  if (q.priority) s["Priority"] = std::to_string(q.priority);
  tres("GrpTRES", q.grp_tres);
  count("GrpJobs", q.grp_jobs);
  count("GrpSubmitJobs", q.grp_submit_jobs);
  tres("MaxTRESPerJob", q.max_tres_per_job);
  tres("MaxTRESPerNode", q.max_tres_per_node);
  tres("MaxTRESPerUser", q.max_tres_per_user);
  count("MaxJobsPerUser", q.max_jobs_per_user);
  count("MaxSubmitJobsPerUser", q.max_submit_jobs_per_user);
  if (q.max_wall != kInfinite) s["MaxWall"] = format_duration_hms(q.max_wall);
  if (q.usage_factor != 1.0) s["UsageFactor"] = fmt::format("{}", q.usage_factor);
  if (!q.flags.empty()) s["Flags"] = join(q.flags, ",");
  if (!q.description.empty()) s["Description"] = q.description;
  if (!q.preempt.empty()) s["Preempt"] = join(q.preempt, ",");
  if (!q.preempt_mode.empty()) s["PreemptMode"] = q.preempt_mode;
  if (q.preempt_exempt_time) s["PreemptExemptTime"] = format_duration_hms(*q.preempt_exempt_time);
  if (q.grace_time) s["GraceTime"] = std::to_string(q.grace_time);
  return s;
}

// sacctmgr spells a key any case and by alias ("maxtrespu"): qos.conf's table names it.
Result<std::string> canonical_qos_key(const std::string& key) {
  if (const auto* def = config::qos_keys().find(key)) return std::string(def->name);
  if (const auto* passive = config::qos_keys().find_passive(key)) return std::string(passive->name);
  return make_error(fmt::format("Unknown option: {} (a QOS takes qos.conf's keys: Priority, GrpTRES, GrpJobs, "
                                "GrpSubmitJobs, MaxTRESPerJob, MaxTRESPerNode, MaxTRESPerUser, MaxJobsPerUser, "
                                "MaxSubmitJobsPerUser, MaxWall, UsageFactor, Flags, Description)", key));
}

Result<int64_t> shares_value(const std::string& v) {
  if (iequals(v, "parent")) return make_error("Fairshare=parent is not built in Drover; give a number of shares");
  auto n = parse_int(v);
  if (!n || *n < 0 || *n > 2147483647) return make_error(fmt::format("Invalid Fairshare '{}': a number of shares from 0", v));
  return *n;
}

std::string lower_key(const std::string& k) { return to_lower(k); }

// sacctmgr's association limit keys (any case, with Slurm's aliases) by
// their canonical name; "" for another key.
std::string assoc_limit_key(const std::string& lower) {
  static const std::pair<const char*, const char*> kKeys[] = {
      {"grptres", "GrpTRES"},         {"grpjobs", "GrpJobs"},
      {"grpsubmitjobs", "GrpSubmitJobs"}, {"grpsubmit", "GrpSubmitJobs"},
      {"maxjobs", "MaxJobs"},         {"maxsubmitjobs", "MaxSubmitJobs"},
      {"maxsubmit", "MaxSubmitJobs"}, {"maxtres", "MaxTRES"},
      {"maxtresperjob", "MaxTRES"},   {"maxwall", "MaxWall"},
      {"maxwalldurationperjob", "MaxWall"},
      // Slurm's older spellings of one TRES of a list.
      {"maxcpus", "MaxCPUs"},         {"maxnodes", "MaxNodes"},
      {"grpcpus", "GrpCPUs"},         {"grpnodes", "GrpNodes"},
      {"grpmem", "GrpMem"}};
  for (const auto& [k, canonical] : kKeys) {
    if (lower == k) return canonical;
  }
  return "";
}

// One association limit set on `limits`: "-1" (or nothing) clears it;
// counts are whole and >= 0; a TRES list merges into the one there (an
// item "name=-1" drops that TRES); MaxWall takes Slurm's time syntax.
Status set_assoc_limit(google::protobuf::Map<std::string, std::string>& limits, const std::string& key,
                       const std::string& v) {
  // MaxCPUs=4 is MaxTRES=cpu=4, GrpMem=1000 is GrpTRES=mem=1000, and so on.
  static const std::tuple<const char*, const char*, const char*> kOneTres[] = {
      {"MaxCPUs", "MaxTRES", "cpu"}, {"MaxNodes", "MaxTRES", "node"}, {"GrpCPUs", "GrpTRES", "cpu"},
      {"GrpNodes", "GrpTRES", "node"}, {"GrpMem", "GrpTRES", "mem"}};
  for (const auto& [old, list, tres] : kOneTres) {
    if (key == old) return set_assoc_limit(limits, list, std::string(tres) + "=" + (v.empty() ? "-1" : v));
  }
  if (v.empty() || v == "-1") {
    limits.erase(key);
    return {};
  }
  if (key == "GrpTRES" || key == "MaxTRES") {
    TresMap now;
    if (auto it = limits.find(key); it != limits.end()) {
      if (auto t = parse_tres(it->second)) now = *t;
    }
    std::vector<std::string> keep;
    for (const auto& item : split(v, ',')) {
      auto eq = item.find('=');
      if (eq != std::string::npos && item.substr(eq + 1) == "-1") {
        now.erase(canonical_tres_name(item.substr(0, eq)));
      } else {
        keep.push_back(item);
      }
    }
    auto given = parse_tres(join(keep, ","));
    if (!given) return make_error(fmt::format("Invalid {} '{}': {}", key, v, given.error().message));
    for (const auto& [name, n] : *given) now[name] = n;
    if (now.empty()) limits.erase(key);
    else limits[key] = format_tres(now);
    return {};
  }
  if (key == "MaxWall") {
    auto t = parse_duration(v);
    if (!t) return make_error(fmt::format("Invalid MaxWall '{}': {}", v, t.error().message));
    limits[key] = format_duration_hms(*t);
    return {};
  }
  auto n = parse_int(v);
  if (!n || *n < 0) return make_error(fmt::format("Invalid {} '{}': a whole number from 0, or -1 to clear it", key, v));
  limits[key] = std::to_string(*n);
  return {};
}

core::AssocLimitSpec limit_spec(const google::protobuf::Map<std::string, std::string>& limits) {
  core::AssocLimitSpec s;
  auto get = [&](const char* k) -> const std::string* {
    auto it = limits.find(k);
    return it == limits.end() ? nullptr : &it->second;
  };
  auto count = [&](const char* k, int64_t& out) {
    if (const auto* v = get(k)) {
      if (auto n = parse_int(*v)) out = *n;
    }
  };
  if (const auto* v = get("GrpTRES")) {
    if (auto t = parse_tres(*v)) s.grp_tres = *t;
  }
  if (const auto* v = get("MaxTRES")) {
    if (auto t = parse_tres(*v)) s.max_tres_per_job = *t;
  }
  if (const auto* v = get("MaxWall")) {
    if (auto t = parse_duration(*v)) s.max_wall = *t;
  }
  count("GrpJobs", s.grp_jobs);
  count("GrpSubmitJobs", s.grp_submit_jobs);
  count("MaxJobs", s.max_jobs);
  count("MaxSubmitJobs", s.max_submit_jobs);
  return s;
}

template <class Rec>
std::string payload(const Rec& r) {
  std::string p;
  r.SerializeToString(&p);
  return p;
}

void put_qos(const v1::QosRecord& q, store::Batch& b) {
  b.put(store::Put{kQosTable, q.name(), payload(q), {}});
}
void put_account(const v1::AccountRecord& a, store::Batch& b) {
  b.put(store::Put{kAccountsTable, a.name(), payload(a), {}});
}
void put_user(const v1::UserRecord& u, store::Batch& b) {
  b.put(store::Put{kUsersTable, u.name(), payload(u), {}});
}

std::vector<std::string> qos_list(const std::string& v) {
  std::vector<std::string> out;
  for (const auto& q : split(v, ',')) {
    if (!q.empty()) out.push_back(q);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Result<config::QosConfig> qos_config(const v1::QosRecord& q) {
  return config::parse_qos_settings(q.name(), {q.settings().begin(), q.settings().end()});
}

AccountingDb AccountingDb::seed(const config::ClusterConfig& cfg) {
  AccountingDb db;
  // Slurm's accounting database starts with a QOS named normal, without
  // limits, which new associations default to; qos.conf may define it.
  bool has_normal = std::any_of(cfg.qos.begin(), cfg.qos.end(), [](const auto& q) { return q.name == "normal"; });
  if (!has_normal) {
    v1::QosRecord r;
    r.set_id(db.next_qos_id_++);
    r.set_name("normal");
    db.qos_["normal"] = std::move(r);
  }
  for (const auto& q : cfg.qos) {
    v1::QosRecord r;
    r.set_id(db.next_qos_id_++);
    r.set_name(q.name);
    for (const auto& [k, v] : qos_settings(q)) (*r.mutable_settings())[k] = v;
    db.qos_[q.name] = std::move(r);
  }
  std::vector<std::string> all = db.all_qos_names();
  std::string def = db.qos_.count("normal") ? "normal" : "";
  v1::AccountRecord root;
  root.set_name("root");
  root.set_description("default root account");
  root.set_organization("root");
  root.set_shares(1);
  for (const auto& q : all) root.add_qos(q);
  root.set_default_qos(def);
  db.accounts_["root"] = root;
  v1::UserRecord user;
  user.set_name("root");
  user.set_default_account("root");
  user.set_admin_level("Administrator");
  v1::UserAssoc* a = user.add_assocs();
  a->set_account("root");
  a->set_shares(1);
  for (const auto& q : all) a->add_qos(q);
  a->set_default_qos(def);
  db.users_["root"] = user;
  return db;
}

Result<AccountingDb> AccountingDb::load(const std::vector<std::string>& qos, const std::vector<std::string>& accounts,
                                        const std::vector<std::string>& users) {
  AccountingDb db;
  for (const auto& p : qos) {
    v1::QosRecord r;
    if (!r.ParseFromString(p)) return make_error("state store: a QOS record is unreadable");
    db.next_qos_id_ = std::max(db.next_qos_id_, r.id() + 1);
    db.qos_[r.name()] = std::move(r);
  }
  for (const auto& p : accounts) {
    v1::AccountRecord r;
    if (!r.ParseFromString(p)) return make_error("state store: an account record is unreadable");
    db.accounts_[r.name()] = std::move(r);
  }
  for (const auto& p : users) {
    v1::UserRecord r;
    if (!r.ParseFromString(p)) return make_error("state store: a user record is unreadable");
    db.users_[r.name()] = std::move(r);
  }
  return db;
}

void AccountingDb::put_all(store::Batch& b) const {
  for (const auto& [_, q] : qos_) put_qos(q, b);
  for (const auto& [_, a] : accounts_) put_account(a, b);
  for (const auto& [_, u] : users_) put_user(u, b);
}

std::vector<std::string> AccountingDb::all_qos_names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : qos_) out.push_back(name);
  return out;
}

const v1::UserAssoc* user_assoc(const v1::UserRecord& u, const std::string& account) {
  auto a = std::find_if(u.assocs().begin(), u.assocs().end(),
                        [&](const v1::UserAssoc& x) { return x.account() == account; });
  return a == u.assocs().end() ? nullptr : &*a;
}

const v1::UserRecord* AccountingDb::user(const std::string& name) const {
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : &it->second;
}

Result<AssocChange> AccountingDb::apply(const v1::ModifyAssociationsRequest& req, store::Batch& b) {
  if (req.verb() != "add" && req.verb() != "modify" && req.verb() != "delete") {
    return make_error("unknown action '" + req.verb() + "' (add, modify or delete)");
  }
  // Work on a copy: a refused change leaves nothing half done; dry runs keep nothing.
  AccountingDb next = *this;
  store::Batch batch;
  Result<AssocChange> change = make_error("unknown entity '" + req.entity() + "' (qos, account or user)");
  if (req.entity() == "qos") change = next.apply_qos(req, batch);
  if (req.entity() == "account") change = next.apply_account(req, batch);
  if (req.entity() == "user") change = next.apply_user(req, batch);
  if (!change || req.dry_run() || change->unchanged) return change;
  *this = std::move(next);
  for (auto& m : batch.mutations) b.mutations.push_back(std::move(m));
  return change;
}

namespace {

// An option sacctmgr's modify does not know: Slurm 22.05's lines (anchor
// cluster), printed as they are, then what the entity takes.
Error unknown_option(const v1::ModifyAssociationsRequest& req, const std::string& key, const std::string& value,
                     const std::string& takes) {
  if (req.verb() != "modify") return make_error("Unknown option: " + key + " (" + takes + ")");
  return make_error(" Unknown option: " + key + "=" + value + "\n Use keyword 'where' to modify condition\n (" + takes +
                    ")");
}

// A limit's value that does not read: a modify's bad MaxWall in Slurm 22.05's lines, else Drover's.
Error bad_limit(const v1::ModifyAssociationsRequest& req, const std::string& limit, const std::string& key,
                const std::string& value, const Error& why) {
  if (req.verb() != "modify" || limit != "MaxWall") return why;
  return make_error(" Bad MaxWall time format: " + key + "=" + value + "\n Unknown option: " + key + "=" + value +
                    "\n Use keyword 'where' to modify condition");
}

// Drops u's association with `account`, if it has one; a default account
// it was gives way to another of theirs, or none. Whether it had one.
bool drop_user_assoc(v1::UserRecord& u, const std::string& account) {
  auto* as = u.mutable_assocs();
  auto a = std::find_if(as->begin(), as->end(), [&](const v1::UserAssoc& x) { return x.account() == account; });
  if (a == as->end()) return false;
  as->erase(a);
  if (u.default_account() == account) u.set_default_account(as->empty() ? "" : as->begin()->account());
  return true;
}

AssocChange nothing(const std::string& verb) {
  return AssocChange{{verb == "add" ? " Nothing new added." : verb == "delete" ? " Nothing deleted" : " Nothing modified"},
                     true, ""};
}

// "qos", "qos+" and "qos-" (sacctmgr's `QOS+=name`, split at its '='),
// or the same of another list of QOS names ("preempt").
bool qos_list_key(const std::string& lower, char* op, std::string_view list = "qos") {
  if (lower == list) return *op = '=', true;
  if (lower.size() == list.size() + 1 && lower.starts_with(list) && (lower.back() == '+' || lower.back() == '-')) {
    return *op = lower.back(), true;
  }
  return false;
}

// sacctmgr's lines for an added QOS's settings: the description first (the
// QOS's name unless given), then each key as qos.conf spells it.
std::vector<std::string> qos_settings_lines(const std::string& last_name,
                                            const std::map<std::string, std::string>& set) {
  std::vector<std::string> out{" Settings"};
  auto d = set.find("Description");
  out.push_back(fmt::format("  {:<15}= {}", "Description", d == set.end() ? last_name : d->second));
  for (const auto& [k, v] : set) {
    if (k == "Description") continue;
    std::string shown = v;
    if (k == "MaxWall" || k == "GrpWall") {
      if (auto t = parse_duration(v)) shown = format_duration_hms(*t);
    }
    out.push_back(fmt::format("  {:<25}= {}", k, shown));
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> AccountingDb::edit_qos_list(const std::vector<std::string>& now, char op,
                                                             const std::string& value) const {
  std::vector<std::string> given = qos_list(value);
  for (const auto& q : given) {
    if (!qos_.count(q)) {
      std::vector<const v1::QosRecord*> by_id;
      for (const auto& [_, r] : qos_) by_id.push_back(&r);
      std::sort(by_id.begin(), by_id.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
      std::vector<std::string> valid;
      for (const auto* r : by_id) valid.push_back(r->name());
      return make_error(fmt::format("You gave a bad qos '{}'. Valid QOS's are {}", q, join(valid, ",")));
    }
  }
  if (op == '=') return given;
  std::set<std::string> out(now.begin(), now.end());
  for (const auto& q : given) op == '+' ? (void)out.insert(q) : (void)out.erase(q);
  return std::vector<std::string>(out.begin(), out.end());
}

Result<AssocChange> AccountingDb::apply_qos(const v1::ModifyAssociationsRequest& req, store::Batch& b) {
  if (req.names().empty()) return make_error("No QOS name given");
  AssocChange c;
  std::vector<std::string> touched;
  if (req.verb() == "delete") {
    for (const auto& n : req.names()) {
      if (!qos_.erase(n)) continue;
      b.erase(store::Erase{kQosTable, n});
      touched.push_back("  " + n);
      for (auto& [_, a] : accounts_) {
        auto* l = a.mutable_qos();
        auto it = std::find(l->begin(), l->end(), n);
        if (it != l->end()) l->erase(it), put_account(a, b);
      }
      // Nor may the others preempt it any more.
      for (auto& [_, q] : qos_) {
        auto it = q.settings().find("Preempt");
        if (it == q.settings().end()) continue;
        std::vector<std::string> list = qos_list(it->second);
        if (std::erase(list, n) == 0) continue;
        if (list.empty()) {
          q.mutable_settings()->erase("Preempt");
        } else {
          (*q.mutable_settings())["Preempt"] = join(list, ",");
        }
        put_qos(q, b);
      }
    }
    if (touched.empty()) return nothing(req.verb());
    c.lines.push_back(" Deleting QOS(s)...");
    c.lines.insert(c.lines.end(), touched.begin(), touched.end());
    return c;
  }
  std::map<std::string, std::string> canonical;  // key as qos.conf spells it -> value
  std::optional<std::pair<char, std::string>> preempt;  // Preempt=, Preempt+= or Preempt-=: names of QOS
  for (const auto& [k, v] : req.set()) {
    if (char op = 0; qos_list_key(to_lower(k), &op, "preempt")) {
      preempt.emplace(op, v);
      continue;
    }
    auto key = canonical_qos_key(k);
    if (!key) return key.error();
    canonical[*key] = v;
  }
  std::string last;
  for (const auto& n : req.names()) {
    bool exists = qos_.count(n) != 0;
    if (req.verb() == "add" ? exists : !exists) continue;
    v1::QosRecord r = exists ? qos_[n] : v1::QosRecord{};
    if (!exists) {
      r.set_id(next_qos_id_++);
      r.set_name(n);
    }
    for (const auto& [key, v] : canonical) {
      if (v.empty() || v == "-1") {
        r.mutable_settings()->erase(key);  // sacctmgr's "-1" clears a limit
      } else {
        (*r.mutable_settings())[key] = v;
      }
    }
    if (preempt) {
      auto had = r.settings().find("Preempt");
      auto list = edit_qos_list(had == r.settings().end() ? std::vector<std::string>{} : qos_list(had->second),
                                preempt->first, preempt->second);
      if (!list) return list.error();
      if (list->empty()) {
        r.mutable_settings()->erase("Preempt");
      } else {
        (*r.mutable_settings())["Preempt"] = join(*list, ",");
      }
    }
    if (auto ok = qos_config(r); !ok) return ok.error();
    qos_[n] = r;
    put_qos(r, b);
    touched.push_back("  " + n);
    last = n;
  }
  if (touched.empty()) return nothing(req.verb());
  c.lines.push_back(req.verb() == "add" ? " Adding QOS(s)" : " Modified qos...");
  c.lines.insert(c.lines.end(), touched.begin(), touched.end());
  if (auto m = canonical.find("PreemptMode"); m != canonical.end()) {
    const core::PreemptMode mode = config::preempt_mode_value(m->second);
    if (mode == core::PreemptMode::kSuspend || mode == core::PreemptMode::kGang) {
      // Kept as Slurm keeps it, but said: nothing would happen.
      c.lines.push_back(" Note: PreemptMode=" + m->second +
                        " is not built in Drover: jobs of this QOS are not preempted (REQUEUE and CANCEL are)");
    }
  }
  if (req.verb() == "add") {
    if (auto it = qos_[last].settings().find("Preempt"); preempt && it != qos_[last].settings().end()) {
      canonical["Preempt"] = it->second;
    }
    auto s = qos_settings_lines(last, canonical);
    c.lines.insert(c.lines.end(), s.begin(), s.end());
  }
  return c;
}

Result<AssocChange> AccountingDb::apply_account(const v1::ModifyAssociationsRequest& req, store::Batch& b) {
  if (req.names().empty()) return make_error("No account name given");
  AssocChange c;
  std::vector<std::string> touched;
  if (req.verb() == "delete") {
    // Every name is checked before anything changes: a refusal leaves all as it was.
    for (const auto& n : req.names()) {
      if (n == "root") return make_error("the root account cannot be deleted");
      if (!accounts_.count(n)) continue;
      for (const auto& [_, a] : accounts_) {
        if (a.parent() == n) return make_error("Account " + n + " has child account " + a.name() + "; delete it first");
      }
    }
    for (const auto& n : req.names()) {
      if (!accounts_.count(n)) continue;
      // Its users' associations go with it (the users stay; one whose
      // default it was takes another of theirs, or none), as Slurm 22.05's
      // sacctmgr deleted an account with a user on the anchor cluster.
      for (auto& [_, u] : users_) {
        if (drop_user_assoc(u, n)) put_user(u, b);
      }
      accounts_.erase(n);
      b.erase(store::Erase{kAccountsTable, n});
      touched.push_back("  " + n);
    }
    if (touched.empty()) return nothing(req.verb());
    c.lines.push_back(" Deleting accounts...");
    c.lines.insert(c.lines.end(), touched.begin(), touched.end());
    return c;
  }
  std::vector<std::string> assoc_lines;
  std::string parent_given, description, organization, fairshare_given;
  // A change to the account's association, not only to its Description/Organization (the account's own).
  const bool assoc_level = std::any_of(req.set().begin(), req.set().end(), [](const auto& kv) {
    const std::string k = lower_key(kv.first);
    return k != "description" && k != "organization";
  });
  // A per-user limit (Max*) set on an account reaches the associations below
  // it, which Slurm's sacctmgr lists with the account's.
  const bool per_user_limit = std::any_of(req.set().begin(), req.set().end(), [](const auto& kv) {
    return assoc_limit_key(lower_key(kv.first)).rfind("Max", 0) == 0;
  });
  bool sets_qos = false;  // QOS= or DefaultQOS= given: the associations below follow (inherit_qos_below)
  for (const auto& n : req.names()) {
    bool exists = accounts_.count(n) != 0;
    if (req.verb() == "add" ? exists : !exists) continue;
    v1::AccountRecord a = exists ? accounts_[n] : v1::AccountRecord{};
    if (!exists) {
      a.set_name(n);
      a.set_parent("root");
      a.set_shares(1);
      const v1::AccountRecord& root = accounts_.at("root");
      *a.mutable_qos() = root.qos();
      a.set_default_qos(root.default_qos());
      a.set_description(n);
      a.set_organization(n);
    }
    for (const auto& [k0, v] : req.set()) {
      std::string k = lower_key(k0);
      char op = 0;
      if (k == "parent") {
        if (!accounts_.count(v)) {
          if (req.verb() != "add") return make_error("Parent account " + v + " does not exist");
          // Slurm 22.05's sacctmgr's lines (anchor cluster), printed as they are.
          return make_error(" Parent account '" + v + "' doesn't exist on cluster " + cluster_ +
                            "\n        Contact your admin to add this account.\n No associations created.");
        }
        if (v == n) return make_error("an account cannot be its own parent");
        a.set_parent(v);
        parent_given = v;
      } else if (k == "description") {
        description = to_lower(v);  // Slurm 22.05 keeps both in lower case ("Allows only 2 gpus" is "allows ...")
        a.set_description(description);
      } else if (k == "organization") {
        organization = to_lower(v);
        a.set_organization(organization);
      } else if (k == "fairshare" || k == "shares") {
        auto s = shares_value(v);
        if (!s) return s.error();
        a.set_shares(*s);
        fairshare_given = v;
      } else if (qos_list_key(k, &op)) {
        auto l = edit_qos_list({a.qos().begin(), a.qos().end()}, op, v);
        if (!l) return l.error();
        a.clear_qos();
        for (const auto& q : *l) a.add_qos(q);
        a.set_qos_set(true);
        sets_qos = true;
      } else if (k == "defaultqos") {
        if (!qos_.count(v)) return make_error("QOS " + v + " does not exist");
        a.set_default_qos(v);
        a.set_default_qos_set(true);
        sets_qos = true;
      } else if (std::string lk = assoc_limit_key(k); !lk.empty()) {
        if (auto st = set_assoc_limit(*a.mutable_limits(), lk, v); !st) return bad_limit(req, lk, k0, v, st.error());
      } else {
        return unknown_option(req, k0, v,
                              "an account takes Parent, Description, Organization, Fairshare, QOS, DefaultQOS and "
                              "the limits GrpTRES, GrpJobs, GrpSubmitJobs, MaxJobs, MaxSubmitJobs, MaxTRES, MaxWall");
      }
    }
    // A default QOS the association's QOS list leaves out is refused, as Slurm 22.05 refused it.
    if (!a.default_qos().empty() && a.qos_size() > 0 &&
        std::find(a.qos().begin(), a.qos().end(), a.default_qos()) == a.qos().end()) {
      return make_error(fmt::format("These associations don't have access to their default qos: A = {} DefQOS = {} "
                                    "(keep {} in QOS=, or change DefaultQOS= first)",
                                    n, a.default_qos(), a.default_qos()));
    }
    if (!exists) {  // a new account's QOS are its parent's unless given (Slurm's inheritance)
      if (auto p = accounts_.find(a.parent()); p != accounts_.end()) {
        if (!a.qos_set()) *a.mutable_qos() = p->second.qos();
        if (!a.default_qos_set()) a.set_default_qos(p->second.default_qos());
      }
    }
    accounts_[n] = a;
    put_account(a, b);
    if (exists && sets_qos) inherit_qos_below(n, b);
    touched.push_back("  " + n);
    assoc_lines.push_back(req.verb() == "add" ? fmt::format("  A = {:<10.10} C = {:<10.10}", n, cluster_)
                                              : a.parent().empty() || n == "root"
                                                    ? fmt::format("  C = {:<10} A = {}", cluster_, n)
                                                    : fmt::format("  C = {:<10} A = {} of {}", cluster_, n, a.parent()));
    if (req.verb() == "modify" && per_user_limit) {
      for (const auto& [user, u] : users_) {
        for (const auto& ua : u.assocs()) {
          if (ua.account() == n) {
            assoc_lines.push_back(fmt::format("  C = {:<10} A = {:<20} U = {:<9}", cluster_, n, user));
          }
        }
      }
    }
  }
  if (touched.empty()) return nothing(req.verb());
  if (req.verb() == "modify") {
    // Description and Organization belong to the account, the rest to its association: Slurm names each.
    if (!description.empty() || !organization.empty()) {
      c.lines.push_back(" Modified accounts...");
      c.lines.insert(c.lines.end(), touched.begin(), touched.end());
    }
    if (assoc_level) {
      c.lines.push_back(" Modified account associations...");
      c.lines.insert(c.lines.end(), assoc_lines.begin(), assoc_lines.end());
    }
    return c;
  }
  c.lines.push_back(" Adding Account(s)");
  c.lines.insert(c.lines.end(), touched.begin(), touched.end());
  c.lines.push_back(" Settings");
  c.lines.push_back(fmt::format("  {:<16}= {}", "Description", description.empty() ? "Account Name" : description));
  c.lines.push_back(
      fmt::format("  {:<16}= {}", "Organization", organization.empty() ? "Parent/Account Name" : organization));
  c.lines.push_back(" Associations");
  c.lines.insert(c.lines.end(), assoc_lines.begin(), assoc_lines.end());
  // The association's settings, unless nothing but the name (and cluster) was given (Slurm 22.05's lines).
  if (req.set().empty()) return c;
  c.lines.push_back(" Settings");
  if (!fairshare_given.empty()) c.lines.push_back(fmt::format("  {:<14}= {}", "Fairshare", fairshare_given));
  c.lines.push_back(fmt::format("  {:<14}= {}", "Parent", parent_given.empty() ? "root" : parent_given));
  return c;
}

// The associations below an account whose QOS or DefaultQOS changed take
// them, unless they set their own, down the tree (Slurm's inheritance: on
// the anchor cluster `modify account research set QOS=...` changed its
// users' QOS too, but not that of a user given QOS= of their own).
void AccountingDb::inherit_qos_below(const std::string& account, store::Batch& b) {
  const v1::AccountRecord& top = accounts_.at(account);
  auto inherit = [&](auto& child) {
    bool changed = false;
    if (!child.qos_set() && !std::equal(child.qos().begin(), child.qos().end(), top.qos().begin(), top.qos().end())) {
      *child.mutable_qos() = top.qos();
      changed = true;
    }
    if (!child.default_qos_set() && child.default_qos() != top.default_qos()) {
      child.set_default_qos(top.default_qos());
      changed = true;
    }
    return changed;
  };
  std::vector<std::string> below;
  for (auto& [name, a] : accounts_) {
    if (a.parent() != account || name == account) continue;
    if (inherit(a)) put_account(a, b);
    below.push_back(name);
  }
  for (auto& [name, u] : users_) {
    bool changed = false;
    for (auto& ua : *u.mutable_assocs()) changed = (ua.account() == account && inherit(ua)) || changed;
    if (changed) put_user(u, b);
  }
  for (const auto& name : below) inherit_qos_below(name, b);
}

Result<AssocChange> AccountingDb::apply_user(const v1::ModifyAssociationsRequest& req, store::Batch& b) {
  if (req.names().empty()) return make_error("No user name given");
  AssocChange c;
  std::string where_account;
  for (const auto& [k, v] : req.where()) {
    if (lower_key(k) == "account" || lower_key(k) == "accounts") where_account = v;
  }
  if (req.verb() == "delete") {
    std::vector<std::string> touched;
    for (const auto& n : req.names()) {
      auto it = users_.find(n);
      if (it == users_.end()) continue;
      if (where_account.empty()) {
        users_.erase(it);
        b.erase(store::Erase{kUsersTable, n});
        touched.push_back("  " + n);
        continue;
      }
      if (!drop_user_assoc(it->second, where_account)) continue;
      put_user(it->second, b);
      touched.push_back(fmt::format("  C = {:<10} A = {:<10} U = {:<9}", cluster_, where_account, n));
    }
    if (touched.empty()) return nothing(req.verb());
    c.lines.push_back(where_account.empty() ? " Deleting users..." : " Deleting user associations...");
    c.lines.insert(c.lines.end(), touched.begin(), touched.end());
    return c;
  }
  std::string account, default_account, admin, default_qos;
  std::optional<int64_t> shares;
  std::vector<std::pair<char, std::string>> qos_edits;
  std::vector<std::pair<std::string, std::string>> limit_edits;  // canonical key, value
  for (const auto& [k0, v] : req.set()) {
    std::string k = lower_key(k0);
    char op = 0;
    if (k == "account" || k == "accounts") {
      account = v;
    } else if (k == "defaultaccount") {
      default_account = v;
    } else if (k == "fairshare" || k == "shares") {
      auto s = shares_value(v);
      if (!s) return s.error();
      shares = *s;
    } else if (k == "adminlevel") {
      admin = v;
    } else if (qos_list_key(k, &op)) {
      if (auto l = edit_qos_list({}, op, v); !l) return l.error();
      qos_edits.emplace_back(op, v);
    } else if (k == "defaultqos") {
      default_qos = v;
    } else if (std::string lk = assoc_limit_key(k); !lk.empty()) {
      google::protobuf::Map<std::string, std::string> scratch;  // checked here, applied per association below
      if (auto st = set_assoc_limit(scratch, lk, v); !st) return bad_limit(req, lk, k0, v, st.error());
      limit_edits.emplace_back(lk, v);
    } else {
      return unknown_option(req, k0, v,
                            "a user takes Account, DefaultAccount, Fairshare, QOS, DefaultQOS, AdminLevel and the "
                            "limits GrpTRES, GrpJobs, GrpSubmitJobs, MaxJobs, MaxSubmitJobs, MaxTRES, MaxWall");
    }
  }
  if (!where_account.empty()) account = where_account;
  // A modify's new default account that does not exist is said as one the
  // user is not in (below), as Slurm's sacctmgr says it.
  // An add's Account= may list several (`account=a1,a2`): an association with each.
  const std::vector<std::string> add_accounts =
      req.verb() == "add" && !account.empty() ? split(account, ',') : std::vector<std::string>{};
  for (const std::string& acc : req.verb() == "add" ? add_accounts : std::vector<std::string>{account}) {
    if (acc.empty() || accounts_.count(acc)) continue;
    if (req.verb() != "add") return make_error("Account " + acc + " does not exist");
    // Slurm 22.05's sacctmgr's lines (anchor cluster): the last depends on whether the user exists.
    const bool known = std::all_of(req.names().begin(), req.names().end(), [&](const std::string& n) {
      return users_.count(n) > 0;
    });
    return make_error(" This account '" + acc + "' doesn't exist.\n        Contact your admin to add this account.\n" +
                      (known ? " Nothing new added." : " No associations or wckeys created."));
  }
  if (req.verb() != "modify" && !default_account.empty() && !accounts_.count(default_account)) {
    return make_error("Account " + default_account + " does not exist");
  }
  if (!default_qos.empty() && !qos_.count(default_qos)) return make_error("QOS " + default_qos + " does not exist");
  auto apply_assoc_edits = [&](v1::UserAssoc& a) -> Result<void> {
    for (const auto& [op, v] : qos_edits) {
      auto l = edit_qos_list({a.qos().begin(), a.qos().end()}, op, v);
      if (!l) return l.error();
      a.clear_qos();
      for (const auto& q : *l) a.add_qos(q);
      a.set_qos_set(true);
    }
    if (!default_qos.empty()) {
      a.set_default_qos(default_qos);
      a.set_default_qos_set(true);
    }
    for (const auto& [k, v] : limit_edits) {
      if (auto st = set_assoc_limit(*a.mutable_limits(), k, v); !st) return st.error();
    }
    return {};
  };
  std::vector<std::string> new_users, new_assocs, modified_users, modified_assocs, not_members;
  const bool user_level = !admin.empty() || !default_account.empty();
  const bool assoc_level = shares || !qos_edits.empty() || !default_qos.empty() || !limit_edits.empty();
  for (const auto& n : req.names()) {
    bool exists = users_.count(n) != 0;
    if (req.verb() == "modify" && !exists) continue;
    v1::UserRecord u = exists ? users_[n] : v1::UserRecord{};
    u.set_name(n);
    if (!admin.empty()) u.set_admin_level(admin);
    if (u.admin_level().empty()) u.set_admin_level("None");
    std::string acc = account.empty() && req.verb() == "add" ? default_account : account;
    if (req.verb() == "add" && acc.empty()) return make_error("Need name of account to add user " + n + " to (Account=)");
    auto* as = u.mutable_assocs();
    if (req.verb() == "add") {
      bool added = false;
      for (const std::string& one : account.empty() ? std::vector<std::string>{acc} : add_accounts) {
        if (user_assoc(u, one)) continue;  // already there: Slurm's "Nothing new added."
        v1::UserAssoc* a = u.add_assocs();
        const v1::AccountRecord& parent = accounts_.at(one);
        a->set_account(one);
        a->set_shares(shares.value_or(1));
        *a->mutable_qos() = parent.qos();
        a->set_default_qos(parent.default_qos());
        if (auto ok = apply_assoc_edits(*a); !ok) return ok.error();
        if (u.default_account().empty()) u.set_default_account(default_account.empty() ? one : default_account);
        new_assocs.push_back(fmt::format("  U = {:<9.9} A = {:<10.10} C = {:<10.10}", n, one, cluster_));
        added = true;
      }
      if (!added) continue;
      if (!exists) new_users.push_back("  " + n);
    } else {
      // modify: the named account's association (or every one), and the user's defaults.
      std::vector<std::string> mine;
      for (auto& a : *as) {
        if (!acc.empty() && a.account() != acc) continue;
        if (shares) a.set_shares(*shares);
        if (auto ok = apply_assoc_edits(a); !ok) return ok.error();
        mine.push_back(fmt::format("  C = {:<10} A = {:<20} U = {:<9}", cluster_, a.account(), n));
      }
      std::sort(mine.begin(), mine.end());  // by account, as Slurm's lists them
      modified_assocs.insert(modified_assocs.end(), mine.begin(), mine.end());
      modified_users.push_back("  " + n);
    }
    if (!default_account.empty()) {
      const bool member = user_assoc(u, default_account) != nullptr;
      if (!member && req.verb() == "modify") {
        not_members.push_back("  U = " + n + " C = " + cluster_);
        continue;
      }
      if (!member) return make_error("User " + n + " is not in account " + default_account + " (add it first)");
      u.set_default_account(default_account);
    }
    users_[n] = u;
    put_user(u, b);
  }
  // Slurm 22.05's words (anchor cluster), on stdout, exit 1, nothing changed.
  if (!not_members.empty()) {
    AssocChange refused{{" Can't modify because these users aren't associated with new default account '" +
                         default_account + "'..."},
                        true, ""};
    refused.lines.insert(refused.lines.end(), not_members.begin(), not_members.end());
    return refused;
  }
  if (req.verb() == "add") {
    if (new_assocs.empty()) return nothing(req.verb());
    if (!new_users.empty()) c.lines.push_back(" Adding User(s)");
    c.lines.insert(c.lines.end(), new_users.begin(), new_users.end());
    c.lines.push_back(" Associations =");
    c.lines.insert(c.lines.end(), new_assocs.begin(), new_assocs.end());
    c.lines.push_back(" Non Default Settings");
    if (shares) c.lines.push_back(fmt::format("  {:<14}= {}", "Fairshare", *shares));
    return c;
  }
  if (modified_users.empty()) return nothing(req.verb());
  if (user_level) {
    c.lines.push_back(" Modified users...");
    c.lines.insert(c.lines.end(), modified_users.begin(), modified_users.end());
  }
  if (assoc_level && !modified_assocs.empty()) {
    c.lines.push_back(" Modified user associations...");
    c.lines.insert(c.lines.end(), modified_assocs.begin(), modified_assocs.end());
  }
  if (c.lines.empty()) return nothing(req.verb());
  return c;
}

std::vector<core::QosSpec> AccountingDb::qos_specs() const {
  std::vector<const v1::QosRecord*> by_id;
  for (const auto& [_, q] : qos_) by_id.push_back(&q);
  std::sort(by_id.begin(), by_id.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
  std::vector<core::QosSpec> out;
  for (const auto* q : by_id) {
    if (auto c = qos_config(*q)) out.push_back(config::core_qos(*c));
  }
  return out;
}

std::vector<core::Association> AccountingDb::associations(
    const std::map<std::pair<std::string, std::string>, double>& usage) const {
  std::vector<core::Association> out;
  for (const auto& [name, a] : accounts_) {
    if (name == "root") continue;
    core::Association x;
    x.account = name;
    x.parent = a.parent();
    x.shares = static_cast<uint32_t>(a.shares());
    out.push_back(x);
  }
  for (const auto& [name, u] : users_) {
    for (const auto& a : u.assocs()) {
      core::Association x;
      x.account = a.account();
      x.user = name;
      x.shares = static_cast<uint32_t>(a.shares());
      auto it = usage.find({a.account(), name});
      x.usage = it == usage.end() ? 0 : it->second;
      out.push_back(x);
    }
  }
  return out;
}

std::vector<core::AssocLimitSpec> AccountingDb::assoc_limits() const {
  bool any = std::any_of(accounts_.begin(), accounts_.end(), [](const auto& a) { return !a.second.limits().empty(); });
  for (const auto& [_, u] : users_) {
    for (const auto& a : u.assocs()) any = any || !a.limits().empty();
  }
  if (!any) return {};
  std::vector<core::AssocLimitSpec> out;
  std::map<std::string, int32_t> at;
  for (const auto& [name, a] : accounts_) {
    at[name] = static_cast<int32_t>(out.size());
    core::AssocLimitSpec s = limit_spec(a.limits());
    s.account = name;
    out.push_back(std::move(s));
  }
  for (const auto& [name, a] : accounts_) {
    auto p = at.find(a.parent());
    if (p != at.end() && name != "root") out[static_cast<size_t>(at[name])].parent = p->second;
  }
  for (const auto& [name, u] : users_) {
    for (const auto& a : u.assocs()) {
      core::AssocLimitSpec s = limit_spec(a.limits());
      s.account = a.account();
      s.user = name;
      auto p = at.find(a.account());
      s.parent = p == at.end() ? -1 : p->second;
      out.push_back(std::move(s));
    }
  }
  return out;
}

v1::GetAssociationsReply AccountingDb::snapshot() const {
  v1::GetAssociationsReply r;
  std::vector<const v1::QosRecord*> by_id;
  for (const auto& [_, q] : qos_) by_id.push_back(&q);
  std::sort(by_id.begin(), by_id.end(), [](auto* a, auto* b) { return a->id() < b->id(); });
  for (const auto* q : by_id) *r.add_qos() = *q;
  for (const auto& [_, a] : accounts_) *r.add_accounts() = a;
  for (const auto& [_, u] : users_) *r.add_users() = u;
  return r;
}

}  // namespace drover::ctld
