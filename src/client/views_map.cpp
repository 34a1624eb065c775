#include "client/views_map.hpp"


#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/gres.hpp"
#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "common/user_db.hpp"

namespace drover::client {

cli::JobState cli_job_state(v1::JobState state, bool completing) {
  if (completing) return cli::JobState::kCompleting;
  switch (state) {
    case v1::PENDING: return cli::JobState::kPending;
    case v1::RUNNING: return cli::JobState::kRunning;
    case v1::SUSPENDED: return cli::JobState::kSuspended;
    case v1::COMPLETED: return cli::JobState::kCompleted;
    case v1::CANCELLED: return cli::JobState::kCancelled;
    case v1::FAILED: return cli::JobState::kFailed;
    case v1::TIMEOUT: return cli::JobState::kTimeout;
    case v1::NODE_FAIL: return cli::JobState::kNodeFail;
    case v1::OUT_OF_MEMORY: return cli::JobState::kOutOfMemory;
    case v1::DEADLINE: return cli::JobState::kDeadline;
    case v1::BOOT_FAIL: return cli::JobState::kBootFail;
    case v1::PREEMPTED: return cli::JobState::kPreempted;
    case v1::REQUEUED: return cli::JobState::kRequeued;
    default: return cli::JobState::kPending;
  }
}

namespace {

// squeue and scontrol: CONFIGURING while a running job's PrologSlurmctld runs (Slurm's CF).
cli::JobState job_state(const v1::JobRecord& r) {
  if (r.configuring() && r.state() == v1::RUNNING && !r.completing()) return cli::JobState::kConfiguring;
  if (r.special_exit() && r.state() == v1::PENDING && !r.completing()) return cli::JobState::kSpecialExit;
  return cli_job_state(r.state(), r.completing());
}

std::string group_name(uint32_t gid) {
  static std::map<uint32_t, std::string> cache;
  auto it = cache.find(gid);
  if (it != cache.end()) return it->second;
  auto g = drover::group_name(gid);
  return cache[gid] = g ? *g : std::to_string(gid);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) s.replace(pos, from.size(), to);
}

// When the job started; one that ended without starting (cancelled while
// pending) has its end as its start, as Slurm 22.05 records it. A job back
// in the queue has none (its earlier run's start is that run's record's).
UnixTime start_or_end(const v1::JobRecord& r) {
  if (r.state() == v1::PENDING) return kNoTime;
  if (r.start_time()) return r.start_time();
  return r.state() != v1::PENDING && r.end_time() ? r.end_time() : kNoTime;
}

// The --begin time a pending job waits for, held or not (0: none): Slurm
// 22.05 shows it as EligibleTime, sacct's Eligible and, with no plan yet,
// StartTime (EndTime = it + the time limit).
UnixTime awaited_begin(const v1::JobRecord& r) {
  const bool pending = r.state() == v1::PENDING;
  const int64_t begin = r.desc().begin_time();
  const bool waits = r.eligible_time() == 0 || r.hold() != v1::HOLD_NONE;
  return pending && begin > r.submit_time() && waits ? begin : 0;
}

// EligibleTime and sacct's Eligible: the --begin time awaited, else none
// while held (Slurm 22.05 showed Unknown for a held job in both), else when
// the job became eligible; one that ended before that, its --begin time if
// it had one (Slurm 22.05 kept it), else none.
UnixTime shown_eligible(const v1::JobRecord& r) {
  if (UnixTime begin = awaited_begin(r)) return begin;
  if (r.state() == v1::PENDING && r.hold() != v1::HOLD_NONE) return kNoTime;
  if (r.eligible_time()) return r.eligible_time();
  const int64_t begin = r.desc().begin_time();
  return r.state() != v1::PENDING && r.hold() == v1::HOLD_NONE && begin > r.submit_time() ? begin : kNoTime;
}

// sacct's exit code and signal for the job's line: its script's, except
// that a job the controller ended (cancelled, out of time) has 0:0 there,
// its batch step keeping the signal that ended the script; scontrol shows
// the script's (Slurm 22.05 on the anchor cluster: scontrol ExitCode=0:15,
// sacct 0:0 and 0:15 on the batch line).
std::pair<int, int> accounted_exit(const v1::JobRecord& r) {
  if (r.state() == v1::CANCELLED || r.state() == v1::TIMEOUT) return {0, 0};
  return {r.exit_code(), r.exit_signal()};
}

// "gres:gpu:a100:2" / "gres:gpu:3"; "" when no GPU is asked.
std::string gpu_tres(const v1::GpuCount& g) {
  if (g.count() <= 0) return "";
  return "gres:" + GresSpec{"gpu", g.type(), g.count()}.str();
}

// A job's -w/-x node list as Slurm keeps it, a set of nodes: each once, in
// Slurm's host order, compressed (-w cpu03,cpu02 shows as cpu[02-03]).
std::string node_set_text(const std::string& expr) {
  if (expr.empty()) return expr;
  auto hosts = hostlist_expand(expr);
  if (!hosts) return expr;
  std::vector<std::string> names = *hosts;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return hostlist_compress_slurm_sorted(std::move(names));
}

void fill_resources(const v1::JobRecord& r, cli::JobView& v) {
  const v1::JobDisplay& d = r.display();
  const v1::JobDescriptor& desc = r.desc();
  v.nodes = r.state() == v1::PENDING ? "" : d.nodes();
  v.sched_nodes = d.sched_nodes();
  v.batch_host = r.batch_host();
  v.req_nodes = node_set_text(desc.nodelist());
  v.exc_nodes = node_set_text(desc.exclude());
  v.num_nodes = std::max<int64_t>(1, d.num_nodes());
  v.max_nodes = d.max_nodes();  // the -N maximum, as the controller shows it
  v.num_cpus = std::max<int64_t>(1, d.num_cpus());
  v.num_tasks = std::max<int64_t>(1, d.num_tasks());
  v.cpus_per_task = std::max<int64_t>(1, d.cpus_per_task());
  v.min_cpus_per_node = std::max<int64_t>(1, d.min_cpus_per_node());
  v.min_tmp_disk_mb = desc.tmp_disk_mb();
  v.sockets_per_node = desc.sockets_per_node();
  v.cores_per_socket = desc.cores_per_socket();
  v.threads_per_core = desc.threads_per_core();
  v.ntasks_per_socket = desc.ntasks_per_socket();
  v.ntasks_per_core = desc.ntasks_per_core();
  v.delay_boot = desc.delay_boot_s();
  v.cluster_features = desc.cluster_constraint();
  v.ntasks_per_node = desc.ntasks_per_node();
  v.mem_per_cpu_mb = d.mem_per_cpu_mb();
  v.mem_per_node_mb = d.mem_per_node_mb();
  if (desc.has_mem_per_node_mb() && desc.mem_per_node_mb() == 0) {
    v.mem_per_cpu_mb = v.mem_per_node_mb = 0;  // --mem=0 (all of each node's memory) shows as asked: 0
  }
  for (const auto& [k, n] : d.tres()) v.tres[k] = n;
  // GPUs per node, per job and per task, each as asked (Slurm's TresPerNode,
  // TresPerJob, TresPerTask); a per-job count is not a per-node one.
  const bool per_node_asked = !desc.gres().empty() || desc.gpus_per_node().count() > 0;
  v.tres_per_node = per_node_asked ? d.tres_per_node() : "";
  v.tres_per_job = gpu_tres(desc.gpus());
  v.tres_per_task = gpu_tres(desc.gpus_per_task());
  if (desc.cpus_per_gpu() > 0) v.cpus_per_tres = "gres:gpu:" + std::to_string(desc.cpus_per_gpu());
  if (desc.has_mem_per_gpu_mb()) v.mem_per_tres = "gres:gpu:" + std::to_string(desc.mem_per_gpu_mb());
  v.features = d.features_in_use().empty() ? desc.constraint() : d.features_in_use();
  v.licenses = desc.licenses();
  v.over_subscribe = desc.exclusive()        ? "NO"
                     : desc.exclusive_user() ? "USER"
                     : desc.exclusive_mcs()  ? "MCS"
                     : desc.oversubscribe()  ? "YES"
                                             : "OK";
}

void fill_times(const v1::JobRecord& r, cli::JobView& v) {
  v.submit_time = r.submit_time();
  bool pending = r.state() == v1::PENDING;
  // A held job is not eligible, and accrues no age, until released: Slurm
  // 22.05 shows EligibleTime=Unknown AccrueTime=Unknown for it, or its
  // --begin time as EligibleTime.
  const bool held = pending && r.hold() != v1::HOLD_NONE;
  v.accrue_time = held ? kNoTime : r.eligible_time();
  v.eligible_time = shown_eligible(r);
  v.start_time = pending ? r.display().planned_start() : start_or_end(r);
  if (v.start_time == 0) v.start_time = awaited_begin(r);
  if (pending) {
    v.end_time = (v.start_time && r.time_limit_s() != kInfinite) ? v.start_time + r.time_limit_s() : kNoTime;
  } else {
    v.end_time = r.end_time();
  }
  v.last_sched_eval = r.last_sched_eval();
  if (r.suspend_time()) v.suspend_time = r.suspend_time();
  v.pre_suspend_time = r.pre_suspend_s();
  v.deadline = r.desc().deadline();
  v.time_limit = r.time_limit_s() == 0 ? cli::kNotSet : r.time_limit_s();
  v.time_min = r.desc().has_time_min_s() ? r.desc().time_min_s() : 0;
}

}  // namespace

std::string output_path(const v1::JobRecord& r, const std::string& pattern) {
  std::string p = pattern;
  bool array = r.array_job_id() != 0;
  if (p.empty()) p = array ? "slurm-%A_%a.out" : "slurm-%j.out";
  if (p.find('\\') != std::string::npos) {
    p.erase(std::remove(p.begin(), p.end(), '\\'), p.end());
  } else {
    replace_all(p, "%%", "\x01");
    replace_all(p, "%j", std::to_string(r.job_id()));
    replace_all(p, "%J", std::to_string(r.job_id()));
    replace_all(p, "%A", std::to_string(array ? r.array_job_id() : r.job_id()));
    replace_all(p, "%a", array ? std::to_string(r.array_task_id()) : "4294967294");
    replace_all(p, "%x", r.desc().name());
    replace_all(p, "%u", r.user());
    replace_all(p, "\x01", "%");
  }
  if (!p.empty() && p[0] != '/') p = r.desc().work_dir() + "/" + p;
  return p;
}

cli::JobView job_view(const v1::JobRecord& r) {
  cli::JobView v;
  const v1::JobDescriptor& d = r.desc();
  v.job_id = r.job_id();
  v.array_job_id = r.array_job_id();
  if (r.array_job_id()) v.array_task_id = r.array_task_id();
  v.array_max_running = r.array_max_running();
  v.name = d.name();
  v.user = r.user();
  v.uid = r.uid();
  v.group = group_name(r.gid());
  v.gid = r.gid();
  v.account = r.account();
  v.partition = r.partition();
  v.qos = r.qos();
  v.reservation = d.reservation();
  v.wckey = d.wckey();
  v.comment = d.comment();
  v.cluster = r.cluster();
  v.state = job_state(r);
  // A job that names several partitions shows them all until it starts in one, as Slurm's
  // (Partition=compute,training; squeue -p matches any of them).
  if (v.state == cli::JobState::kPending && d.partitions_size() > 1) {
    v.partition = join(std::vector<std::string>(d.partitions().begin(), d.partitions().end()), ",");
  }
  v.reason = r.reason().empty() ? "None" : r.reason();
  v.dependency = r.display().dependency();
  // Slurm shows 0 for a held job, and for a suspended one.
  v.priority = (r.hold() != v1::HOLD_NONE && r.state() == v1::PENDING) || r.state() == v1::SUSPENDED ? 0 : r.priority();
  v.nice = r.nice();
  v.requeue = r.requeue();
  v.restarts = r.restart_count();
  v.batch = d.batch();
  v.exit_code = r.exit_code();
  v.exit_signal = r.exit_signal();
  v.derived_exit_code = r.derived_exit_code();
  v.derived_exit_signal = r.derived_exit_signal();
  v.scheduler = r.scheduler().empty() ? "Main" : r.scheduler();
  fill_times(r, v);
  fill_resources(r, v);
  v.command = d.command();
  v.work_dir = d.work_dir();
  v.std_out = output_path(r, d.std_out());
  v.std_err = output_path(r, d.std_err().empty() ? d.std_out() : d.std_err());
  v.std_in = d.std_in().empty() ? "/dev/null" : d.std_in();
  v.alloc_node = d.submit_host();
  v.alloc_sid = d.submit_sid();
  v.mail_type = d.mail_type();
  // Mail goes to the job's user unless --mail-user says otherwise; Slurm
  // 22.05 shows that user's name (MailUser=root for --mail-type=END alone).
  v.mail_user = d.mail_user().empty() && !d.mail_type().empty() ? r.user() : d.mail_user();
  v.job_gres = r.display().job_gres();
  for (const auto& n : r.display().node_detail())
    v.node_detail.push_back(cli::JobView::NodeDetail{n.nodes(), n.cpu_ids(), n.mem_mb(), n.gres()});
  return v;
}

namespace {

// An array task that has not run yet: Slurm keeps it in the array's one
// pending record ("N_[2-4%25]", "N_[5]" when it is the last), where a
// requeued one, or one changed by itself, is a record of its own ("N_3").
// An array element still part of its array's record: never split from it nor requeued.
bool in_array_record(const v1::JobRecord& r) {
  return r.array_job_id() && r.restart_count() == 0 && !r.array_split();
}

bool in_pending_array_record(const v1::JobRecord& r) {
  return in_array_record(r) && r.state() == v1::PENDING && !r.completing();
}

// The arrays whose pending record holds more than one element, or is all
// of a one-element array: those are shown as one record ("N_[4-5]",
// "N_[7]"). The last element left of a larger array is shown as itself
// ("N_5"), as Slurm 22.05 showed the one left of --array=1-5 while the
// others ran (the anchor cluster).
template <class Records, class RecordOf>
std::set<int64_t> arrays_with_pending_record(const Records& records, RecordOf record_of) {
  std::map<int64_t, std::pair<int, int64_t>> pending;  // array id -> (pending elements, the array's size)
  for (const auto& x : records) {
    const v1::JobRecord& r = record_of(x);
    if (!in_pending_array_record(r)) continue;
    auto& [count, size] = pending[r.array_job_id()];
    ++count;
    size = r.array_task_count();
  }
  std::set<int64_t> out;
  for (const auto& [id, cs] : pending) {
    if (cs.first > 1 || cs.second <= 1) out.insert(id);
  }
  return out;
}

// An array element cancelled while it waited in the array's pending record.
bool cancelled_in_pending_record(const v1::JobRecord& r) {
  return in_array_record(r) && r.state() == v1::CANCELLED && r.start_time() == 0;
}

// The pending record of r's array in `out` (its index kept in `groups`),
// with r's task added; made by `make` from r when there is none yet. True
// when it was made. Shared by squeue's and sacct's records (JobView,
// AccountingRecord).
template <class Record, class Make>
std::pair<Record*, bool> fold_into_array_record(std::vector<Record>& out, std::map<int64_t, std::size_t>& groups,
                                                const v1::JobRecord& r, Make make) {
  if (auto it = groups.find(r.array_job_id()); it != groups.end()) {
    out[it->second].array_pending_tasks.push_back(r.array_task_id());
    return {&out[it->second], false};
  }
  Record x = make();
  x.job_id = r.array_job_id();
  x.array_task_id.reset();
  x.array_pending_tasks = {r.array_task_id()};
  groups[r.array_job_id()] = out.size();
  out.push_back(std::move(x));
  return {&out.back(), true};
}

}  // namespace

std::vector<cli::JobView> job_views(const v1::GetJobsReply& reply, bool expand_arrays) {
  std::vector<cli::JobView> out;
  std::map<int64_t, std::size_t> group;  // array id -> index of its pending view
  std::map<int64_t, std::string> record_reason;  // array id -> the reason of its pending record
  const std::set<int64_t> grouped =
      arrays_with_pending_record(reply.jobs(), [](const v1::JobRecord& r) -> const v1::JobRecord& { return r; });
  for (const auto& r : reply.jobs()) {
    bool groupable = !expand_arrays && in_pending_array_record(r) && grouped.count(r.array_job_id());
    if (!groupable) {
      out.push_back(job_view(r));
      // Listed one by one (-r), the tasks of the array's pending record are
      // still that one record to Slurm: they all wait for its reason.
      if (expand_arrays && in_pending_array_record(r)) {
        out.back().reason = record_reason.try_emplace(r.array_job_id(), out.back().reason).first->second;
      }
      continue;
    }
    fold_into_array_record(out, group, r, [&] { return job_view(r); });
  }
  return out;
}

namespace {

cli::NodeState node_state(const v1::NodeInfo& n) {
  cli::NodeState s;
  switch (n.base()) {
    case v1::NODE_IDLE: s.base = cli::NodeBase::kIdle; break;
    case v1::NODE_MIXED: s.base = cli::NodeBase::kMixed; break;
    case v1::NODE_ALLOCATED: s.base = cli::NodeBase::kAllocated; break;
    case v1::NODE_DOWN: s.base = cli::NodeBase::kDown; break;
    case v1::NODE_FUTURE: s.base = cli::NodeBase::kFuture; break;
    default: s.base = cli::NodeBase::kUnknown; break;
  }
  s.drain = n.drain();
  s.completing = n.completing();
  s.not_responding = n.not_responding();
  s.invalid_reg = n.invalid_reg();
  s.fail = n.fail();
  s.reserved = n.reserved();
  s.maint = n.maint();
  return s;
}

}  // namespace

cli::ReservationView reservation_view(const v1::ReservationInfo& r) {
  cli::ReservationView v;
  v.name = r.name();
  v.start_time = r.start_time();
  v.end_time = r.end_time();
  std::vector<std::string> nodes(r.nodes().begin(), r.nodes().end());
  v.nodes = hostlist_compress_sorted(nodes);
  v.node_count = r.nodes_size();
  v.core_count = r.core_count();
  v.cpu_count = r.cpu_count();
  v.users.assign(r.users().begin(), r.users().end());
  v.accounts.assign(r.accounts().begin(), r.accounts().end());
  v.flags.assign(r.flags().begin(), r.flags().end());
  v.partition = r.partition();
  v.active = r.active();
  return v;
}

cli::NodeView node_view(const v1::NodeInfo& n) {
  cli::NodeView v;
  v.name = n.name();
  v.addr = n.addr();
  v.hostname = n.hostname();
  v.port = n.port();
  if (!n.version().empty()) v.version = n.version();
  if (!n.arch().empty()) v.arch = n.arch();
  v.os = n.os();
  v.state = node_state(n);
  v.cpus = n.cpus();
  v.alloc_cpus = n.alloc_cpus();
  v.boards = std::max(1, n.boards());
  v.sockets = n.sockets();
  v.cores_per_socket = n.cores_per_socket();
  v.threads_per_core = n.threads_per_core();
  v.cpu_load = n.cpu_load();
  v.real_memory_mb = n.real_memory_mb();
  v.alloc_memory_mb = n.alloc_memory_mb();
  v.free_memory_mb = n.free_memory_mb();
  v.tmp_disk_mb = n.tmp_disk_mb();
  v.weight = n.weight();
  v.features = join({n.features().begin(), n.features().end()}, ",");
  // Unset: all available features are active; [""]: none is.
  v.features_active = n.active_features().empty() ? v.features
                                                  : join({n.active_features().begin(), n.active_features().end()}, ",");
  v.comment = n.comment();
  for (const auto& g : n.gres()) {
    if (auto parsed = parse_gres_list(g)) v.gres.insert(v.gres.end(), parsed->begin(), parsed->end());
  }
  for (const auto& g : n.gres_used()) v.gres_used.push_back(cli::GresUse{g.name(), g.type(), g.count(), g.indexes()});
  v.partitions.assign(n.partitions().begin(), n.partitions().end());
  v.reason = n.reason();
  v.reason_time = n.reason_time();
  v.reason_user = n.reason_user();
  v.reason_uid = n.reason_uid();
  v.boot_time = n.boot_time();
  v.slurmd_start_time = n.agent_start_time();
  v.last_busy_time = n.last_busy_time();
  for (const auto& [k, c] : n.cfg_tres()) v.cfg_tres[k] = c;
  for (const auto& [k, c] : n.alloc_tres()) v.alloc_tres[k] = c;
  return v;
}

cli::PartitionView partition_view(const v1::PartitionInfo& p) {
  cli::PartitionView v;
  v.name = p.name();
  v.is_default = p.is_default();
  v.hidden = p.hidden();
  v.state = p.state();
  v.nodes = p.nodes_expr();
  v.node_names.assign(p.node_names().begin(), p.node_names().end());
  v.max_time = p.max_time_s();
  v.default_time = p.default_time_s() < 0 ? cli::kNotSet : p.default_time_s();
  v.min_nodes = p.min_nodes();
  v.max_nodes = p.max_nodes();
  v.max_cpus_per_node = p.max_cpus_per_node();
  v.total_cpus = p.total_cpus();
  v.total_nodes = p.total_nodes();
  v.allow_groups = p.allow_groups();
  v.allow_accounts = p.allow_accounts();
  v.allow_qos = p.allow_qos();
  v.deny_accounts = p.deny_accounts();
  v.deny_qos = p.deny_qos();
  v.qos = p.qos();
  v.exclusive_user = p.exclusive_user();
  v.over_subscribe = p.over_subscribe().empty() ? "NO" : p.over_subscribe();
  v.priority_job_factor = p.priority_job_factor();
  v.priority_tier = p.priority_tier();
  if (!p.preempt_mode().empty()) v.preempt_mode = p.preempt_mode();
  v.grace_time = p.grace_time_s();
  v.root_only = p.root_only();
  v.disable_root_jobs = p.disable_root_jobs();
  if (!p.alloc_nodes().empty()) v.alloc_nodes = p.alloc_nodes();
  v.tres_billing_weights = p.tres_billing_weights();
  if (p.has_over_time_limit_min()) {
    v.over_time_limit = p.over_time_limit_min() < 0 ? "UNLIMITED" : std::to_string(p.over_time_limit_min());
  }
  v.def_mem_per_cpu_mb = p.def_mem_per_cpu_mb();
  v.def_mem_per_node_mb = p.def_mem_per_node_mb();
  v.max_mem_per_cpu_mb = p.max_mem_per_cpu_mb();
  v.max_mem_per_node_mb = p.max_mem_per_node_mb();
  for (const auto& [k, c] : p.tres()) v.tres[k] = c;
  return v;
}

namespace {

TresMap tres_map(const google::protobuf::Map<std::string, int64_t>& m) { return TresMap(m.begin(), m.end()); }

cli::AccountingRecord job_record(const v1::AccountingJob& a) {
  const v1::JobRecord& r = a.job();
  const v1::JobDescriptor& d = r.desc();
  cli::AccountingRecord x;
  x.job_id = r.job_id();
  // Slurm's job flags (its spelling, "Recieved"): which pass started it.
  if (r.start_time() > 0) {
    x.flags = (r.scheduler() == "Backfill" ? "SchedBackfill" : "SchedMain") + std::string(",StartRecieved");
  } else if (r.state() != v1::PENDING) {
    x.flags = "StartRecieved";
  }
  if (a.script_env_shown()) {  // sacct -B / --env-vars
    x.batch_script = d.batch() ? d.script() : "NONE";
    x.environment = d.batch() ? std::vector<std::string>(d.environment().begin(), d.environment().end())
                              : std::vector<std::string>{"NONE"};
  }
  x.array_job_id = r.array_job_id();
  if (r.array_job_id()) x.array_task_id = r.array_task_id();
  x.array_max_running = r.array_max_running();
  x.job_name = d.name();
  x.partition = r.partition();
  x.account = r.account();
  x.qos = r.qos();
  x.user = r.user();
  x.group = group_name(r.gid());
  x.cluster = r.cluster();
  x.reservation = d.reservation();
  x.wckey = d.wckey();
  x.comment = d.comment();
  x.constraints = d.constraint();
  x.uid = r.uid();
  x.gid = r.gid();
  x.work_dir = d.work_dir();
  x.submit_line = d.submit_line();
  x.node_list = a.nodes();
  // sacct shows what the database recorded: a job still cleaning up is RUNNING there.
  x.state = cli_job_state(r.state(), false);
  if (r.state() == v1::CANCELLED && r.has_cancelled_by()) x.cancelled_by_uid = r.cancelled_by();
  const bool open = r.state() == v1::RUNNING || r.state() == v1::PENDING || r.state() == v1::SUSPENDED;
  // What the database recorded: the last reason the job waited for other
  // than None, Priority and Resources (Slurm 22.05's sacct on the anchor
  // cluster: Dependency or JobHeldUser for jobs that waited so and then ran;
  // None for those that waited on Priority or Resources, and for ended
  // jobs' own reasons, FAILED's NonZeroExitCode, TIMEOUT's TimeLimit).
  x.reason = r.db_reason().empty() ? "None" : r.db_reason();
  // A held job: the hold's kind from the start (also one the controller
  // set, "launch failed requeued held" in squeue), as Slurm's sacct showed it.
  if (r.state() == v1::PENDING && r.db_reason().empty() && r.hold() != v1::HOLD_NONE) {
    x.reason = r.hold() == v1::HOLD_ADMIN ? "JobHeldAdmin" : "JobHeldUser";
  }
  std::tie(x.exit_code, x.exit_signal) = accounted_exit(r);
  x.derived_exit_code = r.derived_exit_code();
  x.derived_exit_signal = r.derived_exit_signal();
  x.submit = r.submit_time() ? r.submit_time() : kNoTime;
  x.eligible = shown_eligible(r);
  x.start = start_or_end(r);
  x.end = r.end_time() && !open ? r.end_time() : kNoTime;
  x.suspended = r.suspended_s();
  x.time_limit = r.time_limit_s() == 0 ? cli::kNotSet : r.time_limit_s();
  // A held job that gave no -t has no limit of its own yet: Slurm 22.05's
  // sacct showed its partition's as Partition_Limit.
  x.partition_time_limit = r.state() == v1::PENDING && r.hold() != v1::HOLD_NONE && !d.has_time_limit_s();
  bool started = r.state() != v1::PENDING && !a.alloc_tres().empty();
  x.alloc_tres = tres_map(a.alloc_tres());
  x.req_tres = tres_map(a.req_tres());
  x.req_cpus = a.req_cpus();
  // A job that has not run, pending or ended so, shows what it asks for as
  // its AllocCPUS, as Slurm 22.05's sacct showed on the anchor cluster (1 for
  // `--exclusive`, 8 for `-n 8`; 4 for `-n 4` cancelled held, waiting for its
  // --begin, its dependency or resources).
  x.alloc_cpus = started ? x.alloc_tres["cpu"] : x.req_cpus;
  x.nnodes = started ? x.alloc_tres["node"] : a.req_nodes();
  if (x.alloc_tres.empty()) x.alloc_tres.clear();
  x.priority = r.hold() != v1::HOLD_NONE && r.state() == v1::PENDING ? 0 : r.priority();
  x.req_mem_mb = a.req_mem_mb();
  return x;
}

}  // namespace

std::vector<cli::TaskUsageView> task_usage_views(const google::protobuf::RepeatedPtrField<v1::TaskUsage>& usage) {
  std::vector<cli::TaskUsageView> out;
  for (const auto& u : usage) {
    cli::TaskUsageView t;
    t.node = u.node();
    t.rank = u.rank();
    t.user_cpu_us = u.user_cpu_us();
    t.system_cpu_us = u.system_cpu_us();
    t.max_rss_kb = u.max_rss_kb();
    t.max_vmsize_kb = u.max_vmsize_kb();
    t.pages = u.pages();
    t.disk_read = u.disk_read();
    t.disk_write = u.disk_write();
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

cli::AccountingRecord step_record(const cli::AccountingRecord& job, const v1::AccountingStep& s) {
  cli::AccountingRecord x = job;
  x.array_pending_tasks.clear();
  x.step = s.step();
  x.job_name = s.name();
  x.partition.clear();
  x.qos.clear();
  x.reason.clear();
  x.constraints.clear();
  x.comment.clear();
  x.state = cli_job_state(s.state(), false);
  x.cancelled_by_uid.reset();
  if (s.has_cancelled_by()) x.cancelled_by_uid = s.cancelled_by();
  x.submit_line = s.submit_line();
  x.layout = s.layout();
  x.exit_code = s.exit_code();
  x.exit_signal = s.exit_signal();
  x.derived_exit_code = x.derived_exit_signal = 0;
  x.start = s.start_time() ? s.start_time() : kNoTime;
  x.end = s.end_time() ? s.end_time() : kNoTime;
  x.time_limit = cli::kNotSet;
  x.alloc_tres = tres_map(s.alloc_tres());
  x.req_tres = x.alloc_tres;
  x.alloc_cpus = x.req_cpus = s.num_cpus();
  x.nnodes = s.num_nodes();
  x.ntasks = s.num_tasks();
  x.node_list = s.nodes();
  x.usage.reset();
  x.has_cpu_usage = false;
  x.total_cpu_sec = x.user_cpu_sec = x.system_cpu_sec = 0;
  if (s.usage_size() > 0) {
    x.usage = cli::summarize_usage(task_usage_views(s.usage()));
    x.has_cpu_usage = true;
    x.user_cpu_sec = static_cast<double>(x.usage->user_cpu_us) / 1e6;
    x.system_cpu_sec = static_cast<double>(x.usage->system_cpu_us) / 1e6;
    x.total_cpu_sec = x.user_cpu_sec + x.system_cpu_sec;
  }
  return x;
}

}  // namespace

std::vector<cli::AccountingRecord> accounting_records(const v1::GetJobHistoryReply& reply) {
  std::vector<cli::AccountingRecord> out;
  std::map<int64_t, std::size_t> group;  // array id -> index of its pending record
  // Elements cancelled while in the array's pending record stay one record,
  // as Slurm 22.05 kept them (anchor cluster): "N_[3-6%2]" with Start None
  // beside the elements that ran, or, when none ever started, the array's id
  // alone with Start at the cancel. Its end is the last cancel's.
  std::map<int64_t, int> elements, cancelled_waiting;
  for (const auto& a : reply.jobs()) {
    if (!a.job().array_job_id()) continue;
    ++elements[a.job().array_job_id()];
    if (cancelled_in_pending_record(a.job())) ++cancelled_waiting[a.job().array_job_id()];
  }
  std::map<int64_t, std::size_t> cancelled_group;  // array id -> index of its cancelled record
  const std::set<int64_t> grouped = arrays_with_pending_record(
      reply.jobs(), [](const v1::AccountingJob& a) -> const v1::JobRecord& { return a.job(); });
  // The record of `a`'s array in `groups`, with `a`'s index added; made from `a` when there is none.
  auto fold = [&](std::map<int64_t, std::size_t>& groups, const v1::AccountingJob& a) {
    return fold_into_array_record(out, groups, a.job(), [&] { return job_record(a); });
  };
  for (const auto& a : reply.jobs()) {
    const v1::JobRecord& r = a.job();
    if (cancelled_in_pending_record(r) && cancelled_waiting[r.array_job_id()] > 1) {
      auto [x, made] = fold(cancelled_group, a);
      if (made) {
        x->whole_array = cancelled_waiting[r.array_job_id()] == elements[r.array_job_id()];
        x->start_none = !x->whole_array;
      } else if (r.end_time() > x->end) {
        x->end = r.end_time();
        if (!x->start_none) x->start = x->end;
      }
      continue;
    }
    if (in_pending_array_record(r) && grouped.count(r.array_job_id())) {
      // The still-pending elements are one record ("N_[2-4%25]"), as Slurm keeps them.
      fold(group, a);
      continue;
    }
    out.push_back(job_record(a));
    cli::AccountingRecord& job = out.back();
    std::vector<cli::AccountingRecord> steps;
    for (const auto& s : a.steps()) steps.push_back(step_record(job, s));
    // A job's CPU time is its steps'.
    for (const auto& s : steps) {
      if (!s.has_cpu_usage) continue;
      job.has_cpu_usage = job.has_step_usage = true;
      job.user_cpu_sec += s.user_cpu_sec;
      job.system_cpu_sec += s.system_cpu_sec;
      job.total_cpu_sec += s.total_cpu_sec;
    }
    out.insert(out.end(), steps.begin(), steps.end());
  }
  return out;
}

}  // namespace drover::client
