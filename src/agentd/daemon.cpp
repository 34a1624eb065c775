#include "agentd/daemon.hpp"

#include <algorithm>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include <grpcpp/support/status_code_enum.h>

#include "agent/node_check.hpp"
#include "config/acct_gather.hpp"
#include "agentd/convert.hpp"
#include "agentd/node_service.hpp"
#include "agentd/reporter.hpp"
#include "common/daemon_files.hpp"
#include "common/strings.hpp"
#include "rpc/cluster_key.hpp"
#include "rpc/local_signer.hpp"
#include "rpc/server.hpp"

namespace drover::agentd {
namespace {

std::string spool_for(const config::ClusterConfig& cfg, const std::string& node) {
  std::string dir = cfg.slurmd_spool_dir;
  auto pos = dir.find("%n");
  if (pos != std::string::npos) return dir.replace(pos, 2, node);
  return dir + "/" + node;
}

// "gpu:h100:8" on the node line -> "h100:8" for emulation.
std::string declared_gpus(const config::NodeConfig& n) {
  std::vector<std::string> parts;
  for (const auto& g : n.gres) {
    if (g.name != "gpu") continue;
    parts.push_back(g.type.empty() ? std::to_string(g.count) : g.type + ":" + std::to_string(g.count));
  }
  return join(parts, ",");
}

// Read once: it does not change while the agent runs, and the kernel writes
// all of /proc/stat (every CPU's and interrupt's counters) for each read,
// which a report for every job that ends would pay.
int64_t boot_time() {
  static const int64_t btime = [] {
    std::ifstream in("/proc/stat");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("btime ", 0) == 0) return parse_int(trim(line.substr(6))).value_or(0);
    }
    return int64_t{0};
  }();
  return btime;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double v = -1;
  in >> v;
  return v;
}

int64_t available_memory_mb() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb / 1024;
  }
  return -1;
}

// The load and free memory a report carries, read at most once a second: a
// report goes out for nearly every job that ends, and the kernel composes
// all of /proc/meminfo for each read (sinfo's CPU_LOAD and FREE_MEM do not
// need them fresher; Slurm's slurmd sends them with its pings).
struct HostLoad {
  double cpu_load = -1;
  int64_t free_memory_mb = -1;
};

HostLoad host_load() {
  static HostLoad last;
  static std::chrono::steady_clock::time_point read_at;
  auto now = std::chrono::steady_clock::now();
  if (read_at == std::chrono::steady_clock::time_point{} || now - read_at >= std::chrono::seconds(1)) {
    last = HostLoad{load_average(), available_memory_mb()};
    read_at = now;
  }
  return last;
}

// uname's answer, which does not change while the agent runs.
const std::pair<std::string, std::string>& os_and_arch() {
  static const std::pair<std::string, std::string> os = [] {
    struct utsname u {};
    if (uname(&u) != 0) return std::pair<std::string, std::string>{};
    return std::pair<std::string, std::string>{std::string(u.sysname) + " " + u.release + " " + u.version, u.machine};
  }();
  return os;
}

// The step daemon: the small drover-stepd beside this executable when it is
// there (it starts in a fraction of the full binary's time, which bounds how
// fast a node launches jobs), else `<this executable> agent --stepd`, which
// also serves the steps that want PMIx.
std::vector<std::string> stepd_command() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto small = self.parent_path() / "drover-stepd";
    if (access(small.c_str(), X_OK) == 0) return {small.string()};
  }
  return agent::default_stepd_command();
}

}  // namespace

AgentDaemon::~AgentDaemon() {
  if (server_) server_->shutdown(std::chrono::milliseconds(1000));
}

void AgentDaemon::log(const std::string& message) const {
  struct timeval tv {};
  gettimeofday(&tv, nullptr);
  struct tm tm {};
  localtime_r(&tv.tv_sec, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  std::fprintf(stderr, "%s.%03ld drover-agent %s: %s\n", when, static_cast<long>(tv.tv_usec / 1000),
               opts_.node.c_str(), message.c_str());
  std::fflush(stderr);
}

bool AgentDaemon::privileged(uint32_t uid) const { return uid == 0 || uid == geteuid() || uid == slurm_user_uid_; }

void AgentDaemon::poke() { poked_ = true; }

void AgentDaemon::request_shutdown() {
  log("shutting down at the controller's request (scontrol shutdown); running jobs keep running");
  shutdown_ = true;
  poked_ = true;
}

Result<std::unique_ptr<AgentDaemon>> AgentDaemon::start(const AgentOptions& opts) {
  std::unique_ptr<AgentDaemon> d(new AgentDaemon());
  if (auto st = d->open(opts); !st) return st.error();
  return d;
}

agent::hw::DetectOptions AgentDaemon::detect_options() const {
  agent::hw::DetectOptions dopts;
  dopts.fake_gpus = opts_.fake_gpus == "config" ? declared_gpus(*node_cfg_) : opts_.fake_gpus;
  if (!opts_.fake_gpu_dir.empty()) dopts.fake_gpu_dir = opts_.fake_gpu_dir;
  // TmpDisk is the size of the file system holding TmpFS (default /tmp).
  if (const std::string* tmp_fs = cfg_.passive("TmpFS"); tmp_fs && !tmp_fs->empty()) dopts.tmp_dir = *tmp_fs;
  return dopts;
}

// While the GPUs were found unhealthy, every report looks again, so that the
// node comes back by itself once nvidia-fabricmanager has registered them.
void AgentDaemon::recheck_gpu_health() {
  auto hw = agent::hw::detect_hardware(detect_options());
  if (!hw) return;
  std::string now = agent::hw::gpu_health_problem(*hw);
  if (now == gpu_health_) return;
  log(now.empty() ? "GPUs healthy again (was: " + gpu_health_ + ")" : now);
  gpu_health_ = std::move(now);
}

Status AgentDaemon::detect() {
  agent::hw::DetectOptions dopts = detect_options();
  auto hw = agent::hw::detect_hardware(dopts);
  if (!hw) return make_error("--fake-gpus=" + opts_.fake_gpus + ": " + hw.error().message);
  hw_ = std::move(*hw);
  if (hw_.gpus.empty() && dopts.fake_gpus.empty()) hw_.gpus = agent::gpus_from_gres_conf(cfg_, opts_.node);
  for (const auto& g : hw_.gpus) {
    bool real = g.source != "fake" || !opts_.fake_gpu_dir.empty();
    struct stat st {};
    gpu_files_[g.index] = real && stat(g.device_file.c_str(), &st) == 0 ? g.device_file : "";
  }
  agent::hw::NodeHardware compared = hw_;
  // SlurmdParameters=config_overrides (Slurm's switch for emulated nodes): the
  // node is taken to have the CPUs and memory slurm.conf declares. GPUs are
  // still compared, so that a node short of GPUs is drained with the reason.
  if (const std::string* p = cfg_.passive("SlurmdParameters"); p && list_has(*p, "config_overrides")) {
    compared.cpus = node_cfg_->cpus;
    compared.sockets = node_cfg_->sockets * node_cfg_->boards;
    compared.cores_per_socket = node_cfg_->cores_per_socket;
    compared.threads_per_core = node_cfg_->threads_per_core;
    compared.real_memory_mb = node_cfg_->real_memory_mb;
    compared.tmp_disk_mb = node_cfg_->tmp_disk_mb;
    hw_.tmp_disk_mb = compared.tmp_disk_mb;
    hw_.cpus = compared.cpus;
    hw_.sockets = compared.sockets;
    hw_.cores_per_socket = compared.cores_per_socket;
    hw_.threads_per_core = compared.threads_per_core;
    hw_.real_memory_mb = compared.real_memory_mb;
  }
  drain_reason_ = agent::compare_with_config(compared, *node_cfg_).drain_reason();
  gpu_health_ = agent::hw::gpu_health_problem(hw_);
  return {};
}

Status AgentDaemon::open(const AgentOptions& opts) {
  opts_ = opts;
  start_time_ = static_cast<int64_t>(std::time(nullptr));
  auto cfg = config::load_config(config::LoadOptions{opts.conf_path, "", ""});
  if (!cfg) return cfg.error();
  cfg_ = std::move(*cfg);
  node_cfg_ = cfg_.find_node(opts.node);
  if (!node_cfg_) {
    return make_error("node '" + opts.node + "' is not declared in " + opts.conf_path +
                      " (NodeName= lines); pass --node with one of its nodes");
  }
  // SlurmdLogFile (or -L): from here on the log lines go there (%n: this node, %h: this host).
  log_file_ = opts.log_path.empty() ? expand_daemon_path(cfg_.passive_text("SlurmdLogFile"), opts.node) : opts.log_path;
  if (!log_file_.empty()) {
    if (auto st = log_to_file(log_file_); !st) return st;
  }
  if (opts_.spool_dir.empty()) opts_.spool_dir = spool_for(cfg_, opts.node);
  if (opts_.listen.empty()) {
    opts_.listen = node_cfg_->addr + ":" + std::to_string(cfg_.node_port(*node_cfg_));
  }
  if (opts_.controller.empty()) opts_.controller = cfg_.controller_host() + ":" + std::to_string(cfg_.slurmctld_port);
  if (opts_.key_path.empty()) opts_.key_path = cfg_.auth_key_path();
  if (struct passwd* pw = getpwnam(cfg_.slurm_user.c_str())) slurm_user_uid_ = pw->pw_uid;
  if (auto st = detect(); !st) return st;
  std::error_code ec;
  std::filesystem::create_directories(opts_.spool_dir, ec);
  agent::SupervisorOptions so;
  so.node_name = opts.node;
  so.spool_dir = opts_.spool_dir;
  so.stepd_command = stepd_command();
  so.pmix_stepd_command = agent::default_stepd_command();
  so.kill_wait_ms = cfg_.kill_wait * 1000;
  if (const std::string* f = cfg_.passive("JobAcctGatherFrequency")) {
    if (auto s = config::task_sampling_interval(*f); s && *s >= 0) {
      so.usage_interval_s = *s;
    } else {
      log("JobAcctGatherFrequency=" + *f + " is not SECONDS nor task=SECONDS (drover config check says so too); "
          "tasks are sampled every " + std::to_string(so.usage_interval_s) + " s");
    }
  }
  if (const std::string* t = cfg_.passive("JobAcctGatherType")) so.usage_samples = !iequals(*t, "jobacct_gather/none");
  // One cgroup subtree per cluster, so that two clusters on one host (tests,
  // several local clusters) never share a node_<NAME>/job_<ID> directory.
  if (!cfg_.cluster_name.empty()) so.cgroups.subdir = "drover_" + cfg_.cluster_name;
  agent::set_slurm_plugins(so.cgroups, cfg_.passive("TaskPlugin"), cfg_.passive("ProctrackType"));
  const std::string* root_jobs = cfg_.passive("DisableRootJobs");
  so.allow_root_jobs = root_jobs && iequals(*root_jobs, "NO");
  so.task_prolog = cfg_.passive_text("TaskProlog");
  so.task_epilog = cfg_.passive_text("TaskEpilog");
  for (const auto& [idx, file] : gpu_files_) {
    if (!file.empty()) so.node_gpu_files.push_back(file);
  }
  auto sup = agent::Supervisor::open(so);
  if (!sup) return sup.error();
  supervisor_ = std::move(*sup);
  JobScriptOptions jo;
  jo.prolog = cfg_.passive_text("Prolog");
  jo.epilog = cfg_.passive_text("Epilog");
  if (const std::string* t = cfg_.passive("PrologEpilogTimeout")) {
    const long long secs = std::atoll(t->c_str());
    jo.timeout_s = secs > 0 && secs < 65534 ? secs : 0;  // Slurm's 65534: wait as long as they run
  }
  jo.spool_dir = opts_.spool_dir;
  jo.log = [this](const std::string& m) { log(m); };
  jo.ended = [this] { poke(); };
  scripts_ = std::make_unique<JobScripts>(std::move(jo), *supervisor_);
  HealthCheckOptions ho;
  ho.program = cfg_.passive_text("HealthCheckProgram");
  if (const std::string* i = cfg_.passive("HealthCheckInterval")) ho.interval_s = std::max(0LL, std::atoll(i->c_str()));
  if (const std::string* st = cfg_.passive("HealthCheckNodeState")) ho.node_state = *st;
  ho.node = opts.node;
  ho.log = [this](const std::string& m) { log(m); };
  health_ = std::make_unique<HealthCheck>(std::move(ho));
  rpc::ServerOptions ro;
  ro.tcp_address = opts_.listen;
  ro.key_paths = {opts_.key_path};
  ro.key_owner_uids = {slurm_user_uid_};
  server_ = std::make_unique<rpc::RpcServer>(ro);
  server_->add_service(make_node_service(*this, server_->authenticator()));
  if (auto st = server_->start(); !st) return st;
  // The node's address is ours: this is its one agent.
  if (const std::string pid_file = expand_daemon_path(cfg_.passive_text("SlurmdPidFile"), opts.node); !pid_file.empty()) {
    if (auto st = write_pid_file(pid_file); !st) log(st.error().message);
  }
  auto rep = Reporter::create(opts_.controller, opts_.key_path);
  if (!rep) return rep.error();
  reporter_ = std::move(*rep);
  start_signer();
  log("serving on " + opts_.listen + ", spool " + opts_.spool_dir + ", controller " + opts_.controller + "; " +
      supervisor_->enforcement_summary());
  for (const auto& line : supervisor_->cannot_enforce()) log("cannot enforce: " + line);
  if (!supervisor_->adopted().empty()) {
    log("re-adopted " + std::to_string(supervisor_->adopted().size()) + " step(s) from the spool");
  }
  if (!drain_reason_.empty()) log("has less than slurm.conf declares: " + drain_reason_);
  if (!gpu_health_.empty()) log(gpu_health_ + " (the node is drained until they are)");
  return {};
}

// Plain users' commands on this host sign their TCP requests through it.
// Several agents on one host (emulated nodes): the first serves it, and the
// others look every few seconds (run()) so that one takes over when it stops.
void AgentDaemon::start_signer() {
  const std::string path = cfg_.auth_socket_path();
  if (!signer_key_) {  // read once: the looks every 3 s need not read the file again
    auto key = rpc::load_cluster_key(opts_.key_path, {slurm_user_uid_});
    if (!key) return log("local signer not started: " + key.error().message);
    signer_key_ = std::move(*key);
  }
  bool elsewhere = false;
  auto signer = rpc::LocalSigner::start(path, *signer_key_, &elsewhere);
  if (!signer) {
    log("local signer not started: " + signer.error().message +
        " (plain users' commands on this host cannot reach a controller on another host)");
  } else if (elsewhere) {
    if (!signer_elsewhere_) log("local signer at " + path + ": served by another process on this host");
    signer_elsewhere_ = true;
  } else {
    signer_ = std::move(*signer);
    log("local signer at " + path + (signer_elsewhere_ ? " taken over" : "") + " (plain users' tokens for TCP)");
    signer_elsewhere_ = false;
  }
}

v1::NodeReport AgentDaemon::report(bool registering) {
  v1::NodeReport r;
  r.set_node(opts_.node);
  r.set_agent_start_time(start_time_);
  r.set_version("22.05.8");
  if (registering) {
    r.set_cpus(hw_.cpus);
    r.set_sockets(hw_.sockets);
    r.set_cores_per_socket(hw_.cores_per_socket);
    r.set_threads_per_core(hw_.threads_per_core);
    r.set_real_memory_mb(hw_.real_memory_mb);
    r.set_tmp_disk_mb(hw_.tmp_disk_mb);
    for (const auto& g : hw_.gpus) {
      v1::DetectedGpu* d = r.add_gpus();
      d->set_index(g.index);
      d->set_type(g.type);
      d->set_device_file(g.device_file);
      d->set_name(g.name);
    }
    r.set_gpu_source(hw_.gpu_source);
    for (const auto& c : supervisor_->cannot_enforce()) r.add_cannot_enforce(c);
  }
  r.set_drain_reason(drain_reason_);
  if (!gpu_health_.empty() && !registering) recheck_gpu_health();
  r.set_gpu_health(gpu_health_);
  for (const auto& s : supervisor_->steps()) *r.add_steps() = report_from_status(s);
  scripts_->fill(r);
  r.set_boot_time(boot_time());
  HostLoad load = host_load();
  r.set_cpu_load(load.cpu_load);
  r.set_free_memory_mb(load.free_memory_mb);
  if (const auto& [os, arch] = os_and_arch(); !os.empty()) {
    r.set_os(os);
    r.set_arch(arch);
  }
  r.set_hostname(hw_.hostname);
  return r;
}

void AgentDaemon::apply(const v1::NodeReportReply& reply) {
  for (const auto& k : reply.acknowledged()) (void)supervisor_->acknowledge(key_from_proto(k));
  for (const auto& k : reply.terminate()) {
    auto key = key_from_proto(k);
    log("ending " + key.str() + " at the controller's request (cancelled, or unknown to it)");
    (void)supervisor_->terminate(key, agent::JobState::kCancelled, "ended by the controller");
  }
  for (const auto& d : reply.epilogs_acknowledged()) scripts_->acknowledge(d);
  for (const auto& o : reply.epilogs()) scripts_->order(o);
  if (!reply.node_state().empty()) health_->set_node_state(reply.node_state());
  if (reply.heartbeat_interval_s() > 0) heartbeat_ms_ = reply.heartbeat_interval_s() * 1000;
}

bool worth_reporting_again_now(const v1::NodeReport& sent, const v1::NodeReportReply& reply) {
  const bool reported_ends = std::any_of(sent.steps().begin(), sent.steps().end(),
                                         [](const v1::StepReport& s) { return s.ended(); });
  return !reported_ends || !reply.acknowledged().empty();
}

void AgentDaemon::run(const std::atomic<bool>& stop) {
  bool registered = false;
  bool unreachable = false;  // the last report found no controller
  std::string last_error;
  auto next_signer_check = std::chrono::steady_clock::now();
  auto maybe_take_signer = [&] {
    if (signer_elsewhere_ && std::chrono::steady_clock::now() >= next_signer_check) {
      start_signer();  // the agent that served it may have stopped
      next_signer_check = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    }
  };
  auto stopping = [&] { return stop || shutdown_; };
  // HealthCheckProgram runs once before the agent registers, then on its interval.
  health_->run_once();
  health_->start();
  while (!stopping()) {
    // Between heartbeats. Not after a report that found no controller: that
    // one is tried again after the pause below (gRPC's reconnection backoff
    // spaces the attempts while the controller is down), so that the agent
    // is back with the controller soon after it is.
    if (registered && !unreachable) {
      auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(heartbeat_ms_);
      while (!stopping() && !poked_ && std::chrono::steady_clock::now() < until) {
        if (!supervisor_->wait_any(100).empty()) break;
        if (reporter_->connection_lost()) break;  // the controller went away: tell it (or its successor) at once
        maybe_take_signer();
      }
      if (stopping()) break;
    }
    if (shutdown_) break;
    poked_ = false;
    maybe_take_signer();
    int code = 0;
    const v1::NodeReport sent = report(!registered);
    auto reply = reporter_->send(sent, !registered, &code);
    // UNAVAILABLE: no controller listening (stopped, restarting). A slow one
    // (DEADLINE_EXCEEDED) is not asked again before the next heartbeat.
    unreachable = !reply && code == grpc::StatusCode::UNAVAILABLE;
    if (!reply) {
      if (reply.error().message != last_error) log("controller " + opts_.controller + ": " + reply.error().message);
      last_error = reply.error().message;
      std::this_thread::sleep_for(std::chrono::milliseconds(registered ? 500 : 1000));
      continue;
    }
    if (!registered || !last_error.empty()) log("registered with the controller at " + opts_.controller);
    last_error.clear();
    registered = true;
    apply(*reply);
    if (!worth_reporting_again_now(sent, *reply)) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  server_->shutdown(std::chrono::milliseconds(1000));
  supervisor_->release_cgroups();  // empty ones only: running jobs keep theirs
}

}  // namespace drover::agentd
