#include "ctld/job_model.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <mutex>
#include <string_view>

#include "common/duration.hpp"
#include "common/job_errors.hpp"
#include "common/gres.hpp"
#include "common/strings.hpp"
#include "common/user_groups.hpp"

namespace drover::ctld {

bool is_final(v1::JobState s) { return s != v1::PENDING && s != v1::RUNNING && s != v1::SUSPENDED; }

bool is_pending(const Job& j) { return j.rec.state() == v1::PENDING; }

bool is_started(const v1::JobRecord& r) { return r.state() == v1::RUNNING || r.state() == v1::SUSPENDED; }

int64_t agent_time_limit(const v1::JobRecord& r) {
  return r.time_limit_s() == kInfinite ? 0 : r.time_limit_s() + r.suspended_s();
}

int64_t run_seconds(const v1::JobRecord& r, int64_t now) {
  if (r.start_time() <= 0) return 0;
  const int64_t end = r.end_time() > 0 && is_final(r.state()) ? r.end_time() : now;
  return std::max<int64_t>(0, end - r.start_time() - r.suspended_s());
}

int64_t with_over_time(int64_t limit, int64_t over_s) {
  if (limit <= 0) return limit;
  return over_s < 0 ? 0 : limit + over_s;
}

int64_t step_time_limit(const v1::JobRecord& r, const v1::StepInfo& s, int64_t job_limit) {
  if (s.time_limit_s() <= 0) return 0;
  const int64_t job_end = job_limit <= 0 ? 0 : r.start_time() + job_limit;
  const int64_t step_end = s.start_time() + s.time_limit_s() + s.suspended_s();
  const int64_t end = job_end > 0 ? std::min(job_end, step_end) : step_end;
  return std::max<int64_t>(1, end - s.start_time());
}

int64_t close_suspension(v1::JobRecord& r, int64_t now) {
  const int64_t paused = std::max<int64_t>(0, now - r.suspend_time());
  r.set_suspended_s(r.suspended_s() + paused);
  r.set_suspend_time(now);
  return paused;
}

void forget_suspensions(v1::JobRecord& r) {
  r.clear_suspend_time();
  r.clear_pre_suspend_s();
  r.clear_suspended_s();
}

bool holds_resources(const Job& j) { return is_started(j.rec) || j.rec.completing(); }

const char* state_name(v1::JobState s) {
  switch (s) {
    case v1::PENDING: return "PENDING";
    case v1::RUNNING: return "RUNNING";
    case v1::COMPLETED: return "COMPLETED";
    case v1::CANCELLED: return "CANCELLED";
    case v1::FAILED: return "FAILED";
    case v1::TIMEOUT: return "TIMEOUT";
    case v1::NODE_FAIL: return "NODE_FAIL";
    case v1::OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case v1::DEADLINE: return "DEADLINE";
    case v1::BOOT_FAIL: return "BOOT_FAIL";
    case v1::PREEMPTED: return "PREEMPTED";
    case v1::SUSPENDED: return "SUSPENDED";
    default: return "UNKNOWN";
  }
}

v1::JobState state_from_agent(const std::string& name) {
  static const std::pair<const char*, v1::JobState> kNames[] = {
      {"RUNNING", v1::RUNNING},     {"COMPLETED", v1::COMPLETED},         {"FAILED", v1::FAILED},
      {"CANCELLED", v1::CANCELLED}, {"TIMEOUT", v1::TIMEOUT},             {"OUT_OF_MEMORY", v1::OUT_OF_MEMORY},
      {"NODE_FAIL", v1::NODE_FAIL}, {"DEADLINE", v1::DEADLINE},
  };
  for (const auto& [n, s] : kNames) {
    if (name == n) return s;
  }
  return v1::FAILED;
}

core::Dependency dependency_from_proto(const v1::Dependency& d) {
  core::Dependency out;
  out.any = d.any();
  for (const auto& i : d.items()) {
    core::DepItem item;
    switch (i.type()) {
      case v1::DEP_AFTER: item.kind = core::DepKind::kAfter; break;
      case v1::DEP_AFTER_OK: item.kind = core::DepKind::kAfterOk; break;
      case v1::DEP_AFTER_NOT_OK: item.kind = core::DepKind::kAfterNotOk; break;
      case v1::DEP_SINGLETON: item.kind = core::DepKind::kSingleton; break;
      case v1::DEP_AFTER_CORR: item.kind = core::DepKind::kAfterCorr; break;
      default: item.kind = core::DepKind::kAfterAny; break;
    }
    item.job = i.job_id();
    item.array_task = i.array_task();
    item.delay = i.delay_s();
    out.items.push_back(item);
  }
  return out;
}

namespace {

core::GpuReq gpu_req(const v1::GpuCount& g) { return core::GpuReq{g.type(), g.count()}; }

TresMap licenses_of(const std::string& text) {
  TresMap out;
  for (const auto& item : split(text, ',')) {
    if (item.empty()) continue;
    auto colon = item.find(':');
    std::string name = item.substr(0, colon);
    int64_t count = 1;
    if (colon != std::string::npos) count = parse_int(item.substr(colon + 1)).value_or(-1);  // refused at submission
    out["license/" + name] = count;
  }
  return out;
}

void fill_shape(const v1::JobDescriptor& d, core::JobSpec& s) {
  s.min_nodes = d.min_nodes();
  s.max_nodes = d.max_nodes();
  s.ntasks = d.ntasks();
  s.ntasks_per_node = d.ntasks_per_node();
  s.cpus_per_task = d.cpus_per_task();
  s.min_cpus_per_node = d.min_cpus_per_node();
  s.min_tmp_disk_mb = d.tmp_disk_mb();
  s.sockets_per_node = d.sockets_per_node();
  s.cores_per_socket = d.cores_per_socket();
  s.threads_per_core = d.threads_per_core();
  s.ntasks_per_socket = d.ntasks_per_socket();
  s.ntasks_per_core = d.ntasks_per_core();
  s.spread_job = d.spread_job();
  s.mem_per_node_mb = d.has_mem_per_node_mb() ? d.mem_per_node_mb() : -1;
  s.mem_per_cpu_mb = d.has_mem_per_cpu_mb() ? d.mem_per_cpu_mb() : -1;
  s.mem_per_gpu_mb = d.has_mem_per_gpu_mb() ? d.mem_per_gpu_mb() : -1;
  for (const auto& g : d.gres()) {
    auto parsed = parse_gres_list(g);
    if (parsed) s.gres.insert(s.gres.end(), parsed->begin(), parsed->end());
  }
  s.gpus = gpu_req(d.gpus());
  s.gpus_per_node = gpu_req(d.gpus_per_node());
  s.gpus_per_task = gpu_req(d.gpus_per_task());
  s.cpus_per_gpu = d.cpus_per_gpu();
  s.licenses = licenses_of(d.licenses());
  s.constraint = d.constraint();
  s.prefer = d.prefer();
  s.nodelist = d.nodelist();
  s.exclude = d.exclude();
  s.exclusive = d.exclusive();
  s.exclusive_user = d.exclusive_user();
}

}  // namespace

namespace {

// The names of the groups `user` is in (its primary group among them), as
// this host's NSS says; kept a minute per user, for partitions'
// AllowGroups (Slurm's controller also caches them).
std::vector<std::string> group_names_of(const std::string& user, uint32_t gid) {
  struct Entry {
    int64_t at;
    std::vector<std::string> names;
  };
  static std::mutex mu;
  static std::map<std::pair<std::string, uint32_t>, Entry> cache;
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find({user, gid});
  if (it != cache.end() && now - it->second.at < 60) return it->second.names;
  // The user's own groups, as Slurm checks them: not the job's gid, which may be another's (root's
  // sbatch --uid=bob runs with gid 0); that only when the user has no passwd entry here.
  gid_t primary = gid;
  {
    std::vector<char> buf(16384);
    struct passwd pw {};
    struct passwd* found = nullptr;
    if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found) primary = found->pw_gid;
  }
  std::vector<std::string> names;
  for (gid_t g : group_list(user, primary)) {
    std::vector<char> buf(16384);
    struct group gr {};
    struct group* found = nullptr;
    if (getgrgid_r(g, &gr, buf.data(), buf.size(), &found) == 0 && found) names.emplace_back(found->gr_name);
  }
  cache[{user, gid}] = Entry{now, names};
  return names;
}

}  // namespace

core::JobSpec spec_from_record(const v1::JobRecord& rec, Identity identity) {
  const v1::JobDescriptor& d = rec.desc();
  core::JobSpec s;
  s.id = rec.job_id();
  s.array_job_id = rec.array_job_id();
  s.array_task_id = rec.array_task_id();
  s.array_max_running = rec.array_max_running();
  s.name = d.name();
  s.user = rec.user();
  s.uid = rec.uid();
  if (identity == Identity::kWith) {
    s.identity_known = true;
    s.alloc_node = d.submit_host();
    if (!s.user.empty()) s.groups = group_names_of(s.user, rec.gid());
  }
  s.account = rec.account().empty() ? d.account() : rec.account();
  s.qos = rec.qos().empty() ? d.qos() : rec.qos();
  s.partitions.assign(d.partitions().begin(), d.partitions().end());
  s.submit_time = rec.submit_time();
  s.begin_time = d.begin_time();
  s.eligible_time = rec.eligible_time();
  fill_shape(d, s);
  s.time_limit = d.has_time_limit_s() ? d.time_limit_s() : -1;
  s.hold = rec.hold() == v1::HOLD_USER ? core::Hold::kUser
           : rec.hold() == v1::HOLD_ADMIN ? core::Hold::kAdmin
                                          : core::Hold::kNone;
  s.nice = rec.nice();
  if (rec.has_admin_priority()) s.admin_priority = rec.admin_priority();
  s.priority_floor = rec.priority();  // PriorityFlags=INCR_ONLY: what it had
  s.dependency = dependency_from_proto(d.dependency());
  return s;
}

void refresh_spec(Job& j) {
  uint64_t revision = j.spec.revision + 1;
  j.spec = spec_from_record(j.rec);
  j.spec.revision = revision;
}

int32_t global_gpu_index(const core::NodeSpec& n, int32_t pool, int32_t device) {
  int32_t offset = 0;
  for (int32_t p = 0; p < pool && p < static_cast<int32_t>(n.gres.size()); ++p) {
    if (n.gres[p].name == n.gres[pool].name) offset += n.gres[p].count;
  }
  return offset + device;
}

std::string gpu_type(const core::NodeSpec& n, int32_t index) {
  if (index < 0) return {};
  for (const auto& p : n.gres) {
    if (p.name != "gpu") continue;
    if (index < p.count) return p.type;
    index -= p.count;
  }
  return {};
}

v1::JobAllocation allocation_to_proto(const core::Cluster& c, const core::Allocation& a) {
  v1::JobAllocation out;
  out.set_exclusive(a.exclusive);
  for (const auto& t : a.nodes) {
    const core::NodeSpec& n = c.nodes[t.node];
    v1::NodeTake* p = out.add_nodes();
    p->set_node(n.name);
    for (int32_t core : t.cores) p->add_cores(core);
    p->set_cpus(t.cpus);
    p->set_mem_mb(t.mem_mb);
    p->set_tasks(t.tasks);
    for (const auto& g : t.gres) {
      v1::GresTake* gt = p->add_gres();
      gt->set_name(n.gres[g.pool].name);
      gt->set_type(n.gres[g.pool].type);
      gt->set_count(g.count);
      for (int32_t d : g.devices) gt->add_indexes(global_gpu_index(n, g.pool, d));
    }
  }
  return out;
}

namespace {

// The pool of node `n` a durable GresTake names, and its device offset.
int32_t pool_of(const core::NodeSpec& n, const v1::GresTake& g) {
  for (int32_t p = 0; p < static_cast<int32_t>(n.gres.size()); ++p) {
    if (n.gres[p].name == g.name() && n.gres[p].type == g.type()) return p;
  }
  return -1;
}

}  // namespace

core::Allocation allocation_from_proto(const CoreBridge& b, const v1::JobAllocation& a) {
  core::Allocation out;
  out.exclusive = a.exclusive();
  for (const auto& t : a.nodes()) {
    core::NodeIndex ni = b.find_node(t.node());
    if (ni < 0) continue;  // a node removed from the configuration holds nothing
    const core::NodeSpec& n = b.cluster().nodes[ni];
    core::NodeTake take;
    take.node = ni;
    take.cores.assign(t.cores().begin(), t.cores().end());
    take.cpus = t.cpus();
    take.mem_mb = t.mem_mb();
    take.tasks = t.tasks();
    for (const auto& g : t.gres()) {
      int32_t pool = pool_of(n, g);
      if (pool < 0) continue;
      core::GresTake gt;
      gt.pool = pool;
      gt.count = g.count();
      int32_t offset = global_gpu_index(n, pool, 0);
      for (int32_t idx : g.indexes()) gt.devices.push_back(idx - offset);
      take.gres.push_back(std::move(gt));
    }
    out.nodes.push_back(std::move(take));
  }
  return out;
}

std::string job_label(const v1::JobRecord& rec) {
  if (rec.array_job_id() != 0 && rec.array_task_id() >= 0) {
    return std::to_string(rec.array_job_id()) + "_" + std::to_string(rec.array_task_id());
  }
  return std::to_string(rec.job_id());
}

void add_missing_tasks(std::vector<v1::JobResult>& out, std::size_t from, int64_t array_id,
                       const std::vector<int64_t>& missing) {
  for (int64_t task : missing) {
    v1::JobResult r;
    r.set_target(std::to_string(array_id) + "_" + std::to_string(task));
    r.set_error(kInvalidJobId);
    out.push_back(std::move(r));
  }
  if (missing.empty()) return;
  // In task order: scontrol says each outcome once, in the order of its first task.
  auto task_of = [](const v1::JobResult& r) {
    const auto us = r.target().find('_');
    auto n = us == std::string::npos ? std::nullopt : parse_int(std::string_view(r.target()).substr(us + 1));
    return n.value_or(-1);
  };
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(from), out.end(),
                   [&](const v1::JobResult& a, const v1::JobResult& b) { return task_of(a) < task_of(b); });
}

std::vector<int32_t> gpu_indexes(const core::NodeSpec& n, const core::NodeTake& t) {
  std::vector<int32_t> out;
  for (const auto& g : t.gres) {
    if (n.gres[g.pool].name != "gpu") continue;
    for (int32_t dev : g.devices) out.push_back(global_gpu_index(n, g.pool, dev));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string log_name(const v1::JobRecord& r) {
  std::string out = "job " + std::to_string(r.job_id());
  if (r.array_job_id() != 0 && r.array_task_id() >= 0) {
    out += " (" + std::to_string(r.array_job_id()) + "_" + std::to_string(r.array_task_id()) + ")";
  }
  return out;
}

}  // namespace drover::ctld
