// drover up / drover down: a controller and one agent per node of a
// slurm.conf whose nodes all live on this host (the demo cluster by
// default), GPUs emulated (or, with --detect-gpus, this host's own, found by
// NVML or gres.conf's device files), state and logs in one directory:
//   DIR/slurm.conf (+ gres.conf, qos.conf)   the effective configuration
//   DIR/drover.key                           the cluster key (0600)
//   DIR/auth.sock                            the local signer (an agent serves it; for TCP)
//   DIR/state/                               controller state
//   DIR/spool -> /dev/shm/drover-spool-...   the agents' spools (<node>/), on tmpfs when there is one
//   DIR/logs/controller.log, agent-NODE.log
//   DIR/pids/controller.pid, agent-NODE.pid
// Idempotent: `up` starts only what is not running (after a crash it starts
// the controller again, which recovers). `down` cancels the jobs and stops
// what `up` started (--keep-jobs: jobs keep running and are re-adopted by
// the next `up`).
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "client/api.hpp"
#include "client/commands.hpp"
#include "common/strings.hpp"
#include "common/user_db.hpp"
#include "config/doctor.hpp"
#include "config/model.hpp"
#include "rpc/cluster_key.hpp"

namespace drover::client {
namespace {

// A file's contents; "" when it cannot be read.
std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

namespace fs = std::filesystem;

struct UpOptions {
  std::string source;  // slurm.conf to start from
  std::string dir = "/tmp/drover-demo";
  bool keep_jobs = false;
  bool detect_gpus = false;  // --detect-gpus: the agents find this host's GPUs (NVML, gres.conf) instead of emulating
};

std::string self_exe() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "drover" : p.string();
}

std::string demo_config() {
  fs::path exe = self_exe();
  for (fs::path p : {exe.parent_path() / "../../examples/demo/slurm.conf", exe.parent_path() / "../share/drover/demo/slurm.conf",
                     fs::path(DROVER_SOURCE_DIR) / "examples/demo/slurm.conf"}) {
    std::error_code ec;
    if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  return "";
}

constexpr const char* kUpUsage = "usage: drover up [--demo | --config PATH] [--state DIR] [--detect-gpus]";
constexpr const char* kDownUsage = "usage: drover down [--state DIR] [--keep-jobs]";

Result<UpOptions> parse_up(const Args& args, bool down) {
  UpOptions o;
  bool demo = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* name) -> std::optional<std::string> {
      std::string prefix = std::string(name) + "=";
      if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
      if (a == name && i + 1 < args.size()) return args[++i];
      return std::nullopt;
    };
    if (a == "--demo" && !down) {
      demo = true;
    } else if (a == "--detect-gpus" && !down) {
      o.detect_gpus = true;
    } else if (a == "--keep-jobs" && down) {
      o.keep_jobs = true;
    } else if (auto v = value("--config"); v && !down) {
      o.source = *v;
    } else if (auto s = value("--state")) {
      o.dir = *s;
    } else {
      return make_error(std::string("unknown option '") + a + "'\n" + (down ? kDownUsage : kUpUsage));
    }
  }
  if (demo && !o.source.empty()) return make_error("give --demo or --config PATH, not both");
  if (!down && o.source.empty()) {
    o.source = demo_config();
    if (o.source.empty()) return make_error("cannot find examples/demo/slurm.conf; pass --config PATH");
  }
  std::error_code ec;
  o.dir = fs::absolute(o.dir, ec).string();
  return o;
}

bool alive(pid_t pid, const std::string& must_contain) {
  if (pid <= 0 || kill(pid, 0) != 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : cmd) {
    if (c == '\0') c = ' ';
  }
  return cmd.find(must_contain) != std::string::npos;
}

pid_t read_pid(const std::string& path) {
  std::ifstream in(path);
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

// Starts `args` detached (own session), stdout/stderr appended to `log`; returns its pid.
Result<pid_t> spawn(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid < 0) return make_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    setsid();
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    int null = open("/dev/null", O_RDONLY);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (null >= 0) dup2(null, 0);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

Status check_local(const config::ClusterConfig& cfg) {
  for (const auto& n : cfg.nodes) {
    if (!is_this_host(n.addr)) {
      return make_error("node " + n.name + " has NodeAddr=" + n.addr + ", which is not this host; drover up runs " +
                        "every node here (give each NodeAddr=127.0.1.N and its own Port)");
    }
  }
  return {};
}

// Keys drover up sets in the effective configuration (the source's own lines for them are dropped).
const char* const kOverridden[] = {"StateSaveLocation", "SlurmdSpoolDir", "AuthInfo", "SlurmdParameters",
                                   "DisableRootJobs", "ReturnToService", "SlurmUser", "SlurmctldLogFile",
                                   "SlurmctldPidFile", "SlurmdLogFile", "SlurmdPidFile"};

std::string current_user() {
  auto u = user_by_uid(geteuid());
  return u ? u->name : "root";
}

bool overridden_line(const std::string& line) {
  std::string t(trim(line));
  for (const char* k : kOverridden) {
    if (istarts_with(t, std::string(k) + "=")) return true;
  }
  return false;
}

// The agents' spools: on tmpfs (/dev/shm) when there is one. A spool must
// survive an agent's restart, not the machine's; on ext4 the inode allocator
// spends ~13 ms of CPU per job on a spool that creates and removes a few
// small files per job (measured: 29 ms vs 16 ms of CPU per `true` job).
// DIR/spool links to it.
std::string spool_dir(const UpOptions& o) {
  std::error_code ec;
  if (access("/dev/shm", W_OK) != 0) return o.dir + "/spool";
  char name[64];
  std::snprintf(name, sizeof name, "/dev/shm/drover-spool-%u-%zx", static_cast<unsigned>(geteuid()),
                std::hash<std::string>{}(o.dir));
  fs::create_directories(name, ec);
  if (ec) return o.dir + "/spool";
  if (!fs::is_symlink(o.dir + "/spool", ec)) {
    fs::remove(o.dir + "/spool", ec);  // an empty directory from an earlier version
    fs::create_directory_symlink(name, o.dir + "/spool", ec);
  }
  return name;
}

// The source's AuthInfo items besides the key and socket drover up sets (cred_expire).
std::string kept_auth_items(const config::ClusterConfig& cfg) {
  auto expire = cfg.passive_item("AuthInfo", "cred_expire");
  return expire ? ",cred_expire=" + *expire : "";
}

Status write_config(const UpOptions& o, const config::ClusterConfig& cfg) {
  std::ifstream in(o.source);
  std::ostringstream out;
  out << "# Written by drover up from " << o.source << "; edit the source and run drover up again.\n"
      << "StateSaveLocation=" << o.dir << "/state\n"
      << "SlurmdSpoolDir=" << spool_dir(o) << "/%n\n"
      << "AuthInfo=key=" << o.dir << "/drover.key,socket=" << o.dir << "/auth.sock" << kept_auth_items(cfg) << "\n"
      << (o.detect_gpus ? "# Emulated nodes: CPUs and memory as declared here; GPUs detected on this host (--detect-gpus).\n"
                        : "# Emulated nodes: CPUs and memory as declared here; GPUs emulated by the agents.\n")
      << "SlurmdParameters=config_overrides\n"
      << "DisableRootJobs=NO\n"
      << "ReturnToService=2\n"
      << "# The user who ran drover up runs the daemons and may act on every job.\n"
      << "SlurmUser=" << current_user() << "\n"
      << "# Logs and pids in DIR, not where the source's daemons keep theirs.\n"
      << "SlurmctldLogFile=" << o.dir << "/logs/controller.log\n"
      << "SlurmctldPidFile=" << o.dir << "/pids/controller.pid\n"
      << "SlurmdLogFile=" << o.dir << "/logs/agent-%n.log\n"
      << "SlurmdPidFile=" << o.dir << "/pids/agent-%n.pid\n";
  std::string line;
  while (std::getline(in, line)) {
    if (!overridden_line(line)) out << line << "\n";
  }
  std::ofstream f(o.dir + "/slurm.conf");
  f << out.str();
  if (!f) return make_error("cannot write " + o.dir + "/slurm.conf");
  fs::path src = fs::path(o.source).parent_path();
  for (const char* other : {"gres.conf", "qos.conf"}) {
    std::error_code ec;
    if (fs::exists(src / other, ec)) fs::copy_file(src / other, fs::path(o.dir) / other, fs::copy_options::overwrite_existing, ec);
  }
  (void)cfg;
  return {};
}

// Where what a daemon writes next to its log begins (0: no log yet).
std::streamoff log_size(const std::string& log) {
  std::error_code ec;
  auto size = fs::file_size(log, ec);
  return ec ? 0 : static_cast<std::streamoff>(size);
}

// What a daemon that failed to start said last (`prefix`, "drover controller: "
// or "drover agent NODE: ", in its log from `from` on), without the prefix;
// empty if nothing.
std::string start_error(const std::string& log, std::streamoff from, const std::string& prefix) {
  std::ifstream in(log);
  in.seekg(from);
  std::string line, said;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) said = line.substr(prefix.size());
  }
  return said;
}

// `child`: the controller this run started (0: one already running), whose
// early exit ends the wait with what it wrote to `log` after `log_from`.
Result<std::unique_ptr<ControllerApi>> wait_for_controller(const std::string& conf, int seconds, pid_t child,
                                                           const std::string& log, std::streamoff log_from) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::string last = "not started";
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
      std::string said = start_error(log, log_from, "drover controller: ");
      return make_error("the controller exited at start" + (said.empty() ? std::string() : ": " + said));
    }
    auto ep = find_controller(conf);
    if (ep) {
      ep->retry_s = 0;  // this loop is the wait
      if (auto api = ControllerApi::connect(*ep, "drover up")) {
        auto st = (*api)->status();
        if (st) return std::move(*api);
        last = st.error().message;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return make_error("the controller did not answer within " + std::to_string(seconds) + " s (" + last + ")");
}

// An agent this run started.
struct Started {
  std::string node, log;
  pid_t pid = 0;
  std::streamoff log_from = 0;
  std::string exited;  // set once it exited: what it said
  bool gone = false;
};

// Waits until every node responds, or until those that do not have agents
// that exited; `responding` gets the nodes that answer.
int wait_for_nodes(ControllerApi& api, std::size_t expected, int seconds, std::vector<Started>& agents,
                   std::set<std::string>& responding) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    std::size_t gone = 0;
    for (auto& a : agents) {
      int status = 0;
      if (!a.gone && waitpid(a.pid, &status, WNOHANG) == a.pid) {
        a.gone = true;
        a.exited = start_error(a.log, a.log_from, "drover agent " + a.node + ": ");
      }
      gone += a.gone;
    }
    auto nodes = api.get_nodes({});
    responding.clear();
    if (nodes) {
      for (const auto& n : nodes->nodes()) {
        if (!n.not_responding()) responding.insert(n.name());
      }
    }
    if (responding.size() + gone >= expected) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return static_cast<int>(responding.size());
}

}  // namespace

int up_main(const Args& args) {
  if (asks_help(args)) return std::printf("%s\n", kUpUsage), 0;
  auto o = parse_up(args, false);
  if (!o) return std::fprintf(stderr, "drover up: %s\n", o.error().message.c_str()), 2;
  auto src = config::load_config(config::LoadOptions{o->source, "", ""});
  if (!src) return std::fprintf(stderr, "drover up: %s\n", src.error().message.c_str()), 1;
  // A source the controller would refuse changes nothing: DIR/slurm.conf keeps
  // what the running cluster (or the next start) reads.
  const Diagnostics errors = config::start_errors(*src);
  for (const auto& d : errors.items()) std::fprintf(stderr, "%s\n", d.format().c_str());
  if (const std::size_t n = errors.items().size(); n > 0) {
    std::fprintf(stderr,
                 "drover up: %s has %zu error%s; nothing was started or changed (drover config check --config %s "
                 "lists every finding)\n",
                 o->source.c_str(), n, n == 1 ? "" : "s", o->source.c_str());
    return 1;
  }
  if (auto st = check_local(*src); !st) return std::fprintf(stderr, "drover up: %s\n", st.error().message.c_str()), 1;
  std::error_code ec;
  for (const char* sub : {"", "/state", "/logs", "/pids"}) fs::create_directories(o->dir + sub, ec);
  std::string key = o->dir + "/drover.key";
  if (!fs::exists(key, ec)) {
    if (auto st = rpc::create_cluster_key(key); !st) return std::fprintf(stderr, "drover up: %s\n", st.error().message.c_str()), 1;
  }
  std::string conf = o->dir + "/slurm.conf";
  auto written = [&] { return read_text(conf) + "\n--- gres.conf\n" + read_text(o->dir + "/gres.conf"); };
  const std::string before = written();
  if (auto st = write_config(*o, *src); !st) return std::fprintf(stderr, "drover up: %s\n", st.error().message.c_str()), 1;
  std::string exe = self_exe();
  int started = 0;
  int rc = 0;
  std::string pidfile = o->dir + "/pids/controller.pid";
  const bool running = alive(read_pid(pidfile), "controller --config " + conf);
  const std::string ctl_log = o->dir + "/logs/controller.log";
  const std::streamoff log_from = log_size(ctl_log);
  pid_t child = 0;
  if (!running) {
    auto pid = spawn({exe, "controller", "--config", conf}, ctl_log);
    if (!pid) return std::fprintf(stderr, "drover up: %s\n", pid.error().message.c_str()), 1;
    std::ofstream(pidfile) << *pid << "\n";
    child = *pid;
    ++started;
  }
  auto api = wait_for_controller(conf, 15, child, ctl_log, log_from);
  if (!api) {
    std::fprintf(stderr, "drover up: %s; see %s/logs/controller.log\n", api.error().message.c_str(), o->dir.c_str());
    return 1;
  }
  // A running cluster whose source changed: the controller takes what it can
  // take while running (scontrol reconfigure), or says what needs a restart.
  if (running && written() != before) {
    auto re = (*api)->reconfigure();
    if (re) {
      std::printf("drover up: %s changed; the running controller applied it (scontrol reconfigure)\n", conf.c_str());
    } else {
      std::fprintf(stderr, "drover up: %s changed, but the running controller did not take it: %s\n", conf.c_str(),
                   re.error().message.c_str());
      rc = 1;
    }
  }
  std::vector<Started> agents;
  for (const auto& n : src->nodes) {
    std::string apid = o->dir + "/pids/agent-" + n.name + ".pid";
    if (alive(read_pid(apid), "--node " + n.name + " --config " + conf)) continue;
    Started a;
    a.node = n.name;
    a.log = o->dir + "/logs/agent-" + n.name + ".log";
    a.log_from = log_size(a.log);
    std::vector<std::string> argv = {exe, "agent", "--node", n.name, "--config", conf};
    if (!o->detect_gpus) argv.push_back("--fake-gpus=config");
    auto pid = spawn(argv, a.log);
    if (!pid) return std::fprintf(stderr, "drover up: %s\n", pid.error().message.c_str()), 1;
    std::ofstream(apid) << *pid << "\n";
    a.pid = *pid;
    agents.push_back(std::move(a));
    ++started;
  }
  std::set<std::string> responding;
  int up = wait_for_nodes(**api, src->nodes.size(), 20, agents, responding);
  std::printf("drover up: cluster %s in %s: controller and %zu agents (%d started now), %d of %zu nodes responding\n",
              src->cluster_name.c_str(), o->dir.c_str(), src->nodes.size(), started, up, src->nodes.size());
  std::vector<std::string> silent;
  for (const auto& n : src->nodes) {
    if (responding.count(n.name)) continue;
    auto a = std::find_if(agents.begin(), agents.end(), [&](const Started& x) { return x.node == n.name; });
    if (a != agents.end() && a->gone) {
      std::fprintf(stderr, "drover up: the agent of %s exited at start%s%s; see %s\n", n.name.c_str(),
                   a->exited.empty() ? "" : ": ", a->exited.c_str(), a->log.c_str());
    } else {
      silent.push_back(n.name);
    }
  }
  if (!silent.empty()) {
    std::fprintf(stderr, "drover up: not responding yet: %s; see %s/logs/agent-NODE.log\n", join(silent, ",").c_str(),
                 o->dir.c_str());
  }
  std::printf("logs in %s/logs; stop it with: drover down --state %s\n", o->dir.c_str(), o->dir.c_str());
  std::printf("export DROVER_CONF=%s\n", conf.c_str());
  return up == static_cast<int>(src->nodes.size()) ? rc : 1;
}

namespace {

// True if the process was running (and is now stopped).
bool stop_pid(const std::string& pidfile, const std::string& must_contain) {
  pid_t pid = read_pid(pidfile);
  const bool was = alive(pid, must_contain);
  if (was) {
    kill(pid, SIGTERM);
    for (int i = 0; i < 50 && alive(pid, must_contain); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (alive(pid, must_contain)) kill(pid, SIGKILL);
  }
  std::error_code ec;
  fs::remove(pidfile, ec);
  return was;
}

// Cancels every job and waits (up to `seconds`) until none is left running.
void cancel_all(const std::string& conf, int seconds) {
  auto api_ep = find_controller(conf);
  if (!api_ep) return;
  api_ep->retry_s = 0;  // a controller that does not answer has no jobs to cancel
  auto api = ControllerApi::connect(*api_ep, "drover down");
  if (!api) return;
  v1::CancelRequest req;
  req.add_states(v1::PENDING);
  req.add_states(v1::RUNNING);
  if (!(*api)->cancel(req)) return;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    auto jobs = (*api)->get_jobs({}, false);
    if (!jobs) return;
    bool busy = false;
    for (const auto& j : jobs->jobs()) busy = busy || j.state() == v1::RUNNING || j.completing();
    if (!busy) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

int down_main(const Args& args) {
  if (asks_help(args)) return std::printf("%s\n", kDownUsage), 0;
  auto o = parse_up(args, true);
  if (!o) return std::fprintf(stderr, "drover down: %s\n", o.error().message.c_str()), 2;
  std::string conf = o->dir + "/slurm.conf";
  std::error_code ec;
  if (!fs::exists(o->dir + "/pids", ec)) {
    std::printf("drover down: nothing runs from %s (no pids/ there)\n", o->dir.c_str());
    return 0;
  }
  if (!o->keep_jobs && alive(read_pid(o->dir + "/pids/controller.pid"), "controller --config " + conf)) {
    cancel_all(conf, 60);
  }
  int stopped = 0;
  for (const auto& entry : fs::directory_iterator(o->dir + "/pids", ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("agent-", 0) != 0) continue;
    std::string node = name.substr(6, name.size() - 6 - 4);
    stopped += stop_pid(entry.path().string(), "--node " + node + " --config " + conf);
  }
  const bool controller = stop_pid(o->dir + "/pids/controller.pid", "controller --config " + conf);
  std::printf("drover down: %s %d agents of %s%s\n",
              controller ? "stopped the controller and" : "the controller was not running; stopped", stopped,
              o->dir.c_str(), o->keep_jobs ? " (running jobs keep running; the next drover up re-adopts them)" : "");
  return 0;
}

}  // namespace drover::client
