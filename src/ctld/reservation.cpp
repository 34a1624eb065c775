// Advance reservations: scontrol create|update|delete ReservationName=,
// scontrol show reservation and sinfo -T, sbatch --reservation. Slurm
// 22.05's words and behaviour, checked on the anchor cluster: whole nodes
// over a window; the jobs that name the reservation run only there, and only
// while it is active (they may run on past its end); every other job uses
// those nodes only around the window (the planner sees them closed then).
// Kept in the store (kReservationsMeta) before scontrol hears back.
#include <pwd.h>

#include <algorithm>

#include "common/duration.hpp"
#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "ctld/persist.hpp"
#include "ctld/state.hpp"

namespace drover::ctld {
namespace {

// gRPC codes; scontrol words each kind as Slurm's scontrol does.
constexpr int kInvalidArgument = 3;  // what Slurm's scontrol refuses itself
constexpr int kPermissionDenied = 7;
constexpr int kFailedPrecondition = 9;  // what slurmctld refuses

ResvError local(std::string m) { return {kInvalidArgument, std::move(m)}; }
ResvError refused(std::string m) { return {kFailedPrecondition, std::move(m)}; }

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Users=a,b / Users=+c / Users=-a (also Users+=c, Users-=a): the list after.
std::vector<std::string> edit_list(std::vector<std::string> list, char op, const std::string& value) {
  std::vector<std::string> names;
  for (auto& n : split(value, ',')) {
    if (!n.empty()) names.push_back(n);
  }
  if (op == '=') return names;
  for (const auto& n : names) {
    auto it = std::find(list.begin(), list.end(), n);
    if (op == '+' && it == list.end()) list.push_back(n);
    if (op == '-' && it != list.end()) list.erase(it);
  }
  return list;
}

// The key without a trailing +/- and the operation: "Users+"/"+alice" -> '+'.
char operation(std::string& key, std::string& value) {
  if (!key.empty() && (key.back() == '+' || key.back() == '-')) {
    char op = key.back();
    key.pop_back();
    return op;
  }
  if (!value.empty() && (value.front() == '+' || value.front() == '-')) {
    char op = value.front();
    value.erase(0, 1);
    return op;
  }
  return '=';
}

// Flags Drover honours; Slurm's others are refused by name.
const char* const kSlurmFlags[] = {"ANY_NODES",   "DAILY",       "FLEX",         "FIRST_CORES",   "HOURLY",
                                   "LICENSE_ONLY", "MAGNETIC",   "NO_HOLD_JOBS_AFTER_END", "PART_NODES",
                                   "PURGE_COMP",  "REPLACE",     "REPLACE_DOWN", "NO_HOLD_JOBS",  "STATIC_ALLOC",
                                   "TIME_FLOAT",  "WEEKDAY",     "WEEKEND",      "WEEKLY",        "USER_DELETE"};

std::optional<ResvError> apply_flags(Reservation& r, char op, const std::string& value) {
  for (const auto& raw : split(value, ',')) {
    std::string f = to_upper(trim(raw));
    if (f.empty()) continue;
    bool on = op != '-';
    if (f == "MAINT") r.maint = on;
    else if (f == "OVERLAP") r.overlap = on;
    else if (f == "IGNORE_JOBS") r.ignore_jobs = on;
    else if (f == "SPEC_NODES") continue;  // shown for Nodes=; nothing to set
    else if (std::find(std::begin(kSlurmFlags), std::end(kSlurmFlags), f) != std::end(kSlurmFlags)) {
      return local("Drover does not support the reservation flag " + f +
                   " (it supports MAINT, OVERLAP and IGNORE_JOBS)");
    } else {
      return local("Error parsing flags " + raw + ".");
    }
  }
  return std::nullopt;
}

bool user_exists(const std::string& name) {
  struct passwd pw {};
  struct passwd* out = nullptr;
  std::vector<char> buf(16384);
  return getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &out) == 0 && out != nullptr;
}

std::vector<std::string> flag_names(const Reservation& r) {
  std::vector<std::string> f;
  if (r.maint) f.push_back("MAINT");
  if (r.overlap) f.push_back("OVERLAP");
  if (r.ignore_jobs) f.push_back("IGNORE_JOBS");
  if (r.spec_nodes) f.push_back("SPEC_NODES");
  return f;
}

// Nodes=hostlist: the nodes, ascending and unique, or Slurm's refusal.
Result<std::vector<core::NodeIndex>, ResvError> reserved_nodes(const core::Cluster& c, const std::string& expr) {
  auto picked = node_indices(c, expr);
  if (!picked) return refused("Invalid node name specified");
  std::sort(picked->begin(), picked->end());
  picked->erase(std::unique(picked->begin(), picked->end()), picked->end());
  return std::move(*picked);
}

// The nodes of PartitionName= (of the cluster without one), ascending.
std::vector<core::NodeIndex> pool_of(const core::Cluster& c, const std::string& partition) {
  int32_t p = partition.empty() ? -1 : c.find_partition(partition);
  std::vector<core::NodeIndex> pool;
  if (p >= 0) {
    pool = c.partitions[static_cast<size_t>(p)].nodes;
  } else {
    for (core::NodeIndex i = 0; i < static_cast<core::NodeIndex>(c.nodes.size()); ++i) pool.push_back(i);
  }
  std::sort(pool.begin(), pool.end());
  return pool;
}

bool overlaps(const Reservation& a, const Reservation& b) {
  if (a.start >= b.end || b.start >= a.end) return false;
  std::vector<core::NodeIndex> both;
  std::set_intersection(a.nodes.begin(), a.nodes.end(), b.nodes.begin(), b.nodes.end(), std::back_inserter(both));
  return !both.empty();
}

// Two reservations that may not share a node over their windows: neither
// OVERLAP nor MAINT (Slurm 22.05 on the anchor cluster took a MAINT
// reservation over another's nodes and another over its).
bool collide(const Reservation& a, const Reservation& b) {
  return !a.overlap && !b.overlap && !a.maint && !b.maint && overlaps(a, b);
}

}  // namespace

Result<std::vector<core::NodeIndex>> node_indices(const core::Cluster& c, std::string_view expr) {
  auto names = hostlist_expand(expr);
  if (!names) return make_error("Invalid node name specified");
  std::vector<core::NodeIndex> out;
  for (const auto& name : *names) {
    core::NodeIndex i = c.find_node(name);
    if (i < 0) return make_error("Invalid node name specified: " + name);
    out.push_back(i);
  }
  return out;
}

bool Reservation::admits(const std::string& user, const std::string& account) const {
  return contains(users, user) || (!account.empty() && contains(accounts, account));
}

// -------------------------------------------------------------- changes --

Result<std::string, ResvError> ControllerState::change_reservation(const Caller& who,
                                                                   const v1::ChangeReservationRequest& req,
                                                                   int64_t now, Effects& fx) {
  if (!who.privileged) {
    // Slurm 22.05's words for a user's reservation change (anchor cluster), then why.
    return ResvError{kPermissionDenied, std::string(kInvalidUserId) + "\ndrover: only root, SlurmUser or an operator "
                                                                       "may change reservations; you are " +
                                            who.describe()};
  }
  switch (req.action()) {
    case v1::RESERVATION_CREATE: return create_reservation(req, now, fx);
    case v1::RESERVATION_UPDATE: return update_reservation(req, now, fx);
    case v1::RESERVATION_DELETE: return delete_reservation(req.name(), now, fx);
    default: return local("unknown reservation action");
  }
}

namespace {

// StartTime/EndTime/Duration as given, for the caller to resolve.
struct TimeWords {
  std::optional<int64_t> start, end, duration;
};

// One Key=Value of create or update, applied to r.
std::optional<ResvError> read_setting(Reservation& r, TimeWords& t, std::string key, std::string value,
                                      const core::Cluster& c, int64_t now, std::string& nodes_expr,
                                      std::optional<int64_t>& node_cnt) {
  // Users, Accounts and Flags take +/- (Users=+u, Users-=u); other keys as given.
  std::string list_key = key, list_value = value;
  const char op = operation(list_key, list_value);
  const bool is_list = iequals(list_key, "Users") || iequals(list_key, "User") || iequals(list_key, "Accounts") ||
                       iequals(list_key, "Account") || iequals(list_key, "Flags") || iequals(list_key, "Flag");
  if (is_list) {
    key = list_key;
    value = list_value;
  }
  if (iequals(key, "ReservationName") || iequals(key, "Reservation")) {
    if (value.empty() || value.find_first_of(" \t\n,") != std::string::npos) {
      return local("Invalid reservation name " + value + ".");
    }
    r.name = value;
  } else if (iequals(key, "StartTime")) {
    auto v = parse_timestamp(value, now);
    if (!v) return local("Invalid start time " + value + ": " + v.error().message);
    t.start = *v;
  } else if (iequals(key, "EndTime")) {
    auto v = parse_timestamp(value, now);
    if (!v) return local("Invalid end time " + value + ": " + v.error().message);
    t.end = *v;
  } else if (iequals(key, "Duration")) {
    auto v = parse_duration(value);
    if (!v) return local("Invalid duration " + value + ": " + v.error().message);
    // UNLIMITED: a year, as Slurm 22.05 made it (Duration=365-00:00:00).
    t.duration = *v == kInfinite ? 365 * 86400 : *v;
  } else if (iequals(key, "Nodes") || iequals(key, "NodeList")) {
    nodes_expr = value;
  } else if (iequals(key, "NodeCnt") || iequals(key, "NodeCount")) {
    auto v = parse_int(value);
    if (!v || *v <= 0) return local("Invalid node count " + value + ".");
    node_cnt = *v;
  } else if (iequals(key, "PartitionName") || iequals(key, "Partition")) {
    if (!value.empty() && c.find_partition(value) < 0) return refused("Invalid partition name specified");
    r.partition = value;
  } else if (iequals(key, "Users") || iequals(key, "User")) {
    r.users = edit_list(r.users, op, value);
    for (const auto& u : r.users) {
      if (!user_exists(u)) return refused("Invalid user id");
    }
  } else if (iequals(key, "Accounts") || iequals(key, "Account")) {
    r.accounts = edit_list(r.accounts, op, value);
  } else if (iequals(key, "Flags") || iequals(key, "Flag")) {
    return apply_flags(r, op, value);
  } else if (iequals(key, "CoreCnt") || iequals(key, "Licenses") || iequals(key, "BurstBuffer") ||
             iequals(key, "Watts") || iequals(key, "Features") || iequals(key, "TRES") || iequals(key, "Groups") ||
             iequals(key, "MaxStartDelay")) {
    return local("Drover does not support " + key + "= in reservations (they hold whole nodes: Nodes= or NodeCnt=)");
  } else {
    return local("Invalid input: " + key + (value.empty() ? "" : "=" + value));
  }
  return std::nullopt;
}

}  // namespace

std::optional<ResvError> ControllerState::reservation_conflict(const Reservation& r, int64_t now) const {
  if (r.end <= r.start) return refused("Invalid time specified\ndrover: the reservation's end is not after its start");
  if (r.end <= now) return refused("Invalid time specified\ndrover: the reservation would have ended already");
  for (const auto& [name, other] : reservations_) {
    if (name == r.name) continue;
    if (collide(r, other)) {
      return refused("Requested reservation overlaps with another reservation");
    }
  }
  if (r.ignore_jobs) return std::nullopt;
  std::vector<uint8_t> in(nodes_.size(), 0);
  for (core::NodeIndex n : r.nodes) in[static_cast<size_t>(n)] = 1;
  for (core::JobId id : active_) {
    const Job& j = jobs_.at(id);
    if (!holds_resources(j) || j.rec.desc().reservation() == r.name) continue;
    const int64_t end = j.rec.time_limit_s() == kInfinite ? INT64_MAX : j.rec.start_time() + agent_time_limit(j.rec);
    if (end <= r.start) continue;
    for (const auto& t : j.alloc.nodes) {
      if (t.node >= 0 && static_cast<size_t>(t.node) < in.size() && in[static_cast<size_t>(t.node)]) {
        return refused("Requested nodes are busy");
      }
    }
  }
  return std::nullopt;
}

std::optional<ResvError> ControllerState::unknown_reservation_member(const Reservation& r) const {
  // An account the accounting does not have; under AccountingStorageEnforce,
  // a user without an association (Slurm 22.05: Users=bob, a Unix user
  // sacctmgr never added, refused with these words).
  constexpr const char* kInvalid = "Invalid account or account/partition combination specified";
  for (const auto& a : r.accounts) {
    if (!acct_.has_account(a)) return refused(kInvalid);
  }
  if (settings_.enforce_associations) {
    for (const auto& u : r.users) {
      const v1::UserRecord* rec = acct_.user(u);
      if (!rec || rec->assocs().empty()) return refused(kInvalid);
    }
  }
  return std::nullopt;
}

std::optional<ResvError> ControllerState::fill_reservation(Reservation& r, int64_t count, int64_t now) const {
  // NodeCnt=N: the nodes it has, then the first others (of the partition, or of the cluster) that are up,
  // free over the window of other reservations and, unless IGNORE_JOBS, of running jobs.
  if (static_cast<int64_t>(r.nodes.size()) > count) r.nodes.resize(static_cast<size_t>(count));
  for (core::NodeIndex i : pool_of(bridge_->cluster(), r.partition)) {
    if (static_cast<int64_t>(r.nodes.size()) == count) break;
    if (std::find(r.nodes.begin(), r.nodes.end(), i) != r.nodes.end()) continue;
    const NodeRt& n = nodes_[static_cast<size_t>(i)];
    if (n.down || n.drain || n.fail || !n.responding) continue;
    Reservation one = r;
    one.nodes = {i};
    if (!reservation_conflict(one, now)) r.nodes.push_back(i);
  }
  if (static_cast<int64_t>(r.nodes.size()) < count) return refused("Requested nodes are busy");
  return std::nullopt;
}

Result<std::string, ResvError> ControllerState::create_reservation(const v1::ChangeReservationRequest& req,
                                                                   int64_t now, Effects& fx) {
  const core::Cluster& c = bridge_->cluster();
  Reservation r;
  TimeWords t;
  std::string nodes_expr;
  std::optional<int64_t> node_cnt;
  for (const auto& s : req.settings()) {
    if (auto e = read_setting(r, t, s.key(), s.value(), c, now, nodes_expr, node_cnt)) return *e;
  }
  // What Slurm's scontrol asks for before it sends anything, in its order.
  if (!t.start) return local("A start time must be given.");
  if (!t.end && !t.duration) return local("An end time or duration must be given.");
  if (nodes_expr.empty() && !node_cnt) {
    return local("CoreCnt, Nodes, NodeCnt, BurstBuffer, Licenses or Watts must be specified.");
  }
  if (r.users.empty() && r.accounts.empty()) return local("Either Users/Groups and/or Accounts must be specified.");
  r.start = *t.start;
  r.end = t.end ? *t.end : r.start + *t.duration;
  if (auto e = unknown_reservation_member(r)) return *e;
  if (r.name.empty()) {
    r.name = (r.users.empty() ? r.accounts.front() : r.users.front()) + "_" + std::to_string(reservation_seq_ + 1);
  }
  // NodeCnt= without PartitionName= takes the default partition's nodes and shows it, as Slurm 22.05's did.
  if (nodes_expr.empty() && r.partition.empty() && bridge_->default_partition() >= 0) {
    r.partition = c.partitions[static_cast<size_t>(bridge_->default_partition())].name;
  }
  if (!nodes_expr.empty()) {
    std::vector<core::NodeIndex> picked;
    if (iequals(nodes_expr, "ALL")) {
      picked = pool_of(c, r.partition);
    } else {
      auto listed = reserved_nodes(c, nodes_expr);
      if (!listed) return listed.error();
      picked = std::move(*listed);
    }
    r.nodes = std::move(picked);
    r.spec_nodes = true;
  } else if (auto e = fill_reservation(r, *node_cnt, now)) {
    return *e;
  }
  if (auto e = reservation_conflict(r, now)) return *e;
  // A name in use: Slurm 22.05 said so only once the nodes were free of the
  // other reservations, the one of that name included (else it overlaps).
  if (auto same = reservations_.find(r.name); same != reservations_.end()) {
    return refused(collide(r, same->second) ? "Requested reservation overlaps with another reservation"
                                            : "Duplicate reservation name");
  }
  reservation_seq_ += 1;
  r.created = reservation_seq_;
  const std::string name = r.name;
  reservations_[name] = std::move(r);
  put_reservations(now, fx);
  fx.reschedule = true;
  return name;
}

Result<std::string, ResvError> ControllerState::update_reservation(const v1::ChangeReservationRequest& req,
                                                                   int64_t now, Effects& fx) {
  auto it = reservations_.find(req.name());
  if (it == reservations_.end()) return refused("Requested reservation is invalid");
  const core::Cluster& c = bridge_->cluster();
  Reservation r = it->second;
  TimeWords t;
  std::string nodes_expr;
  std::optional<int64_t> node_cnt;
  for (const auto& s : req.settings()) {
    std::string key = s.key();
    if (iequals(key, "ReservationName") || iequals(key, "Reservation")) continue;  // names the one to change
    if (auto e = read_setting(r, t, key, s.value(), c, now, nodes_expr, node_cnt)) return *e;
  }
  if (r.users.empty() && r.accounts.empty()) return refused("Reservation request lacks users, groups or accounts");
  if (auto e = unknown_reservation_member(r)) return *e;
  const int64_t length = r.end - r.start;
  if (t.start) r.start = *t.start;
  if (t.end) r.end = *t.end;
  else if (t.duration) r.end = r.start + *t.duration;
  else if (t.start) r.end = r.start + length;  // a new start keeps the length
  if (!nodes_expr.empty()) {
    auto listed = reserved_nodes(c, nodes_expr);
    if (!listed) return listed.error();
    r.nodes = std::move(*listed);
    r.spec_nodes = true;
  } else if (node_cnt) {
    if (auto e = fill_reservation(r, *node_cnt, now)) return *e;
  }
  if (auto e = reservation_conflict(r, now)) return *e;
  it->second = std::move(r);
  put_reservations(now, fx);
  fx.reschedule = true;
  return it->first;
}

Result<std::string, ResvError> ControllerState::delete_reservation(const std::string& name, int64_t now,
                                                                   Effects& fx) {
  auto it = reservations_.find(name);
  if (it == reservations_.end()) return refused("Requested reservation is invalid");
  for (core::JobId id : active_) {
    if (jobs_.at(id).rec.desc().reservation() == name) return refused("Requested reservation is in use");
  }
  reservations_.erase(it);
  put_reservations(now, fx);
  fx.reschedule = true;
  return name;
}

void ControllerState::reservation_windows(int64_t now, Effects& fx) {
  const int64_t last = reservations_checked_;
  reservations_checked_ = now;
  bool changed = false;
  for (auto it = reservations_.begin(); it != reservations_.end();) {
    const Reservation& r = it->second;
    if (r.start > last && r.start <= now) fx.reschedule = true;  // its jobs may start
    if (r.end <= now) {
      it = reservations_.erase(it);
      changed = true;
      fx.reschedule = true;  // its nodes are everyone's again
    } else {
      ++it;
    }
  }
  if (changed) put_reservations(now, fx);
}

// ----------------------------------------------------------- durability --

// Its event (events.cpp): window, name, creation number, flags, nodes and their TRES.
v1::ClusterEvent ControllerState::reservation_event(const Reservation& r) const {
  const core::Cluster& c = bridge_->cluster();
  v1::ClusterEvent e;
  e.set_reservation(r.name);
  e.set_reservation_id(r.created);
  e.set_start_time(r.start);
  e.set_end_time(r.end);
  e.set_flags(join(flag_names(r), ","));
  TresMap tres;
  std::vector<std::string> names;
  for (core::NodeIndex i : r.nodes) {
    core::add_node_tres(c.nodes[static_cast<size_t>(i)], tres);
    names.push_back(c.nodes[static_cast<size_t>(i)].name);
  }
  tres["billing"] = tres["cpu"];
  e.mutable_tres()->insert(tres.begin(), tres.end());
  e.set_nodes(hostlist_compress_slurm_sorted(names));
  return e;
}

void ControllerState::put_reservations(int64_t now, Effects& fx) {
  fx.batch.set_meta(kReservationsMeta, reservations_text());
  fx.batch.set_meta(kReservationSeqMeta, reservation_seq_);
  reservation_events(now, fx);
}

std::string ControllerState::reservations_text() const {
  const core::Cluster& c = bridge_->cluster();
  std::string out;
  for (const auto& [name, r] : reservations_) {
    std::vector<std::string> nodes;
    for (core::NodeIndex n : r.nodes) nodes.push_back(c.nodes[static_cast<size_t>(n)].name);
    out += name + "\t" + std::to_string(r.start) + "\t" + std::to_string(r.end) + "\t" + join(nodes, ",") + "\t" +
           join(r.users, ",") + "\t" + join(r.accounts, ",") + "\t" + join(flag_names(r), ",") + "\t" + r.partition + "\t" + std::to_string(r.created) +
           "\n";
  }
  return out;
}

std::vector<std::string> ControllerState::restore_reservations(const std::string& text, int64_t seq) {
  std::vector<std::string> notes;
  const core::Cluster& c = bridge_->cluster();
  reservations_.clear();
  reservation_seq_ = seq;
  for (const auto& line : split(text, '\n')) {
    if (line.empty()) continue;
    auto f = split(line, '\t');
    if (f.size() < 8) {
      notes.push_back("stored reservation line not understood, left out: " + line);
      continue;
    }
    Reservation r;
    r.name = f[0];
    auto start = parse_int(f[1]);
    auto end = parse_int(f[2]);
    if (!start || !end) {
      notes.push_back("stored reservation " + r.name + " has no readable window, left out");
      continue;
    }
    r.start = *start;
    r.end = *end;
    for (const auto& n : split(f[3], ',')) {
      if (n.empty()) continue;
      core::NodeIndex i = c.find_node(n);
      if (i < 0) {
        notes.push_back("reservation " + r.name + ": node " + n + " is no longer in slurm.conf; left out of it");
        continue;
      }
      r.nodes.push_back(i);
    }
    std::sort(r.nodes.begin(), r.nodes.end());
    for (const auto& u : split(f[4], ',')) {
      if (!u.empty()) r.users.push_back(u);
    }
    for (const auto& a : split(f[5], ',')) {
      if (!a.empty()) r.accounts.push_back(a);
    }
    for (const auto& fl : split(f[6], ',')) {
      r.maint = r.maint || fl == "MAINT";
      r.overlap = r.overlap || fl == "OVERLAP";
      r.ignore_jobs = r.ignore_jobs || fl == "IGNORE_JOBS";
      r.spec_nodes = r.spec_nodes || fl == "SPEC_NODES";
    }
    r.partition = f[7];
    if (f.size() > 8) r.created = parse_int(f[8]).value_or(0);
    reservations_[r.name] = std::move(r);
  }
  // Their events as stored: a reservation deleted early from now on ends then.
  resv_events_.clear();
  for (const auto& [name, r] : reservations_) {
    v1::ClusterEvent e = reservation_event(r);
    resv_events_.emplace(event_key(e), std::move(e));
  }
  return notes;
}

// -------------------------------------------------------------- display --

std::vector<v1::ReservationInfo> ControllerState::reservation_infos(int64_t now) const {
  const core::Cluster& c = bridge_->cluster();
  std::vector<const Reservation*> order;
  for (const auto& [name, r] : reservations_) order.push_back(&r);
  // Slurm lists them in the order they were created (not by start: checked on the anchor cluster).
  std::stable_sort(order.begin(), order.end(), [](const Reservation* a, const Reservation* b) {
    return a->created < b->created;
  });
  std::vector<v1::ReservationInfo> out;
  for (const Reservation* r : order) {
    v1::ReservationInfo i;
    i.set_name(r->name);
    i.set_start_time(r->start);
    i.set_end_time(r->end);
    int32_t cores = 0, cpus = 0;
    for (core::NodeIndex n : r->nodes) {
      const core::NodeSpec& spec = c.nodes[static_cast<size_t>(n)];
      i.add_nodes(spec.name);
      cores += spec.cores();
      cpus += spec.cpus;
    }
    i.set_core_count(cores);
    i.set_cpu_count(cpus);
    for (const auto& u : r->users) i.add_users(u);
    for (const auto& a : r->accounts) i.add_accounts(a);
    for (const auto& f : flag_names(*r)) i.add_flags(f);
    i.set_partition(r->partition);
    i.set_active(r->active(now));
    out.push_back(std::move(i));
  }
  return out;
}

// ---------------------------------------------------------------- jobs --

Status ControllerState::check_job_reservation(const v1::JobRecord& rec) const {
  const std::string& name = rec.desc().reservation();
  if (name.empty()) return {};
  auto it = reservations_.find(name);
  if (it == reservations_.end()) {
    return make_error("Batch job submission failed: Requested reservation is invalid\ndrover: there is no "
                      "reservation " + name + " (scontrol show reservation lists them)");
  }
  if (!it->second.admits(rec.user(), rec.account())) {
    return make_error("Batch job submission failed: Access denied to requested reservation\ndrover: reservation " +
                      name + " admits users " + (it->second.users.empty() ? "(none)" : join(it->second.users, ",")) +
                      " and accounts " + (it->second.accounts.empty() ? "(none)" : join(it->second.accounts, ",")) +
                      "; the job is user " + rec.user() + ", account " +
                      (rec.account().empty() ? "(none)" : rec.account()));
  }
  return {};
}

}  // namespace drover::ctld
